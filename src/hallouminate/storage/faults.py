"""Store faults as the caller should read them: the cause and the fix, not a LanceError and a Rust source path.

LanceDB reports I/O failures as ``RuntimeError``/``OSError`` whose text ends in ``(os error N)``; a store
directory removed under the daemon shows up as ``Not found: <path>``. These helpers turn both into one
``StoreFault`` naming the store directory, what happened to it and what to do.

A store in an object store (``StoreLocation`` with a URI) has no directory to look at and no errno: its
failures come as the object store client's text (``Generic S3 error ... error sending request``, an HTTP
status). A store that does not answer, or answers 5xx, is ``StoreUnreachable`` (retryable: a partition or a
gateway restarting passes); refused credentials a plain ``StoreFault`` naming the fix.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from hallouminate.errors import HallouminateError, StoreFault, StoreUnreachable
from hallouminate.storage.location import StoreLocation
from hallouminate.storage.schema import TABLE

_OS_ERROR = re.compile(r"\(os error (\d+)\)")

# Errno values grouped by what the user has to do about them.
_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}

MISSING = "missing"
NOT_A_DIRECTORY = "not-a-directory"

# The object store refused the credentials (S3 error codes and statuses as object_store quotes them).
_DENIED = re.compile(
    r"status: 40[13]\b|AccessDenied|SignatureDoesNotMatch|InvalidAccessKeyId|ExpiredToken|"
    r"PermissionDenied|Unauthenticated|InvalidToken"
)
# The object store did not answer, or answered with a server error: worth asking again later.
_UNREACHABLE = re.compile(
    r"error sending request|timed out|timeout|connection (?:refused|reset|closed)|"
    r"status: 5\d\d|Server returned non-2xx status code: 5|InternalError|ServiceUnavailable|SlowDown|"
    r"dns error|broken pipe",
    re.IGNORECASE,
)
# A version's data file is gone: the writer's cleanup pruned the version a reader still holds (ADR 0063).
_PRUNED = re.compile(r"\bNot found\b|NotFound|No such file|Version \d+ no longer exists")


def _where(store: Path | StoreLocation) -> Path | None:
    """The directory of a local store, None for an object store."""
    if isinstance(store, StoreLocation):
        return store.directory
    return store


def _text_chain(exc: BaseException) -> str:
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 8:
        parts.append(seen.message if isinstance(seen, HallouminateError) else str(seen))
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


def pruned(exc: BaseException) -> bool:
    """Whether ``exc`` says a file of the version read is gone (a version pruned under its reader)."""
    return isinstance(exc, (RuntimeError, OSError, ValueError)) and bool(_PRUNED.search(_text_chain(exc)))


def object_store_fault(location: StoreLocation, exc: BaseException) -> StoreFault | None:
    """A clear ``StoreFault`` for an object store failure we recognise, else None: refused credentials,
    or a store that does not answer (``StoreUnreachable``, retryable)."""
    if isinstance(exc, StoreFault):
        return exc
    text = _text_chain(exc)
    where = location.describe()
    if _DENIED.search(text):
        return StoreFault(
            f"the object store of the index {where} refused this daemon's credentials ({_short(text)}): set "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the credentials file the configuration names) "
            "to keys that may read and write that prefix, then restart the daemon",
            {"store": where, "problem": "store-access-denied"},
        )
    if "NoSuchBucket" in text:
        return StoreFault(
            f"the bucket of the index {where} does not exist: create it (or correct [store] uri), then "
            "restart the daemon",
            {"store": where, "problem": "store-no-bucket"},
        )
    if isinstance(exc, TimeoutError) or _UNREACHABLE.search(text):
        return unreachable(location, _short(text))
    return None


def unreachable(location: StoreLocation, why: str) -> StoreUnreachable:
    where = location.describe()
    return StoreUnreachable(
        f"the object store of the index {where} did not answer ({why}); nothing is lost: ask again once "
        "it answers (a partition or a restarting gateway passes)",
        {"store": where, "problem": "store-unreachable"},
    )


def _short(text: str, limit: int = 240) -> str:
    """The first line of an object store error, without the Rust backtrace it drags along."""
    first = text.strip().splitlines()[0] if text.strip() else "no detail"
    first = first.split(", /rustc/")[0]
    return first if len(first) <= limit else first[: limit - 3] + "..."


def table_dir(store_dir: Path) -> Path:
    return store_dir / f"{TABLE}.lance"


def store_problem(store: Path | StoreLocation) -> str | None:
    """``MISSING`` when the store directory (or its table) is gone, ``NOT_A_DIRECTORY`` when something
    else stands where it was; None when it looks usable. A few stats: cheap enough before every request.
    Always None for an object store: nothing on this machine to look at (a missing table there is said
    when the store opens, an unreachable bucket by the request that meets it)."""
    store_dir = _where(store)
    if store_dir is None:
        return None
    for path in (store_dir, table_dir(store_dir)):
        try:
            if not path.is_dir():
                return NOT_A_DIRECTORY if path.exists() else MISSING
        except OSError:
            return MISSING
    return None


def problem_error(store: Path | StoreLocation, problem: str) -> StoreFault:
    store_dir = store.describe() if isinstance(store, StoreLocation) else store
    if problem == NOT_A_DIRECTORY:
        return StoreFault(
            f"the index store {store_dir} is not a directory any more (something else was put in its "
            "place, or its table was): move that away, or set [store] path in the baseline config to a "
            "writable directory and restart the daemon (`hallouminate daemon stop`); then run `hallouminate "
            "index`",
            {"store": str(store_dir), "problem": "store-not-a-directory"},
        )
    return StoreFault(
        f"the index store {store_dir} was removed while the daemon was running, so there is nothing to "
        "search: run `hallouminate index` (or the index tool) to rebuild it from the files",
        {"store": str(store_dir), "problem": "store-missing", "fix": "hallouminate index"},
    )


def _os_errno(exc: BaseException) -> int | None:
    """The errno of ``exc`` or of an exception it was raised from: an ``OSError``'s own, or LanceDB's
    ``(os error N)``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return seen.errno
        text = seen.message if isinstance(seen, HallouminateError) else str(seen)
        found = _OS_ERROR.search(text)
        if found:
            return int(found.group(1))
        seen = seen.__cause__ or seen.__context__
    return None


def explain(store: Path | StoreLocation, exc: BaseException) -> StoreFault | None:
    """A clear ``StoreFault`` for a store failure we recognise (store gone, read-only, disk full; for an
    object store, unreachable or refused credentials), else None."""
    store_dir = _where(store)
    if store_dir is None:
        assert isinstance(store, StoreLocation)
        return object_store_fault(store, exc)
    problem = store_problem(store_dir)
    if problem is not None:
        return problem_error(store_dir, problem)
    code = _os_errno(exc)
    if code is None:
        return None
    reason = f"{os.strerror(code)}, os error {code}"
    if code in _FULL:
        return StoreFault(
            f"the index store {store_dir} could not be written: its disk is full or a file hit the size "
            f"limit ({reason}). Free space on that disk (or lift the limit), then run `hallouminate index` "
            "again; rows already indexed are intact, and files not written keep their previous rows",
            {"store": str(store_dir), "problem": "store-full", "errno": code},
        )
    if code in _READ_ONLY:
        return StoreFault(
            f"the index store {store_dir} is not writable ({reason}). Make it writable (remount the disk "
            "read-write, fix its permissions), or set [store] path in the baseline config to a writable "
            "directory and restart the daemon; rows already indexed are intact and search still answers "
            "from them",
            {"store": str(store_dir), "problem": "store-read-only", "errno": code},
        )
    return None
