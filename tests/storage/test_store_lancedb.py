"""The LanceDB store, on a real database in tmp_path (small random vectors, no model). Its rows are
searched through the daemon's reader (storage/reader.py), as served."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from hallouminate.analysis import query_terms
from hallouminate.errors import StoreFault
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.store_rows import DIM, chunk_rows, unit_vec


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "db", DIM)


def _texts(store: Store, corpus: str, path: str) -> list[str]:
    return [row["text"] for row in store.file_rows(corpus, path)]


def test_replace_leaves_no_old_rows_and_other_files_untouched(store: Store) -> None:
    store.replace_files(
        "c", {"a.md": chunk_rows("a.md", ["a one", "a two", "a three"]), "b.md": chunk_rows("b.md", ["b"])}
    )
    before_b = store.file_rows("c", "b.md")
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["a new"], digest="h2")})
    assert _texts(store, "c", "a.md") == ["a new"]
    assert store.file_rows("c", "b.md") == before_b
    assert store.count_rows("c") == 2
    assert store.file_states("c")["a.md"].content_hash == "h2"


def test_a_group_of_new_and_known_files_is_written_exactly_once_each(store: Store) -> None:
    # New files are appended, known ones merged (store.py): whatever the mix, each file ends with exactly
    # its new rows, a file deleted and written again included, and reopening (BM25 rebuilt) agrees.
    store.replace_files(
        "c", {"a.md": chunk_rows("a.md", ["a1", "a2", "a3"]), "d.md": chunk_rows("d.md", ["d"])}
    )
    store.replace_files("c", {"d.md": []})
    store.replace_files(
        "c",
        {
            "a.md": chunk_rows("a.md", ["a new"], digest="h2"),
            "b.md": chunk_rows("b.md", ["b1", "b2"]),
            "d.md": chunk_rows("d.md", ["d again"]),
        },
    )
    store.replace_files("c", {"b.md": chunk_rows("b.md", ["b1", "b2", "b3"], digest="h3")})
    expected = {"a.md": ["a new"], "b.md": ["b1", "b2", "b3"], "d.md": ["d again"]}
    assert {path: _texts(store, "c", path) for path in expected} == expected
    assert store.count_rows("c") == 5
    reopened = Store(store.path, DIM)
    reopened.replace_files("c", {"e.md": chunk_rows("e.md", ["e"]), "a.md": chunk_rows("a.md", ["a3"])})
    assert reopened.count_rows("c") == 6
    assert _texts(reopened, "c", "a.md") == ["a3"]
    assert reopened.lexical.has_file("c", "e.md") and not reopened.lexical.has_file("c", "zzz.md")


def test_empty_row_list_deletes_the_file(store: Store) -> None:
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["x", "y"]), "b.md": chunk_rows("b.md", ["z"])})
    store.replace_files("c", {"a.md": []})
    assert set(store.file_states("c")) == {"b.md"}


def test_same_path_in_two_corpora_is_independent(store: Store) -> None:
    store.replace_files("one", {"a.md": chunk_rows("a.md", ["first corpus"])})
    store.replace_files("two", {"a.md": chunk_rows("a.md", ["second corpus"])})
    store.delete_files("one", ["a.md"])
    assert store.count_rows("one") == 0
    assert _texts(store, "two", "a.md") == ["second corpus"]


@pytest.mark.parametrize("in_memory_rows", [200_000, 0], ids=["in-memory", "lancedb"])
async def test_bm25_and_vector_search_respect_the_corpus_filter(store: Store, in_memory_rows: int) -> None:
    store.replace_files("one", {"x.md": chunk_rows("x.md", ["the rollback of migrations"], seed=1)})
    store.replace_files("two", {"y.md": chunk_rows("y.md", ["rolling back a migration safely"], seed=2)})
    reader = AsyncReader(store, in_memory_rows=in_memory_rows)
    hits = await reader.fts_search(query_terms("migration rollback"), ["one", "two"], 10)
    assert {h["corpus"] for h in hits} == {"one", "two"}
    assert all(h["score"] > 0 for h in hits)
    only_two = await reader.fts_search(query_terms("migration"), ["two"], 10)
    assert [(h["corpus"], h["path"]) for h in only_two] == [("two", "y.md")]
    assert await reader.fts_search(query_terms("migration"), [], 10) == []

    nearest = await reader.vector_search(unit_vec(2), ["one", "two"], 10)
    assert nearest[0]["path"] == "y.md"
    assert nearest[0]["score"] == pytest.approx(1.0, abs=1e-5)
    assert [h["corpus"] for h in await reader.vector_search(unit_vec(2), ["one"], 10)] == ["one"]
    row = nearest[0]
    assert row["heading_path"] == ["Title", "Section 0"]
    assert (row["line_start"], row["line_end"], row["abs_path"]) == (1, 9, "/abs/y.md")
    assert "vector" not in row


async def test_names_with_quotes_are_quoted_safely(store: Store) -> None:
    corpus, path = "o'brien", "it's \"quoted\" ' OR '1'='1.md"
    store.replace_files("o", {"plain.md": chunk_rows("plain.md", ["keyword here"])})
    store.replace_files(corpus, {path: chunk_rows(path, ["keyword here too", "more"])})
    assert set(store.file_states(corpus)) == {path}
    for reader in (AsyncReader(store), AsyncReader(store, in_memory_rows=0)):
        assert {h["corpus"] for h in await reader.fts_search(query_terms("keyword"), [corpus], 10)} == {
            corpus
        }
        assert {h["corpus"] for h in await reader.vector_search(unit_vec(0), [corpus], 10)} == {corpus}
    store.replace_files(corpus, {path: chunk_rows(path, ["replaced"])})
    assert _texts(store, corpus, path) == ["replaced"]
    store.update_stats(corpus, path, 5, 6)
    assert (store.file_states(corpus)[path].size, store.file_states(corpus)[path].mtime_ns) == (5, 6)
    store.delete_files(corpus, [path])
    assert store.count_rows(corpus) == 0
    assert store.count_rows("o") == 1


def test_update_stats_changes_every_row_of_the_file_only(store: Store) -> None:
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["1", "2", "3"]), "b.md": chunk_rows("b.md", ["4"])})
    store.update_stats_many("c", {"a.md": (111, 222)})
    rows = store.file_rows("c", "a.md")
    assert {(r["file_size"], r["file_mtime_ns"]) for r in rows} == {(111, 222)}
    assert [r["text"] for r in rows] == ["1", "2", "3"]
    assert store.file_states("c")["b.md"].size == 100


def test_rows_survive_reopen_and_a_new_dimension_is_refused_not_dropped(tmp_path: Path) -> None:
    first = Store(tmp_path / "db", DIM)
    first.replace_files("c", {"a.md": chunk_rows("a.md", ["persisted"])})
    again = Store(tmp_path / "db", DIM)
    assert again.mismatch is None and _texts(again, "c", "a.md") == ["persisted"]
    assert again.lexical.search(
        query_terms("persisted"), ["c"], 5
    )  # the BM25 index is rebuilt from the table
    # Another dimension: the table is kept as it is, said to differ, and refuses writes until rebuilt.
    other = Store(tmp_path / "db", DIM * 2)
    assert other.mismatch is not None and other.mismatch.held["dimensions"] == str(DIM)
    assert other.mismatch.configured["dimensions"] == str(DIM * 2)
    assert other.count_rows() == 1 and _texts(other, "c", "a.md") == ["persisted"]
    with pytest.raises(StoreFault, match="index --rebuild"):
        other.replace_files("c", {"b.md": chunk_rows("b.md", ["new"], dim=DIM * 2)})
    with pytest.raises(StoreFault):
        other.delete_files("c", ["a.md"])
    assert Store(tmp_path / "db", DIM).count_rows() == 1  # nothing was lost meanwhile
    other.rebuild()
    assert other.mismatch is None and other.count_rows() == 0
    other.replace_files("c", {"b.md": chunk_rows("b.md", ["new"], dim=DIM * 2)})
    assert Store(tmp_path / "db", DIM * 2).mismatch is None


def test_another_model_is_refused_and_a_new_text_preparation_of_the_same_model_rebuilds(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    Store(db, DIM, model_name="m1", text_prep="p1").replace_files("c", {"a.md": chunk_rows("a.md", ["x"])})
    model = Store(db, DIM, model_name="m2", text_prep="p2").mismatch
    assert model is not None and model.held == {"model": "m1", "text_prep": "p1"}
    assert model.configured == {"model": "m2", "text_prep": "p2"}
    back = Store(db, DIM, model_name="m1", text_prep="p1")  # going back: nothing was lost
    assert back.mismatch is None and back.rebuilt is None and back.count_rows() == 1
    # The same model with texts prepared otherwise: only a release does that, so the store rebuilds, loudly.
    upgraded = Store(db, DIM, model_name="m1", text_prep="p2")
    assert upgraded.mismatch is None and upgraded.count_rows() == 0
    assert upgraded.rebuilt is not None and "'p1'" in upgraded.rebuilt and "'p2'" in upgraded.rebuilt


def test_a_store_of_another_schema_version_is_rebuilt_and_says_so(tmp_path: Path) -> None:
    import lancedb

    from hallouminate.storage.schema import META_VERSION, TABLE, chunk_schema

    Store(tmp_path / "db", DIM).replace_files("c", {"a.md": chunk_rows("a.md", ["old layout"])})
    db = lancedb.connect(str(tmp_path / "db"))
    old = chunk_schema(DIM, None)
    db.drop_table(TABLE)
    db.create_table(TABLE, schema=old.with_metadata({META_VERSION: b"0"}))
    reopened = Store(tmp_path / "db", DIM)
    assert reopened.rebuilt is not None and "schema version 0" in reopened.rebuilt
    assert reopened.mismatch is None and reopened.count_rows() == 0


async def test_optimize_keeps_results(store: Store) -> None:
    for i in range(5):
        store.replace_files("c", {f"f{i}.md": chunk_rows(f"f{i}.md", [f"document number {i} about caching"])})
    reader = AsyncReader(store)
    before = await reader.fts_search(query_terms("caching"), ["c"], 10)
    store.optimize()
    assert len(before) == 5 and await reader.fts_search(query_terms("caching"), ["c"], 10) == before


def test_readers_never_see_a_half_replaced_file(store: Store) -> None:
    versions = {
        "A": chunk_rows("a.md", ["a"] * 3, digest="A"),
        "B": chunk_rows("a.md", ["b"] * 5, digest="B"),
    }
    store.replace_files("c", {"a.md": versions["A"]})
    errors: list[str] = []
    seen: list[list[str]] = [[], []]  # each reader's digests, in the order it read them
    stop = threading.Event()
    reading = threading.Barrier(3)  # the writes start once both readers have read once

    def read(mine: list[str]) -> None:
        while not stop.is_set():
            rows = store.file_rows("c", "a.md")
            digests = {r["content_hash"] for r in rows}
            if len(digests) != 1 or len(rows) != len(versions[next(iter(digests))]):
                errors.append(f"mixed read: {[(r['content_hash'], r['text']) for r in rows]}")
            mine.append(next(iter(digests), "none"))
            if len(mine) == 1:
                reading.wait(timeout=60)

    readers = [threading.Thread(target=read, args=(mine,)) for mine in seen]
    for t in readers:
        t.start()
    try:
        reading.wait(timeout=60)
        for i in range(20):
            store.replace_files("c", {"a.md": versions["BA"[i % 2]]})
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert errors == []
    # The reads really overlapped the writes: between two reads of one reader, a commit landed (the
    # digest it saw changed), several times over.
    landed = sum(a != b for mine in seen for a, b in itertools.pairwise(mine))
    assert landed >= 3, f"{landed} commits landed between reads ({[len(mine) for mine in seen]} reads)"


def test_a_table_cut_at_another_chunk_size_is_refused_until_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "db"
    Store(db, DIM, chunk_tokens=128).replace_files("c", {"a.md": chunk_rows("a.md", ["kept"])})
    assert _texts(Store(db, DIM, chunk_tokens=128), "c", "a.md") == ["kept"]
    # A tool that does not say how its chunks were cut takes the table as it is.
    assert _texts(Store(db, DIM), "c", "a.md") == ["kept"]
    # [indexing] chunk_tokens changed: every file must be cut again; until it is, nothing is dropped.
    recut = Store(db, DIM, chunk_tokens=64)
    assert recut.mismatch is not None and recut.mismatch.held["chunk_tokens"] == "128"
    assert recut.count_rows() == 1
    recut.rebuild()
    assert recut.count_rows() == 0 and recut.file_states("c") == {}
    recut.replace_files("c", {"a.md": chunk_rows("a.md", ["recut"])})
    assert _texts(Store(db, DIM, chunk_tokens=64), "c", "a.md") == ["recut"]


def test_a_table_from_before_chunk_sizes_were_recorded_is_kept(tmp_path: Path) -> None:
    Store(tmp_path / "db", DIM).replace_files("c", {"a.md": chunk_rows("a.md", ["old"])})
    assert _texts(Store(tmp_path / "db", DIM, chunk_tokens=128), "c", "a.md") == ["old"]
