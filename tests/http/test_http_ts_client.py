"""The official TypeScript SDK's Streamable HTTP client (``StreamableHTTPClientTransport``, via
``support/ts_sdk.py``) on ``/mcp`` of a real daemon: the handshake, tools/list, ``ground`` (its
structuredContent checked by the SDK against the listed output schema), and caller mistakes answered with
exactly the JSON-RPC error the same client gets over stdio."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from hallouminate.shim.tools import TOOLS
from support.http_world import HttpWorld, http_world
from support.ts_sdk import ts_http_session, ts_session

TS_SDK_LATEST = "2025-11-25"  # what the TypeScript SDK (1.32) asks for (tests/shim/test_shim_ts_client.py)


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[HttpWorld]:
    with http_world(model_cache) as world:
        yield world


def test_the_typescript_http_client_initializes_lists_and_grounds(world: HttpWorld) -> None:
    session = ts_http_session(
        world.base_url + "/mcp",
        [
            {"method": "tools/list"},
            {
                "method": "tools/call",
                "params": {
                    "name": "ground",
                    "arguments": {"cwd": str(world.repo), "query": "How does the MCP shim reach the daemon?"},
                },
            },
        ],
        terminate=True,
    )
    assert session.protocol_version == TS_SDK_LATEST
    assert session.server_info["name"] and session.server_info["version"]
    assert {"tools", "prompts"} <= set(session.capabilities)
    assert session.instructions
    assert session.session_id, "the server issued no Mcp-Session-Id at initialize"
    assert {tool["name"] for tool in session.result(0)["tools"]} == set(TOOLS)
    grounded = session.result(1)
    assert grounded["isError"] is False and grounded["content"][0]["type"] == "text"
    assert grounded["structuredContent"]["docs"][0]["path"] == "architecture.md"
    # The client ended its session with DELETE: the id is no longer accepted.
    assert session.terminated
    gone = httpx2.post(
        world.base_url + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session.session_id,
            "Mcp-Protocol-Version": TS_SDK_LATEST,
        },
    )
    assert gone.status_code == 404, gone.text


def test_caller_mistakes_get_the_same_json_rpc_error_over_http_as_over_stdio(world: HttpWorld) -> None:
    """One mistake the shim's schema check catches (``top_files: 0``) and one only the daemon can
    (a mistyped corpus: its error lists the corpora): code, message and data equal on both transports."""
    mistakes: list[dict[str, object]] = [
        {"cwd": str(world.repo), "query": "daemon", "top_files": 0},
        {"cwd": str(world.repo), "query": "daemon", "corpus": "repo:sampel:wiki"},
    ]
    requests = [{"method": "tools/call", "params": {"name": "ground", "arguments": a}} for a in mistakes]
    over_http = ts_http_session(world.base_url + "/mcp", requests)
    over_stdio = ts_session(world.sandbox, requests, cwd=world.repo)
    for index in range(len(mistakes)):
        http_error, stdio_error = over_http.error(index), over_stdio.error(index)
        assert http_error["code"] == -32602, http_error
        assert http_error == stdio_error
    assert "'top_files' must be >= 1" in over_http.error(0)["message"]
    assert "repo:sample:wiki" in over_http.error(1)["message"]
    assert over_http.error(1)["data"], "the daemon's error data did not reach the client"
