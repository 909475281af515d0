"""Always current: edits made outside the tools reach search through the watcher, or catch-up at start."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from hallouminate.client import DaemonConnection, connect_or_spawn, stop_daemon
from support.sandbox import SMALL_WIKI, Sandbox

# Bounds a hang only: how soon an edit shows is a figure for bench/, not a pass mark on a shared machine.
DEADLINE_SECS = 60.0


async def paths_for(conn: DaemonConnection, repo: Path, query: str) -> list[str]:
    result = await conn.call("ground", str(repo), {"query": query, "top_files": 3})
    return [doc["path"] for doc in result["docs"]]


async def watcher_batches(conn: DaemonConnection) -> int:
    return int((await conn.call("status"))["counters"]["watcher_batches"])


async def wait_until(check: Callable[[], Awaitable[bool]], deadline: float = DEADLINE_SECS) -> float:
    """Seconds until ``check()`` holds; fails past ``deadline`` seconds."""
    started = time.monotonic()
    while True:
        if await check():
            return time.monotonic() - started
        if time.monotonic() - started > deadline:
            raise AssertionError(f"not reflected within {deadline} s")
        await asyncio.sleep(0.05)


async def test_edit_rename_delete_outside_the_tools_reach_search(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
        page = wiki / "overview.md"

        async def through_the_watcher(
            change: Callable[[], object], reflected: Callable[[], Awaitable[bool]]
        ) -> float:
            # The watcher, not a search-time check, brought the change in: it ran a batch for it.
            batches = await watcher_batches(conn)
            change()
            seconds = await wait_until(reflected)
            assert await watcher_batches(conn) > batches
            return seconds

        async def edited() -> bool:
            return (await paths_for(conn, repo, "zanzibar quokka protocol"))[:1] == ["overview.md"]

        seconds = await through_the_watcher(
            lambda: page.write_text(
                page.read_text() + "\n## Quokka\n\nThe zanzibar quokka protocol is our mascot.\n"
            ),
            edited,
        )
        print(f"edit reflected in {seconds:.2f} s")

        async def renamed() -> bool:
            found = await paths_for(conn, repo, "zanzibar quokka protocol")
            return found[:1] == ["about.md"] and "overview.md" not in found

        seconds = await through_the_watcher(lambda: page.rename(wiki / "about.md"), renamed)
        print(f"rename reflected in {seconds:.2f} s")

        async def deleted() -> bool:
            return "about.md" not in await paths_for(conn, repo, "zanzibar quokka protocol")

        seconds = await through_the_watcher((wiki / "about.md").unlink, deleted)
        print(f"delete reflected in {seconds:.2f} s")
    finally:
        await conn.close()


async def test_edits_made_while_no_daemon_ran_are_caught_up(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
    finally:
        await conn.close()
    assert await stop_daemon()
    (repo / ".hallouminate" / "wiki" / "wombat.md").write_text("# Wombat\n\nThe cubic wombat ledger.\n")
    conn = await connect_or_spawn()
    try:
        # The catch-up runs in the background (a search answers meanwhile, warning that it is going):
        # no index call is needed for the page to be found.
        async def caught_up() -> bool:
            return (await paths_for(conn, repo, "cubic wombat ledger"))[:1] == ["wombat.md"]

        await wait_until(caught_up)
    finally:
        await conn.close()


async def test_a_root_that_disappears_and_comes_back_is_watched_again(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
        batches = await watcher_batches(conn)
        shutil.rmtree(wiki)

        async def noticed() -> bool:  # the watcher handled the removal: it knows the root is gone
            return await watcher_batches(conn) > batches

        await wait_until(noticed)
        wiki.mkdir()
        (wiki / "phoenix.md").write_text("# Phoenix\n\nThe ember phoenix checklist.\n")

        async def back() -> bool:
            return (await paths_for(conn, repo, "ember phoenix checklist"))[:1] == ["phoenix.md"]

        await wait_until(back)
        status = await conn.call("status")
        assert str(wiki) in status["watched_roots"]
    finally:
        await conn.close()
