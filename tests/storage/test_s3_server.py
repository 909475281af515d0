"""What a team store on object storage relies on, checked against a real S3-compatible server (SeaweedFS,
``support.s3``; ADR 0063): LanceDB keeps a vector table in a bucket, a second connection (a read-only
server) follows the writer's commits by version, an older version stays readable while the writer goes
on, concurrent commits are not lost, and the bucket offers the atomic conditional writes a writer's lease
is built on (``If-None-Match: *`` to take it, ``If-Match: <etag>`` to renew or release it).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import lancedb
import numpy as np
import obstore
import pyarrow as pa
import pytest
from lancedb.index import FTS
from obstore.exceptions import AlreadyExistsError, GenericError, PreconditionError
from obstore.store import S3Store

from support.s3 import S3Server

DIM = 384
SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), DIM), nullable=False),
    ]
)
# Racers per round in the conditional-write tests. SeaweedFS serialises conditional writes of a key with
# a lock it polls each second: a loser's 412 may take 1-4 s (ADR 0063), so a round costs up to ~3 s.
RACERS = 6


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def rows(first: int, count: int, text: Callable[[int], str] = lambda i: f"chunk {i}") -> pa.Table:
    ids = range(first, first + count)
    vectors = np.stack([unit(i) for i in ids]).ravel()
    return pa.table(
        {
            "id": [f"r{i}" for i in ids],
            "text": [text(i) for i in ids],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors, pa.float32()), DIM),
        },
        schema=SCHEMA,
    )


def fresh_uri(server: S3Server) -> str:
    """A store of the test's own under the shared bucket."""
    return server.uri(f"tests/{uuid.uuid4().hex}")


async def connect(server: S3Server, uri: str, **options: str) -> Any:
    return await lancedb.connect_async(uri, storage_options={**server.storage_options, **options})


async def ids_of(table: Any) -> list[str]:
    return sorted((await table.query().select(["id"]).to_arrow())["id"].to_pylist())


def keys_under(server: S3Server, prefix: str) -> list[str]:
    return [meta["path"] for batch in obstore.list(server.object_store(), prefix) for meta in batch]


# -- the server -----------------------------------------------------------------------------------------------
def test_the_server_answers_only_signed_requests_on_loopback(s3_server: S3Server) -> None:
    assert s3_server.endpoint.startswith("http://127.0.0.1:")
    assert httpx.get(f"{s3_server.endpoint}/{s3_server.bucket}").status_code == 403
    assert bytes(obstore.get(s3_server.object_store(), ".ready").bytes()) == b"ready"
    # The helper's own measure: spawn to the first object read back.
    assert s3_server.started_in and s3_server.started_in[0] < 20


# -- LanceDB on the bucket ------------------------------------------------------------------------------------
async def test_lancedb_keeps_a_vector_table_in_the_bucket(s3_server: S3Server) -> None:
    uri = fresh_uri(s3_server)
    db = await connect(s3_server, uri)
    table = await db.create_table("chunks", schema=SCHEMA)
    await table.add(rows(0, 50))

    assert (await table.schema()).field("vector").type == pa.list_(pa.float32(), DIM)
    nearest = await table.query().nearest_to(unit(7)).distance_type("cosine").limit(3).to_arrow()
    assert nearest["id"][0].as_py() == "r7" and nearest["_distance"][0].as_py() == pytest.approx(0, abs=1e-5)
    # The table lives in the bucket, under the store's prefix: data files and one manifest per version.
    keys = keys_under(s3_server, uri.removeprefix(f"s3://{s3_server.bucket}/") + "/chunks.lance/")
    assert any("/data/" in key for key in keys) and any("/_versions/" in key for key in keys)


async def test_a_reader_moves_to_the_writers_commit_when_it_checks_out_the_latest(
    s3_server: S3Server,
) -> None:
    uri = fresh_uri(s3_server)
    writer = await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 10), schema=SCHEMA)
    reader = await (await connect(s3_server, uri)).open_table("chunks")
    seen = await reader.version()
    assert seen == await writer.version() and await reader.count_rows() == 10

    await writer.add(rows(10, 5))
    # Without a consistency interval a reader stays on the version it opened until told to move ...
    assert await reader.version() == seen and await reader.count_rows() == 10
    # ... and a poll finds the writer's commit: the version moves by one, the rows with it.
    await reader.checkout_latest()
    assert await reader.version() == seen + 1 == await writer.version()
    assert await ids_of(reader) == await ids_of(writer)


async def test_a_reader_with_a_zero_consistency_interval_sees_each_commit_unasked(
    s3_server: S3Server,
) -> None:
    uri = fresh_uri(s3_server)
    writer = await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 3), schema=SCHEMA)
    follower = await lancedb.connect_async(
        uri, storage_options=s3_server.storage_options, read_consistency_interval=timedelta(0)
    )
    reader = await follower.open_table("chunks")
    for step in range(3):
        await writer.add(rows(100 + step, 1))
        assert await reader.count_rows() == 4 + step
        assert await reader.version() == await writer.version()


async def test_a_full_text_index_builds_in_the_bucket_and_follows_new_rows(s3_server: S3Server) -> None:
    uri = fresh_uri(s3_server)
    words = ["alpha bravo", "charlie delta", "echo foxtrot"]
    table = await (await connect(s3_server, uri)).create_table(
        "chunks", data=rows(0, 3, lambda i: words[i]), schema=SCHEMA
    )
    await table.create_index("text", config=FTS(with_position=True))
    hits = await table.query().nearest_to_text("charlie").limit(5).to_arrow()
    assert hits["id"].to_pylist() == ["r1"]

    await table.add(rows(3, 1, lambda i: "charlie golf"))
    await table.optimize()  # folds the new rows into the index
    reader = await (await connect(s3_server, uri)).open_table("chunks")
    hits = await reader.query().nearest_to_text("charlie").limit(5).to_arrow()
    assert sorted(hits["id"].to_pylist()) == ["r1", "r3"]
    assert [index.index_type for index in await reader.list_indices()] == ["FTS"]


async def test_a_reader_on_an_older_version_keeps_reading_it_while_the_writer_commits(
    s3_server: S3Server,
) -> None:
    uri = fresh_uri(s3_server)
    writer = await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 20), schema=SCHEMA)
    reader = await (await connect(s3_server, uri)).open_table("chunks")
    held = await reader.version()
    before = await ids_of(reader)

    await writer.add(rows(20, 10))
    await writer.delete("id IN ('r0', 'r1', 'r2')")
    # Compaction rewrites the data files; old versions are pruned only past the retention (the store keeps
    # an hour: KEEP_VERSIONS), so the version the reader holds keeps its files.
    await writer.optimize(cleanup_older_than=timedelta(hours=1))
    assert await reader.version() == held and await ids_of(reader) == before
    nearest = await reader.query().nearest_to(unit(1)).limit(1).to_arrow()
    assert nearest["id"].to_pylist() == ["r1"]

    await reader.checkout_latest()
    assert await ids_of(reader) == await ids_of(writer) and "r1" not in await ids_of(reader)


async def test_pruning_the_version_a_reader_holds_breaks_that_reader(s3_server: S3Server) -> None:
    """Why the writer's retention must outlast a reader's reload: the files of a pruned version are gone."""
    uri = fresh_uri(s3_server)
    writer = await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 5), schema=SCHEMA)
    reader = await (await connect(s3_server, uri)).open_table("chunks")
    await writer.add(rows(5, 5))
    with pytest.warns(UserWarning, match="removes every version except the latest"):
        await writer.optimize(cleanup_older_than=timedelta(0))
    with pytest.raises(RuntimeError, match="Not found"):
        await reader.query().to_arrow()
    await reader.checkout_latest()
    assert len(await ids_of(reader)) == 10


async def test_concurrent_commits_to_one_table_are_all_kept(s3_server: S3Server) -> None:
    """LanceDB commits a version as a create-if-absent of its manifest (``If-None-Match: *``, ADR 0063):
    a writer that loses the race retries on the new version instead of overwriting it."""
    uri = fresh_uri(s3_server)
    first = await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 1), schema=SCHEMA)
    writers = [await (await connect(s3_server, uri)).open_table("chunks") for _ in range(3)]

    async def commits(w: int) -> None:
        for i in range(5):
            await writers[w].add(rows(1000 * (w + 1) + i, 1))

    await asyncio.gather(*(commits(w) for w in range(3)))
    await first.checkout_latest()
    assert await first.version() == 1 + 15
    assert len(await ids_of(first)) == 16


# -- the lease primitive ---------------------------------------------------------------------------------
def race(server: S3Server, attempt: Callable[[S3Store, int], object]) -> list[bool]:
    """``attempt`` by RACERS clients released together: whether each won (no precondition failure), in
    racer order."""
    clients = [server.object_store() for _ in range(RACERS)]
    start = threading.Barrier(RACERS)

    def run(i: int) -> bool:
        start.wait()
        try:
            attempt(clients[i], i)
        except (AlreadyExistsError, PreconditionError):
            return False
        return True

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(run, range(RACERS)))


def lease_key() -> str:
    return f"tests/{uuid.uuid4().hex}/writer.lease"


def test_a_create_if_absent_admits_exactly_one_of_racing_writers(s3_server: S3Server) -> None:
    bucket = s3_server.object_store()
    for _ in range(3):
        key = lease_key()
        won = race(
            s3_server,
            lambda store, i, key=key: obstore.put(
                store, key, json.dumps({"holder": i}).encode(), mode="create"
            ),
        )
        assert sorted(won) == [False] * (RACERS - 1) + [True]
        assert json.loads(bytes(obstore.get(bucket, key).bytes())) == {"holder": won.index(True)}


def test_a_renewal_on_the_etag_admits_exactly_one_and_a_stale_etag_changes_nothing(
    s3_server: S3Server,
) -> None:
    bucket, key = s3_server.object_store(), lease_key()
    etag = obstore.put(bucket, key, b'{"holder": "a", "term": 1}', mode="create")["e_tag"]
    assert etag and obstore.head(bucket, key)["e_tag"] == etag

    won = race(
        s3_server,
        lambda store, i: obstore.put(store, key, json.dumps({"holder": i}).encode(), mode={"e_tag": etag}),
    )
    assert sorted(won) == [False] * (RACERS - 1) + [True]
    now = obstore.get(bucket, key)
    assert json.loads(bytes(now.bytes())) == {"holder": won.index(True)} and now.meta["e_tag"] != etag
    # The old etag renews nothing any more; the current one does.
    with pytest.raises(PreconditionError):
        obstore.put(bucket, key, b"{}", mode={"e_tag": etag})
    obstore.put(bucket, key, b"{}", mode={"e_tag": now.meta["e_tag"]})
    # The same bytes again give the same ETag (its MD5): why each lease write must change the body.
    again = obstore.put(bucket, key, b"{}", mode="overwrite")["e_tag"]
    assert again == obstore.put(bucket, key, b"{}", mode="overwrite")["e_tag"]


# -- an unreachable bucket ---------------------------------------------------------------------------------
def test_a_frozen_server_accepts_connections_answers_nothing_then_resumes(s3_server: S3Server) -> None:
    key = lease_key()
    obstore.put(s3_server.object_store(), key, b"kept")
    impatient = s3_server.object_store(timeout=0.5)
    with s3_server.frozen(), pytest.raises(GenericError, match="error sending request"):
        obstore.get(impatient, key)
    assert bytes(obstore.get(impatient, key).bytes()) == b"kept"


async def test_a_server_taken_down_refuses_at_once_and_returns_on_its_port_with_its_data(
    s3_server: S3Server,
) -> None:
    uri = fresh_uri(s3_server)
    await (await connect(s3_server, uri)).create_table("chunks", data=rows(0, 5), schema=SCHEMA)
    # No retries: each read fails as soon as the connection is refused.
    reader = await (
        await connect(s3_server, uri, client_max_retries="0", download_retry_count="0")
    ).open_table("chunks")
    endpoint = s3_server.endpoint
    with s3_server.down():
        with pytest.raises(httpx.ConnectError):
            httpx.get(endpoint, timeout=2)
        with pytest.raises(RuntimeError, match="S3 error"):
            await reader.query().nearest_to(unit(1)).limit(1).to_arrow()
    assert s3_server.endpoint == endpoint
    # The same handle answers again once the server is back.
    nearest = await reader.query().nearest_to(unit(1)).limit(1).to_arrow()
    assert nearest["id"].to_pylist() == ["r1"]
