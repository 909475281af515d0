"""The command line as a user meets it (issue 14): errors in `--format json` too, flags named as flags,
unquoted queries, `read` by page name in the default corpus, the closest corpus suggested (also over
MCP), and text output without Python reprs or "1 hits". Real processes, one real daemon per module,
a real MCP stdio client.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from support.mcp_world import McpClient, module_sandbox
from support.sandbox import SMALL_WIKI, Sandbox, hm

STORAGE = """\
# Storage

The index lives in one LanceDB table per corpus. Its rows are written by one writer: the
quokka-ledger keeps the order of writes.

Its long quokkarecordkeepingsetting moves the store; the store moves with it.
"""


def json_error(out: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The one JSON error document of a `--format json` command that failed: on stdout, nothing else."""
    document = json.loads(out.stdout)
    assert set(document) == {"error"} and set(document["error"]) == {"type", "message", "data"}
    assert "Traceback" not in out.stderr
    error: dict[str, Any] = document["error"]
    return error


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    with module_sandbox(model_cache) as box:
        repo = box.make_repo(pages=SMALL_WIKI)
        wiki = repo / ".hallouminate" / "wiki"
        (wiki / "storage.md").write_text(STORAGE)
        for folder in ("alpha", "beta"):
            (wiki / folder).mkdir()
            (wiki / folder / "notes.md").write_text(f"# Notes of {folder}\n\nNothing yet.\n")
        indexed = hm(box, "index", cwd=repo)
        assert indexed.returncode == 0, indexed.stderr
        yield box


@pytest.fixture(scope="module")
def mcp(world: Sandbox) -> Iterator[McpClient]:
    client = McpClient(world)
    yield client
    client.close()


# -- before any daemon: refused by the CLI itself ----------------------------------------------------------
def test_errors_are_json_with_format_json_and_keep_their_exit_codes(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(wiki=None)
    # No daemon: `daemon status` answers exit 3, in JSON an error document (before: text on stdout).
    status = hm(sandbox, "daemon", "status", "--format", "json", cwd=repo)
    assert status.returncode == 3
    error = json_error(status)
    assert error["type"] == "unavailable" and "no daemon is running" in error["message"]
    assert error["data"]["socket"] == str(sandbox.socket)

    # A bad option value is refused before `--format` is parsed: still JSON, naming the flag.
    bad = hm(sandbox, "ground", "--top-files", "0", "--format", "json", "x", cwd=repo)
    assert bad.returncode == 2
    error = json_error(bad)
    assert error["type"] == "usage" and error["data"] == {"param": "--top-files"}
    assert "'--top-files'" in error["message"] and "top_files" not in error["message"]

    # One of our errors keeps its wire type and data: the repository exists already (Conflict).
    again = hm(sandbox, "init-repo", "sample", "--format", "json", cwd=repo)
    assert again.returncode == 2
    error = json_error(again)
    assert error["type"] == "conflict" and error["data"]["path"].endswith(".hallouminate/config.toml")
    assert not sandbox.socket.exists()  # none of these needed (or started) a daemon

    text = hm(sandbox, "init-repo", "sample", cwd=repo)
    assert text.returncode == 2 and text.stdout == "" and "already exists" in text.stderr


def test_results_have_json_too(sandbox: Sandbox) -> None:
    fresh = sandbox.root / "fresh"
    fresh.mkdir()
    made = hm(sandbox, "init-repo", "fresh", "--format", "json", cwd=fresh)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == {
        "written": [
            str(fresh / ".hallouminate" / "config.toml"),
            str(fresh / ".hallouminate" / "wiki" / "index.md"),
        ],
        "corpus": "repo:fresh:wiki",
    }
    model = hm(sandbox, "model", "status", "--format", "json", cwd=fresh)
    assert model.returncode == 0, model.stderr
    shown = json.loads(model.stdout)
    assert shown["installed"] is True and shown["model_name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "model.onnx" in shown["files"]


def test_flags_are_named_as_flags(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(wiki=None)
    counts = hm(sandbox, "ground", "the daemon", "--output", "counts", cwd=repo)
    assert counts.returncode == 2
    assert "--output counts needs --match phrase" in counts.stderr and "add --match phrase" in counts.stderr
    assert 'match "phrase"' not in counts.stderr and "output:" not in counts.stderr
    top = hm(sandbox, "ground", "x", "--top-files", "0", cwd=repo)
    assert top.returncode == 2 and "'--top-files'" in top.stderr and "top_files" not in top.stderr


# -- through the daemon --------------------------------------------------------------------------------------
def test_an_unquoted_query_is_one_query(world: Sandbox) -> None:
    repo = world.root / "sample"
    out = hm(world, "ground", "how", "does", "the", "shim", "reach", "the", "daemon", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("how does the shim reach the daemon  ")


def test_read_defaults_to_the_wiki_and_finds_a_page_by_name(world: Sandbox) -> None:
    repo = world.root / "sample"
    wiki = repo / ".hallouminate" / "wiki"
    # The exact path, in the default corpus.
    exact = hm(world, "read", "storage.md", cwd=repo)
    assert exact.returncode == 0, exact.stderr
    assert exact.stdout == STORAGE
    # The path plus ".md".
    named = hm(world, "read", "storage", cwd=repo)
    assert named.returncode == 0, named.stderr
    assert named.stdout == STORAGE
    # The one file of that name anywhere in the corpus.
    deep = hm(world, "read", "getting-started", "--format", "json", cwd=repo)
    assert deep.returncode == 0, deep.stderr
    page = json.loads(deep.stdout)
    assert page["path"] == "guides/getting-started.md"
    assert page["content"] == (wiki / "guides" / "getting-started.md").read_text()
    # Two files of that name: neither is guessed.
    both = hm(world, "read", "notes", cwd=repo)
    assert both.returncode == 2
    assert "'notes' names 2 files" in both.stderr and "alpha/notes.md, beta/notes.md" in both.stderr
    # A miss reports the page as asked, with the daemon's listing.
    missing = hm(world, "read", "nowhere", "--format", "json", cwd=repo)
    assert missing.returncode == 2
    error = json_error(missing)
    assert error["type"] == "not_found" and error["data"]["path"] == "nowhere"
    # CORPUS PAGE still works.
    explicit = hm(world, "read", "repo:sample:wiki", "storage", cwd=repo)
    assert explicit.returncode == 0 and explicit.stdout == STORAGE


def test_an_unknown_corpus_suggests_the_closest_in_the_cli_and_over_mcp(
    world: Sandbox, mcp: McpClient
) -> None:
    repo = world.root / "sample"
    out = hm(world, "read", "wiki", "storage", cwd=repo)
    assert out.returncode == 2
    assert "unknown corpus 'wiki'; did you mean 'repo:sample:wiki'?" in out.stderr
    as_json = hm(world, "ground", "x", "--corpus", "wiki", "--format", "json", cwd=repo)
    assert as_json.returncode == 2
    assert json_error(as_json)["data"]["closest"] == "repo:sample:wiki"

    for tool, args in (("read_markdown", {"path": "storage.md"}), ("ground", {"query": "x"})):
        with pytest.raises(MCPError) as info:
            mcp.call(tool, {"cwd": str(repo), "corpus": "wiki", **args})
        assert info.value.data["closest"] == "repo:sample:wiki", tool
        assert "did you mean 'repo:sample:wiki'?" in info.value.message


def test_daemon_status_text_has_no_python_reprs(world: Sandbox) -> None:
    out = hm(world, "daemon", "status", cwd=world.root)
    assert out.returncode == 0, out.stderr
    assert not re.search(r"[\[{]'", out.stdout), out.stdout
    lines = out.stdout.splitlines()
    roots = lines.index("watched_roots:")
    assert lines[roots + 1] == f"  {world.root / 'sample' / '.hallouminate' / 'wiki'}"
    assert "counters:" in lines and any(re.fullmatch(r"  watcher_batches: \d+", line) for line in lines)


def test_one_hit_is_one_hit_and_small_snippets_show_the_match(world: Sandbox) -> None:
    repo = world.root / "sample"
    once = hm(world, "ground", "quokka-ledger", "--match", "phrase", cwd=repo)
    assert once.returncode == 0, once.stderr
    assert once.stdout.splitlines()[0].endswith("  1 hit  1 occurrence")

    phrase = hm(
        world, "ground", "one LanceDB table", "--match", "phrase", "--snippet-chars", "20", "--format", "json",
        cwd=repo,
    )  # fmt: skip
    assert phrase.returncode == 0, phrase.stderr
    snippet = json.loads(phrase.stdout)["docs"][0]["chunks"][0]["snippet"]
    # The whole phrase, between ellipses (before: the lead-in context pushed "table" out: "…in one LanceDB…").
    assert snippet == "…one LanceDB table…"

    # A long matched word is shown whole when it fits (before: "…long quokkarecordkeepingsett…").
    long_word = hm(
        world, "ground", "quokkarecordkeepingsetting", "--snippet-chars", "30", "--top-files", "1",
        "--format", "json", cwd=repo,
    )  # fmt: skip
    assert long_word.returncode == 0, long_word.stderr
    snippet = json.loads(long_word.stdout)["docs"][0]["chunks"][0]["snippet"]
    assert "quokkarecordkeepingsetting" in snippet and snippet.startswith("…") and len(snippet) <= 30


def test_corpus_stats_text_shows_a_date(world: Sandbox, mcp: McpClient) -> None:
    stats = mcp.call("corpus_stats", {"cwd": str(world.root / "sample")})
    text = stats.content[0].text
    assert re.search(r"^  last_indexed: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$", text, re.M), text
    assert "last_indexed_ms" not in text
    assert stats.structured_content["last_indexed_ms"] > 0  # the structured result keeps the number


def test_replace_match_lists_each_line_once(world: Sandbox, mcp: McpClient) -> None:
    repo = world.root / "sample"
    (repo / ".hallouminate" / "wiki" / "twice.md").write_text("# Twice\n\nfoo and foo\n\nfoo again\n")
    with pytest.raises(MCPError) as info:
        mcp.call("add_markdown", {
            "cwd": str(repo), "corpus": "repo:sample:wiki", "path": "twice.md", "content": "bar",
            "replace_match": "foo",
        })  # fmt: skip
    assert info.value.data["problem"] == "match-not-unique"
    assert info.value.data["count"] == 3 and info.value.data["lines"] == [3, 5]
    assert "occurs 3 times in 'twice.md' (lines 3, 5)" in info.value.message
