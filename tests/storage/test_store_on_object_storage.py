"""The store on an object store (ADR 0063), against a real S3-compatible server (SeaweedFS, ``support.s3``):
a writer indexes into a bucket, read-only stores refuse every write and follow the writer's commits (the
new version built aside while searches go on on the old one), and an unreachable bucket fails a read as a
retryable ``StoreUnreachable`` within the deadline, after which the same store answers again."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from datetime import timedelta

import lancedb
import obstore
import pytest

from hallouminate.analysis import query_terms
from hallouminate.errors import StoreFault, StoreUnreachable
from hallouminate.storage.lease import LeaseLost, WriterLease
from hallouminate.storage.location import StoreLocation
from hallouminate.storage.reader import AsyncReader
from hallouminate.storage.schema import TABLE
from hallouminate.storage.store import ReadOnlyStore, Store, StoreReadOnly
from support.s3 import S3Server
from support.store_rows import DIM, chunk_rows, unit_vec

# A search's deadline on the frozen bucket: short, so the test is; the default is 20 s.
DEADLINE = 2.0


@pytest.fixture
def location(s3_server: S3Server) -> StoreLocation:
    return s3_server.location(f"tests/{uuid.uuid4().hex}")


@pytest.fixture
def writer(location: StoreLocation) -> Store:
    store = Store(location, DIM)
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["alpha bravo", "charlie delta"])})
    return store


def paths(rows: list[dict[str, object]] | list[object]) -> list[str]:
    return sorted({str(row["path"]) for row in rows})  # type: ignore[index]


def keys_under(server: S3Server, location: StoreLocation) -> list[str]:
    return [meta["path"] for batch in obstore.list(server.object_store(location.prefix)) for meta in batch]


# -- the writer ------------------------------------------------------------------------------------------
async def test_a_store_indexes_rows_into_a_bucket_and_reads_them_back(
    s3_server: S3Server, location: StoreLocation
) -> None:
    store = Store(location, DIM)
    assert store.path is None and store.location.uri == s3_server.uri(location.prefix)
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["alpha bravo", "charlie delta"])})
    store.replace_files("c", {"b.md": chunk_rows("b.md", ["echo foxtrot"], seed=7)})
    assert store.count_rows("c") == 3
    assert [row["text"] for row in store.file_rows("c", "a.md")] == ["alpha bravo", "charlie delta"]
    assert set(store.file_states("c")) == {"a.md", "b.md"}
    # The table is in the bucket, under the store's prefix.
    assert any(key.startswith(f"{TABLE}.lance/_versions/") for key in keys_under(s3_server, location))

    # Opened again from the bucket alone (BM25 rebuilt from it), and searched through the daemon's reader.
    reopened = Store(s3_server.location(location.prefix), DIM)
    reader = AsyncReader(reopened)
    assert await reader.count_rows("c") == 3
    assert paths(await reader.fts_search(query_terms("charlie"), ["c"], 5)) == ["a.md"]
    nearest = await reader.vector_search(unit_vec(7), ["c"], 1)
    assert nearest[0]["text"] == "echo foxtrot" and nearest[0]["score"] == pytest.approx(1.0, abs=1e-5)


def test_a_write_guard_that_refuses_stops_the_commit(s3_server: S3Server, location: StoreLocation) -> None:
    lease = WriterLease.for_location(location)
    lease.acquire()
    store = Store(location, DIM)
    store.write_guard = lease.guard
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["kept"])})
    version = store.latest_version()
    lease.release()  # as if another writer had taken it: this one must not commit again
    with pytest.raises(LeaseLost):
        store.replace_files("c", {"b.md": chunk_rows("b.md", ["lost"])})
    with pytest.raises(LeaseLost):
        store.delete_files("c", ["a.md"])
    assert store.latest_version() == version and store.count_rows("c") == 1


# -- read-only stores ------------------------------------------------------------------------------------
def test_a_read_only_store_refuses_every_write_and_writes_nothing(
    s3_server: S3Server, location: StoreLocation, writer: Store
) -> None:
    version = writer.latest_version()
    follower = ReadOnlyStore(s3_server.location(location.prefix), DIM)
    assert follower.version == version and follower.count_rows("c") == 2
    writes: dict[str, Callable[[], object]] = {
        "replace_files": lambda: follower.replace_files("c", {"x.md": chunk_rows("x.md", ["x"])}),
        "delete_files": lambda: follower.delete_files("c", ["a.md"]),
        "delete_corpus": lambda: follower.delete_corpus("c"),
        "update_stats": lambda: follower.update_stats("c", "a.md", 1, 2),
        "update_stats_many": lambda: follower.update_stats_many("c", {"a.md": (1, 2)}),
        "rebuild": follower.rebuild,
        "optimize": follower.optimize,
        "maybe_optimize": follower.maybe_optimize,
        "maintain_ann": follower.maintain_ann,
    }
    for name, write in writes.items():
        with pytest.raises(StoreReadOnly, match="opened read-only") as refused:
            write()
        assert isinstance(refused.value, StoreFault) and not refused.value.retryable, name
        assert refused.value.data["problem"] == "store-opened-read-only"
    assert writer.latest_version() == version and writer.count_rows("c") == 2


def test_a_read_only_store_of_an_empty_prefix_says_its_writer_has_indexed_nothing(
    s3_server: S3Server, location: StoreLocation
) -> None:
    with pytest.raises(StoreFault, match="writer has not indexed anything") as refused:
        ReadOnlyStore(location, DIM)
    assert refused.value.data["problem"] == "store-not-indexed"
    assert keys_under(s3_server, location) == []  # nothing made


async def test_a_follower_moves_only_when_the_writer_commits_and_then_finds_the_new_rows(
    s3_server: S3Server, location: StoreLocation, writer: Store
) -> None:
    follower = ReadOnlyStore(s3_server.location(location.prefix), DIM)
    reader = AsyncReader(follower)
    first = follower.version
    assert follower.latest_version() == first and not follower.follow()
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == []

    writer.replace_files("c", {"g.md": chunk_rows("g.md", ["golf hotel"], seed=40)})
    assert follower.latest_version() == first + 1  # seen, not followed yet: searches stay where they were
    assert follower.version == first and await reader.count_rows("c") == 2
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == []

    generation = follower.generation
    assert follower.follow()
    assert follower.version == first + 1 and follower.generation == generation + 1
    assert await reader.count_rows("c") == 3
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == ["g.md"]
    nearest = await reader.vector_search(unit_vec(40), ["c"], 1)
    assert nearest[0]["path"] == "g.md" and nearest[0]["score"] == pytest.approx(1.0, abs=1e-5)
    assert not follower.follow()  # nothing new


async def test_searches_during_a_follow_are_answered_from_the_old_version_until_the_swap(
    s3_server: S3Server, location: StoreLocation, writer: Store
) -> None:
    follower = ReadOnlyStore(s3_server.location(location.prefix), DIM)
    reader = AsyncReader(follower, in_memory_rows=0)  # every search reads the table at its version
    first = follower.version
    assert first is not None
    writer.replace_files("c", {"g.md": chunk_rows("g.md", ["golf hotel"], seed=40)})

    building, go = threading.Event(), threading.Event()

    def hold() -> None:
        building.set()
        assert go.wait(30)

    following = asyncio.ensure_future(asyncio.to_thread(follower.follow, hold))
    assert await asyncio.to_thread(building.wait, 30)
    # Mid-build: the new version's handle is open, its BM25 index not built, and searches go on as before.
    assert follower.version == first
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == []
    assert paths(await reader.fts_search(query_terms("charlie"), ["c"], 5)) == ["a.md"]
    assert paths(await reader.vector_search(unit_vec(40), ["c"], 5)) == ["a.md"]
    # The writer commits again meanwhile: the follower swaps to the version it was building, not this one.
    writer.replace_files("c", {"k.md": chunk_rows("k.md", ["kilo lima"], seed=70)})
    assert not following.done()
    go.set()
    assert await following
    assert follower.version == first + 1
    # BM25 and vectors both read exactly that version: g.md in, k.md not yet.
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == ["g.md"]
    assert paths(await reader.fts_search(query_terms("kilo"), ["c"], 5)) == []
    assert paths(await reader.vector_search(unit_vec(40), ["c"], 5)) == ["a.md", "g.md"]
    assert await reader.count_rows("c") == 3

    assert follower.follow() and follower.version == first + 2
    assert paths(await reader.vector_search(unit_vec(70), ["c"], 1)) == ["k.md"]
    assert paths(await reader.fts_search(query_terms("kilo"), ["c"], 5)) == ["k.md"]


async def test_a_version_pruned_under_a_follower_moves_it_to_the_latest(
    s3_server: S3Server, location: StoreLocation, writer: Store, caplog: pytest.LogCaptureFixture
) -> None:
    follower = ReadOnlyStore(s3_server.location(location.prefix), DIM)
    reader = AsyncReader(follower, in_memory_rows=0)
    first = follower.version
    assert paths(await reader.vector_search(unit_vec(40), ["c"], 1)) == ["a.md"]  # reading ``first``
    writer.replace_files("c", {"g.md": chunk_rows("g.md", ["golf hotel"], seed=40)})
    # Compacted and every older version removed at once (the daemon keeps an hour: KEEP_VERSIONS).
    table = lancedb.connect(location.connect_uri(), storage_options=location.storage_options()).open_table(
        TABLE
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "removes every version except the latest"
        table.optimize(cleanup_older_than=timedelta(0))
    nearest = await reader.vector_search(unit_vec(40), ["c"], 1)
    assert nearest[0]["path"] == "g.md"
    assert f"version {first} was pruned under a search" in caplog.text
    assert follower.version is not None and first is not None and follower.version > first + 1
    assert paths(await reader.fts_search(query_terms("golf"), ["c"], 5)) == ["g.md"]


# -- an unreachable bucket -------------------------------------------------------------------------------
async def test_a_frozen_bucket_fails_reads_as_retryable_within_the_deadline_and_the_store_recovers(
    s3_server: S3Server, location: StoreLocation, writer: Store
) -> None:
    follower = ReadOnlyStore(s3_server.location(location.prefix), DIM, read_deadline_secs=DEADLINE)
    reader = AsyncReader(follower, in_memory_rows=0)  # every search goes to the bucket
    assert paths(await reader.vector_search(unit_vec(1), ["c"], 1)) == ["a.md"]

    with s3_server.frozen():
        for name, read in (
            ("vector_search", lambda: reader.vector_search(unit_vec(1), ["c"], 1)),
            ("page_rows", lambda: reader.page_rows("c", "a.md")),
        ):
            started = time.monotonic()
            with pytest.raises(StoreUnreachable) as failed:
                await read()
            took = time.monotonic() - started
            assert took < DEADLINE + 1.5, (name, took)
            assert isinstance(failed.value, StoreFault) and failed.value.retryable
            assert failed.value.data["problem"] == "store-unreachable"
            assert s3_server.uri(location.prefix) in failed.value.message
            assert s3_server.secret_key not in failed.value.message
        started = time.monotonic()
        with pytest.raises(StoreUnreachable):
            follower.latest_version()
        with pytest.raises(StoreUnreachable):
            follower.file_rows("c", "a.md")
        assert time.monotonic() - started < 2 * DEADLINE + 1.5

    # The same store and reader answer again once the bucket does.
    assert paths(await reader.vector_search(unit_vec(1), ["c"], 1)) == ["a.md"]
    assert [row["text"] for row in follower.file_rows("c", "a.md")] == ["alpha bravo", "charlie delta"]
    assert follower.latest_version() == follower.version
