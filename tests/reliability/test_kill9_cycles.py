"""Cycles of ``kill -9`` of the daemon at random moments during index runs and add_markdown calls.

Each cycle (seeded RNG) changes the wiki's ``bulk/`` pages while no daemon runs (so the next one has an
index to do), starts a daemon, runs an ``index`` and a stream of ``add_markdown`` calls to ``notes/``
(create, overwrite, section edits), and SIGKILLs the daemon at a random moment: in an *index* cycle
somewhere in the expected length of the run, in a *write* cycle after the run, among the writes. Then,
with no daemon running:

- the store opens, and each file's rows are one whole version: the one the store last acknowledged (the
  state converged at the end of the previous cycle, advanced by each answered write) or the one on disk;
- on disk each page is wholly old or wholly new: a note holds its last answered content or that of the
  write in flight; the bulk pages are exactly as the test wrote them; the ``index.md`` lists are whole;
- after a restart and a re-index, the rows equal the disk exactly, and no temp file or journal record
  remains.

Files lost (an answered write not on disk or not in the store, a bulk page changed) are counted and must
be 0. Quick tier (``make test``): 6 cycles; full tier (``make stress``): HALLOUMINATE_KILL_CYCLES=30.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hallouminate.client import DaemonUnavailable, connect_or_spawn
from hallouminate.storage import Store
from hallouminate.wiki.edits import Edit, apply_edit
from support.crash import (
    check_file_rows,
    check_no_temp_files,
    disk_state,
    index_to_completion,
    mutate,
    page_text,
    sha256,
    store_dir,
    stored_files,
)
from support.reliability_world import INDEX_END, INDEX_START, token
from support.sandbox import Sandbox, kill_daemon_of

CYCLES = int(os.environ.get("HALLOUMINATE_KILL_CYCLES", "6"))
SEED = 8_2026
# Pages under bulk/, ~10 chunks each: an index cycle's run re-embeds up to all of them, long enough for a
# kill somewhere inside it (the moment is scaled to the run's measured length).
BULK = 16
CORPUS = "repo:crash:wiki"
pytestmark = pytest.mark.timeout(max(300, CYCLES * 90 + 180))


@dataclass
class Writes:
    """What the writer sent and what the daemon answered, for the checks after the kill."""

    acked: dict[str, str] = field(default_factory=dict)  # note path -> content of its last answered write
    markers: dict[str, str] = field(default_factory=dict)  # note path -> the unique word it holds
    inflight: tuple[str, str, str] | None = None  # (path, content, word) of the write sent, not answered
    answered: int = 0


@dataclass
class Tally:
    cycles: int = 0
    files_lost: int = 0
    mid_index: int = 0
    mid_write: int = 0
    index_cycles: int = 0
    writes_answered: int = 0
    notes: list[str] = field(default_factory=list)


def note_text(rng: random.Random, name: str, word: str) -> str:
    # Sections like the bulk pages', and a marker line that a section edit can replace or append under.
    return page_text(rng, name) + f"\n## Marker\n\nThe marker word is {word}.\n"


async def write_forever(
    conn: Any, repo: Path, wiki: Path, rng: random.Random, cycle: int, w: Writes, baseline: dict[str, str]
) -> None:
    """add_markdown calls one after another until the daemon dies (DaemonUnavailable ends the loop)."""
    k = 0
    while True:
        word = token(rng)
        roll = rng.random()
        args: dict[str, Any] = {"corpus": CORPUS}
        if not w.acked or roll < 0.4:
            path = f"notes/note-{cycle:02d}-{k:03d}.md"
            content = note_text(rng, f"note-{cycle:02d}-{k:03d}", word)
            args.update(path=path, content=content)
        elif roll < 0.7:
            path = rng.choice(sorted(w.acked))
            content = note_text(rng, Path(path).stem, word)
            args.update(path=path, content=content, overwrite=True)
        elif roll < 0.85:
            path = rng.choice(sorted(w.acked))
            content = w.acked[path].replace(w.markers[path], word)
            args.update(path=path, content=word, replace_match=w.markers[path])
        else:
            path = rng.choice(sorted(w.acked))
            line = f"Appended in cycle {cycle}, write {k}."
            content = apply_edit(w.acked[path], Edit("under_heading", heading="Marker"), line, path).text
            args.update(path=path, content=line, under_heading="Marker")
            word = w.markers[path]
        w.inflight = (path, content, word)
        result = await conn.call("add_markdown", str(repo), args, timeout=120)
        assert not [x for x in result["warnings"] if x["code"].startswith("reindex")], result["warnings"]
        # Answered: the page and the index lists it changed are on disk and in the store. No other write
        # runs now (this loop is the only writer), so the files read here are the answered versions.
        for rel in result["reindexed"]:
            baseline[rel] = sha256(wiki / rel)
        w.acked[path], w.markers[path] = content, word
        w.inflight = None
        w.answered += 1
        k += 1


async def run_and_kill(
    sandbox: Sandbox,
    repo: Path,
    rng: random.Random,
    cycle: int,
    kind: str,
    expected_secs: float,
    w: Writes,
    baseline: dict[str, str],
) -> tuple[bool, bool, float]:
    """Start a daemon, an index and the writer; SIGKILL the daemon at a random moment of ``kind``.
    Returns (index running at the kill, a write in flight at the kill, seconds from start to kill)."""
    wiki = repo / ".hallouminate" / "wiki"
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        # Kills during the model's load would test nothing but the load: wait until it is in.
        deadline = time.monotonic() + 120
        while (await conn.call("status", None, {}, timeout=30))["model"] != "loaded":
            assert time.monotonic() < deadline, "the model never loaded"
            await asyncio.sleep(0.02)
        started = time.monotonic()
        # The daemon's start-up catch-up is already indexing the changed bulk pages; this call queues
        # behind it (one run per corpus at a time), as does the first write.
        indexing = asyncio.ensure_future(conn.call("index", str(repo), {"corpus": CORPUS}, timeout=300))
        writing = asyncio.ensure_future(write_forever(conn, repo, wiki, rng, cycle, w, baseline))
        if kind == "index":
            delay = rng.uniform(0.05, 0.75) * expected_secs
            while time.monotonic() - started < delay and not writing.done():
                await asyncio.sleep(0.005)
        else:
            while not indexing.done():
                await asyncio.sleep(0.005)
            settle = time.monotonic()
            delay = rng.uniform(0.0, 4.0)
            while time.monotonic() - settle < delay and not writing.done():
                await asyncio.sleep(0.005)
            while w.inflight is None and not writing.done():  # between two writes: wait for the next one
                await asyncio.sleep(0.001)
        assert not writing.done(), f"the writer stopped before the kill: {writing.exception()!r}"
        index_running, write_in_flight = not indexing.done(), w.inflight is not None
        at = time.monotonic() - started
        kill_daemon_of(sandbox, signal.SIGKILL)
        for task in (indexing, writing):
            with contextlib.suppress(DaemonUnavailable):
                await asyncio.wait_for(task, 30)
            assert task.done()
        # Killed, the index call has either had its answer already or failed with DaemonUnavailable.
        if not index_running:
            assert indexing.exception() is None, indexing.exception()
        return index_running, write_in_flight, at
    finally:
        await conn.close()


def check_after_kill(
    sandbox: Sandbox, repo: Path, w: Writes, baseline: dict[str, str], bulk_written: dict[str, str]
) -> list[str]:
    """Old-or-new on disk and in the store, with no daemon running; returns the files lost."""
    wiki = repo / ".hallouminate" / "wiki"
    disk = disk_state(wiki)
    lost: list[str] = []
    for rel, digest in bulk_written.items():
        if disk.get(rel) != digest:
            lost.append(f"{rel}: a bulk page changed on disk")
    for rel, content in w.acked.items():
        allowed = {content} | ({w.inflight[1]} if w.inflight and w.inflight[0] == rel else set())
        if not (wiki / rel).exists() or (wiki / rel).read_text() not in allowed:
            lost.append(f"{rel}: neither its answered content nor the write in flight")
    if w.inflight and w.inflight[0] not in w.acked and (wiki / w.inflight[0]).exists():
        # A new page killed mid-create exists whole or not at all.
        assert (wiki / w.inflight[0]).read_text() == w.inflight[1], f"{w.inflight[0]}: a partial new page"
    for listing in wiki.rglob("index.md"):
        text = listing.read_text()
        assert text.count(INDEX_START) == text.count(INDEX_END) == 1, f"{listing}: a torn index.md"
        assert text.index(INDEX_START) < text.index(INDEX_END) and text.endswith("\n"), listing

    # The store: it opens, and each file is one version, the acknowledged one or the one on disk.
    stored = stored_files(sandbox, repo)
    for rel, rows in stored.items():
        digest = check_file_rows(rel, rows)
        assert digest in {baseline.get(rel), disk.get(rel)}, f"{rel}: rows of an unknown version"
    for rel in w.acked:
        if rel not in stored:
            lost.append(f"{rel}: answered, yet no rows")
    return lost


def check_converged(sandbox: Sandbox, repo: Path) -> dict[str, str]:
    """After a restart and a full re-index: rows == disk, and nothing half-done is left anywhere."""
    wiki = repo / ".hallouminate" / "wiki"
    disk = disk_state(wiki)
    stored = stored_files(sandbox, repo)
    assert set(stored) == set(disk), f"orphan or missing files: {set(stored) ^ set(disk)}"
    for rel, rows in stored.items():
        assert check_file_rows(rel, rows) == disk[rel], f"{rel} is stale after the re-index"
        assert rows[0]["file_size"] == (wiki / rel).stat().st_size
    state = Path(sandbox.env["XDG_STATE_HOME"]) / "hallouminate"
    check_no_temp_files(store_dir(sandbox), wiki, state)
    journal = state / "pending-writes"
    assert not journal.exists() or not list(journal.iterdir()), "journal records survived the restart"
    return disk


async def test_kill_9_at_random_moments_of_index_and_writes_loses_nothing(sandbox: Sandbox) -> None:
    rng = random.Random(SEED)
    repo = sandbox.make_repo("crash", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    bulk = wiki / "bulk"
    bulk.mkdir()
    for i in range(BULK):
        (bulk / f"page-{i:02d}.md").write_text(page_text(rng, f"page-{i:02d}"))
    first = await index_to_completion(sandbox, repo)
    # How long re-embedding one page takes here: index cycles kill within the expected length of the run.
    secs_per_page = first["corpora"][0]["seconds"] / BULK
    baseline = check_converged(sandbox, repo)
    w = Writes()
    tally = Tally()

    for cycle in range(1, CYCLES + 1):
        kind = ("index", "write")[cycle % 2]  # both kinds in any tier; the moment within is random
        every = rng.choice((1, 2)) if kind == "index" else 4
        mutate(bulk, rng, cycle, every)
        bulk_written = {rel: digest for rel, digest in disk_state(wiki).items() if rel.startswith("bulk/")}
        expected = secs_per_page * (len(range(0, BULK, every)) + 3)
        answered_before = w.answered
        running, in_flight, at = await run_and_kill(sandbox, repo, rng, cycle, kind, expected, w, baseline)

        lost = check_after_kill(sandbox, repo, w, baseline, bulk_written)
        tally.files_lost += len(lost)
        assert not lost, f"cycle {cycle} ({kind}): files lost: {lost}"
        await index_to_completion(sandbox, repo)
        baseline = check_converged(sandbox, repo)
        # The write the kill interrupted either landed (whole) or did not: the page's version is now
        # what is on disk, and the next cycle's writes start from it.
        if w.inflight is not None:
            path, content, word = w.inflight
            if (wiki / path).exists() and (wiki / path).read_text() == content:
                w.acked[path], w.markers[path] = content, word
            w.inflight = None

        tally.cycles += 1
        tally.index_cycles += kind == "index"
        tally.mid_index += running
        tally.mid_write += in_flight and not running
        tally.writes_answered += w.answered - answered_before
        tally.notes.append(
            f"  cycle {cycle:2d} {kind:<5}: killed at {at:5.2f} s, index running: {running!s:<5}, "
            f"write in flight: {in_flight!s:<5}, writes answered: {w.answered - answered_before}"
        )
        print(("\n" if cycle == 1 else "") + tally.notes[-1], flush=True)  # the full tier runs for minutes

    print(
        f"kill -9 cycles survived: {tally.cycles}/{CYCLES}, files lost: {tally.files_lost}; killed mid-index "
        f"{tally.mid_index}, mid-write (no index running) {tally.mid_write}, writes answered "
        f"{tally.writes_answered}"
    )
    assert tally.cycles == CYCLES and tally.files_lost == 0
    # The moments were what they were meant to be: most index cycles hit a run, write cycles a write.
    assert tally.mid_index * 3 >= tally.index_cycles * 2, tally.notes
    assert tally.mid_write >= (CYCLES - tally.index_cycles) // 2, tally.notes


def test_files_lancedb_left_staged_when_killed_are_removed_as_the_store_opens(tmp_path: Path) -> None:
    """The random kills above leave them only now and then; this places them where a killed commit
    leaves them (``.tmp`` + 6 characters, LanceDB's staging name, next to the file being written)."""
    store = Store(tmp_path / "db", 8)
    rows = [
        {
            "abs_path": "/abs/a.md",
            "heading_path": ["A"],
            "line_start": 1,
            "line_end": 2,
            "text": f"row {i}",
            "summary": "A",
            "content_hash": "h",
            "file_size": 10,
            "file_mtime_ns": 1,
            "vector": np.full(8, 0.35, dtype=np.float32),
        }
        for i in range(3)
    ]
    store.replace_files("c", {"a.md": rows})
    table = tmp_path / "db" / "chunks.lance"
    # Where a vector or scalar index's parts are staged (this store builds none itself: ADR 0017).
    index_dir = table / "_indices" / "7d0c6a3e-index"
    index_dir.mkdir(parents=True)
    staged = [table / "data" / ".tmpAb3xYz", index_dir / ".tmp0Qr9sT", table / "_transactions" / ".tmpZZZZZZ"]
    # Not LanceDB's staging pattern: whatever these are, they are not ours to remove.
    kept = [
        table / "data" / "tmpAb3xYz",
        table / "data" / ".tmpAb3xY",
        table / "_versions" / ".tmpAb3xYz.keep",
    ]
    for path in (*staged, *kept):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"half a fragment")
    del store

    reopened = Store(tmp_path / "db", 8)
    assert [p for p in staged if p.exists()] == []
    assert all(p.exists() for p in kept)
    assert [row["text"] for row in reopened.file_rows("c", "a.md")] == ["row 0", "row 1", "row 2"]
