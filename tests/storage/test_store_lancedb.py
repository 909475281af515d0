"""The LanceDB store, on a real database in tmp_path (small random vectors, no model). Its rows are
searched through the daemon's reader (storage/reader.py), as served."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hallouminate.analysis import query_terms
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

DIM = 8


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _rows(path: str, texts: list[str], digest: str = "h", seed: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "abs_path": f"/abs/{path}",
            "heading_path": ["Title", f"Section {i}"],
            "line_start": 1 + 10 * i,
            "line_end": 9 + 10 * i,
            "text": text,
            "summary": f"Title - summary of {path}",
            "content_hash": digest,
            "file_size": 100,
            "file_mtime_ns": 1_000,
            "vector": _vec(seed + i),
        }
        for i, text in enumerate(texts)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "db", DIM)


def _texts(store: Store, corpus: str, path: str) -> list[str]:
    return [row["text"] for row in store.file_rows(corpus, path)]


def test_replace_leaves_no_old_rows_and_other_files_untouched(store: Store) -> None:
    store.replace_files(
        "c", {"a.md": _rows("a.md", ["a one", "a two", "a three"]), "b.md": _rows("b.md", ["b"])}
    )
    before_b = store.file_rows("c", "b.md")
    store.replace_files("c", {"a.md": _rows("a.md", ["a new"], digest="h2")})
    assert _texts(store, "c", "a.md") == ["a new"]
    assert store.file_rows("c", "b.md") == before_b
    assert store.count_rows("c") == 2
    assert store.file_states("c")["a.md"].content_hash == "h2"


def test_empty_row_list_deletes_the_file(store: Store) -> None:
    store.replace_files("c", {"a.md": _rows("a.md", ["x", "y"]), "b.md": _rows("b.md", ["z"])})
    store.replace_files("c", {"a.md": []})
    assert set(store.file_states("c")) == {"b.md"}


def test_same_path_in_two_corpora_is_independent(store: Store) -> None:
    store.replace_files("one", {"a.md": _rows("a.md", ["first corpus"])})
    store.replace_files("two", {"a.md": _rows("a.md", ["second corpus"])})
    store.delete_files("one", ["a.md"])
    assert store.count_rows("one") == 0
    assert _texts(store, "two", "a.md") == ["second corpus"]


@pytest.mark.parametrize("in_memory_rows", [200_000, 0], ids=["in-memory", "lancedb"])
async def test_bm25_and_vector_search_respect_the_corpus_filter(store: Store, in_memory_rows: int) -> None:
    store.replace_files("one", {"x.md": _rows("x.md", ["the rollback of migrations"], seed=1)})
    store.replace_files("two", {"y.md": _rows("y.md", ["rolling back a migration safely"], seed=2)})
    reader = AsyncReader(store, in_memory_rows=in_memory_rows)
    hits = await reader.fts_search(query_terms("migration rollback"), ["one", "two"], 10)
    assert {h["corpus"] for h in hits} == {"one", "two"}
    assert all(h["score"] > 0 for h in hits)
    only_two = await reader.fts_search(query_terms("migration"), ["two"], 10)
    assert [(h["corpus"], h["path"]) for h in only_two] == [("two", "y.md")]
    assert await reader.fts_search(query_terms("migration"), [], 10) == []

    nearest = await reader.vector_search(_vec(2), ["one", "two"], 10)
    assert nearest[0]["path"] == "y.md"
    assert nearest[0]["score"] == pytest.approx(1.0, abs=1e-5)
    assert [h["corpus"] for h in await reader.vector_search(_vec(2), ["one"], 10)] == ["one"]
    row = nearest[0]
    assert row["heading_path"] == ["Title", "Section 0"]
    assert (row["line_start"], row["line_end"], row["abs_path"]) == (1, 9, "/abs/y.md")
    assert "vector" not in row


async def test_names_with_quotes_are_quoted_safely(store: Store) -> None:
    corpus, path = "o'brien", "it's \"quoted\" ' OR '1'='1.md"
    store.replace_files("o", {"plain.md": _rows("plain.md", ["keyword here"])})
    store.replace_files(corpus, {path: _rows(path, ["keyword here too", "more"])})
    assert set(store.file_states(corpus)) == {path}
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        assert {h["corpus"] for h in await reader.fts_search(query_terms("keyword"), [corpus], 10)} == {
            corpus
        }
        assert {h["corpus"] for h in await reader.vector_search(_vec(0), [corpus], 10)} == {corpus}
    store.replace_files(corpus, {path: _rows(path, ["replaced"])})
    assert _texts(store, corpus, path) == ["replaced"]
    store.update_stats(corpus, path, 5, 6)
    assert (store.file_states(corpus)[path].size, store.file_states(corpus)[path].mtime_ns) == (5, 6)
    store.delete_files(corpus, [path])
    assert store.count_rows(corpus) == 0
    assert store.count_rows("o") == 1


def test_update_stats_changes_every_row_of_the_file_only(store: Store) -> None:
    store.replace_files("c", {"a.md": _rows("a.md", ["1", "2", "3"]), "b.md": _rows("b.md", ["4"])})
    store.update_stats_many("c", {"a.md": (111, 222)})
    rows = store.file_rows("c", "a.md")
    assert {(r["file_size"], r["file_mtime_ns"]) for r in rows} == {(111, 222)}
    assert [r["text"] for r in rows] == ["1", "2", "3"]
    assert store.file_states("c")["b.md"].size == 100


def test_rows_survive_reopen_and_a_new_dimension_rebuilds(tmp_path: Path) -> None:
    first = Store(tmp_path / "db", DIM)
    first.replace_files("c", {"a.md": _rows("a.md", ["persisted"])})
    again = Store(tmp_path / "db", DIM)
    assert _texts(again, "c", "a.md") == ["persisted"]
    assert again.lexical.search(
        query_terms("persisted"), ["c"], 5
    )  # the BM25 index is rebuilt from the table
    rebuilt = Store(tmp_path / "db", DIM * 2)
    assert rebuilt.count_rows() == 0


async def test_optimize_keeps_results(store: Store) -> None:
    for i in range(5):
        store.replace_files("c", {f"f{i}.md": _rows(f"f{i}.md", [f"document number {i} about caching"])})
    reader = AsyncReader(store)
    before = await reader.fts_search(query_terms("caching"), ["c"], 10)
    store.optimize()
    assert len(before) == 5 and await reader.fts_search(query_terms("caching"), ["c"], 10) == before


def test_readers_never_see_a_half_replaced_file(store: Store) -> None:
    versions = {"A": _rows("a.md", ["a"] * 3, digest="A"), "B": _rows("a.md", ["b"] * 5, digest="B")}
    store.replace_files("c", {"a.md": versions["A"]})
    errors: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            rows = store.file_rows("c", "a.md")
            digests = {r["content_hash"] for r in rows}
            if len(digests) != 1 or len(rows) != len(versions[digests.pop()]):
                errors.append(f"mixed read: {[(r['content_hash'], r['text']) for r in rows]}")

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        for i in range(20):
            store.replace_files("c", {"a.md": versions["AB"[i % 2]]})
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert errors == []


def test_a_table_cut_at_another_chunk_size_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "db"
    Store(db, DIM, chunk_tokens=128).replace_files("c", {"a.md": _rows("a.md", ["kept"])})
    assert _texts(Store(db, DIM, chunk_tokens=128), "c", "a.md") == ["kept"]
    # A tool that does not say how its chunks were cut takes the table as it is.
    assert _texts(Store(db, DIM), "c", "a.md") == ["kept"]
    # [indexing] chunk_tokens changed: every file must be cut again, so the derived table is rebuilt.
    rebuilt = Store(db, DIM, chunk_tokens=64)
    assert rebuilt.count_rows() == 0 and rebuilt.file_states("c") == {}
    rebuilt.replace_files("c", {"a.md": _rows("a.md", ["recut"])})
    assert _texts(Store(db, DIM, chunk_tokens=64), "c", "a.md") == ["recut"]


def test_a_table_from_before_chunk_sizes_were_recorded_is_kept(tmp_path: Path) -> None:
    Store(tmp_path / "db", DIM).replace_files("c", {"a.md": _rows("a.md", ["old"])})
    assert _texts(Store(tmp_path / "db", DIM, chunk_tokens=128), "c", "a.md") == ["old"]
