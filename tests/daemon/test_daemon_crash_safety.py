"""kill -9 during a multi-file index, restart, re-run: every file consistent, no duplicate or orphan rows.

Each cycle changes the wiki (pages grow or shrink, some are deleted, some added), starts an index through
the daemon, SIGKILLs the daemon at a different moment (mid-embedding before any commit, right after the
first commit, right after the second), and then checks the store twice with the daemon stopped: straight
after the kill every file must be wholly its old or wholly its new version (one commit per file group),
and after a restart and a full re-run every file on disk must match its rows exactly.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path

import pytest

from hallouminate.client import DaemonUnavailable, connect_or_spawn
from support.crash import (
    PAGES,
    check_file_rows,
    check_no_temp_files,
    disk_state,
    index_to_completion,
    mutate,
    page_text,
    store_dir,
    stored_files,
    versions,
)
from support.sandbox import Sandbox, kill_daemon_of


async def index_and_kill(sandbox: Sandbox, repo: Path, moment: str) -> None:
    """Start the daemon and an index, and SIGKILL the daemon at ``moment`` while the run is going on.

    A restarted daemon catches up the repositories it served before on its own, so from the second cycle
    on that catch-up is the run being killed (the ``index`` call waits behind it): commits are counted
    from the store's versions before the start, when nothing but a run can add one.
    """
    base = versions(sandbox)
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        progress: list[dict] = []
        index = asyncio.ensure_future(conn.call("index", str(repo), {}, on_progress=progress.append))
        deadline = time.monotonic() + 60
        while not index.done() and time.monotonic() < deadline:
            # Progress comes every 0.5 s at most: by the time it says 12 files, about 20 at most are
            # visited (~200 chunks), far short of the first flush at 512 rows.
            if moment == "embedding" and progress and progress[-1]["done"] >= PAGES // 5:
                break
            if moment == "after-1st-commit" and versions(sandbox) >= base + 1:
                break
            if moment == "after-2nd-commit" and versions(sandbox) >= base + 2:
                break
            await asyncio.sleep(0.005)
        assert not index.done(), f"the index finished before the kill ({moment}): make it longer"
        kill_daemon_of(sandbox, signal.SIGKILL)
        with pytest.raises(DaemonUnavailable):
            await asyncio.wait_for(index, 30)
    finally:
        await conn.close()


async def test_kill_9_mid_index_then_rerun_leaves_every_file_consistent(sandbox: Sandbox) -> None:
    rng = random.Random(20240611)
    repo = sandbox.make_repo("crash", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    for i in range(PAGES):
        (wiki / f"page-{i:02d}.md").write_text(page_text(rng, f"page-{i:02d}"))
    before: dict[str, str] = {}  # what the store held, fully indexed, before this cycle's run

    # The moments: mid-embedding of the first index, before any commit; right after a run's first commit
    # (deleting the pages gone from disk comes first); right after its second (the first flush of rows,
    # which needs every page rewritten to leave work after it).
    cycles = (("embedding", 0), ("after-1st-commit", 3), ("after-2nd-commit", 1))
    for cycle, (moment, rewrite_every) in enumerate(cycles):
        if cycle:
            mutate(wiki, rng, cycle, rewrite_every)
        now = disk_state(wiki)
        await index_and_kill(sandbox, repo, moment)

        # Straight after the kill: each file is wholly its old version, wholly its new one, or absent.
        killed = {path: check_file_rows(path, rows) for path, rows in stored_files(sandbox, repo).items()}
        for path, digest in killed.items():
            assert digest in {before.get(path), now.get(path)}, f"{moment}: {path} holds an unknown version"
        assert killed != now, f"{moment}: the run was complete when killed"
        if moment == "embedding":
            assert not killed, "killed too late: rows were already committed"
        else:
            assert killed != before, f"{moment}: nothing was committed before the kill"

        result = await index_to_completion(sandbox, repo)
        assert result["corpora"][0]["files_skipped"] == 0

        stored = stored_files(sandbox, repo)
        assert set(stored) == set(now), f"{moment}: orphan or missing files"
        for path, rows in stored.items():
            assert check_file_rows(path, rows) == now[path], f"{moment}: {path} is stale"
            assert rows[0]["file_size"] == (wiki / path).stat().st_size
        check_no_temp_files(store_dir(sandbox), wiki, Path(sandbox.env["XDG_STATE_HOME"]))
        before = now
