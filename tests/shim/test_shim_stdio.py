"""``hallouminate serve`` driven by a real MCP client over stdio, with a real daemon behind it."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from support.sandbox import (
    SMALL_WIKI,
    Sandbox,
    daemons_serving,
    kill_daemon_of,
    mcp_session,
    pid_alive,
    private_world,
)

QUESTION = "How does the MCP shim reach the daemon?"


def _top_path(result) -> str:  # type: ignore[no-untyped-def]
    return result.structured_content["docs"][0]["path"]


async def test_initialize_list_index_ground_then_the_daemon_outlives_the_shim(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    async with mcp_session(sandbox) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"ground", "index"} <= set(tools)
        assert "cwd" in tools["ground"].input_schema["required"]
        assert tools["ground"].annotations.read_only_hint is True
        assert tools["ground"].output_schema is not None

        indexed = await session.call_tool("index", {"cwd": str(repo)})
        report = indexed.structured_content["corpora"][0]
        assert report["corpus"] == "repo:sample:wiki" and report["files_upserted"] == len(SMALL_WIKI)
        assert "repo:sample:wiki" in indexed.content[0].text

        found = await session.call_tool("ground", {"cwd": str(repo), "query": QUESTION})
        assert _top_path(found) == "architecture.md"
        doc = found.structured_content["docs"][0]
        assert doc["corpus"] == "repo:sample:wiki" and doc["absolute_path"].endswith("architecture.md")
        assert doc["chunks"][0]["line_start"] >= 1
        assert found.content[0].text.startswith(QUESTION)
        pid = sandbox.daemon_pid()
    # The client killed the shim's whole process group; the daemon was spawned in its own session.
    assert pid is not None and pid_alive(pid)
    async with mcp_session(sandbox) as session:
        found = await session.call_tool("ground", {"cwd": str(repo), "query": QUESTION})
        assert _top_path(found) == "architecture.md"
    assert sandbox.daemon_pid() == pid


async def test_server_instructions_say_what_it_is_and_is_not(sandbox: Sandbox) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hallouminate", "serve"], env=sandbox.env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
    assert "no conversation memory" in init.instructions
    assert "no code intelligence" in init.instructions
    # and how to tell that the knowledge base is silent (issue 14)
    assert "`low_confidence: true`" in init.instructions and "weak-match" in init.instructions
    assert not sandbox.socket.exists()  # initialize alone spawns nothing


async def test_after_kill_9_the_next_tool_call_respawns_and_search_works(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    async with mcp_session(sandbox) as session:
        await session.call_tool("index", {"cwd": str(repo)})
        first = sandbox.daemon_pid()
        kill_daemon_of(sandbox, signal.SIGKILL)
        found = await session.call_tool("ground", {"cwd": str(repo), "query": QUESTION})
        assert _top_path(found) == "architecture.md"
    assert sandbox.daemon_pid() not in (None, first)


@pytest.fixture(scope="module")
def shared(model_cache: Path) -> Iterator[Sandbox]:
    """One world for the tests whose calls are refused: each test's shim reaches its one daemon (and warm
    host) instead of starting its own. Its repository holds a README beside the wiki, a file to name."""
    with private_world(model_cache, prefix="hm-ss-", in_process=False) as box:
        repo = box.make_repo(pages=SMALL_WIKI)
        (repo / "README.md").write_text("hi\n")
        yield box


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"cwd": "relative/dir", "query": "x"}, "absolute path"),
        ({"cwd": "/definitely/not/here", "query": "x"}, "does not exist"),
        ({"cwd": "FILE", "query": "x"}, "not a directory"),
        ({"query": "x"}, "'cwd' is a required property"),
        ({"cwd": "REPO", "query": "x", "top_files": 0}, "'top_files' must be >= 1"),
        ({"cwd": "REPO", "query": 42}, "must be of type string"),
        ({"cwd": "REPO", "query": "x", "bogus": 1}, "not allowed"),
        ({"cwd": "REPO", "query": "x", "corpus": "repo:sampel:wiki"}, "repo:sample:wiki"),
    ],
)
async def test_caller_mistakes_are_invalid_params(shared: Sandbox, arguments: dict, fragment: str) -> None:
    repo = shared.root / "sample"
    a_file = repo / "README.md"
    arguments = {
        key: (str(repo) if value == "REPO" else str(a_file) if value == "FILE" else value)
        for key, value in arguments.items()
    }
    async with mcp_session(shared) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("ground", arguments)
    assert info.value.code == INVALID_PARAMS
    assert fragment in info.value.message


async def test_cwd_is_checked_before_the_daemon_is_contacted(sandbox: Sandbox) -> None:
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("ground", {"cwd": "not/absolute", "query": "x"})
    assert info.value.code == INVALID_PARAMS
    assert not sandbox.socket.exists()


async def test_unknown_corpus_lists_the_corpora_and_the_closest(shared: Sandbox) -> None:
    repo = shared.root / "sample"
    async with mcp_session(shared) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("index", {"cwd": str(repo), "corpus": "repo:sample:wki"})
    assert info.value.code == INVALID_PARAMS
    assert info.value.data["closest"] == "repo:sample:wiki"
    assert "repo:sample:wiki" in info.value.data["corpora"]


async def test_an_unreachable_daemon_is_internal_error_and_retryable(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo()
    # A shared directory: the daemon refuses to put its socket there, so it can never be reached.
    shared = sandbox.root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    sandbox.env["HALLOUMINATE_SOCKET"] = str(shared / "d.sock")
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("ground", {"cwd": str(repo), "query": "x"})
    assert info.value.code == INTERNAL_ERROR
    assert info.value.data["retryable"] is True
    assert "could not start the daemon" in info.value.message
    assert "Traceback" not in info.value.message


async def test_two_shims_started_together_share_one_daemon(sandbox: Sandbox) -> None:
    import asyncio

    repo = sandbox.make_repo(pages=SMALL_WIKI)

    together = asyncio.Barrier(2)

    async def one_shim() -> str:
        async with mcp_session(sandbox) as session:
            await asyncio.wait_for(together.wait(), 120)  # both are up before either calls: they race
            # Both index at once: `wait` makes the second follow the first's run (without it, the second
            # is refused by design: one client index per corpus at a time, ADR 0039).
            await session.call_tool("index", {"cwd": str(repo), "wait": True})
            found = await session.call_tool("ground", {"cwd": str(repo), "query": QUESTION})
            return _top_path(found)

    assert await asyncio.gather(one_shim(), one_shim()) == ["architecture.md", "architecture.md"]
    assert len(daemons_serving(sandbox)) == 1
