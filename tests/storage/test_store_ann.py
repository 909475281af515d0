"""The store's approximate vector index (storage/ann.py, ADR 0059) on a real LanceDB store: built past the
threshold, retrained once the table has grown, its state reported; a build killed mid-way leaves the
store as it was (no index, or the old one), and the next build succeeds."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hallouminate.storage import Store
from hallouminate.storage.ann import RETRAIN_GROWTH
from hallouminate.storage.reader import AsyncReader
from support.store_rows import chunk_rows, unit_vec

THRESHOLD = 300
# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 300.0


def write_files(store: Store, first: int, files: int, chunks: int, dim: int = 8) -> None:
    store.replace_files(
        "c",
        {
            f"f{n}.md": chunk_rows(
                f"f{n}.md", [f"text {n} {i}" for i in range(chunks)], seed=n * 1000, dim=dim
            )
            for n in range(first, first + files)
        },
    )


def test_built_past_the_threshold_then_retrained_once_grown(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", 8, ann_min_rows=THRESHOLD)
    write_files(store, 0, 50, 5)  # 250 rows: below
    assert store.maintain_ann() is None
    assert store.ann_state().state == "none"

    write_files(store, 50, 20, 5)  # 350 rows
    assert store.maintain_ann() == "built"
    state = store.ann_state()
    assert (state.state, state.rows_indexed, state.rows_unindexed) == ("ready", 350, 0)

    write_files(store, 70, 2, 5)  # new rows: scanned exactly until a refresh, not worth a build
    assert store.ann_state().rows_unindexed == 10
    assert store.maintain_ann() is None

    grown = int(350 * RETRAIN_GROWTH) - 360 + 5
    write_files(store, 72, grown // 5 + 1, 5)
    assert store.maintain_ann() == "retrained"
    state = store.ann_state()
    assert state.rows_unindexed == 0 and state.rows_indexed == store.count_rows()


CHILD = """
import sys
from pathlib import Path
from hallouminate.storage import Store

store = Store(Path(sys.argv[1]), int(sys.argv[2]), ann_min_rows=1)

def begun():
    print("begun", flush=True)

print(store.maintain_ann(begun), flush=True)
print("done", flush=True)
"""


async def test_a_build_killed_mid_way_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    dim = 32
    path = tmp_path / "db"
    store = Store(path, dim)
    write_files(store, 0, 20, 1000, dim=dim)  # 20,000 rows: a build long enough for the kill to land in
    rows = store.count_rows()
    del store

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(dim)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    deadline = time.monotonic() + DEADLINE_SECS
    while child.stdout.readline().strip() != "begun":
        assert time.monotonic() < deadline and child.poll() is None, "the child never began its build"
    time.sleep(random.uniform(0.02, 0.2))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()
    child.wait()
    assert "done" not in rest, "the build finished before the kill: no overlap"

    reopened = Store(path, dim, ann_min_rows=1)
    assert reopened.count_rows() == rows
    assert reopened.ann_state().state == "none"  # nothing half-built is in force
    reader = AsyncReader(reopened, in_memory_rows=0)  # LanceDB's path, where the index is used
    query = unit_vec(7 * 1000 + 3, dim)  # file f7's chunk 3
    found = await reader.vector_search(query, ["c"], 1)
    assert (found[0]["path"], found[0]["line_start"]) == ("f7.md", 31)

    assert reopened.maintain_ann() == "built"
    assert reopened.ann_state().state == "ready"
    found = await reader.vector_search(np.asarray(query), ["c"], 1)
    assert (found[0]["path"], found[0]["line_start"]) == ("f7.md", 31)
