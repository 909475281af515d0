"""Exactly one writer per object store: the writer's lease in the bucket (``storage/lease.py``, ADR 0063),
against a real S3-compatible server (SeaweedFS, ``support.s3``)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import obstore
import pytest

from hallouminate.errors import StoreFault
from hallouminate.storage.lease import LEASE_KEY, LeaseHeld, LeaseLost, WriterLease
from support.s3 import S3Server

# Short enough for a test to outlive it; the store's clock counts whole seconds, so a lease expires
# between TTL + 1 and TTL + 2 s after its last write.
SHORT_TTL = 2.0


def lease(server: S3Server, prefix: str, ttl_secs: float = 30.0) -> WriterLease:
    return WriterLease.for_location(server.location(prefix), ttl_secs=ttl_secs)


@pytest.fixture
def prefix() -> str:
    return f"tests/{uuid.uuid4().hex}"


def body(server: S3Server, prefix: str) -> dict[str, object]:
    found: dict[str, object] = json.loads(bytes(obstore.get(server.object_store(prefix), LEASE_KEY).bytes()))
    return found


def test_a_second_writer_is_refused_and_told_who_holds_the_lease_and_until_when(
    s3_server: S3Server, prefix: str
) -> None:
    first = lease(s3_server, prefix)
    first.acquire()
    assert first.held and 0 < first.remaining() <= 30

    second = lease(s3_server, prefix)
    with pytest.raises(LeaseHeld) as refused:
        second.acquire()
    error = refused.value
    assert isinstance(error, StoreFault) and not error.retryable and not second.held
    assert error.data["holder"] == {"host": socket.gethostname(), "pid": os.getpid(), "id": first.holder.id}
    assert error.data["problem"] == "store-writer-lease-held"
    assert 25 <= error.data["expires_in_secs"] <= 32
    assert f"pid {os.getpid()} on {socket.gethostname()}" in error.message
    assert "runs out at" in error.message and "read-only" in error.message
    # The message names the store, never its keys.
    assert s3_server.uri(prefix) in error.message and s3_server.secret_key not in error.message
    assert body(s3_server, prefix)["holder"] == {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "id": first.holder.id,
    }


def test_each_renewal_writes_a_new_body_and_keeps_the_lease(s3_server: S3Server, prefix: str) -> None:
    holder = lease(s3_server, prefix)
    holder.acquire()
    etags = {obstore.head(s3_server.object_store(prefix), LEASE_KEY)["e_tag"]}
    for renewals in (1, 2, 3):
        holder.renew()
        assert body(s3_server, prefix)["renewals"] == renewals
        etags.add(obstore.head(s3_server.object_store(prefix), LEASE_KEY)["e_tag"])
    # A new ETag each time (SeaweedFS's is the body's MD5): a stale If-Match can never match again.
    assert len(etags) == 4
    assert not holder.renew_if_due()  # just renewed: not due for a third of the TTL
    holder.guard()  # held and fresh: nothing to do


def test_a_writer_that_stops_renewing_loses_the_lease_to_the_next_after_its_ttl(
    s3_server: S3Server, prefix: str
) -> None:
    dead = lease(s3_server, prefix, ttl_secs=SHORT_TTL)
    dead.acquire()  # ... and never renews again, as a writer killed with -9
    successor = lease(s3_server, prefix)
    with pytest.raises(LeaseHeld):
        successor.acquire()

    started = time.monotonic()
    successor.acquire(wait_secs=SHORT_TTL + 6)
    waited = time.monotonic() - started
    # Not before the TTL by the store's clock, and not much after (the retries wait for the expiry).
    assert SHORT_TTL - 0.5 <= waited <= SHORT_TTL + 5
    assert successor.held and body(s3_server, prefix)["holder"]["id"] == successor.holder.id  # type: ignore[index]

    # The old holder's clock says its lease ran out; renewing finds the successor and says so.
    assert not dead.held
    with pytest.raises(LeaseLost, match=f"pid {os.getpid()} on .* holds it now") as lost:
        dead.renew()
    assert lost.value.data["problem"] == "store-writer-lease-lost"
    with pytest.raises(LeaseLost):
        dead.guard()
    assert not dead.release()  # not ours: the successor's lease is left alone
    successor.renew()


def test_a_released_lease_lets_the_next_writer_in_at_once(s3_server: S3Server, prefix: str) -> None:
    first = lease(s3_server, prefix)
    first.acquire()
    assert first.release() and not first.held
    assert body(s3_server, prefix)["released"] is True

    started = time.monotonic()
    second = lease(s3_server, prefix)
    second.acquire()
    assert time.monotonic() - started < 2 and second.held
    with pytest.raises(LeaseLost):
        first.renew()
    # And the next one is refused again.
    with pytest.raises(LeaseHeld):
        lease(s3_server, prefix).acquire()


def test_of_writers_racing_for_a_free_lease_exactly_one_takes_it(s3_server: S3Server, prefix: str) -> None:
    racers = [lease(s3_server, prefix) for _ in range(3)]
    start = threading.Barrier(len(racers))

    def race(racer: WriterLease) -> bool:
        start.wait()
        try:
            racer.acquire()
        except LeaseHeld:
            return False
        return True

    for _round in range(2):  # a free lease: absent, then released
        with ThreadPoolExecutor(len(racers)) as pool:
            won = list(pool.map(race, racers))
        assert sorted(won) == [False, False, True]
        winner = racers[won.index(True)]
        assert body(s3_server, prefix)["holder"]["id"] == winner.holder.id  # type: ignore[index]
        assert winner.release()
