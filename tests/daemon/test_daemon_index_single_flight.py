"""`index` is single-flight per corpus: a client's call while another client's index of the corpus runs is
refused (-32602, `Conflict`, naming how long the running one has been going) unless it asks to `wait`;
`force` rebuilds every file; a forced rebuild killed half-way leaves every file indexed (ADR 0039).

The running index is held at a progress report (``testing_hooks.index_pause_point``) until the test lets
it go, and each test checks in `status` that it was still going when the second call was answered: the
overlap really happened. The daemon's own runs (catch-up, watcher) never make a client call fail: that
is tests/daemon/test_daemon_never_waits.py (a second `index` during a catch-up follows it, no `--wait`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.client import DaemonUnavailable, connect_or_spawn
from hallouminate.errors import Conflict
from support.crash import PAGES, check_file_rows, disk_state, page_text, stored_files, versions
from support.index_pause import hold_next_run, release, until_held
from support.sandbox import Sandbox, kill_daemon_of, mcp_session

WIKI = "repo:sample:wiki"
# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 180.0
# The wiki of the index runs (each embedded twice, the second time forced): the held run makes the overlap,
# not the wiki's size; guides/ is the subdirectory a page is renamed into.
WIKI_PAGES = ("index.md", "overview.md", "guides/getting-started.md")


def hm(sandbox: Sandbox, *args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hallouminate", *args],
        env=sandbox.env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def running_kinds(conn: Any) -> dict[str, str]:
    status = await conn.call("status")
    return {run["corpus"]: run["kind"] for run in status["indexing"]}


async def test_a_second_client_index_is_refused_unless_it_waits(sandbox: Sandbox, tmp_path: Path) -> None:
    """Daemon protocol holds an index; MCP `index` and CLI `index` are refused naming the running one's
    age; CLI `index --force --wait` waits for it, then rebuilds every file."""
    repo = sandbox.make_repo(pages=WIKI_PAGES)
    pause = tmp_path / "pause"
    sandbox.start_daemon({"HALLOUMINATE_TEST_INDEX_PAUSE": str(pause)})
    conn = await connect_or_spawn(spawn=False)
    waiter: subprocess.Popen[str] | None = None
    try:
        hold_next_run(pause)
        first = asyncio.ensure_future(conn.call("index", str(repo), {}, timeout=DEADLINE_SECS))
        await until_held(pause)

        async with mcp_session(sandbox) as session:
            with pytest.raises(MCPError) as refused:
                await session.call_tool("index", {"cwd": str(repo)})
        assert refused.value.code == INVALID_PARAMS
        data = refused.value.data
        assert data["problem"] == "index-running" and data["corpus"] == WIKI and data["running_secs"] >= 0
        assert "already running" in refused.value.message and "wait: true" in refused.value.message
        assert f"started {data['running_secs']:.1f} s ago" in refused.value.message

        cli = hm(sandbox, "index", cwd=repo)
        out, err = cli.communicate(timeout=DEADLINE_SECS)
        assert cli.returncode == 2, (out, err)
        assert "already running" in err and "--wait" in err

        # The overlap happened: the first index was still held when both were refused.
        assert not first.done() and (await running_kinds(conn))[WIKI] == "index"

        waiter = hm(sandbox, "index", "--force", "--wait", "--format", "json", cwd=repo)
        assert waiter.stderr is not None
        said = waiter.stderr.readline()  # said at once, while the first is still held
        assert "already going" in said and "waiting" in said, said
        assert waiter.poll() is None and not first.done()
        release(pause)
        report = (await asyncio.wait_for(first, DEADLINE_SECS))["corpora"][0]
        assert report["files_upserted"] == len(WIKI_PAGES) and not report["forced"]
        out, err = waiter.communicate(timeout=DEADLINE_SECS)
        assert waiter.returncode == 0, err
        rebuilt = json.loads(out)["corpora"][0]
        # Its own pass came after the first run, and was a rebuild: every (unchanged) file embedded again.
        assert rebuilt["forced"] and rebuilt["files_upserted"] == len(WIKI_PAGES)
        assert rebuilt["chunks_written"] == rebuilt["chunks_total"] == report["chunks_total"]

        # Nothing running any more: a plain call is served again.
        again = await conn.call("index", str(repo), {})
        assert again["corpora"][0]["files_upserted"] == 0
    finally:
        release(pause)
        if waiter is not None and waiter.poll() is None:
            waiter.kill()
        await conn.close()


async def test_single_flight_and_force_on_a_knowledge_base(sandbox: Sandbox, tmp_path: Path) -> None:
    """The GrooveSeek face's calls (cwd = the kb, kb = true): a second index is `Conflict`; `wait` and
    `force` work there too, with the counters the face's `rebuild_index` reports."""
    kb = tmp_path / "kb"
    (kb / "deploy").mkdir(parents=True)
    (kb / "deploy" / "rollback.md").write_text("# Rollback\n\nFlip the blue-green switch back.\n")
    (kb / "notes.md").write_text("---\ntitle: [broken\n---\n# Notes\n\nWater the plant on Fridays.\n")
    pause = tmp_path / "pause"
    sandbox.start_daemon({"HALLOUMINATE_TEST_INDEX_PAUSE": str(pause)})
    conn = await connect_or_spawn(spawn=False)
    other = await connect_or_spawn(spawn=False)
    try:
        hold_next_run(pause)
        first = asyncio.ensure_future(conn.call("index", str(kb), {}, kb=True, timeout=DEADLINE_SECS))
        await until_held(pause)
        with pytest.raises(Conflict, match="already running") as refused:
            await other.call("index", str(kb), {"force": True}, kb=True)
        assert refused.value.data["corpus"] == "kb"
        assert not first.done() and (await running_kinds(other))["kb"] == "index"
        waiting = asyncio.ensure_future(
            other.call("index", str(kb), {"force": True, "wait": True}, kb=True, timeout=DEADLINE_SECS)
        )
        await asyncio.sleep(0.5)
        assert not waiting.done()  # it waits for the held run
        release(pause)
        plain = (await asyncio.wait_for(first, DEADLINE_SECS))["corpora"][0]
        forced = (await asyncio.wait_for(waiting, DEADLINE_SECS))["corpora"][0]
        assert plain["files_upserted"] == 2 and plain["frontmatter_unparsed"] == 1
        assert forced["forced"] and forced["files_upserted"] == 2 and forced["files_seen"] == 2
        assert forced["frontmatter_unparsed"] == 1 and forced["renamed"] == 0
        assert forced["chunks_total"] == plain["chunks_total"] > 0

        (kb / "deploy" / "rollback.md").rename(kb / "rollback.md")
        moved = (await conn.call("index", str(kb), {}, kb=True))["corpora"][0]
        assert (moved["renamed"], moved["files_upserted"], moved["files_deleted"]) == (1, 0, 0)
        assert moved["chunks_written"] == 0 and moved["chunks_total"] == plain["chunks_total"]
        found = await conn.call("ground", str(kb), {"query": "blue-green switch"}, kb=True)
        assert found["docs"][0]["path"] == "rollback.md"
    finally:
        release(pause)
        await conn.close()
        await other.close()


async def test_a_forced_rebuild_killed_half_way_leaves_every_file_indexed(sandbox: Sandbox) -> None:
    """kill -9 after the rebuild's first commit: no file lost its rows (nothing was dropped first), each
    file is one whole version, some already rebuilt; the next run repairs nothing because nothing is
    broken."""
    import random

    rng = random.Random(16)
    repo = sandbox.make_repo("crash", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    for i in range(PAGES):
        (wiki / f"page-{i:02d}.md").write_text(page_text(rng, f"page-{i:02d}"))
    now = disk_state(wiki)
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        await conn.call("index", str(repo), {}, timeout=DEADLINE_SECS)
    finally:
        await conn.close()
    kill_daemon_of(sandbox)
    before = {path: rows[0]["indexed_at_ms"] for path, rows in stored_files(sandbox, repo).items()}
    assert set(before) == set(now)

    base = versions(sandbox)
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        rebuild = asyncio.ensure_future(conn.call("index", str(repo), {"force": True}, timeout=DEADLINE_SECS))
        deadline = time.monotonic() + DEADLINE_SECS
        while versions(sandbox) < base + 1 and not rebuild.done():
            assert time.monotonic() < deadline, "the rebuild never committed"
            await asyncio.sleep(0.005)
        assert not rebuild.done(), "the rebuild finished before the kill: make it longer"
        kill_daemon_of(sandbox, signal.SIGKILL)
        with pytest.raises(DaemonUnavailable):
            await asyncio.wait_for(rebuild, 30)
    finally:
        await conn.close()

    killed = stored_files(sandbox, repo)
    assert set(killed) == set(now), "a file lost its rows"
    for path, rows in killed.items():
        assert check_file_rows(path, rows) == now[path]
    rebuilt = {path for path, rows in killed.items() if rows[0]["indexed_at_ms"] > before[path]}
    assert rebuilt and rebuilt != set(now), "the kill did not come half-way through the rebuild"

    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        # Nothing to repair: every file is one whole version, so a plain run changes nothing.
        plain = (await conn.call("index", str(repo), {}, timeout=DEADLINE_SECS))["corpora"][0]
        assert plain["files_upserted"] == plain["files_deleted"] == plain["files_skipped"] == 0
    finally:
        await conn.close()
    kill_daemon_of(sandbox)
    assert set(stored_files(sandbox, repo)) == set(now)


async def test_the_mcp_tool_rebuilds_and_reports_renames_with_progress(sandbox: Sandbox) -> None:
    """MCP `index`: a rename moves the rows (said in the text too), `force` re-embeds every file with its
    progress notifications, `wait` with nothing running simply indexes."""
    repo = sandbox.make_repo(pages=WIKI_PAGES)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "broken.md").write_text("---\ntitle: [broken\n---\n# Broken\n\nThe walrus ledger.\n")
    notes: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((progress, total, message))

    async with mcp_session(sandbox) as session:
        first = await session.call_tool("index", {"cwd": str(repo)})
        assert not first.is_error, first.content
        report = first.structured_content["corpora"][0]
        assert report["frontmatter_unparsed"] == 1 and report["renamed"] == 0
        (wiki / "overview.md").rename(wiki / "guides" / "overview.md")
        moved = await session.call_tool("index", {"cwd": str(repo), "wait": True})
        report = moved.structured_content["corpora"][0]
        assert (report["renamed"], report["files_upserted"], report["files_deleted"]) == (1, 0, 0)
        assert report["chunks_written"] == 0 and report["frontmatter_unparsed"] == 1
        assert "1 renamed (rows moved to the new path, not re-embedded)" in moved.content[0].text
        forced = await session.call_tool(
            "index", {"cwd": str(repo), "force": True}, progress_callback=on_progress
        )
        report = forced.structured_content["corpora"][0]
        files = len(WIKI_PAGES) + 1
        assert report["forced"] and report["files_upserted"] == files and report["files_seen"] == files
        assert report["chunks_written"] == report["chunks_total"] and report["frontmatter_unparsed"] == 1
        assert "rebuilt: every file read and embedded again" in forced.content[0].text
    assert notes and notes[-1][:2] == (files, files)
