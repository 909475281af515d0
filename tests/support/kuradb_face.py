"""The KuraDB face's clients and checks: the Python SDK's stdio client on ``serve --dialect kuradb``, the
TypeScript SDK's Streamable HTTP client (``support.ts_sdk.ts_http_session``), and what every answer must
be (a JSON text block equal to ``structuredContent``; errors as tool results)."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from support import ts_sdk
from support.sandbox import Sandbox

WIKI = "repo:sample:wiki"
QUESTION = "How does the MCP shim reach the daemon?"
RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

# Each refused search_rag, and the exact message it answers (the same on MCP and REST).
REFUSALS: dict[str, tuple[dict[str, Any], str]] = {
    "unknown db": ({"db": "nope", "q": "x"}, 'invalid argument: "nope" not exist'),
    "unknown mode": (
        {"db": WIKI, "q": "x", "mode": "fuzzy"},
        "invalid argument: 'mode' must be one of ['keyword', 'semantic'], got 'fuzzy'",
    ),
    "missing db": ({"q": "x"}, "invalid argument: 'db' is a required property"),
    "missing q": ({"db": WIKI}, "invalid argument: 'q' is a required property"),
    "limit 0": ({"db": WIKI, "q": "x", "limit": 0}, "invalid argument: 'limit' must be >= 1 (got 0)"),
    "limit 101": ({"db": WIKI, "q": "x", "limit": 101}, "invalid argument: 'limit' must be <= 100 (got 101)"),
}


@contextlib.asynccontextmanager
async def kuradb_stdio(sandbox: Sandbox, cwd: Path) -> AsyncIterator[Any]:
    """``hallouminate serve --dialect kuradb`` started in ``cwd`` (its scope), under the Python SDK's stdio
    client; yields (session, the initialize result)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hallouminate", "serve", "--dialect", "kuradb"],
        env=sandbox.env,
        cwd=cwd,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        yield session, init


def answer(result: Any) -> dict[str, Any]:
    """A successful call's structured result, checked equal to its one JSON text block."""
    assert not result.is_error, result.content
    assert len(result.content) == 1 and result.content[0].type == "text"
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert json.loads(result.content[0].text) == structured
    return structured


def tool_error(result: Any) -> str:
    """A refused call's message: a tool result flagged isError, one text block, no structured content."""
    assert result.is_error, result.structured_content
    assert result.structured_content is None
    assert len(result.content) == 1 and result.content[0].type == "text"
    text: str = result.content[0].text
    return text


def check_search(found: dict[str, Any], modes: Sequence[str], wiki: Path, limit: int) -> None:
    """KuraDB's search_rag shape: exactly the modes that ran, each grouped by absolute source path, each
    chunk's content taken from its file, at most ``limit`` chunks per mode."""
    assert set(found) == set(modes)
    for mode in modes:
        sources = found[mode]
        assert sources, f"{mode} found nothing"
        assert len({entry["source"] for entry in sources}) == len(sources)  # one entry per file
        assert sum(len(entry["matches"]) for entry in sources) <= limit
        for entry in sources:
            source = Path(entry["source"])
            assert source.is_absolute() and source.is_relative_to(wiki), source
            text = source.read_text()
            for match in entry["matches"]:
                assert isinstance(match["chunk"], int) and match["chunk"] >= 0
                # A chunk's text is its file's lines (a heading breadcrumb may be prefixed): its last line is.
                last = match["content"].strip().splitlines()[-1]
                assert last in text


def ts_http_session(url: str, requests: Sequence[dict[str, Any]], timeout: float = 240) -> dict[str, Any]:
    """The TypeScript SDK's StreamableHTTPClientTransport on ``url`` (``support.ts_sdk``'s client, shared
    with ``/mcp``'s test): one session, ``requests`` in order, ended with DELETE; what it saw."""
    seen = ts_sdk.ts_http_session(url, requests, terminate=True, timeout=timeout)
    return {
        "protocolVersion": seen.protocol_version,
        "sessionId": seen.session_id,
        "serverInfo": seen.server_info,
        "capabilities": seen.capabilities,
        "instructions": seen.instructions,
        "responses": seen.responses,
    }
