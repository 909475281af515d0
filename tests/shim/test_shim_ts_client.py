"""``hallouminate serve`` driven by the official TypeScript SDK's MCP client (``support/ts_sdk.py``): the
handshake it negotiates, ``tools/list`` and the prompts, per face; and every default-face tool's result
checked by that SDK against the published output schema."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hallouminate.shim.grooveseek import FACE_TOOLS
from hallouminate.shim.tools import TOOLS
from support.sandbox import SMALL_WIKI, Sandbox, private_world
from support.ts_sdk import TsSession, node, ts_session

# The versions the TypeScript SDK (1.32) asks for and accepts: it sends its latest and refuses any answer
# outside this list; the mcp 2.x server must settle on one of them.
TS_SDK_LATEST = "2025-11-25"
GROOVESEEK_KB = Path(__file__).resolve().parents[1] / "fixtures" / "grooveseek_kb"

# Each face: its `serve` arguments (given the test's sandbox and repository), and its tools. One line per face.
FACES: dict[str, tuple[Callable[[Sandbox, Path], list[str]], set[str]]] = {
    "hallouminate": (lambda sandbox, repo: [], set(TOOLS)),
    "grooveseek": (
        lambda sandbox, repo: ["--dialect", "grooveseek", "--kb-path", str(repo)],
        set(FACE_TOOLS),
    ),
}


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world (its daemon and warm shim host) for the tests that read, or write only in a repository
    of their own; the test that changes the baseline config has its own."""
    with private_world(model_cache, prefix="hm-ts-", in_process=False) as box:
        yield box


def _session(
    sandbox: Sandbox, face: str, requests: list[dict[str, object]], name: str
) -> tuple[TsSession, Path]:
    repo = sandbox.make_repo(f"{name}-{face}", wiki=None)
    args, _tools = FACES[face]
    return ts_session(sandbox, requests, serve_args=args(sandbox, repo), cwd=repo), repo


@pytest.mark.parametrize("face", list(FACES))
def test_the_typescript_client_negotiates_and_lists_the_tools(world: Sandbox, face: str) -> None:
    session, _repo = _session(world, face, [{"method": "tools/list"}], "tools")
    assert session.protocol_version == TS_SDK_LATEST
    assert session.server_info["name"] and session.server_info["version"]
    assert {"tools", "prompts"} <= set(session.capabilities)
    tools = {tool["name"]: tool for tool in session.result(0)["tools"]}
    assert set(tools) == FACES[face][1]
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object" and tool["description"]


@pytest.mark.parametrize("face", list(FACES))
def test_the_typescript_client_lists_and_gets_the_prompts(world: Sandbox, face: str) -> None:
    session, _repo = _session(
        world,
        face,
        [
            {"method": "prompts/list"},
            {
                "method": "prompts/get",
                "params": {"name": "summarize_topic", "arguments": {"topic": "daemon"}},
            },
            {"method": "prompts/get", "params": {"name": "whats_new", "arguments": {"since": "2026-11-01"}}},
            {"method": "prompts/get", "params": {"name": "deep_dive", "arguments": {}}},
            {"method": "prompts/get", "params": {"name": "whats_new", "arguments": {"since": "Nov 1"}}},
        ],
        "prompts",
    )
    assert [p["name"] for p in session.result(0)["prompts"]] == [
        "summarize_topic",
        "deep_dive",
        "whats_new",
        "find_gaps",
    ]
    texts = []
    for index in (1, 2):
        (message,) = session.result(index)["messages"]
        assert message["role"] == "user" and message["content"]["type"] == "text"
        texts.append(message["content"]["text"])
    summary, news = texts
    assert '"daemon"' in summary and "`list_topics`" in summary
    assert '`date_from: "2026-11-01"`' in news
    for text in texts:
        assert "Cite the `path` of every document you draw on" in text
        assert "`get_document`" in text
    missing, malformed = session.error(3), session.error(4)
    assert missing["code"] == -32602 and "deep_dive needs the argument 'question'" in missing["message"]
    assert missing["data"] == {"param": "question", "problem": "missing"}
    assert malformed["code"] == -32602 and "YYYY-MM-DD" in malformed["message"]


def test_the_typescript_client_accepts_every_default_face_tool_result(world: Sandbox) -> None:
    """The SDK checks each tool's structuredContent against the outputSchema published in tools/list
    (ajv, not the Python client's jsonschema): every tool of the default face, with a real daemon."""
    sandbox = world
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    with (repo / ".hallouminate" / "config.toml").open("a") as config:
        config.write('\n[best_practice]\npath_templates = ["{target}.md"]\n')
    wiki = "repo:sample:wiki"
    calls: list[tuple[str, dict[str, object]]] = [
        ("index", {}),
        ("ground", {"query": "How does the MCP shim reach the daemon?"}),
        ("ground", {"query": "daemon", "match": "phrase", "output": "counts"}),
        ("list_corpora", {}),
        ("list_files", {"corpus": wiki}),
        ("list_tree", {"corpus": wiki}),
        ("read_markdown", {"corpus": wiki, "path": "architecture.md"}),
        ("get_document", {"corpus": wiki, "path": "architecture.md"}),
        ("corpus_stats", {"corpus": wiki}),
        ("list_topics", {"corpus": wiki}),
        ("backlinks", {"corpus": wiki, "path": "architecture.md"}),
        ("get_best_practice", {"target": "architecture"}),
        ("get_connection_graph", {"corpus": wiki, "start": "architecture.md"}),
        ("add_markdown", {"corpus": wiki, "path": "notes/ts.md", "content": "# From TypeScript\n\nHello.\n"}),
        ("move_markdown", {"corpus": wiki, "from": "notes/ts.md", "to": "notes/ts-moved.md"}),
        ("list_files", {"corpus": wiki, "changed_since": "1d"}),
        ("delete_markdown", {"corpus": wiki, "path": "notes/ts-moved.md"}),
    ]
    assert {name for name, _args in calls} == set(TOOLS), "a tool of the default face is not called here"
    requests = [
        {"method": "tools/call", "params": {"name": name, "arguments": {"cwd": str(repo), **args}}}
        for name, args in calls
    ]
    session = ts_session(sandbox, requests, cwd=repo)
    for index, (name, _args) in enumerate(calls):
        result = session.result(index)
        assert result["isError"] is False and isinstance(result["structuredContent"], dict), name
        assert result["content"][0]["type"] == "text", name
    assert session.result(1)["structuredContent"]["docs"][0]["path"] == "architecture.md"


def test_the_typescript_client_lists_and_reads_the_kb_resources(world: Sandbox) -> None:
    """The default face's kb:// resources (the wiki of the directory serve starts in) through the SDK's
    listResources / listResourceTemplates / readResource, which check each answer's shape."""
    sandbox = world
    repo = sandbox.make_repo("resources", pages=SMALL_WIKI)
    requests: list[dict[str, object]] = [
        {"method": "tools/call", "params": {"name": "index", "arguments": {"cwd": str(repo)}}},
        {"method": "resources/list"},
        {"method": "resources/templates/list"},
        {"method": "resources/read", "params": {"uri": "kb://topic/guides"}},
        {"method": "resources/read", "params": {"uri": "kb://doc/architecture.md"}},
        {"method": "resources/read", "params": {"uri": "kb://doc/Architecture.md"}},
    ]
    session = ts_session(sandbox, requests, cwd=repo)
    listed = {r["name"]: (r["uri"], r["description"], r["mimeType"]) for r in session.result(1)["resources"]}
    assert listed == {
        "(root)": ("kb://topic/", "4 indexed document(s) under (root)", "text/markdown"),
        "guides": ("kb://topic/guides", "1 indexed document(s) under guides", "text/markdown"),
    }
    assert [t["uriTemplate"] for t in session.result(2)["resourceTemplates"]] == ["kb://doc/{path}"]
    assert session.result(3)["contents"][0]["text"] == (
        "- `guides/getting-started.md` — kb://doc/guides/getting-started.md\n"
    )
    page = session.result(4)["contents"][0]
    on_disk = (repo / ".hallouminate" / "wiki" / "architecture.md").read_text()
    assert (page["uri"], page["mimeType"], page["text"]) == (
        "kb://doc/architecture.md",
        "text/markdown",
        on_disk,
    )
    error = session.error(5)
    assert error["code"] == -32602 and error["data"]["problem"] == "resource_not_found"


def test_the_typescript_client_drives_every_grooveseek_face_tool_and_its_resources(sandbox: Sandbox) -> None:
    """The GrooveSeek face over the GrooveSeek-style fixture: each of its six tools called through the SDK
    (which checks every structuredContent against the listed output schema), then its kb:// resources."""
    kb = sandbox.root / "kb"
    shutil.copytree(GROOVESEEK_KB, kb)
    (kb / "practices").mkdir()
    (kb / "practices" / "python.md").write_text("# Python\n\n## Testing\n\nUse pytest.\n")
    with sandbox.config_file.open("a") as config:
        config.write('\n[best_practice]\npath_templates = ["practices/{target}.md"]\n')
    calls: list[tuple[str, dict[str, object]]] = [
        ("rebuild_index", {}),
        ("search", {"query": "reciprocal rank fusion", "limit": 3}),
        ("list_topics", {}),
        ("get_document", {"path": "deep-dive/search/hybrid-ranking.md"}),
        ("get_best_practice", {"target": "python", "category": "testing"}),
        ("get_connection_graph", {"start": "deep-dive/search/hybrid-ranking.md", "max_nodes": 3}),
    ]
    assert {name for name, _args in calls} == set(FACE_TOOLS), (
        "a tool of the GrooveSeek face is not called here"
    )
    requests: list[dict[str, object]] = [
        {"method": "tools/call", "params": {"name": name, "arguments": args}} for name, args in calls
    ]
    requests += [
        {"method": "resources/list"},
        {"method": "resources/templates/list"},
        {"method": "resources/read", "params": {"uri": "kb://topic/deep-dive/search"}},
        {"method": "resources/read", "params": {"uri": "kb://doc/notes.md"}},
        {"method": "resources/read", "params": {"uri": "kb://doc/Notes.md"}},
    ]
    args = ["--dialect", "grooveseek", "--kb-path", str(kb)]
    session = ts_session(sandbox, requests, serve_args=args, cwd=sandbox.root)
    for index, (name, _args) in enumerate(calls):
        result = session.result(index)
        assert result["isError"] is False and result["content"][0]["type"] == "text", name
    assert (
        session.result(1)["structuredContent"]["results"][0]["path"] == "deep-dive/search/hybrid-ranking.md"
    )
    assert "Use pytest." in session.result(4)["structuredContent"]["content"]
    listed = {r["name"]: r["description"] for r in session.result(6)["resources"]}
    assert listed["deep-dive/search"] == "2 indexed document(s) under deep-dive/search"
    assert [t["uriTemplate"] for t in session.result(7)["resourceTemplates"]] == ["kb://doc/{path}"]
    assert "kb://doc/deep-dive/search/reranking.md" in session.result(8)["contents"][0]["text"]
    notes = session.result(9)["contents"][0]
    assert notes["text"] == (GROOVESEEK_KB / "notes.md").read_text() and notes["mimeType"] == "text/markdown"
    assert session.error(10)["data"]["problem"] == "resource_not_found"


def test_without_node_the_typescript_client_fails_saying_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH holding no node
    assert not os.access(tmp_path / "node", os.X_OK)
    with pytest.raises(pytest.fail.Exception, match=r"node is not on PATH.*make setup"):
        node()
