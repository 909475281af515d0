"""changed_since on a real store, on both of the reader's paths (rows held in memory, and LanceDB past
``in_memory_rows``) and for vector, BM25 and phrase scans: only chunks of files modified at or after the
instant are candidates, and a page mask cached for the other rules does not leak into another instant."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from hallouminate.analysis import query_terms
from hallouminate.search.filters import Eligibility
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.store_rows import chunk_rows, unit_vec

SECOND = 1_000_000_000
PAGES = 40


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "db", 8)
    files = {}
    for i in range(PAGES):
        path = f"p{i}.md"
        rows = chunk_rows(path, [f"lantern harbour {i} alpha", f"lantern harbour {i} beta"], seed=10 * i)
        for row in rows:
            row["file_mtime_ns"] = (1_700_000_000 + i * 86400) * SECOND  # page i: i days after the first
        files[path] = rows
    store.replace_files("c", files)
    return store


def _since(day: int) -> Eligibility:
    # An ISO datetime: the instant is fixed, so the expected pages are too.
    moment = datetime.fromtimestamp(1_700_000_000 + day * 86400, tz=UTC).isoformat()
    return Eligibility.take({"changed_since": moment})


async def test_both_paths_keep_only_files_changed_since(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        for day in (35, 10, 0, 99):
            eligible = _since(day)
            expected = {f"p{i}.md" for i in range(day, PAGES)}
            found = await reader.vector_search(np.asarray(unit_vec(3)), ["c"], 200, eligible)
            assert {row["path"] for row in found} == expected, day
            hits = await reader.fts_search(query_terms("lantern harbour"), ["c"], 200, eligible)
            assert {row["path"] for row in hits} == expected, day
            scan = await reader.phrase_rows(["c"], "lantern", 1000, eligible)
            assert {row["path"] for row in scan.rows} == expected, day
    assert _since(3).applied()["changed_since_utc"] == "2023-11-17T22:13:20Z"
