"""The daemon's async reader sees every committed write of the store's writer, and its searches agree with
LanceDB's own flat search and with the BM25 index, held in memory or read from LanceDB."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from hallouminate.analysis import query_terms
from hallouminate.storage import Store, sql
from hallouminate.storage.held_vectors import LEVELS
from hallouminate.storage.reader import AsyncReader
from hallouminate.storage.schema import TABLE
from support.store_rows import DIM, chunk_rows, unit_vec


def lancedb_nearest(store: Store, query: Any, corpora: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """(id, cosine similarity) of the ``limit`` nearest rows by LanceDB's own exact (flat) cosine search,
    through its synchronous API on a handle of its own: the reference the reader must match."""
    table = lancedb.connect(str(store.path)).open_table(TABLE)
    rows = (
        table.search(np.asarray(query, dtype=np.float32), vector_column_name="vector")
        .distance_type("cosine")
        .where(sql.in_list("corpus", corpora), prefilter=True)
        .select(["id", "_distance"])
        .limit(limit)
        .to_list()
    )
    return [(row["id"], 1.0 - float(row["_distance"])) for row in rows]


async def test_reader_follows_the_writer_commit_by_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    reader = AsyncReader(store)
    assert await reader.count_rows("c") == 0

    store.replace_files("c", {"a.md": chunk_rows("a.md", ["alpha bravo", "charlie delta"])})
    assert await reader.count_rows("c") == 2
    hits = await reader.fts_search(query_terms("charlie"), ["c"], 10)
    assert [h["path"] for h in hits] == ["a.md"] and "charlie" in hits[0]["text"]

    store.replace_files("c", {"a.md": chunk_rows("a.md", ["echo foxtrot"], seed=5)})
    assert await reader.count_rows("c") == 1
    assert await reader.fts_search(query_terms("charlie"), ["c"], 10) == []
    nearest = await reader.vector_search(unit_vec(5), ["c"], 5)
    assert nearest[0]["text"] == "echo foxtrot" and abs(nearest[0]["score"] - 1.0) < 1e-5

    store.delete_files("c", ["a.md"])
    assert await reader.count_rows("c") == 0


async def test_both_vector_paths_rank_exactly_as_lancedb_flat_cosine_search(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files(
        # Seeds 10 apart: every chunk has its own vector, so no two scores tie (tie order is arbitrary).
        "c",
        {f"p{i}.md": chunk_rows(f"p{i}.md", [f"a {i}", f"b {i}", f"c {i}"], seed=10 * i) for i in range(40)},
    )
    store.replace_files(
        "d", {f"q{i}.md": chunk_rows(f"q{i}.md", [f"d {i}"], seed=1000 + i) for i in range(30)}
    )
    store.replace_files("other", {"x.md": chunk_rows("x.md", ["elsewhere"], seed=70)})  # never in the scope
    query = np.asarray(unit_vec(70)) + 0.3 * np.asarray(unit_vec(1007))
    reference = lancedb_nearest(store, query, ["c", "d"], 25)
    in_memory = await AsyncReader(store).vector_search(query, ["c", "d"], 25)
    as_codes = await AsyncReader(store, exact_rows=0).vector_search(query, ["c", "d"], 25)
    from_lancedb = await AsyncReader(store, in_memory_rows=0).vector_search(query, ["c", "d"], 25)
    # Vectors held as 16-bit codes (big corpora): a score may move by sum(|q_i|) * step / 2, at most
    # sqrt(DIM) / (2 * LEVELS) for unit vectors (storage/held_vectors.py); the order is the exact one.
    for found, atol in ((in_memory, 1e-5), (as_codes, np.sqrt(DIM) / (2 * LEVELS)), (from_lancedb, 1e-5)):
        assert [row["id"] for row in found] == [row_id for row_id, _ in reference]
        assert np.allclose([row["score"] for row in found], [score for _, score in reference], atol=atol)
    assert in_memory[0].keys() == from_lancedb[0].keys()
    assert {row["corpus"] for row in in_memory} == {"c", "d"} and len(reference) == 25


async def test_the_in_memory_vectors_follow_each_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    reader = AsyncReader(store)
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["old"], seed=1)})
    assert (await reader.vector_search(unit_vec(1), ["c"], 5))[0]["text"] == "old"
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["new"], seed=2)})
    nearest = await reader.vector_search(unit_vec(2), ["c"], 5)
    assert [row["text"] for row in nearest] == ["new"] and abs(nearest[0]["score"] - 1.0) < 1e-5
    store.delete_files("c", ["a.md"])
    assert await reader.vector_search(unit_vec(2), ["c"], 5) == []
    assert await reader.vector_search(unit_vec(2), ["never-indexed"], 5) == []


async def test_bm25_hits_and_phrase_scans_agree_in_memory_and_past_the_memory_cap(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    texts = ["rollback the migration", "the migration plan", "unrelated", "Rollback  drill"]
    store.replace_files(
        "c", {f"p{i}.md": chunk_rows(f"p{i}.md", texts[i:] + texts[:i], seed=10 * i) for i in range(4)}
    )
    store.replace_files("other", {"x.md": chunk_rows("x.md", ["rollback migration elsewhere"])})

    async def search(reader: AsyncReader) -> tuple[list[tuple[str, float]], list[tuple[str, int, int]]]:
        hits = await reader.fts_search(query_terms("rollback migration"), ["c"], 20)
        scan = await reader.phrase_rows(["c"], "(?i)rollback", 100)
        return (
            [(h["id"], round(h["score"], 5)) for h in hits],
            [(r["path"], r["ordinal"], r["occurrences"]) for r in scan.rows],
        )

    in_memory = await search(AsyncReader(store))
    past_the_cap = await search(AsyncReader(store, in_memory_rows=0))
    assert in_memory == past_the_cap
    assert len(in_memory[0]) == 12 and len(in_memory[1]) == 8
    # The BM25 index's own ranking, best first: the rows hold exactly its hits, with its scores.
    ranking = store.lexical.search(query_terms("rollback migration"), ["c"], 20)
    assert in_memory[0] == [(row_id, round(score, 5)) for row_id, score in ranking]


@pytest.mark.parametrize("head_start", [1, 2, 3])
async def test_a_load_overtaken_by_a_commit_is_never_served_after_it(tmp_path: Path, head_start: int) -> None:
    """A search that began reading a corpus before a write, and finishes after another search moved the
    reader past the write, must not leave its older rows behind for the searches that follow."""
    import asyncio

    store = Store(tmp_path / "db", DIM)
    reader = AsyncReader(store)
    # Big enough that reading it takes longer than moving the reader to the next version.
    pages = {f"p{i}.md": chunk_rows(f"p{i}.md", [f"old page {i} " * 40] * 8, seed=10 * i) for i in range(500)}
    store.replace_files("c", pages)
    await reader.count_rows("c")
    early = asyncio.create_task(reader.vector_search(unit_vec(3), ["c"], 5))
    for _ in range(head_start):  # the early search is now reading the corpus
        await asyncio.sleep(0)
    assert not early.done()
    store.replace_files("c", {"p7.md": chunk_rows("p7.md", ["fresh words"], seed=70)})
    await reader.count_rows("c")  # another request moves the reader past the write
    # The overlap this is about: the early search was still reading when the reader moved past the write.
    assert not early.done(), "the early search finished before the write: nothing overtook it"
    await early
    after = await reader.phrase_rows(["c"], "(?i)fresh words", 10)
    assert [row["path"] for row in after.rows] == ["p7.md"]
    assert [row["path"] for row in (await reader.fts_search(query_terms("fresh"), ["c"], 5))] == ["p7.md"]


async def test_a_large_corpus_is_scored_off_the_loop_with_the_same_result(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files(
        "c", {f"p{i}.md": chunk_rows(f"p{i}.md", [f"t {i}", f"u {i}"], seed=10 * i) for i in range(30)}
    )
    on_the_loop = await AsyncReader(store).vector_search(unit_vec(40), ["c"], 10)
    off_the_loop = await AsyncReader(store, off_loop_rows=0).vector_search(unit_vec(40), ["c"], 10)
    assert on_the_loop == off_the_loop and on_the_loop[0]["path"] == "p4.md"


async def test_concurrent_searches_of_a_corpus_not_yet_held_share_one_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    store = Store(tmp_path / "db", DIM)
    store.replace_files("c", {f"p{i}.md": chunk_rows(f"p{i}.md", [f"v {i}"], seed=10 * i) for i in range(20)})
    reader = AsyncReader(store)
    loads = 0
    loading = 0
    joined = 0  # searches that reached the corpus while its load was running
    real_load = AsyncReader._load
    real_in_memory = AsyncReader._in_memory

    async def counted(self: AsyncReader, table: object, corpus: str) -> object:
        nonlocal loads, loading
        loads += 1
        loading += 1
        try:
            return await real_load(self, table, corpus)
        finally:
            loading -= 1

    async def watched(self: AsyncReader, table: object, corpus: str) -> object:
        nonlocal joined
        joined += loading > 0
        return await real_in_memory(self, table, corpus)

    monkeypatch.setattr(AsyncReader, "_load", counted)
    monkeypatch.setattr(AsyncReader, "_in_memory", watched)
    results = await asyncio.gather(*(reader.vector_search(unit_vec(10 * i), ["c"], 3) for i in range(8)))
    assert loads == 1
    # They were concurrent: others arrived while the one load ran, and waited for it.
    assert joined >= 1, "every search came after the load had finished: nothing was shared"
    assert [found[0]["path"] for found in results] == [f"p{i}.md" for i in range(8)]
