"""``AsyncReader.neighbours`` (the connection graph's kNN): several queries in one call rank exactly as one
``vector_search`` each, with pages and chunks left out and filters applied before ranking, held in memory
or read from LanceDB."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hallouminate.search.filters import Eligibility
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.store_rows import DIM, chunk_rows, unit_vec


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "db", DIM)
    # Seeds 10 apart: every chunk has its own vector, so no two scores tie.
    pages = {f"a/t/p{i}.md": chunk_rows(f"a/t/p{i}.md", [f"x {i}", f"y {i}"], seed=10 * i) for i in range(20)}
    pages |= {f"b/q{i}.md": chunk_rows(f"b/q{i}.md", [f"z {i}"], seed=500 + i) for i in range(20)}
    store.replace_files("c", pages)
    store.replace_files("other", {"x.md": chunk_rows("x.md", ["elsewhere"], seed=31)})
    return store


async def test_many_queries_rank_as_one_search_each_with_exclusions(tmp_path: Path) -> None:
    store = _store(tmp_path)
    queries = np.stack([unit_vec(30), unit_vec(505) + 0.2 * unit_vec(40), unit_vec(77)])
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        every = [await reader.vector_search(q, ["c"], 60) for q in queries]
        excluded_page = every[0][0]["path"]
        excluded_chunk = every[1][0]["id"]
        found = await reader.neighbours(
            queries, "c", 6, exclude_paths=[excluded_page], exclude_ids=[excluded_chunk]
        )
        assert len(found) == len(queries)
        for rows, reference in zip(found, every, strict=True):
            expected = [r for r in reference if r["path"] != excluded_page and r["id"] != excluded_chunk][:6]
            assert [r["id"] for r in rows] == [r["id"] for r in expected]
            assert np.allclose([r["score"] for r in rows], [r["score"] for r in expected], atol=1e-5)
            assert all(r["corpus"] == "c" for r in rows)


async def test_filters_apply_before_ranking_and_an_empty_answer_is_a_list_per_query(tmp_path: Path) -> None:
    store = _store(tmp_path)
    queries = np.stack([unit_vec(505), unit_vec(30)])
    only_a = Eligibility(category="a", min_quality=0.0)
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        found = await reader.neighbours(queries, "c", 5, only_a)
        assert all(len(rows) == 5 and all(r["path"].startswith("a/") for r in rows) for rows in found)
        # Every page of the category left out: nothing, one (empty) list per query.
        pages = [f"a/t/p{i}.md" for i in range(20)]
        assert await reader.neighbours(queries, "c", 5, only_a, exclude_paths=pages) == [[], []]


async def test_best_of_scores_each_chunk_by_its_best_query_across_query_blocks(tmp_path: Path) -> None:
    from hallouminate.storage import reader as reader_module

    store = _store(tmp_path)
    # More queries than one block, so the running best crosses blocks.
    queries = np.stack([unit_vec(1000 + i) for i in range(reader_module.QUERY_BLOCK + 5)])
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        each = await reader.neighbours(queries, "c", 7)
        best: dict[str, float] = {}
        for rows in each:
            for row in rows:
                best[row["id"]] = max(best.get(row["id"], -1.0), row["score"])
        expected = sorted(best.items(), key=lambda item: -item[1])[:7]
        [merged] = await reader.neighbours(queries, "c", 7, best_of=True, exclude_ids=[])
        assert [r["id"] for r in merged] == [row_id for row_id, _ in expected]
        assert np.allclose([r["score"] for r in merged], [score for _, score in expected], atol=1e-5)
