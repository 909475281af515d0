"""SIGKILL the daemon in the middle of a write (a test-only fault point): the page is its old version or its
new one, whole, never partial; the next daemon sweeps the temp files the dead one left.
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

CORPUS = "repo:crash:wiki"
# A few kilobytes: "half written" is then a real partial page, and re-embedding stays quick.
OLD = "# Crash page\n\n" + "The original sentence about granite quarries.\n" * 60
NEW = "# Crash page\n\n" + "The replacement sentence about basalt columns.\n" * 80


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


async def killed_while(w: World, s: ClientSession, point: str, args: dict) -> None:  # type: ignore[type-arg]
    """Arm a kill at ``point``, make the call, check the daemon died mid-call."""
    pid = w.box.daemon_pid()
    assert pid and pid_alive(pid)
    w.arm(point, "kill")
    with pytest.raises(MCPError) as info:
        await s.call_tool("add_markdown", args)
    assert info.value.code == -32603, info.value.message  # the daemon went away: not the caller's fault
    # The socket closes as the process exits, a moment before the kernel marks it dead.
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pid_alive(pid)
    assert not (w.faults / f"{point}.kill").exists(), "the fault fired"


def journal(w: World) -> list[Path]:
    directory = w.state / "pending-writes"
    return sorted(directory.iterdir()) if directory.exists() else []


async def test_a_kill_mid_write_leaves_the_old_or_the_new_page_whole(w: World) -> None:
    repo = w.box.make_repo("crash", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    page = wiki / "crash.md"
    cwd = str(repo)
    base = {"cwd": cwd, "corpus": CORPUS}
    async with mcp_session(w.box) as s:
        await call(s, "add_markdown", **base, path="crash.md", content=OLD)

        for point, survivor in (("temp-half-written", OLD), ("after-fsync", OLD), ("after-publish", NEW)):
            await killed_while(w, s, point, {**base, "path": "crash.md", "content": NEW, "overwrite": True})
            assert page.read_text() == survivor, f"{point}: the page must be wholly old or wholly new"
            assert journal(w), f"{point}: the dead daemon's journal record is left for the next one"
            if point != "after-publish":
                leftovers = temp_files(wiki)
                assert len(leftovers) == 1, f"{point}: the kill came mid-write, so its temp file is there"
                if point == "temp-half-written":
                    assert 0 < leftovers[0].stat().st_size < len(NEW.encode())
            # The next call starts a new daemon, which sweeps what the dead one left before serving.
            read = await call(s, "read_markdown", **base, path="crash.md")
            assert read["content"] == survivor
            assert temp_files(wiki) == [] and journal(w) == [], point

        # The index caught up with the version that survived (the catch-up runs in the background: a
        # search meanwhile names it, so wait for the answer that no longer does).
        deadline = time.monotonic() + 120
        while True:
            found = await call(s, "ground", **base, query="replacement sentence about basalt columns")
            if all(w["code"] != "not-indexed" for w in found["warnings"]):
                break
            assert time.monotonic() < deadline, found["warnings"]
            await asyncio.sleep(0.1)
        assert found["docs"][0]["path"] == "crash.md"

        # A new page: killed half-written it does not exist at all; killed once linked it is whole.
        await killed_while(w, s, "temp-half-written", {**base, "path": "fresh.md", "content": NEW})
        assert not (wiki / "fresh.md").exists() and len(temp_files(wiki)) == 1
        listed = await call(s, "list_files", **base)
        assert "fresh.md" not in [f["path"] for f in listed["files"]]
        assert temp_files(wiki) == []

        await killed_while(w, s, "after-publish", {**base, "path": "fresh.md", "content": NEW})
        assert (wiki / "fresh.md").read_text() == NEW
        assert len(temp_files(wiki)) == 1  # its temp name is a second link to the same file
        listed = await call(s, "list_files", **base)
        assert "fresh.md" in [f["path"] for f in listed["files"]]
        assert temp_files(wiki) == [] and (wiki / "fresh.md").read_text() == NEW
        assert journal(w) == []
