"""Filtered searches (issue 15) on a real store: the reader's in-memory path and its LanceDB path (past
``in_memory_rows``) return exactly the best ``limit`` ELIGIBLE chunks, the ones an exact search over the
eligible rows alone finds: a filter is applied before ranking, never to a fixed pool of candidates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hallouminate.analysis import query_terms
from hallouminate.search.filters import Eligibility, parse_query
from hallouminate.storage import Store
from hallouminate.storage.eligibility import quality_mask
from hallouminate.storage.reader import AsyncReader
from support.store_rows import chunk_rows, unit_vec

PAGES = 60


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "db", 8)
    files = {}
    for i in range(PAGES):
        path = f"{'keep' if i % 10 == 0 else 'bulk'}/t{i % 3}/p{i}.md"
        words = "lantern harbour" if i % 2 else "lantern crane"
        rows = chunk_rows(path, [f"{words} {i} alpha", f"{words} {i} beta"], seed=10 * i)
        front = json.dumps({"tags": ["even" if i % 2 == 0 else "odd"], "date": f"2026-01-{1 + i % 28:02d}"})
        for row in rows:
            row["fields"] = front
        files[path] = rows
    store.replace_files("c", files)
    return store


def _eligible(query: str = "x", **params: Any) -> Eligibility:
    return Eligibility.take(dict(params), parse_query(query))


def _all_rows(store: Store) -> list[dict[str, Any]]:
    return [row for path in {f for f in store.file_states("c")} for row in store.file_rows("c", path)]


async def test_both_paths_rank_the_eligible_chunks_exactly(tmp_path: Path) -> None:
    store = _store(tmp_path)
    query = np.asarray(unit_vec(55))
    eligible = _eligible(category="keep", tags_any=["even"])
    rows = {row["id"]: row for row in _all_rows(store)}
    passing = [r for r in rows.values() if eligible.page_passes(r["path"], r["fields"])]
    assert 0 < len(passing) < len(rows) // 5  # selective: 6 pages of 60
    vectors = {r["id"]: np.asarray(unit_vec(_seed(r)), dtype=np.float32) for r in passing}
    expected = sorted(vectors, key=lambda i: -float(vectors[i] @ query))[:5]
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        found = await reader.vector_search(query, ["c"], 5, eligible)
        assert [row["id"] for row in found] == expected
        hits = await reader.fts_search(query_terms("lantern crane"), ["c"], 5, eligible)
        assert len(hits) == 5 and all(eligible.page_passes(h["path"], h["fields"]) for h in hits)


def _seed(row: dict[str, Any]) -> int:
    # chunk_rows seeds chunk k of page i with 10 * i + k.
    page = int(row["path"].rsplit("/p", 1)[1].removesuffix(".md"))
    return 10 * page + json.loads(row["id"])[2]


async def test_text_rules_fill_the_limit_past_excluded_candidates(tmp_path: Path) -> None:
    store = _store(tmp_path)
    syntax = parse_query("lantern -harbour")
    eligible = Eligibility.take({}, syntax)
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        # Half the chunks hold "harbour": the 20 best of the others still come back, none holding it.
        found = await reader.vector_search(np.asarray(unit_vec(3)), ["c"], 20, eligible)
        assert len(found) == 20 and not any("harbour" in row["text"] for row in found)
        hits = await reader.fts_search(query_terms(syntax.text), ["c"], 20, eligible)
        assert len(hits) == 20 and not any("harbour" in row["text"] for row in hits)
    phrase = Eligibility.take({}, parse_query('"crane 4 alpha"'))
    hits = await AsyncReader(store).fts_search(query_terms("crane 4 alpha"), ["c"], 5, phrase)
    assert [row["text"] for row in hits] == ["lantern crane 4 alpha"]


async def test_a_filter_nothing_passes_returns_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    eligible = _eligible(date_from="2027-01-01")
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        assert await reader.vector_search(np.asarray(unit_vec(1)), ["c"], 5, eligible) == []
        assert await reader.fts_search(query_terms("lantern"), ["c"], 5, eligible) == []


def test_the_quality_floor_reads_the_column_and_lets_null_pass() -> None:
    rows = pa.table({"quality": pa.array([0.1, None, 0.3, 0.9], pa.float32())})
    mask = quality_mask(rows, 0.3)
    assert mask is not None and mask.tolist() == [False, True, True, True]
    assert quality_mask(rows, 0.0) is None  # include_low_quality: nothing to drop
    assert quality_mask(pa.table({"text": ["a"]}), 0.3) is None  # a store without the column yet


async def test_bm25_checks_many_files_by_number_and_keeps_the_eligible_order(tmp_path: Path) -> None:
    # 300 pages, half of them eligible: too many files to name in tantivy's query either way, so the hits
    # are checked by their file's number; the result is BM25's own order over the eligible chunks.
    store = Store(tmp_path / "db", 8)
    files = {}
    for i in range(300):
        rows = chunk_rows(f"p{i}.md", [f"lantern {'lantern ' * (i % 7)}note {i}"], seed=i)
        rows[0]["fields"] = json.dumps({"tags": ["even" if i % 2 == 0 else "odd"]})
        files[f"p{i}.md"] = rows
    store.replace_files("c", files)
    eligible = _eligible(tags_any=["even"])
    terms = query_terms("lantern")
    reference = [
        (row_id, score)
        for row_id, score in store.lexical.search(terms, ["c"], 1000)
        if int(json.loads(row_id)[1][1:-3]) % 2 == 0
    ][:40]
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        hits = await reader.fts_search(terms, ["c"], 40, eligible)
        assert [(h["id"], h["score"]) for h in hits] == reference
