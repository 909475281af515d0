"""A team's store on a real S3-compatible server (SeaweedFS, ``support.s3``): one writer daemon indexes a wiki
into a bucket; two read-only daemons serve it over HTTP (docs/deployment.md, ADR 0063).

The writer holds the store's lease: a second writer refuses to start naming it, and the readers' refusals
of writes name it too. A page the writer adds reaches both readers within their poll interval plus the
load; a bucket that stops answering makes a reader's search fail as retryable (-32603 over MCP), and the
reader answers again once it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from hallouminate.client.connection import DaemonConnection
from hallouminate.config.types import CorpusSpec
from hallouminate.errors import CallerError, HallouminateError
from support.crash import DIM, PAGES, check_file_rows, disk_state, mutate, page_text
from support.daemon_call import call, ranked, scores
from support.http_world import mcp_http_session, wait_for_endpoint
from support.s3 import S3Server
from support.sandbox import SMALL_WIKI, Sandbox, kill_daemon_of, private_world

POLL_SECS = 0.5
LEASE_SECS = 5
CORPUS = "repo:team:wiki"
QUERY = "How does the MCP shim reach the daemon?"
DISTINCT = "Quetzal fermentation ledgers record the tamarind brine's salinity every equinox at noon."
# A reader's read deadline, shortened so a frozen bucket's search fails in seconds (the product's is 20 s).
READ_DEADLINE_SECS = 3.0
# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 120.0


@dataclass
class Team:
    server: S3Server
    store_config: str
    env: dict[str, str]
    writer: Sandbox
    readers: list[Sandbox]
    urls: list[str]
    repo: Path


def aws_env(server: S3Server) -> dict[str, str]:
    """What every daemon of the team is given: the bucket's keys, region and endpoint (never the config)."""
    return {
        "AWS_ACCESS_KEY_ID": server.access_key,
        "AWS_SECRET_ACCESS_KEY": server.secret_key,
        "AWS_REGION": server.region,
        "AWS_ENDPOINT_URL": server.endpoint,
    }


@pytest.fixture(scope="module")
def team(model_cache: Path, s3_server: S3Server) -> Iterator[Team]:
    env = aws_env(s3_server)
    uri = s3_server.uri(f"team-{uuid.uuid4().hex[:8]}")
    store = f'[store]\nuri = "{uri}"\nlease_secs = {LEASE_SECS}\n'
    reader_extra = f'{store}mode = "read-only"\npoll_interval_secs = {POLL_SECS}\n[http]\nenabled = true\n'
    reader_env = {**env, "HALLOUMINATE_TEST_READ_DEADLINE_SECS": str(READ_DEADLINE_SECS)}
    with contextlib.ExitStack() as stack:
        writer = stack.enter_context(
            private_world(
                model_cache, prefix="hmtw-", baseline_extra=store, extra_env=lambda _r: env, in_process=False
            )
        )
        repo = writer.make_repo("team", pages=SMALL_WIKI)
        writer.start_daemon()
        call(writer, "index", str(repo), {})
        readers = [
            stack.enter_context(
                private_world(
                    model_cache,
                    prefix=f"hmtr{i}-",
                    baseline_extra=reader_extra,
                    extra_env=lambda _r: reader_env,
                    in_process=False,
                )
            )
            for i in range(2)
        ]
        for reader in readers:
            reader.start_daemon()
        yield Team(s3_server, store, env, writer, readers, [wait_for_endpoint(r) for r in readers], repo)


async def http_ground(url: str, cwd: Path, query: str) -> Any:
    async with mcp_http_session(url + "/mcp") as session:
        return await session.call_tool("ground", {"cwd": str(cwd), "query": query})


async def http_refusal(url: str, cwd: Path, query: str) -> Any:
    """The JSON-RPC error a ``ground`` over MCP on ``url`` fails with (caught inside the session)."""
    async with mcp_http_session(url + "/mcp") as session:
        with pytest.raises(MCPError) as failed:
            await session.call_tool("ground", {"cwd": str(cwd), "query": query})
        return failed.value.error


def test_both_readers_ground_over_http_as_the_writer_does(team: Team) -> None:
    mine = call(team.writer, "ground", str(team.repo), {"query": QUERY})
    assert ranked(mine) and mine["docs"][0]["path"] == "architecture.md"
    for reader, url in zip(team.readers, team.urls, strict=True):
        answer = asyncio.run(http_ground(url, reader.root, QUERY))
        assert not answer.is_error, answer.content
        theirs = answer.structured_content
        assert theirs is not None
        assert ranked(theirs) == ranked(mine)
        assert scores(theirs) == pytest.approx(scores(mine), abs=1e-5)


def test_a_reader_refuses_writes_naming_the_lease_holder(team: Team) -> None:
    writer_pid = team.writer.daemon_pid()
    with pytest.raises(CallerError) as refused:
        call(
            team.readers[0],
            "add_markdown",
            str(team.readers[0].root),
            {"corpus": CORPUS, "path": "x.md", "content": "# X\n"},
        )
    error = refused.value
    assert error.family.jsonrpc_code == -32602 and error.data["problem"] == "read-only-store"
    assert f"pid {writer_pid}" in error.message and "s3://" in error.message


def test_a_second_writer_refuses_to_start_naming_the_holder(team: Team, model_cache: Path) -> None:
    writer_pid = team.writer.daemon_pid()
    with private_world(
        model_cache,
        prefix="hmtx-",
        baseline_extra=team.store_config,
        extra_env=lambda _r: team.env,
        in_process=False,
    ) as second:
        done = subprocess.run(
            [sys.executable, "-m", "hallouminate", "daemon", "run"],
            env=second.env,
            capture_output=True,
            text=True,
            timeout=DEADLINE_SECS,
        )
    assert done.returncode != 0
    assert "another writer holds the index store" in done.stdout and f"pid {writer_pid}" in done.stdout
    # The first writer still writes.
    assert call(team.writer, "status")["store_mode"] == "read-write"


def test_a_page_the_writer_adds_reaches_both_readers(team: Team) -> None:
    for reader in team.readers:
        call(reader, "ground", str(reader.root), {"query": QUERY})  # loaded and following
    call(
        team.writer,
        "add_markdown",
        str(team.repo),
        {"corpus": CORPUS, "path": "quetzal.md", "content": f"# Quetzal\n\n{DISTINCT}\n"},
    )
    written = time.monotonic()
    seen: dict[int, float] = {}
    while len(seen) < len(team.readers):
        for i, reader in enumerate(team.readers):
            if i in seen:
                continue
            found = call(reader, "ground", str(reader.root), {"query": DISTINCT})
            if found["docs"] and found["docs"][0]["path"] == "quetzal.md":
                seen[i] = time.monotonic() - written
        assert time.monotonic() - written < DEADLINE_SECS, f"readers never showed the page: {seen}"
        time.sleep(0.05)
    # Recorded, not asserted as a speed (bench/team_store.py measures it).
    print(f"visible on the readers after {sorted(round(s, 2) for s in seen.values())} s (poll {POLL_SECS} s)")


def test_an_unreachable_bucket_is_a_retryable_error_and_the_reader_recovers(team: Team) -> None:
    reader = team.readers[1]
    # A corpus the reader does not hold yet is read from the bucket: a phrase scan of a corpus loaded
    # after the freeze would be answered from memory. A commit moves the reader to a new version, whose
    # corpus it has not loaded; the search that would load it meets the frozen bucket.
    call(
        team.writer,
        "add_markdown",
        str(team.repo),
        {"corpus": CORPUS, "path": "frozen.md", "content": "# Frozen\n\nA page.\n"},
    )
    before = call(reader, "status")["followed_version"]
    deadline = time.monotonic() + DEADLINE_SECS
    while call(reader, "status")["followed_version"] == before:
        assert time.monotonic() < deadline, "the reader never followed the commit"
        time.sleep(0.05)
    with team.server.frozen():
        started = time.monotonic()
        with pytest.raises(HallouminateError) as failed:
            call(reader, "ground", str(reader.root), {"query": QUERY})
        took = time.monotonic() - started
        # The same over MCP on the reader's HTTP listener: a JSON-RPC -32603 saying it may be retried.
        over_mcp = asyncio.run(http_refusal(team.urls[1], reader.root, QUERY))
    assert over_mcp.code == -32603, over_mcp
    assert (over_mcp.data or {}).get("retryable") is True, over_mcp
    error = failed.value
    assert error.family.jsonrpc_code == -32603 and error.family.retryable, error
    assert error.data.get("problem") == "store-unreachable", error.data
    assert took < READ_DEADLINE_SECS + 10, took
    # Back: the same reader answers again.
    deadline = time.monotonic() + DEADLINE_SECS
    while True:
        try:
            answer = call(reader, "ground", str(reader.root), {"query": QUERY})
            break
        except HallouminateError:
            assert time.monotonic() < deadline, "the reader never recovered"
            time.sleep(0.2)
    assert answer["docs"][0]["path"] == "architecture.md"


def bucket_files(server: S3Server, uri: str, key: str) -> dict[str, str]:
    """Every file of corpus ``key`` in the bucket as one whole version (``check_file_rows``): its hash."""
    from hallouminate.storage.store import ReadOnlyStore

    location = server.location(uri.removeprefix(f"s3://{server.bucket}/"))
    store = ReadOnlyStore(location, DIM)
    files = {path: check_file_rows(path, store.file_rows(key, path)) for path in store.file_states(key)}
    assert sum(len(store.file_rows(key, p)) for p in files) == store.count_rows(), "rows outside the corpus"
    return files


def bucket_store(server: S3Server, uri: str) -> Any:
    """The store in the bucket, opened read-only in this process (``latest_version`` is one listing)."""
    from hallouminate.storage.store import ReadOnlyStore

    return ReadOnlyStore(server.location(uri.removeprefix(f"s3://{server.bucket}/")), DIM)


def test_a_writer_killed_mid_index_leaves_readers_on_the_last_commit_and_a_restart_converges(
    model_cache: Path, s3_server: S3Server
) -> None:
    rng = random.Random(20261204)
    env = aws_env(s3_server)
    uri = s3_server.uri(f"crash-{uuid.uuid4().hex[:8]}")
    store = f'[store]\nuri = "{uri}"\nlease_secs = {LEASE_SECS}\n'
    reader_extra = f'{store}mode = "read-only"\npoll_interval_secs = {POLL_SECS}\n'
    with (
        private_world(
            model_cache, prefix="hmkw-", baseline_extra=store, extra_env=lambda _r: env, in_process=False
        ) as writer,
        private_world(
            model_cache,
            prefix="hmkr-",
            baseline_extra=reader_extra,
            extra_env=lambda _r: env,
            in_process=False,
        ) as reader,
    ):
        repo = writer.make_repo("crash", wiki=None)
        wiki = repo / ".hallouminate" / "wiki"
        for i in range(PAGES):
            (wiki / f"page-{i:02d}.md").write_text(page_text(rng, f"page-{i:02d}"))
        writer.start_daemon()
        call(writer, "index", str(repo), {})
        # The writer's key of its wiki corpus: its name and roots (config/types.py).
        stored_key = CorpusSpec("repo:crash:wiki", "wiki", (wiki.resolve(),), (), (), "crash").store_key
        before = disk_state(wiki)
        reader.start_daemon()
        answered = call(reader, "ground", str(reader.root), {"query": "cache shard replica"})
        assert answered["docs"]

        # Every page rewritten while the writer is stopped (its watcher would re-index them at once), then
        # the restarted writer's run (its catch-up, or the index call) killed right after its first commit.
        # A clean stop released the lease: the restart takes it at once.
        kill_daemon_of(writer)
        mutate(wiki, rng, 1, 1)
        now = disk_state(wiki)
        watch = bucket_store(s3_server, uri)
        base = watch.latest_version()

        writer.start_daemon()

        async def index_and_kill() -> None:
            async with await DaemonConnection.open(writer.socket) as conn:
                index = asyncio.ensure_future(conn.call("index", str(repo), {}, timeout=DEADLINE_SECS))
                deadline = time.monotonic() + DEADLINE_SECS
                while watch.latest_version() < base + 1:
                    assert not index.done(), "the index finished before its first commit was seen"
                    assert time.monotonic() < deadline, "no commit"
                    await asyncio.sleep(0.02)
                assert not index.done(), "the index finished before the kill: make it longer"
                kill_daemon_of(writer, signal.SIGKILL)
                with pytest.raises(HallouminateError):
                    await asyncio.wait_for(index, 30)

        asyncio.run(index_and_kill())
        # The reader still answers, from a whole committed version.
        assert call(reader, "ground", str(reader.root), {"query": "cache shard replica"})["docs"]
        killed = bucket_files(s3_server, uri, stored_key)
        for path, digest in killed.items():
            assert digest in {before.get(path), now.get(path)}, f"{path} holds an unknown version"
        assert killed != now, "the run was complete when killed"

        # A restarted writer: refused while the dead one's lease runs, then takes it and converges.
        deadline = time.monotonic() + DEADLINE_SECS
        while True:
            try:
                writer.start_daemon()
                break
            except RuntimeError as exc:
                assert "another writer holds the index store" in str(exc), exc
                assert time.monotonic() < deadline, "the dead writer's lease never ran out"
                time.sleep(1.0)
        try:
            call(writer, "index", str(repo), {})
        except HallouminateError:
            print(writer.daemon_log_text()[-6000:])
            raise
        stored = bucket_files(s3_server, uri, stored_key)
        assert stored == now, "stale, orphan or missing files after the restarted writer's run"
