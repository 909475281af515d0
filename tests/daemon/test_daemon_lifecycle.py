"""Spawning, replacing, idling out and draining: the daemon's life as clients see it."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from typing import Any

import pytest

from hallouminate import __version__
from hallouminate.client import connect_or_spawn, stop_daemon
from hallouminate.errors import Conflict, Internal
from support.sandbox import SMALL_WIKI, Sandbox, kill_daemon_of, pid_alive


async def test_a_client_spawns_the_daemon_when_none_answers(sandbox: Sandbox) -> None:
    assert not sandbox.socket.exists()
    conn = await connect_or_spawn()
    try:
        info = await conn.call("ping")
    finally:
        await conn.close()
    assert info["version"] == __version__
    assert pid_alive(info["pid"])


async def test_a_daemon_of_another_version_is_stopped_and_replaced(sandbox: Sandbox) -> None:
    old = sandbox.start_daemon({"HALLOUMINATE_TEST_FAKE_VERSION": "0.0.1-old"})
    conn = await connect_or_spawn()
    try:
        info = await conn.call("ping")
    finally:
        await conn.close()
    assert info["version"] == __version__
    assert info["pid"] != old.pid
    assert old.wait(timeout=30) == 0  # it drained and exited cleanly


async def test_clients_racing_to_spawn_end_with_one_daemon(sandbox: Sandbox) -> None:
    conns = await asyncio.gather(*(connect_or_spawn() for _ in range(4)))
    try:
        pids = {(await conn.call("ping"))["pid"] for conn in conns}
    finally:
        for conn in conns:
            await conn.close()
    assert len(pids) == 1
    # They did race: more than one of them started a daemon, and the losers found the lock taken.
    assert sandbox.daemon_log_text().count("is already running") >= 1, sandbox.daemon_log_text()


async def test_idle_exit_removes_the_socket_and_the_next_client_respawns(sandbox: Sandbox) -> None:
    sandbox.write_config(sandbox.config_file.read_text() + "\n[daemon]\nidle_exit_secs = 1\n")
    proc = sandbox.start_daemon()
    assert proc.wait(timeout=30) == 0
    assert not sandbox.socket.exists()
    conn = await connect_or_spawn()
    try:
        assert (await conn.call("ping"))["pid"] != proc.pid
    finally:
        await conn.close()


async def test_watching_a_busy_repository_does_not_keep_the_daemon_alive(sandbox: Sandbox) -> None:
    sandbox.write_config(sandbox.config_file.read_text() + "\n[daemon]\nidle_exit_secs = 2\n")
    # One short page: each edit below re-embeds it while the daemon counts down to its idle exit.
    repo = sandbox.make_repo(pages=["index.md"])
    proc = sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        await conn.call("index", str(repo), {})
        watched = (await conn.call("status"))["watched_roots"]
    finally:
        await conn.close()
    assert any(str(repo) in root for root in watched)
    # Keep the watcher busy (an edit every 0.3 s, each one re-indexed) after the last client left: the
    # daemon must still idle out, while the edits go on. Were watching to keep it alive, it would outlive
    # the deadline, which only bounds that hang (idle_exit_secs is 2).
    page = next((repo / ".hallouminate" / "wiki").rglob("*.md"))
    deadline = time.monotonic() + 90
    edits = 0
    while proc.poll() is None and time.monotonic() < deadline:
        page.write_text(page.read_text() + f"\nEdit {edits} while nobody is connected.\n")
        edits += 1
        await asyncio.sleep(0.3)
    assert proc.poll() is not None, f"watching kept the daemon alive through {edits} edits"
    assert proc.wait(timeout=30) == 0
    log = sandbox.daemon_log_text()
    # It stopped for being idle, while its watcher was handling the edits made after the client left.
    assert "stopping: idle for 2 s" in log, log
    assert re.search(r"\d+ changes? detected", log), log
    assert not sandbox.socket.exists()


async def test_an_open_connection_keeps_the_daemon_from_idling_out(sandbox: Sandbox) -> None:
    sandbox.write_config(sandbox.config_file.read_text() + "\n[daemon]\nidle_exit_secs = 1\n")
    proc = sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        await asyncio.sleep(2.0)
        assert proc.poll() is None
        assert (await conn.call("ping"))["pid"] == proc.pid
    finally:
        await conn.close()
    assert proc.wait(timeout=30) == 0


def mid_run(event: dict[str, Any]) -> bool:
    """A progress event sent while files were still left to index."""
    return bool(event["done"] < event["total"])


def trace(seen: list[str]) -> str:
    """What a client saw, in order, one letter each (P: pong, S: signal, M: mid-run progress, E: end)."""
    return "".join(what[0].upper() for what in seen)


async def test_sigterm_drains_an_in_flight_index_before_exiting(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(
        pages=SMALL_WIKI
    )  # the signal comes at the run's first progress event: the whole run is left
    proc = sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    seen: list[str] = []
    begun = asyncio.Event()

    def progress(event: dict[str, Any]) -> None:
        seen.append("mid" if mid_run(event) else "end")
        begun.set()

    try:
        pending = asyncio.ensure_future(conn.call("index", str(repo), {}, on_progress=progress))
        await asyncio.wait_for(begun.wait(), 120)  # the run has begun: its first progress event came
        proc.send_signal(signal.SIGTERM)
        seen.append("signal")
        result = await asyncio.wait_for(pending, 120)
    finally:
        await conn.close()
    assert result["corpora"][0]["corpus"] == "repo:sample:wiki"
    assert result["corpora"][0]["files_upserted"] == result["corpora"][0]["files_seen"]
    assert proc.wait(timeout=60) == 0
    assert not sandbox.socket.exists()
    # The signal really came mid-run: files were left when it was sent, the daemon found the index in
    # flight when it stopped, and the run finished after the signal.
    assert seen[0] == "mid" and seen.index("signal") < seen.index("end"), trace(seen)
    log = sandbox.daemon_log_text()
    assert "stopping: signal SIGTERM" in log and "draining 1 in-flight request(s)" in log, log
    assert log.index("stopping: signal SIGTERM") < log.index("draining 1 in-flight request(s)")


async def test_ping_answers_while_a_long_index_runs(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    # Frames of one connection arrive in the order the daemon wrote them. The run sends a progress event as
    # it starts on the files (files left) and one as it ends, after embedding them all: a pong recorded
    # between those two was answered while the index ran. Had the run held the event loop, both events
    # would reach us in one burst at its end, with no pong between them.
    seen: list[str] = []
    worst = 0.0
    try:
        index = asyncio.ensure_future(
            conn.call(
                "index", str(repo), {}, on_progress=lambda e: seen.append("mid" if mid_run(e) else "end")
            )
        )
        while not index.done():
            started = time.perf_counter()
            await conn.call("ping")
            worst = max(worst, time.perf_counter() - started)
            seen.append("pong")
            await asyncio.sleep(0.05)
        report = await index
    finally:
        await conn.close()
    assert "mid" in seen and "end" in seen, trace(seen)
    during = seen[seen.index("mid") : seen.index("end")].count("pong")
    assert during >= 3, f"{during} pings answered while the index ran: {trace(seen)}"
    # Relative, in the same run: no ping waited for a large part of the index.
    assert worst < report["seconds"] / 3, f"ping waited {worst:.2f} s during a {report['seconds']} s index"


async def test_stop_daemon_says_whether_one_was_running(sandbox: Sandbox) -> None:
    assert await stop_daemon() is False
    proc = sandbox.start_daemon()
    assert await stop_daemon() is True
    assert proc.wait(timeout=30) == 0


async def test_a_missing_model_is_a_clear_error_naming_the_fix(sandbox: Sandbox) -> None:
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "no-model"}"\n')
    repo = sandbox.make_repo()
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        with pytest.raises(Internal, match="hallouminate model install"):
            await conn.call("ground", str(repo), {"query": "anything"})
        assert (await conn.call("ping"))["version"] == __version__
    finally:
        await conn.close()


async def test_kill_9_then_the_next_call_respawns(sandbox: Sandbox) -> None:
    sandbox.start_daemon()
    first = sandbox.daemon_pid()
    kill_daemon_of(sandbox, signal.SIGKILL)
    assert first is not None and not pid_alive(first)
    assert sandbox.socket.exists()  # the dead daemon's socket is left behind
    conn = await connect_or_spawn()
    try:
        assert (await conn.call("ping"))["pid"] != first
    finally:
        await conn.close()


async def test_a_new_chunk_size_is_refused_until_a_rebuild_recuts_every_file(sandbox: Sandbox) -> None:
    """Changing [indexing] chunk_tokens must not leave unchanged files cut the old way, nor drop the store
    silently: the daemon's store records the size its chunks were cut to, refuses an index run cut
    otherwise (naming the rebuild command), and `index --rebuild` cuts every page again."""
    # Two pages of ~350 words: several chunks at 256 tokens, far more at 64 (each run embeds them all).
    repo = sandbox.make_repo(pages=["architecture.md", "overview.md"])

    async def chunks(args: dict[str, Any]) -> int:
        conn = await connect_or_spawn(spawn=False)
        try:
            await conn.call("index", str(repo), args)
            return int((await conn.call("corpus_stats", str(repo), {}))["total_chunks"])
        finally:
            await conn.close()

    base = sandbox.config_file.read_text()
    sandbox.write_config(base + "\n[indexing]\nchunk_tokens = 256\n")
    sandbox.start_daemon()
    large = await chunks({})
    assert await stop_daemon()
    sandbox.write_config(base + "\n[indexing]\nchunk_tokens = 64\n")
    sandbox.start_daemon()
    with pytest.raises(Conflict) as refused:
        await chunks({})
    assert "hallouminate index --rebuild" in refused.value.message
    assert refused.value.data["store"]["held"]["chunk_tokens"] == "256"
    small = await chunks({"rebuild": True})
    # No file changed on disk, yet every page is cut again: far more, smaller chunks.
    assert small > 1.5 * large
