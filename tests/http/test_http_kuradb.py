"""The KuraDB face on the HTTP listener (`/kuradb/mcp`, scope `[http] root`), reached by the Python SDK's
Streamable HTTP client, the TypeScript SDK's StreamableHTTPClientTransport and curl exactly as KuraDB's page
shows; the REST search `GET /api/search` (the tool's JSON, 400 on every invalid argument); and GrooveSeek's
face at `/grooveseek/mcp` when `[http] kb_path` is set."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.http_world import HttpWorld, http_world, mcp_http_session
from support.kuradb_face import QUESTION, REFUSALS, WIKI, answer, check_search, tool_error, ts_http_session

INIT = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}'
)


@pytest.fixture(scope="module")
def world(model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpWorld]:
    # GrooveSeek's face on the same listener: its knowledge base is a copy of GrooveSeek's fixture.
    kb = tmp_path_factory.mktemp("kb")
    sample = Path(__file__).resolve().parents[1] / "fixtures" / "grooveseek_kb"
    shutil.copytree(sample, kb, dirs_exist_ok=True)
    with http_world(model_cache, extra_http=f'kb_path = "{kb}"\n') as world:
        yield world


def wiki(world: HttpWorld) -> Path:
    return world.repo / ".hallouminate" / "wiki"


async def test_python_sdk_client_lists_and_searches_on_kuradb_mcp(world: HttpWorld) -> None:
    async with mcp_http_session(world.base_url + "/kuradb/mcp") as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == {"list_rag", "search_rag"}
        listed = answer(await session.call_tool("list_rag", {}))
        assert WIKI in listed["loaded"]
        assert [item["db"] for item in listed["registered"]].count(WIKI) == 1
        found = answer(await session.call_tool("search_rag", {"db": WIKI, "q": QUESTION, "mode": "keyword"}))
        check_search(found, ["keyword"], wiki(world), 10)
        for case in sorted(REFUSALS):
            args, message = REFUSALS[case]
            assert tool_error(await session.call_tool("search_rag", args)) == message, case


def test_typescript_sdk_streamable_http_client_on_kuradb_mcp(world: HttpWorld) -> None:
    seen = ts_http_session(
        world.base_url + "/kuradb/mcp",
        [
            {"method": "tools/list"},
            {"method": "tools/call", "params": {"name": "list_rag", "arguments": {}}},
            {
                "method": "tools/call",
                "params": {"name": "search_rag", "arguments": {"db": WIKI, "q": QUESTION}},
            },
            {"method": "tools/call", "params": {"name": "search_rag", "arguments": {"db": "nope", "q": "x"}}},
        ],
    )
    assert seen["sessionId"], "the server issued no Mcp-Session-Id"
    assert seen["serverInfo"]["name"] == "hallouminate-kuradb"
    assert "never writes" in seen["instructions"]
    responses = seen["responses"]
    assert all("result" in r for r in responses), responses
    assert {tool["name"] for tool in responses[0]["result"]["tools"]} == {"list_rag", "search_rag"}
    assert WIKI in responses[1]["result"]["structuredContent"]["loaded"]
    found = responses[2]["result"]
    check_search(found["structuredContent"], ["keyword", "semantic"], wiki(world), 10)
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    assert responses[3]["result"]["isError"] is True
    assert responses[3]["result"]["content"][0]["text"] == 'invalid argument: "nope" not exist'


def _curl(url: str, body: str, *headers: str) -> tuple[dict[str, str], str]:
    done = subprocess.run(
        [
            "curl",
            "-sS",
            "-D",
            "-",
            "-X",
            "POST",
            url,
            "-H",
            "Content-Type: application/json",
            "-H",
            "Accept: application/json, text/event-stream",
            *[part for header in headers for part in ("-H", header)],
            "-d",
            body,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    head, _, payload = done.stdout.replace("\r\n", "\n").partition("\n\n")
    fields = {}
    for line in head.splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields, payload


def _message(payload: str) -> dict[str, Any]:
    """The JSON-RPC message of a response: its JSON body, or the data line of its SSE event."""
    text = payload.strip()
    if not text.startswith("{"):
        text = next(
            line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()
        )
    message: dict[str, Any] = json.loads(text)
    return message


def test_curl_as_kuradbs_page_shows(world: HttpWorld) -> None:
    base = world.endpoint_file.read_text().strip()  # BASE="$(cat .../endpoint)"
    headers, payload = _curl(f"{base}/kuradb/mcp", INIT)
    session = headers.get("mcp-session-id")
    assert session, headers
    assert _message(payload)["result"]["serverInfo"]["name"] == "hallouminate-kuradb"
    _curl(
        f"{base}/kuradb/mcp",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        f"Mcp-Session-Id: {session}",
        "Mcp-Protocol-Version: 2025-06-18",
    )
    call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_rag", "arguments": {"db": WIKI, "q": QUESTION, "mode": "semantic"}},
        }
    )
    _headers, payload = _curl(
        f"{base}/kuradb/mcp", call, f"Mcp-Session-Id: {session}", "Mcp-Protocol-Version: 2025-06-18"
    )
    result = _message(payload)["result"]
    assert result["isError"] is False
    check_search(result["structuredContent"], ["semantic"], wiki(world), 10)


def test_rest_search_answers_the_tools_json(world: HttpWorld) -> None:
    import asyncio

    params = {"db": WIKI, "q": QUESTION, "mode": "keyword", "limit": "2"}
    got = httpx.get(world.base_url + "/api/search", params=params, timeout=120)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"].startswith("application/json")
    check_search(got.json(), ["keyword"], wiki(world), 2)

    async def tool() -> dict[str, Any]:
        async with mcp_http_session(world.base_url + "/kuradb/mcp") as session:
            args = {"db": WIKI, "q": QUESTION, "mode": "keyword", "limit": 2}
            return answer(await session.call_tool("search_rag", args))

    assert got.json() == asyncio.run(tool())  # the same JSON as the tool's structured output
    both = httpx.get(world.base_url + "/api/search", params={"db": WIKI, "q": QUESTION}, timeout=120)
    assert both.status_code == 200 and set(both.json()) == {"keyword", "semantic"}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_rest_search_is_400_with_the_same_message(world: HttpWorld, case: str) -> None:
    args, message = REFUSALS[case]
    got = httpx.get(world.base_url + "/api/search", params={k: str(v) for k, v in args.items()}, timeout=120)
    assert got.status_code == 400, got.text
    assert got.json() == {"error": message}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=ten", "invalid argument: 'limit' must be of type integer, got str"),
        ("limit=1&limit=2", "invalid argument: 'limit' must be of type integer, got list"),
        ("extra=1", "invalid argument: Additional properties are not allowed ('extra' was unexpected)"),
    ],
)
def test_rest_search_refuses_what_a_query_string_adds(world: HttpWorld, query: str, message: str) -> None:
    got = httpx.get(f"{world.base_url}/api/search?db={WIKI}&q=daemon&{query}", timeout=120)
    assert got.status_code == 400, got.text
    assert got.json()["error"].startswith(message)


async def test_grooveseeks_face_is_served_at_grooveseek_mcp(world: HttpWorld) -> None:
    async with mcp_http_session(world.base_url + "/grooveseek/mcp") as session:
        init_tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"search", "list_topics", "get_document", "rebuild_index"} <= init_tools
        built = await session.call_tool("rebuild_index", {})
        assert not built.is_error, built.content
        found = await session.call_tool("search", {"query": "hybrid ranking", "limit": 3})
        assert not found.is_error, found.content
        assert found.structured_content is not None
        assert found.structured_content["results"][0]["path"] == "deep-dive/search/hybrid-ranking.md"
