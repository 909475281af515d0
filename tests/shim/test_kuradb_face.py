"""The KuraDB face on stdio (`hallouminate serve --dialect kuradb`, started in a repository: its corpora are
the dbs), through the Python SDK's stdio client and the TypeScript SDK's, over a real daemon and model:
list_rag, search_rag in each mode, every refusal with its exact message as a tool error, and each face's
instructions saying what it is and is not."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from support.kuradb_face import (
    QUESTION,
    REFUSALS,
    RFC3339_UTC,
    WIKI,
    answer,
    check_search,
    kuradb_stdio,
    tool_error,
)
from support.sandbox import SMALL_WIKI, Sandbox, hm, private_world
from support.ts_sdk import ts_session


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[tuple[Sandbox, Path]]:
    """One daemon (and warm shim host) over repository ``sample``, indexed before the first test."""
    with private_world(model_cache, prefix="hm-kura-", in_process=False) as box:
        repo = box.make_repo("sample", pages=SMALL_WIKI)
        done = hm(box, "index", cwd=repo)
        assert done.returncode == 0, done.stdout + done.stderr
        yield box, repo


async def test_the_face_lists_kuradbs_two_read_only_tools_with_their_schemas(
    world: tuple[Sandbox, Path],
) -> None:
    box, repo = world
    async with kuradb_stdio(box, repo) as (session, init):
        assert init.server_info.name == "hallouminate-kuradb"
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == {"list_rag", "search_rag"}
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema is not None
    schema = tools["search_rag"].input_schema
    assert schema["required"] == ["db", "q"]
    assert schema["properties"]["mode"]["enum"] == ["keyword", "semantic"]
    assert schema["properties"]["limit"]["default"] == 10
    assert (schema["properties"]["limit"]["minimum"], schema["properties"]["limit"]["maximum"]) == (1, 100)
    assert tools["list_rag"].input_schema["properties"] == {}


async def test_list_rag_names_the_corpora_of_the_directory_served(world: tuple[Sandbox, Path]) -> None:
    box, repo = world
    async with kuradb_stdio(box, repo) as (session, _init):
        listed = answer(await session.call_tool("list_rag", {}))
    assert set(listed) == {"loaded", "registered"}
    assert WIKI in listed["loaded"]
    entry = next(item for item in listed["registered"] if item["db"] == WIKI)
    assert RFC3339_UTC.match(entry["createAt"]), entry
    created = datetime.strptime(entry["createAt"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    # Indexed by the fixture, moments ago: the index's creation, not some other date.
    assert 0 <= (datetime.now(UTC) - created).total_seconds() < 3600
    assert set(listed["loaded"]) <= {item["db"] for item in listed["registered"]}


@pytest.mark.parametrize("mode", ["keyword", "semantic", None])
async def test_search_rag_runs_the_modes_asked_grouped_by_source(
    world: tuple[Sandbox, Path], mode: str | None
) -> None:
    box, repo = world
    args: dict[str, object] = {"db": WIKI, "q": QUESTION, "limit": 3}
    if mode is not None:
        args["mode"] = mode
    async with kuradb_stdio(box, repo) as (session, _init):
        found = answer(await session.call_tool("search_rag", args))
    modes = [mode] if mode else ["keyword", "semantic"]
    check_search(found, modes, repo / ".hallouminate" / "wiki", limit=3)
    for ran in modes:  # the page about the shim and the daemon leads both signals
        assert Path(found[ran][0]["source"]).name == "architecture.md", found[ran]


async def test_search_rag_defaults_to_ten_chunks_per_mode(world: tuple[Sandbox, Path]) -> None:
    box, repo = world
    async with kuradb_stdio(box, repo) as (session, _init):
        found = answer(
            await session.call_tool("search_rag", {"db": WIKI, "q": "the daemon", "mode": "semantic"})
        )
        one = answer(await session.call_tool("search_rag", {"db": WIKI, "q": "the daemon", "limit": 1}))
    # SMALL_WIKI holds more than ten chunks: the vector search fills its default of ten.
    assert sum(len(entry["matches"]) for entry in found["semantic"]) == 10
    assert [sum(len(e["matches"]) for e in one[m]) for m in ("keyword", "semantic")] == [1, 1]


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_each_refusal_is_a_tool_error_with_kuradbs_message(
    world: tuple[Sandbox, Path], case: str
) -> None:
    box, repo = world
    args, message = REFUSALS[case]
    async with kuradb_stdio(box, repo) as (session, _init):
        assert tool_error(await session.call_tool("search_rag", args)) == message


async def test_an_unknown_tool_is_a_protocol_error(world: tuple[Sandbox, Path]) -> None:
    from mcp import MCPError

    box, repo = world
    async with kuradb_stdio(box, repo) as (session, _init):
        with pytest.raises(MCPError, match="unknown tool 'ground'"):
            await session.call_tool("ground", {"cwd": str(repo), "query": "x"})


def test_the_typescript_client_lists_and_calls_both_tools(world: tuple[Sandbox, Path]) -> None:
    """The TypeScript SDK validates each structuredContent against the published outputSchema."""
    box, repo = world
    session = ts_session(
        box,
        [
            {"method": "tools/list"},
            {"method": "tools/call", "params": {"name": "list_rag", "arguments": {}}},
            {
                "method": "tools/call",
                "params": {"name": "search_rag", "arguments": {"db": WIKI, "q": QUESTION}},
            },
            {"method": "tools/call", "params": {"name": "search_rag", "arguments": {"db": "nope", "q": "x"}}},
        ],
        serve_args=["--dialect", "kuradb"],
        cwd=repo,
    )
    assert session.server_info["name"] == "hallouminate-kuradb"
    assert "never writes" in (session.instructions or "")
    assert {tool["name"] for tool in session.result(0)["tools"]} == {"list_rag", "search_rag"}
    listed = session.result(1)
    assert WIKI in listed["structuredContent"]["loaded"]
    assert json.loads(listed["content"][0]["text"]) == listed["structuredContent"]
    found = session.result(2)
    assert not found.get("isError")
    check_search(found["structuredContent"], ["keyword", "semantic"], repo / ".hallouminate" / "wiki", 10)
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    refused = session.result(3)
    assert refused["isError"] is True
    assert refused["content"] == [{"type": "text", "text": 'invalid argument: "nope" not exist'}]


def test_stdin_closed_ends_the_session_with_exit_0_and_stdout_is_protocol_only(
    world: tuple[Sandbox, Path],
) -> None:
    box, repo = world
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "p", "version": "0"},
        },
    }
    done = subprocess.run(
        [sys.executable, "-m", "hallouminate", "serve", "--dialect", "kuradb"],
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        env=box.env,
        cwd=repo,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["id"] for line in lines] == [1]
    assert lines[0]["result"]["serverInfo"]["name"] == "hallouminate-kuradb"


# -- every face's instructions: what it is, and as clearly what it is not -----------------------------------
FACE_ARGS = {
    "hallouminate": [],
    "grooveseek": ["--dialect", "grooveseek", "--kb-path", "{repo}"],
    "kuradb": ["--dialect", "kuradb"],
}
# What each face's instructions must say (lower-cased), and what they must no longer claim.
SAYS = {
    "hallouminate": ["markdown", "no conversation memory", "source files", "as text", "no code navigation"],
    "grooveseek": ["read-only", "conversation memory", "searched as text", "no code navigation"],
    "kuradb": [
        "read-only retrieval",
        "never writes",
        "conversation history",
        "session memory",
        "profile",
        "source files",
        "no code intelligence",
    ],
}
NEVER = "does not parse, search or understand source code"


@pytest.mark.parametrize("face", sorted(FACE_ARGS))
async def test_each_faces_instructions_arrive_at_initialize_and_say_its_boundaries(
    world: tuple[Sandbox, Path], face: str
) -> None:
    box, repo = world
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hallouminate", "serve", *(a.format(repo=repo) for a in FACE_ARGS[face])],
        env=box.env,
        cwd=repo,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
    text = " ".join((init.instructions or "").lower().split())
    for phrase in SAYS[face]:
        assert phrase in text, f"{face}: {phrase!r} not in {text!r}"
    assert NEVER not in text
    assert "what it is not" in text


async def test_a_failing_search_is_a_tool_error_with_its_own_message(sandbox: Sandbox) -> None:
    """No model installed: the semantic branch (and the daemon's engine) cannot run; the call is a tool
    result flagged isError carrying the fault's own message and fix, not a JSON-RPC error."""
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "no-model"}"\n')
    repo = sandbox.make_repo(pages=["index.md"])
    async with kuradb_stdio(sandbox, repo) as (session, _init):
        failed = tool_error(await session.call_tool("search_rag", {"db": WIKI, "q": "the daemon"}))
        listed = tool_error(await session.call_tool("list_rag", {}))
    assert "hallouminate model install" in failed
    assert "hallouminate model install" in listed
