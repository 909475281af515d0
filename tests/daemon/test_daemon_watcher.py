"""Always current: edits made outside the tools reach search through the watcher, or catch-up at start."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from hallouminate.client import DaemonConnection, connect_or_spawn, stop_daemon
from support.sandbox import SMALL_WIKI, Sandbox

# Bounds a hang only: how soon an edit shows is a figure for bench/, not a pass mark on a shared machine.
DEADLINE_SECS = 60.0
# The wiki of the tests whose pages are found by words no page has before the test writes them: two pages
# (embedding fewer costs every test seconds of CPU); overview.md is the old root's page.
PAGES = ("index.md", "overview.md")


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
    # The small wiki's other pages outrank overview.md for the query until the edit lands (with PAGES
    # alone it comes first before any edit, and the watcher's part is not shown).
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
    repo = sandbox.make_repo(pages=PAGES)
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
    finally:
        await conn.close()
    assert await stop_daemon()
    (repo / ".hallouminate" / "wiki" / "wombat.md").write_text(
        "# Wombat\n\nThe cubic wombat ledger, kept by the team.\n"
    )
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
    repo = sandbox.make_repo(pages=PAGES)
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
        (wiki / "phoenix.md").write_text("# Phoenix\n\nThe ember phoenix checklist, kept by the team.\n")

        async def back() -> bool:
            return (await paths_for(conn, repo, "ember phoenix checklist"))[:1] == ["phoenix.md"]

        await wait_until(back)
        status = await conn.call("status")
        assert str(wiki) in status["watched_roots"]
        # And it is watched, not only caught up: a page written now comes in through a batch.
        batches = await watcher_batches(conn)
        (wiki / "griffin.md").write_text("# Griffin\n\nThe cinder griffin roster, kept by the team.\n")

        async def watched() -> bool:
            return (await paths_for(conn, repo, "cinder griffin roster"))[:1] == ["griffin.md"]

        await wait_until(watched)
        assert await watcher_batches(conn) > batches
    finally:
        await conn.close()


async def replaced_root_is_watched(sandbox: Sandbox, replace: Callable[[Path], None]) -> None:
    """After ``replace(wiki)`` swaps the corpus root for a new directory at once (before the watcher looks),
    a page written into the new directory becomes searchable: the watch follows the path, not the old
    directory."""
    repo = sandbox.make_repo(pages=PAGES)
    wiki = repo / ".hallouminate" / "wiki"
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
        assert str(wiki) in (await conn.call("status"))["watched_roots"]
        batches = await watcher_batches(conn)
        replace(wiki)
        # Written once the watcher has run a batch since the swap: the new directory is being watched by
        # then or never (a page written before would be found by any catch-up pass).
        await wait_until(lambda: _more(conn, batches))
        (wiki / "phoenix.md").write_text("# Phoenix\n\nThe ember phoenix checklist, kept by the team.\n")

        async def found() -> bool:
            return (await paths_for(conn, repo, "ember phoenix checklist"))[:1] == ["phoenix.md"]

        print(f"page in the new root found in {await wait_until(found):.2f} s")
        # The pages of the old directory are gone from search: the new one holds only what was put there.
        assert "overview.md" not in await paths_for(conn, repo, "overview")
    finally:
        await conn.close()


async def _more(conn: DaemonConnection, batches: int) -> bool:
    return await watcher_batches(conn) > batches


async def test_a_root_removed_and_made_again_at_once_is_watched_again(sandbox: Sandbox) -> None:
    def remove_and_make(wiki: Path) -> None:
        # ext4 gives the new directory the freed inode number at once: (st_dev, st_ino) alone cannot tell
        # the two apart, which is why the watcher goes by watchfiles' report of the root's deletion.
        shutil.rmtree(wiki)
        wiki.mkdir()

    await replaced_root_is_watched(sandbox, remove_and_make)


async def test_a_root_replaced_by_a_rename_is_watched_again(sandbox: Sandbox) -> None:
    def rename_over(wiki: Path) -> None:
        # The old directory moved aside (its watch follows it) and a new one moved into its place.
        staging = wiki.parent / "wiki.new"
        staging.mkdir()
        (staging / "seed.md").write_text("# Seed\n\nA seed page.\n")
        wiki.rename(wiki.parent / "wiki.old")
        staging.rename(wiki)

    await replaced_root_is_watched(sandbox, rename_over)


async def test_a_root_replaced_while_a_process_is_inside_it_is_watched_again(sandbox: Sandbox) -> None:
    holders: list[subprocess.Popen[bytes]] = []

    def replace_under_a_shell(wiki: Path) -> None:
        # A process whose working directory is the old root (a shell cd'd into the wiki) keeps that
        # directory alive, so the kernel reports its deletion only when the process leaves: the watcher
        # must notice the swap without that report.
        holders.append(subprocess.Popen(["sleep", "600"], cwd=wiki))
        shutil.rmtree(wiki)
        wiki.mkdir()

    try:
        await replaced_root_is_watched(sandbox, replace_under_a_shell)
        assert holders[0].poll() is None  # the old directory was held all along
    finally:
        for proc in holders:
            proc.kill()
            proc.wait()
