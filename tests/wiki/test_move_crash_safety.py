"""SIGKILL the daemon in the middle of a move_markdown (test-only fault points): every page is its old
version or its new one, whole; the page is at its old path, its new one or both, never neither; the next
daemon finishes the move at start-up (its redo record), and a ground then finds the new path only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError

from support.sandbox import mcp_session, pid_alive
from support.wiki_world import World, call, temp_files, world

TARGET = "# Target\n\nThe ochre heron calibrates the sextant.\n"
B_OLD = "# B\n\nSee [[target]] for the heron.\n"
B_NEW = "# B\n\nSee [[moved]] for the heron.\n"
C_OLD = "# C\n\nRead [the target](target.md#calibration).\n"
C_NEW = "# C\n\nRead [the target](deep/moved.md#calibration).\n"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


def redo_records(w: World) -> list[Path]:
    directory = w.state / "pending-writes"
    return sorted(directory.glob("*.redo")) if directory.exists() else []


async def killed_moving(w: World, s: ClientSession, base: dict[str, str], point: str, nth: int) -> None:
    """Arm a kill at the ``nth`` pass of ``point``, move target.md, check the daemon died mid-call."""
    pid = w.box.daemon_pid()
    assert pid and pid_alive(pid)
    (w.faults / f"{point}.kill").write_text(str(nth))
    with pytest.raises(MCPError) as info:
        await s.call_tool("move_markdown", {**base, "from": "target.md", "to": "deep/moved.md"})
    assert info.value.code == -32603, info.value.message
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pid_alive(pid)
    assert not (w.faults / f"{point}.kill").exists(), "the fault fired"


async def fresh(w: World, s: ClientSession, name: str) -> tuple[dict[str, str], Path]:
    repo = w.box.make_repo(name, wiki=None)
    base = {"cwd": str(repo), "corpus": f"repo:{name}:wiki"}
    for rel, text in (("target.md", TARGET), ("b.md", B_OLD), ("c.md", C_OLD)):
        await call(s, "add_markdown", **base, path=rel, content=text)
    return base, repo / ".hallouminate" / "wiki"


async def finished(w: World, s: ClientSession, base: dict[str, str], wiki: Path) -> None:
    """The next call starts a daemon, which finishes the move before serving writes and catching up."""
    listed = await call(s, "list_files", **base)
    paths = [f["path"] for f in listed["files"]]
    assert "deep/moved.md" in paths and "target.md" not in paths
    assert (wiki / "deep/moved.md").read_text() == TARGET
    assert (wiki / "b.md").read_text() == B_NEW and (wiki / "c.md").read_text() == C_NEW
    assert "./moved.md" in (wiki / "deep/index.md").read_text()
    assert "./target.md" not in (wiki / "index.md").read_text()
    assert redo_records(w) == [] and temp_files(wiki) == []
    # The catch-up indexes what the finished move changed: ground ends up with the new path only.
    deadline = time.monotonic() + 120
    while True:
        found = await call(s, "ground", **base, query="ochre heron calibrates the sextant", top_files=10)
        paths = [doc["path"] for doc in found["docs"]]
        if paths and paths[0] == "deep/moved.md" and "target.md" not in paths:
            break
        assert time.monotonic() < deadline, (paths, found["warnings"])
        await asyncio.sleep(0.2)


async def test_a_kill_once_the_plan_is_durable_is_finished_by_the_next_daemon(w: World) -> None:
    async with mcp_session(w.box) as s:
        base, wiki = await fresh(w, s, "planned")
        await killed_moving(w, s, base, "after-plan", 1)
        # Nothing was touched yet: every page is old, and the plan waits for the next daemon.
        assert (wiki / "target.md").read_text() == TARGET and not (wiki / "deep").exists()
        assert (wiki / "b.md").read_text() == B_OLD and (wiki / "c.md").read_text() == C_OLD
        assert len(redo_records(w)) == 1
        await finished(w, s, base, wiki)


@pytest.mark.parametrize(("point", "nth"), [("after-publish", 2), ("temp-half-written", 3)])
async def test_a_kill_between_files_leaves_each_page_whole_and_nothing_lost(
    w: World, point: str, nth: int
) -> None:
    async with mcp_session(w.box) as s:
        base, wiki = await fresh(w, s, f"mid-{point}")
        await killed_moving(w, s, base, point, nth)
        # The new page was published first (pass 1), so it is whole; the old one is still there.
        assert (wiki / "deep/moved.md").read_text() == TARGET
        assert (wiki / "target.md").read_text() == TARGET
        assert (wiki / "b.md").read_text() in (B_OLD, B_NEW)
        assert (wiki / "c.md").read_text() in (C_OLD, C_NEW)
        if point == "after-publish":
            assert (wiki / "b.md").read_text() == B_NEW  # killed right after its rename
        else:
            assert len(temp_files(wiki)) == 1  # killed half way through a temp file
        assert len(redo_records(w)) == 1
        await finished(w, s, base, wiki)
