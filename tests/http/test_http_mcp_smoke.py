"""The HTTP listener serves our face over Streamable HTTP: the Python SDK's client initializes, lists the
tools and calls ``ground`` on ``/mcp``, as over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.http_world import http_world, mcp_http_session


@pytest.mark.asyncio
async def test_python_sdk_client_grounds_over_http(model_cache: Path) -> None:
    with http_world(model_cache) as world:
        async with mcp_http_session(world.base_url + "/mcp") as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"ground", "read_markdown", "add_markdown"} <= tools
            result = await session.call_tool(
                "ground", {"cwd": str(world.repo), "query": "How does the MCP shim reach the daemon?"}
            )
            assert not result.is_error
            assert result.structured_content is not None
            docs = result.structured_content["docs"]
            assert docs and docs[0]["path"] == "architecture.md"
