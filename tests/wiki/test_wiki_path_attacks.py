"""Every path attack of ``path_attacks`` against add_markdown and delete_markdown, through MCP: each one is
refused with -32602 and the right ``data.problem``, and nothing outside the corpus (or, for the refused
calls, inside it) changes by a single byte or mode bit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from support.path_attacks import (
    ATTACKS,
    PLANTED_ATTACKS,
    SECRET,
    SWAPS,
    WRITE_RULE_ATTACKS,
    diff,
    plant_traps,
    reset_tree,
    snapshot,
)
from support.sandbox import mcp_session
from support.wiki_world import World, git, problem, refused, temp_files, world

WIKI = "repo:attack:wiki"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


@pytest.fixture(scope="module")
def repo(w: World) -> Path:
    """A git checkout whose wiki is full of traps; a second corpus rooted at the whole checkout."""
    repo = w.box.make_repo("attack", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "guides").mkdir()
    (wiki / "index.md").write_text(
        "# Attack wiki\n\n<!-- HALLOUMINATE:INDEX-START -->\n<!-- HALLOUMINATE:INDEX-END -->\n"
    )
    (wiki / "overview.md").write_text("# Overview\n\nSecret plans are elsewhere.\n")
    (wiki / "guides" / "setup.md").write_text("# Setup\n")
    plant_traps(wiki, w.box.root / "outside")
    (repo / ".gitignore").write_text("secret-notes.md\n")
    (repo / "secret-notes.md").write_text(f"# Notes\n\n{SECRET}\n")
    git("init", "-q", "-b", "main", cwd=repo)
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(layer.read_text() + '\n[[corpus]]\nname = "whole"\npaths = ["."]\nglobs = ["**/*.md"]\n')
    return repo


def world_snapshot(w: World, *, skip: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Everything a write could reach: the sandbox minus the daemon's own state, store, socket and cache."""
    root = w.box.root
    own = (root / "state", root / "data", root / "run", root / "cache", w.faults)
    return snapshot(root, Path("/etc/passwd"), skip=own + skip)


async def test_every_path_attack_is_refused_and_nothing_changes(w: World, repo: Path) -> None:
    cwd = str(repo)
    before = world_snapshot(w)
    calls = 0
    async with mcp_session(w.box) as s:
        for attack in ATTACKS:
            # A section edit takes the same path checks; it differs only once the leaf is looked at.
            edit = [{"replace_match": "Secret"}] if attack in PLANTED_ATTACKS else []
            for extra in [{}, {"overwrite": True}, *edit]:
                error = await refused(
                    s, "add_markdown", cwd=cwd, corpus=WIKI, path=attack.path, content="# Pwned\n", **extra
                )
                calls += 1
                assert SECRET not in error.message
                if attack.problem is not None:
                    assert problem(error) == attack.problem, (attack.label, extra, error.message)
            error = await refused(s, "delete_markdown", cwd=cwd, corpus=WIKI, path=attack.path)
            calls += 1
            if attack.problem is not None:
                assert problem(error) == attack.problem, (attack.label, "delete", error.message)

        # A corpus rooted at the whole checkout: .git and ignored files are out of reach too.
        whole = [a for a in WRITE_RULE_ATTACKS if a.problem == "git-dir"]
        for path, expected in [(a.path, a.problem) for a in whole] + [
            (".git/HEAD", "git-dir"),
            ("secret-notes.md", "not-in-corpus"),
            ("src/main.py", "not-in-corpus"),
        ]:
            for tool, args in (
                ("add_markdown", {"content": "# Pwned\n", "overwrite": True}),
                ("delete_markdown", {}),
            ):
                error = await refused(s, tool, cwd=cwd, corpus="whole", path=path, **args)
                calls += 1
                assert problem(error) == expected, (path, tool, error.message)
    assert calls >= 3 * 40
    assert diff(before, world_snapshot(w)) == []


async def test_a_symlink_swapped_in_between_check_and_write_is_refused(w: World, repo: Path) -> None:
    wiki = repo / ".hallouminate" / "wiki"
    outside = w.box.root / "outside"
    async with mcp_session(w.box) as s:
        for swap in SWAPS:
            swap.prepare(wiki, outside)
            # The swap itself changes the wiki; nothing else may change.
            before = world_snapshot(w, skip=(wiki,))
            w.arm(swap.point, "pause")
            args: dict[str, Any] = {"cwd": str(repo), "corpus": WIKI, "path": swap.path}
            if swap.tool == "add_markdown":
                args.update(
                    content="# Pwned\n\nOverwritten through a swapped link.\n", overwrite=swap.overwrite
                )
            pending = asyncio.ensure_future(s.call_tool(swap.tool, args))
            await w.reached(swap.point)
            swap.swap(wiki, outside)
            w.release(swap.point)
            with pytest.raises(MCPError) as info:
                await asyncio.wait_for(pending, 30)
            assert info.value.code == -32602, (swap.label, info.value.message)
            assert problem(info.value) == swap.problem, (swap.label, info.value.message)
            assert diff(before, world_snapshot(w, skip=(wiki,))) == [], swap.label
            assert temp_files(wiki) == [] and temp_files(outside) == [], swap.label
            assert (outside / "secret.md").read_text() == f"# Secret\n\n{SECRET}\n"
            first = swap.path.split("/")[0]
            for leftover in (wiki / first, wiki / f"{first}.moved", wiki / f"{first}-moved"):
                if leftover.is_symlink() or leftover.exists():
                    reset_tree(leftover)
    assert list(w.faults.iterdir()) == [], "every armed fault fired"
