"""Exactly one writer per object store: a lease object in the bucket (ADR 0063).

The lease is one small JSON object beside the table, ``<prefix>/_hallouminate/writer.lease``: its holder
(host, pid, a random id), when the holder started (its own clock: for people only), a renewal counter, its
time to live, and whether it was released. Every change is a conditional write, so two writers never both
believe they hold it:

- ``acquire``: create it if absent (``If-None-Match: *``). Present and live: ``LeaseHeld``, naming the
  holder and when the lease runs out. Expired or released: taken over by a write on the ETag just read
  (``If-Match``); of two contenders one wins, the other reads again and finds it live.
- ``renew``: the next counter on the ETag of our last write; a 412 means another writer took it over:
  ``LeaseLost``, and the daemon must stop writing. Every write changes the body (the counter), because
  S3-compatible stores may give the ETag as the MD5 of the body (SeaweedFS does): a write of the same bytes
  would keep the ETag and a stale holder's ``If-Match`` would still match.
- ``release``: on a clean stop, a last conditional write marking it released, which lets the next writer
  in at once. Not a DELETE: obstore's delete takes no precondition, and an unconditional delete could
  remove a lease a new writer took meanwhile.

**Expiry never compares two machines' clocks.** A lease is expired when the store's own clock says its
last write is older than its ``ttl_secs``: its ``Last-Modified`` (stamped by the server at each write)
against the server's *now*, read as the ``Last-Modified`` of an object the contender writes for the
purpose (``_hallouminate/clock``: obstore exposes an object's metadata, not the response's ``Date``). Both
are whole seconds (HTTP dates), so a lease is taken over only when that age exceeds ``ttl_secs`` +
``GRANULARITY``: its true age then exceeds ``ttl_secs``. The holder, for its part, counts on its own
monotonic clock from the moment it *sent* its last successful write (which the server stamped later), and
treats the lease as its own for ``VALID_SHARE`` of ``ttl_secs`` only: so the holder stops trusting it
before any contender may take it, whatever the two wall clocks say (only their rates must roughly agree).

A local directory needs no lease: one machine, and the daemon is already a singleton there (its socket
lock, ``socket_guard``); a second process cannot reach the directory's daemon-owned store through it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from obstore import get, head, put
from obstore.exceptions import (
    AlreadyExistsError,
    BaseError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionError,
    UnauthenticatedError,
)

from hallouminate.errors import StoreFault, StoreUnreachable

if TYPE_CHECKING:
    from obstore.store import ObjectStore

    from hallouminate.storage.location import StoreLocation

log = logging.getLogger("hallouminate.storage.lease")

LEASE_KEY = "_hallouminate/writer.lease"
CLOCK_KEY = "_hallouminate/clock"
TTL_SECS = 30.0
# HTTP dates are whole seconds: each of the two stamps compared may be up to this much early.
GRANULARITY = 1.0
# The holder renews after this share of the TTL (``renew_if_due``) ...
RENEW_SHARE = 1 / 3
# ... renews before a commit once this share has passed (``guard``) ...
GUARD_SHARE = 1 / 2
# ... and trusts the lease for this share of it after sending its last successful write.
VALID_SHARE = 0.8
# Lookups of a lease that changes under us (released, taken, renewed meanwhile) before giving up.
ATTEMPTS = 3

_T = TypeVar("_T")


class LeaseHeld(StoreFault):
    """Another writer holds the store's lease: this one must not write (``data.holder`` names it,
    ``data.expires_in_secs`` says when it runs out unless renewed)."""


class LeaseLost(StoreFault):
    """This writer no longer holds the store's lease (another took it over, or it could not be renewed in
    time): it must stop writing at once."""


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: the machine, the process, and an id of this lease's own."""

    host: str
    pid: int
    id: str

    @classmethod
    def this_process(cls) -> Holder:
        return cls(socket.gethostname(), os.getpid(), uuid.uuid4().hex)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} (lease {self.id[:8]})"


@dataclass(frozen=True)
class LeaseRecord:
    """The lease object as read: its body's fields and the store's ETag and Last-Modified of it."""

    holder: Holder
    started: str
    renewals: int
    ttl_secs: float
    released: bool
    etag: str
    last_modified: datetime

    @classmethod
    def parse(cls, body: bytes, meta: Any) -> LeaseRecord:
        try:
            data = json.loads(body)
            holder = data["holder"]
            return cls(
                Holder(str(holder["host"]), int(holder["pid"]), str(holder["id"])),
                str(data.get("started", "")),
                int(data["renewals"]),
                float(data["ttl_secs"]),
                bool(data.get("released", False)),
                str(meta["e_tag"]),
                meta["last_modified"],
            )
        except (ValueError, KeyError, TypeError) as exc:
            # Not ours to read: a lease every writer ignores would let two in. Refuse, loudly.
            raise StoreFault(
                f"the store's writer lease {LEASE_KEY} is not a lease this release reads ({exc}): remove it "
                "once no writer runs",
                {"problem": "store-lease-unreadable"},
            ) from exc


@dataclass
class WriterLease:
    """The writer's lease on one object store (``for_location``). ``acquire`` before the first write,
    ``renew_if_due`` from a timer (every few seconds), ``guard`` before each commit, ``release`` on a
    clean stop. Not thread-safe: one owner calls it (the daemon's lease task)."""

    store: ObjectStore
    where: str  # the store, for messages
    ttl_secs: float = TTL_SECS
    key: str = LEASE_KEY
    clock_key: str = CLOCK_KEY
    holder: Holder = field(default_factory=Holder.this_process)
    monotonic: Callable[[], float] = time.monotonic
    _etag: str | None = field(default=None, init=False)
    _renewals: int = field(default=0, init=False)
    _started: str = field(default="", init=False)
    _sent_at: float = field(default=0.0, init=False)  # monotonic time our last successful write was sent

    @classmethod
    def for_location(cls, location: StoreLocation, ttl_secs: float = TTL_SECS) -> WriterLease:
        return cls(location.object_store(), location.describe(), ttl_secs)

    # -- state ---------------------------------------------------------------------------------------
    @property
    def held(self) -> bool:
        """Whether this writer holds the lease and may trust it now (by its own clock)."""
        return self._etag is not None and self.remaining() > 0

    def remaining(self) -> float:
        """Seconds this writer may still trust the lease without renewing it (0 when not held)."""
        if self._etag is None:
            return 0.0
        return max(0.0, self.ttl_secs * VALID_SHARE - (self.monotonic() - self._sent_at))

    # -- taking it -----------------------------------------------------------------------------------
    def acquire(self, wait_secs: float = 0.0) -> None:
        """Take the lease, or raise ``LeaseHeld`` naming the holder. ``wait_secs``: keep trying that long
        (a restarted writer waiting out the lease of the one that died)."""
        deadline = self.monotonic() + wait_secs
        while True:
            try:
                self._take()
                return
            except LeaseHeld as held:
                left = deadline - self.monotonic()
                if left <= 0:
                    raise
                time.sleep(min(left, max(0.2, float(held.data.get("expires_in_secs", 1.0)))))

    def _take(self) -> None:
        self._started = datetime.now(UTC).isoformat(timespec="seconds")
        seen: LeaseRecord | None = None
        for _ in range(ATTEMPTS):
            sent = self.monotonic()
            try:
                made = self._call(put, self.store, self.key, self._body(0), mode="create")
            except AlreadyExistsError:
                pass
            else:
                self._won(made, 0, sent)
                log.info("took the writer lease of %s", self.where)
                return
            seen = self._read()
            if seen is None:
                continue  # gone meanwhile: create it again
            if not seen.released:
                age = self._server_now() - seen.last_modified
                if age <= timedelta(seconds=seen.ttl_secs + GRANULARITY):
                    raise self._held_by(seen, age)
            sent = self.monotonic()
            try:
                made = self._call(put, self.store, self.key, self._body(0), mode={"e_tag": seen.etag})
            except PreconditionError:
                continue  # renewed, released or taken meanwhile: look again
            self._won(made, 0, sent)
            log.warning(
                "took over the writer lease of %s from %s (%s)",
                self.where,
                seen.holder.describe(),
                "released" if seen.released else "expired",
            )
            return
        assert seen is not None  # ATTEMPTS >= 1 and every path above read it or returned
        raise self._held_by(seen, self._server_now() - seen.last_modified)

    def _held_by(self, seen: LeaseRecord, age: timedelta) -> LeaseHeld:
        left = max(0.0, seen.ttl_secs + GRANULARITY - age.total_seconds())
        expires = seen.last_modified + timedelta(seconds=seen.ttl_secs + GRANULARITY)
        return LeaseHeld(
            f"another writer holds the index store {self.where}: {seen.holder.describe()}, writing since "
            f"{seen.started or 'an unknown time'}. Its lease runs out at {expires:%Y-%m-%d %H:%M:%S} UTC by "
            f"the store's clock (in {left:.0f} s) unless it renews it, which a live writer does. Stop that "
            "writer first, or run this daemon read-only to serve the store without writing",
            {
                "problem": "store-writer-lease-held",
                "store": self.where,
                "holder": {"host": seen.holder.host, "pid": seen.holder.pid, "id": seen.holder.id},
                "expires_at": expires.isoformat(),
                "expires_in_secs": round(left, 1),
            },
        )

    # -- keeping it ----------------------------------------------------------------------------------
    def renew(self) -> None:
        """Renew the lease now; ``LeaseLost`` when another writer took it over (stop writing)."""
        if self._etag is None:
            raise self._lost("this writer does not hold it")
        for _ in range(2):
            sent = self.monotonic()
            body = self._body(self._renewals + 1)
            try:
                made = self._call(put, self.store, self.key, body, mode={"e_tag": self._etag})
            except PreconditionError:
                seen = self._read()
                if seen is not None and seen.holder == self.holder and not seen.released:
                    # Our previous renewal landed and its answer was lost (a timeout): the lease is ours at
                    # that write's ETag. Renew again from there, with a send time we know.
                    self._etag, self._renewals = seen.etag, seen.renewals
                    continue
                self._etag = None
                raise self._lost(
                    f"{seen.holder.describe()} holds it now" if seen is not None else "it was removed"
                ) from None
            self._won(made, self._renewals + 1, sent)
            return
        self._etag = None
        raise self._lost("it kept changing under this writer")

    def renew_if_due(self) -> bool:
        """Renew when a third of the TTL has passed since the last write; True when it renewed."""
        if self._etag is not None and self.monotonic() - self._sent_at < self.ttl_secs * RENEW_SHARE:
            return False
        self.renew()
        return True

    def guard(self) -> None:
        """Before a commit: renew first when half the TTL has passed (a writer that was paused past its
        lease must find out before it writes, not after); ``LeaseLost`` if it is not ours."""
        if self._etag is None:
            raise self._lost("this writer does not hold it")
        if self.monotonic() - self._sent_at >= self.ttl_secs * GUARD_SHARE:
            self.renew()

    def current(self) -> str | None:
        """Who holds the lease as the store last recorded it ("host, pid N ..."), for a read-only daemon's
        refusals; None when nobody does (never taken, or released)."""
        seen = self._read()
        if seen is None or seen.released:
            return None
        return seen.holder.describe()

    def release(self) -> bool:
        """On a clean stop: mark the lease released (the next writer takes it at once); False when it was
        not ours any more."""
        if self._etag is None:
            return False
        etag, self._etag = self._etag, None
        try:
            self._call(
                put, self.store, self.key, self._body(self._renewals + 1, released=True), mode={"e_tag": etag}
            )
        except PreconditionError:
            log.warning("the writer lease of %s was not ours any more when released", self.where)
            return False
        log.info("released the writer lease of %s", self.where)
        return True

    # -- the object ----------------------------------------------------------------------------------
    def _body(self, renewals: int, *, released: bool = False) -> bytes:
        return json.dumps(
            {
                "holder": {"host": self.holder.host, "pid": self.holder.pid, "id": self.holder.id},
                "started": self._started,
                "renewals": renewals,
                "ttl_secs": self.ttl_secs,
                "released": released,
            }
        ).encode()

    def _won(self, made: Any, renewals: int, sent: float) -> None:
        etag = made.get("e_tag")
        if not etag:
            raise StoreFault(
                f"the object store of {self.where} gives no ETag on a write, so it cannot hold a writer lease",
                {"problem": "store-no-conditional-writes", "store": self.where},
            )
        self._etag, self._renewals, self._sent_at = str(etag), renewals, sent

    def _read(self) -> LeaseRecord | None:
        try:
            found = self._call(get, self.store, self.key)
            body = self._call(found.bytes)
        except (FileNotFoundError, NotFoundError):
            return None
        return LeaseRecord.parse(bytes(body), found.meta)

    def _server_now(self) -> datetime:
        """The object store's clock now: the Last-Modified of an object written for the purpose."""
        self._call(put, self.store, self.clock_key, uuid.uuid4().bytes)
        stamped: datetime = self._call(head, self.store, self.clock_key)["last_modified"]
        return stamped

    def _lost(self, why: str) -> LeaseLost:
        return LeaseLost(
            f"this daemon lost the writer lease of the index store {self.where} ({why}): it stops writing; "
            "restart it once the other writer is stopped, or run it read-only",
            {"problem": "store-writer-lease-lost", "store": self.where, "holder": self.holder.id},
        )

    def _call(self, operation: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """One request; a store that does not answer (a timeout, a refused connection, a 5xx after the
        retries) is ``StoreUnreachable``, refused credentials a ``StoreFault``. The outcomes a lease reads
        (exists, precondition failed, not found) pass through."""
        try:
            return operation(*args, **kwargs)
        except (AlreadyExistsError, PreconditionError, NotFoundError, FileNotFoundError):
            raise
        except (PermissionDeniedError, UnauthenticatedError) as exc:
            raise StoreFault(
                f"the object store of {self.where} refused this daemon's credentials: {_first_line(exc)}",
                {"problem": "store-access-denied", "store": self.where},
            ) from exc
        except (BaseError, OSError) as exc:
            raise StoreUnreachable(
                f"the object store of {self.where} did not answer the writer lease's request: "
                f"{_first_line(exc)}",
                {"problem": "store-unreachable", "store": self.where},
            ) from exc


def current_holder(location: StoreLocation) -> str | None:
    """``WriterLease.current`` of the store at ``location``."""
    return WriterLease.for_location(location).current()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
