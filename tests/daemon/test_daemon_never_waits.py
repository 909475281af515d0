"""Search never waits for indexing: a `ground` (daemon protocol, CLI, MCP) answers from what is indexed
while an index run, a catch-up or a second `index` of any corpus is going, and names the corpora being
indexed in its not-indexed warning; indexing shows its progress (CLI, MCP notifications).

The index run is held at a progress report (``testing_hooks.index_pause_point``) until the test lets it
go, so each test knows the run was still going when the answer came (and checks it in `status`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hallouminate.client import DaemonConnection, connect_or_spawn, stop_daemon
from support.index_pause import hold_next_run, release, until_held
from support.sandbox import SMALL_WIKI, Sandbox, mcp_session

QUESTION = "How does the MCP shim reach the daemon?"
# Bounds a hang only (the old behaviour held a search for the whole run): never a speed figure.
DEADLINE_SECS = 120.0
ALPHA = ("index.md", "guides/getting-started.md")


async def running(conn: DaemonConnection) -> dict[str, dict[str, Any]]:
    status = await conn.call("status")
    return {run["corpus"]: run for run in status["indexing"]}


def hm(sandbox: Sandbox, *args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hallouminate", *args],
        env=sandbox.env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def indexing_named(result: dict[str, Any]) -> bool:
    return any(w["code"] == "not-indexed" for w in result["warnings"])


def not_indexed(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    warnings = [w for w in result["warnings"] if w["code"] == "not-indexed"]
    assert len(warnings) == 1, result["warnings"]
    return {entry["corpus"]: entry for entry in warnings[0]["corpora"]}


async def test_a_ground_answers_while_another_repository_is_indexed(sandbox: Sandbox, tmp_path: Path) -> None:
    """MCP `ground` in repository beta while alpha's corpus is being indexed: it answers while the run
    is held, and names beta's own corpus, never indexed, as being caught up now."""
    # alpha's run is held at its first report, whatever its size: two pages, embedded once released.
    alpha = sandbox.make_repo("alpha", pages=ALPHA)
    beta = sandbox.make_repo("beta", pages=("overview.md", "architecture.md"))
    pause = tmp_path / "pause"
    sandbox.start_daemon({"HALLOUMINATE_TEST_INDEX_PAUSE": str(pause)})
    conn = await connect_or_spawn()
    events: list[dict[str, Any]] = []
    try:
        hold_next_run(pause)
        index = asyncio.ensure_future(conn.call("index", str(alpha), {}, on_progress=events.append))
        await until_held(pause)
        async with mcp_session(sandbox) as session:
            answer = await asyncio.wait_for(
                session.call_tool("ground", {"cwd": str(beta), "query": QUESTION}), DEADLINE_SECS
            )
        # The overlap happened: alpha's run was still held when the answer came.
        assert not index.done()
        assert (await running(conn))["repo:alpha:wiki"]["kind"] == "index"
        assert not answer.is_error, answer.content
        result = answer.structured_content
        entry = not_indexed(result)["repo:beta:wiki"]
        assert entry["empty"] and entry["indexing"]  # beta's catch-up began with this search
        assert "being indexed now" in answer.content[0].text
        release(pause)
        report = (await asyncio.wait_for(index, DEADLINE_SECS))["corpora"][0]
        assert report["files_upserted"] == len(ALPHA)
        assert events and events[-1]["done"] == events[-1]["total"] == len(ALPHA)

        async def beta_found() -> bool:
            found = await conn.call("ground", str(beta), {"query": QUESTION})
            return bool(found["docs"]) and not indexing_named(found)

        # Its catch-up, started by the search, indexes beta without any index call.
        deadline = time.monotonic() + DEADLINE_SECS
        while not await beta_found():
            assert time.monotonic() < deadline, "beta was never caught up"
            await asyncio.sleep(0.1)
    finally:
        release(pause)
        await conn.close()


async def test_ground_and_a_second_index_during_a_catch_up_of_the_same_corpus(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """CLI: after a restart the daemon's catch-up of the corpus is held; `ground --corpus` answers from
    the rows indexed before, with the warning; a second `index` says it waits for the running one."""
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
    finally:
        await conn.close()
    assert await stop_daemon()
    (repo / ".hallouminate" / "wiki" / "wombat.md").write_text(
        "# Wombat\n\nThe cubic wombat ledger, kept by the team.\n"
    )
    pause = tmp_path / "pause"
    hold_next_run(pause)  # the start-up catch-up of the known repository is the run held
    sandbox.start_daemon({"HALLOUMINATE_TEST_INDEX_PAUSE": str(pause)})
    conn = await connect_or_spawn()
    second: subprocess.Popen[str] | None = None
    try:
        await until_held(pause)
        ground = hm(sandbox, "ground", QUESTION, "--corpus", "repo:sample:wiki", "--format", "json", cwd=repo)
        out, err = ground.communicate(timeout=DEADLINE_SECS)
        assert ground.returncode == 0, err
        assert (await running(conn))["repo:sample:wiki"]["kind"] == "catch-up"  # still held
        result = json.loads(out)
        assert result["docs"][0]["path"] == "architecture.md"  # the rows indexed before the restart
        entry = not_indexed(result)["repo:sample:wiki"]
        assert entry["indexing"] and not entry["empty"]
        assert entry["files_total"] == len(SMALL_WIKI) + 1 and entry["files_done"] == 0
        stats = await conn.call("corpus_stats", str(repo), {})  # from the rows there, with the run's counts
        assert stats["indexed_files"] == len(SMALL_WIKI)
        assert stats["indexing"] == {"files_done": 0, "files_total": len(SMALL_WIKI) + 1}

        second = hm(sandbox, "index", cwd=repo)
        assert second.stderr is not None
        said = second.stderr.readline()  # the first thing it says, while the catch-up is still held
        assert "already going" in said and "catch-up" in said, said
        assert second.poll() is None
        assert (await running(conn))["repo:sample:wiki"]["kind"] == "catch-up"
        release(pause)
        out, err = second.communicate(timeout=DEADLINE_SECS)
        assert second.returncode == 0, err
        assert "indexing repo:sample:wiki (running catch-up):" in err  # the running one's progress
        found = await conn.call("ground", str(repo), {"query": "cubic wombat ledger"})
        assert found["docs"][0]["path"] == "wombat.md" and not indexing_named(found)
    finally:
        release(pause)
        if second is not None and second.poll() is None:
            second.kill()
        await conn.close()


async def test_the_index_tool_sends_progress_notifications(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    notes: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((progress, total, message))

    async with mcp_session(sandbox) as session:
        answer = await session.call_tool("index", {"cwd": str(repo)}, progress_callback=on_progress)
        assert not answer.is_error, answer.content
        plain = await session.call_tool("index", {"cwd": str(repo)})  # no token: no notifications
        assert not plain.is_error
    assert len(notes) >= 2, notes
    progresses = [progress for progress, _, _ in notes]
    assert progresses == sorted(set(progresses))  # MCP: it grows with every notification
    assert notes[-1][:2] == (len(SMALL_WIKI), len(SMALL_WIKI))
    assert all(message and "repo:sample:wiki" in message for _, _, message in notes)
