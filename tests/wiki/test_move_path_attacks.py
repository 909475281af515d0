"""Every path attack of ``path_attacks`` against move_markdown, through MCP, as its ``from`` and as its
``to``: each one is refused with -32602 (the right ``data.problem`` where the attack names one), no
message carries a byte of the secret beside the corpus, and nothing anywhere changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.path_attacks import ATTACKS, SECRET, diff, plant_traps, snapshot
from support.sandbox import mcp_session
from support.wiki_world import World, problem, refused, world

WIKI = "repo:moveattack:wiki"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


def world_snapshot(w: World) -> dict[str, Any]:
    root = w.box.root
    own = (root / "state", root / "data", root / "run", root / "cache", w.faults)
    return snapshot(root, Path("/etc/passwd"), skip=own)


async def test_every_path_attack_on_either_path_is_refused_and_nothing_changes(w: World) -> None:
    repo = w.box.make_repo("moveattack", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "overview.md").write_text("# Overview\n\nSee [[setup]].\n")
    (wiki / "setup.md").write_text("# Setup\n\n[back](overview.md)\n")
    plant_traps(wiki, w.box.root / "outside")
    cwd = str(repo)
    before = world_snapshot(w)
    calls = 0
    async with mcp_session(w.box) as s:
        for attack in ATTACKS:
            for args in ({"from": attack.path, "to": "moved.md"}, {"from": "overview.md", "to": attack.path}):
                error = await refused(s, "move_markdown", cwd=cwd, corpus=WIKI, **args)
                calls += 1
                assert SECRET not in error.message
                if attack.problem is not None:
                    assert problem(error) == attack.problem, (attack.label, args, error.message)
    assert calls == 2 * len(ATTACKS) >= 2 * 40
    assert diff(before, world_snapshot(w)) == []
