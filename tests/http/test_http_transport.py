"""MCP over the daemon's HTTP listener, from the clients' side: ``curl`` exactly as KuraDB's page shows it,
and the Python SDK's Streamable HTTP client getting what the stdio shim gives (same tools and schemas,
same JSON-RPC error for a bad argument, progress notifications from ``index``); SSE or JSON as the
client's ``Accept`` allows."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import MCPError

from support.http_world import HttpWorld, http_world, mcp_http_session
from support.sandbox import mcp_session

QUESTION = "How does the MCP shim reach the daemon?"
INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}'
)
BOTH = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[HttpWorld]:
    with http_world(model_cache) as built:
        yield built


def sse_messages(body: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (``data:`` lines; the SDK sends one message per event)."""
    return [
        json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


def curl(*args: str) -> tuple[dict[str, str], str]:
    """``curl -i`` (the real binary): the response's headers (names lowercased) and its body."""
    done = subprocess.run(
        ["curl", "-sS", "-i", *args], capture_output=True, text=True, timeout=120, check=True
    )
    head, _, body = done.stdout.replace("\r\n", "\n").partition("\n\n")
    headers = {}
    for line in head.splitlines()[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers, body


def test_curl_as_kuradbs_page_shows_it(world: HttpWorld) -> None:
    # The acceptance asks for curl itself: a machine without it fails here rather than skipping.
    assert shutil.which("curl"), "curl not found: install it (apt-get install curl) to run this test"
    # BASE="$(cat <endpoint file>)"
    base = subprocess.run(
        ["sh", "-c", f'BASE="$(cat {world.endpoint_file})"; printf %s "$BASE"'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert base == world.base_url
    common = ["-X", "POST", f"{base}/mcp", "-H", "Content-Type: application/json", "-H", f"Accept: {BOTH}"]
    headers, body = curl(*common, "-d", INITIALIZE)
    session = headers["mcp-session-id"]
    assert session and headers["content-type"].startswith("text/event-stream")
    (answer,) = sse_messages(body)
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]
    assert answer["result"]["protocolVersion"] == "2025-06-18"

    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "ground", "arguments": {"cwd": str(world.repo), "query": QUESTION}},
    }
    session_headers = ["-H", f"Mcp-Session-Id: {session}", "-H", "MCP-Protocol-Version: 2025-06-18"]
    initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    headers, _ = curl(*common, *session_headers, "-d", initialized)
    _, body = curl(*common, *session_headers, "-d", json.dumps(call))
    (answer,) = sse_messages(body)
    assert answer["id"] == 2 and not answer["result"].get("isError"), answer
    docs = answer["result"]["structuredContent"]["docs"]
    assert docs[0]["path"] == "architecture.md", docs


def _tool_list(tools: Any) -> dict[str, Any]:
    return {
        tool.name: {
            "description": tool.description,
            "input": tool.input_schema,
            "output": tool.output_schema,
            "annotations": tool.annotations,
        }
        for tool in tools.tools
    }


@pytest.mark.asyncio
async def test_tools_list_over_http_is_the_stdio_shims(world: HttpWorld) -> None:
    async with mcp_session(world.sandbox, cwd=world.repo) as stdio:
        over_stdio = _tool_list(await stdio.list_tools())
    async with mcp_http_session(world.base_url + "/mcp") as http:
        over_http = _tool_list(await http.list_tools())
    assert len(over_stdio) >= 10
    assert over_http == over_stdio


async def _failure(session: Any, tool: str, args: dict[str, Any]) -> tuple[str, Any, Any]:
    """How a call failed: ("jsonrpc", code, message), or ("tool", content) for an ``isError`` result."""
    try:
        result = await session.call_tool(tool, args)
    except MCPError as exc:
        return ("jsonrpc", exc.error.code, exc.error.message)
    assert result.is_error, f"{tool} {args} did not fail: {result}"
    return ("tool", [block.model_dump() for block in result.content], None)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("ground", {"query": QUESTION, "top_files": 0}),
        ("ground", {"query": QUESTION, "match": "fuzzy"}),
        ("read_markdown", {"corpus": "repo:sample:wiki", "path": "../../etc/passwd"}),
        ("read_markdown", {"corpus": "nope", "path": "index.md"}),
    ],
)
async def test_an_invalid_argument_fails_the_same_way_over_http_and_stdio(
    world: HttpWorld, tool: str, args: dict[str, Any]
) -> None:
    args = {"cwd": str(world.repo), **args}
    async with mcp_session(world.sandbox, cwd=world.repo) as stdio:
        over_stdio = await _failure(stdio, tool, args)
    async with mcp_http_session(world.base_url + "/mcp") as http:
        over_http = await _failure(http, tool, args)
    assert over_http == over_stdio


@pytest.mark.asyncio
async def test_index_over_http_sends_progress_notifications(world: HttpWorld) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with mcp_http_session(world.base_url + "/mcp") as http:
        result = await http.call_tool(
            "index", {"cwd": str(world.repo), "force": True}, progress_callback=on_progress
        )
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["corpora"][0]["files_upserted"] == 5
    assert len(seen) >= 2, seen
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen), "progress only grows"


def test_accept_decides_sse_or_json(world: HttpWorld) -> None:
    url = world.base_url + "/mcp"
    body = json.loads(INITIALIZE)
    with httpx.Client(timeout=60) as client:
        both = client.post(url, json=body, headers={"Accept": BOTH})
        assert both.status_code == 200 and both.headers["content-type"].startswith("text/event-stream")
        assert sse_messages(both.text)[0]["result"]["protocolVersion"] == "2025-06-18"
        # A client accepting JSON only gets the JSON-RPC response as one JSON body (the SDK alone would
        # refuse it with 406: http/negotiate.py).
        json_only = client.post(url, json=body, headers={"Accept": "application/json"})
        assert json_only.status_code == 200, json_only.text
        assert json_only.headers["content-type"] == "application/json"
        assert json_only.json()["result"]["protocolVersion"] == "2025-06-18"
        session = {
            "Mcp-Session-Id": json_only.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18",
            "Accept": "application/json",
        }
        done = client.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
        )
        assert done.status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "ground", "arguments": {"cwd": str(world.repo), "query": QUESTION}},
        }
        answer = client.post(url, json=call, headers=session)
        assert answer.headers["content-type"] == "application/json", answer.text
        assert answer.json()["id"] == 7
        assert answer.json()["result"]["structuredContent"]["docs"][0]["path"] == "architecture.md"
        # The same session asked for SSE gets SSE: the mode follows each request's Accept.
        streamed = client.post(url, json={**call, "id": 8}, headers={**session, "Accept": BOTH})
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert sse_messages(streamed.text)[0]["id"] == 8
        # Accepting neither is refused by the SDK, saying what to accept.
        neither = client.post(url, json=call, headers={**session, "Accept": "text/html"})
        assert neither.status_code == 406 and "application/json" in neither.json()["error"]["message"]
