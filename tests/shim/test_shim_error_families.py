"""Each error family through a real MCP stdio client, the real shim and a real daemon: the JSON-RPC code and
``data`` come from the one mapping in ``hallouminate.errors``; over the daemon's own socket the same
failures come back to a client as the very class the daemon raised (docs/adr/0021-errors-by-meaning.md).

- the caller's: an unknown corpus (``NotFound``), an unsafe path (``UnsafePath``), a page that exists
  (``Conflict``): -32602 with their ``data``;
- ours: the model not installed (``ModelUnavailable``): -32603, no ``retryable``;
- nobody's: no daemon can be reached (``Unavailable``): -32603 with ``data.retryable = true``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from conftest import Sandbox, mcp_session
from hallouminate.client import DaemonUnavailable, connect_or_spawn
from hallouminate.errors import (
    Conflict,
    HallouminateError,
    ModelUnavailable,
    NotFound,
    Unavailable,
    UnsafePath,
)

WIKI = "repo:sample:wiki"


def _calls(repo: Path) -> list[tuple[str, dict[str, object], type[HallouminateError]]]:
    cwd = str(repo)
    return [
        ("read_markdown", {"cwd": cwd, "corpus": "repo:sample:wki", "path": "architecture.md"}, NotFound),
        ("read_markdown", {"cwd": cwd, "corpus": WIKI, "path": "../outside.md"}, UnsafePath),
        (
            "add_markdown",
            {"cwd": cwd, "corpus": WIKI, "path": "architecture.md", "content": "# New\n"},
            Conflict,
        ),
    ]


async def test_caller_mistakes_are_32602_with_their_data_and_come_back_as_their_class(
    sandbox: Sandbox,
) -> None:
    repo = sandbox.make_repo()
    page = repo / ".hallouminate" / "wiki" / "architecture.md"
    before = page.read_bytes()
    answers: list[MCPError] = []
    async with mcp_session(sandbox) as session:
        for tool, arguments, _ in _calls(repo):
            with pytest.raises(MCPError) as info:
                await session.call_tool(tool, arguments)
            answers.append(info.value)
    assert [answer.code for answer in answers] == [INVALID_PARAMS] * 3
    unknown, unsafe, exists = (answer.data for answer in answers)
    assert unknown["closest"] == WIKI and WIKI in unknown["corpora"]
    assert unsafe == {"path": "../outside.md", "problem": "dot-dot"}
    assert exists == {"corpus": WIKI, "path": "architecture.md", "problem": "exists"}
    assert all("retryable" not in data for data in (unknown, unsafe, exists))
    assert page.read_bytes() == before

    # The daemon the shim started, asked directly: each answer is rebuilt as the class that was raised.
    conn = await connect_or_spawn(spawn=False)
    try:
        for (tool, arguments, cls), answer in zip(_calls(repo), answers, strict=True):
            cwd = str(arguments.pop("cwd"))
            with pytest.raises(HallouminateError) as info:
                await conn.call(tool, cwd, arguments)
            assert type(info.value) is cls
            assert (info.value.message, info.value.data) == (answer.message, answer.data)
    finally:
        await conn.close()


async def test_a_fault_of_ours_is_32603_and_not_retryable(sandbox: Sandbox) -> None:
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "no-model"}"\n')
    repo = sandbox.make_repo()
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("ground", {"cwd": str(repo), "query": "the daemon"})
    assert info.value.code == INTERNAL_ERROR
    assert info.value.data["fix"] == "hallouminate model install" and "retryable" not in info.value.data
    assert "hallouminate model install" in info.value.message

    conn = await connect_or_spawn(spawn=False)
    try:
        with pytest.raises(ModelUnavailable) as direct:
            await conn.call("ground", str(repo), {"query": "the daemon"})
    finally:
        await conn.close()
    assert direct.value.data == info.value.data and not direct.value.retryable


async def test_an_unreachable_daemon_is_32603_and_retryable(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo()
    # A shared directory: the daemon refuses to put its socket there, so none can ever be reached.
    shared = sandbox.root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    socket = shared / "d.sock"
    sandbox.env["HALLOUMINATE_SOCKET"] = str(socket)
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("list_corpora", {"cwd": str(repo)})
    assert info.value.code == INTERNAL_ERROR
    assert info.value.data["retryable"] is True and info.value.data["socket"] == str(socket)

    with pytest.raises(Unavailable) as direct:
        await connect_or_spawn(socket, spawn=False)
    # The flag is the family's: the error's own data holds only what it knows.
    assert isinstance(direct.value, DaemonUnavailable) and direct.value.retryable
    assert "retryable" not in direct.value.data and direct.value.data["socket"] == str(socket)
