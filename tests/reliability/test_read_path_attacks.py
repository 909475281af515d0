"""The shared path-attack list against every tool that takes a path, through the real MCP client and daemon.

``read_markdown`` and ``backlinks`` take a corpus-relative ``path``; every tool takes ``cwd`` (a path on the
machine) and most take ``corpus`` (a name, which an attacker may shape like a path). Each attack is refused
with -32602; a filesystem snapshot of everything outside the daemon's own state (the corpus, the secrets
beside it, /etc/passwd) is byte-identical before and after; and no error message carries a byte of a file
outside the corpus: a canary planted there (and /etc/passwd's first line) is looked for in every message and
every ``data`` of every refusal. The write tools run the same list in tests/wiki/test_wiki_path_attacks.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, MCPError

from support.faults_world import INVALID_PARAMS, World, fails, ok, world
from support.path_attacks import (
    ATTACKS,
    PLANTED_ATTACKS,
    SECRET,
    STRING_ATTACKS,
    WRITE_RULE_ATTACKS,
    diff,
    plant_traps,
    snapshot,
)
from support.sandbox import mcp_session

WIKI = "repo:attack:wiki"
PASSWD_LINE = Path("/etc/passwd").read_text().splitlines()[0]
# Refused for the same reason by every tool that reads a path (the sandbox's string rules and its lstat walk).
SANDBOX_ATTACKS = STRING_ATTACKS + PLANTED_ATTACKS
# Every attack of the shared list is run below (a new kind of attack there must be given a place here).
assert {a.label for a in ATTACKS} == {a.label for a in SANDBOX_ATTACKS + WRITE_RULE_ATTACKS}


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        created.start()
        yield created


@pytest.fixture(scope="module")
def repo(w: World) -> Path:
    """A git checkout whose wiki is full of traps, secrets beside it, and a corpus rooted at the checkout."""
    repo = w.box.make_repo("attack", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "guides").mkdir()
    (wiki / "overview.md").write_text("# Overview\n\nSee [[guides/setup]].\n")
    (wiki / "guides" / "setup.md").write_text("# Setup\n\nBack to [[overview]].\n")
    plant_traps(wiki, w.box.root / "outside")
    (wiki / "passwd.md").symlink_to("/etc/passwd")
    (repo / ".gitignore").write_text("secret-notes.md\n")
    (repo / "secret-notes.md").write_text(f"# Notes\n\n{SECRET}\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text(f"TOKEN = '{SECRET}'\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, capture_output=True)
    (repo / ".git" / "config").write_text((repo / ".git" / "config").read_text() + f"# {SECRET}\n")
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(layer.read_text() + '\n[[corpus]]\nname = "whole"\npaths = ["."]\nglobs = ["**/*.md"]\n')
    return repo


def world_snapshot(w: World) -> dict[str, Any]:
    """Everything outside the daemon's own state, store, socket and cache: the corpus, the secrets,
    /etc/passwd."""
    root = w.box.root
    own = (root / "state", root / "data", root / "run", root / "cache", root / "daemon.out")
    return snapshot(root, Path("/etc/passwd"), skip=own)


def problem(error: MCPError) -> str | None:
    return error.data.get("problem") if isinstance(error.data, dict) else None


class Refusals:
    """Every refusal of a test, so its messages and data can be searched for leaked contents at the end."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def refused(self, session: ClientSession, tool: str, **arguments: Any) -> MCPError:
        error = await fails(session, tool, INVALID_PARAMS, **arguments)
        self.texts.append(f"{error.message}\n{error.data!r}")
        return error

    def assert_nothing_leaked(self, at_least: int) -> None:
        assert len(self.texts) >= at_least, len(self.texts)
        leaked = [t for t in self.texts if SECRET in t or PASSWD_LINE in t]
        assert leaked == [], leaked[:3]


async def test_every_path_attack_on_read_markdown_and_backlinks_is_refused_and_nothing_changes(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    before = world_snapshot(w)
    seen = Refusals()
    async with mcp_session(w.box) as s:
        # The sandbox refuses these for every tool, naming the same problem as for writes.
        for attack in SANDBOX_ATTACKS:
            for tool in ("read_markdown", "backlinks"):
                error = await seen.refused(s, tool, cwd=cwd, corpus=WIKI, path=attack.path)
                if attack.problem is not None:
                    assert problem(error) == attack.problem, (tool, attack.label, error.message)
        # The write rules' cases are not pages of the wiki: read_markdown finds nothing to read...
        for attack in WRITE_RULE_ATTACKS:
            await seen.refused(s, "read_markdown", cwd=cwd, corpus=WIKI, path=attack.path)
        # ...and backlinks, which by design accepts a page that does not exist (links to a deleted page
        # are worth finding), answers that nothing links there: it read no file at that path.
        for attack in WRITE_RULE_ATTACKS:
            found = await ok(s, "backlinks", cwd=cwd, corpus=WIKI, path=attack.path)
            assert found["backlinks"] == [], (attack.label, found)
        # A symlink to /etc/passwd, in the wiki.
        for tool in ("read_markdown", "backlinks"):
            error = await seen.refused(s, tool, cwd=cwd, corpus=WIKI, path="passwd.md")
            assert problem(error) == "symlink"
        # A corpus rooted at the whole checkout: .git, ignored and unlisted files are out of reach, as are
        # the wiki's traps seen through it.
        whole = [".git/config", ".git/HEAD", "secret-notes.md", "src/main.py", ".gitignore"]
        whole += [f".hallouminate/wiki/{a.path}" for a in PLANTED_ATTACKS] + [".hallouminate/wiki/passwd.md"]
        for path in whole:
            await seen.refused(s, "read_markdown", cwd=cwd, corpus="whole", path=path)
        # Good paths still read: the refusals above are the sandbox's doing, not a broken corpus.
        assert (await ok(s, "read_markdown", cwd=cwd, corpus=WIKI, path="overview.md"))["bytes"] > 0
        assert (await ok(s, "backlinks", cwd=cwd, corpus=WIKI, path="overview.md"))["backlinks"] == [
            "guides/setup.md"
        ]
    seen.assert_nothing_leaked(at_least=2 * len(SANDBOX_ATTACKS) + len(WRITE_RULE_ATTACKS) + 2 + len(whole))
    assert diff(before, world_snapshot(w)) == []


CWD_ATTACKS = [
    "",
    "relative/dir",
    "..",
    "~",
    "/does/not/exist",
    "/etc/passwd",  # a file, not a directory
    "/tmp/\x00/x",
    "/" + "a" * 300,  # a segment over 255 bytes
    "/" + "a/" * 2100,  # over 4096 characters
    "/" + "é/" * 1500,  # under 4096 characters, over 4096 bytes
]
CORPUS_ATTACKS = ["../../etc", "/etc/passwd", f"{WIKI}/../../x", "whole/../../..", "x" * 300, ""]
# One valid call per tool: the attacks replace its cwd or its corpus.
CALLS: dict[str, dict[str, Any]] = {
    "ground": {"query": "overview"},
    "index": {},
    "list_corpora": {},
    "list_files": {},
    "list_tree": {},
    "corpus_stats": {},
    "list_topics": {},
    "read_markdown": {"path": "overview.md"},
    "backlinks": {"path": "overview.md"},
    "add_markdown": {"corpus": WIKI, "path": "new-page.md", "content": "# New\n"},
    "delete_markdown": {"corpus": WIKI, "path": "overview.md"},
    "move_markdown": {"corpus": WIKI, "from": "overview.md", "to": "moved.md"},
    "get_document": {"path": "overview.md"},
    "get_connection_graph": {"start": "overview.md"},
    "get_best_practice": {"target": "python"},
}


async def test_cwd_and_corpus_shaped_like_paths_are_refused_by_every_tool(w: World, repo: Path) -> None:
    before = world_snapshot(w)
    seen = Refusals()
    async with mcp_session(w.box) as s:
        listed = (await s.list_tools()).tools
        assert sorted(t.name for t in listed) == sorted(CALLS), "a tool was added: give it a call here"
        for tool, args in CALLS.items():
            for cwd in CWD_ATTACKS:
                error = await seen.refused(s, tool, cwd=cwd, **args)
                assert "cwd" in error.message, (tool, cwd[:40], error.message)
            if tool == "list_corpora":
                continue  # takes no corpus
            for corpus in CORPUS_ATTACKS:
                await seen.refused(s, tool, cwd=str(repo), **{**args, "corpus": corpus})
        # The daemon's own checks, for a client that skips the shim's: the same refusals on the socket.
        from hallouminate.client import connect_or_spawn
        from hallouminate.errors import InvalidParams

        conn = await connect_or_spawn(spawn=False)
        try:
            for tool, args in CALLS.items():
                for cwd in CWD_ATTACKS:
                    with pytest.raises(InvalidParams) as info:
                        await conn.call(tool, cwd, args)
                    seen.texts.append(f"{info.value.message}\n{info.value.data!r}")
        finally:
            await conn.close()
    seen.assert_nothing_leaked(at_least=len(CALLS) * len(CWD_ATTACKS) * 2 + 9 * len(CORPUS_ATTACKS))
    assert diff(before, world_snapshot(w)) == []
