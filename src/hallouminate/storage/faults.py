"""Store faults as the caller should read them: the cause and the fix, not a LanceError and a Rust source path.

LanceDB reports I/O failures as ``RuntimeError``/``OSError`` whose text ends in ``(os error N)``; a store
directory removed under the daemon shows up as ``Not found: <path>``. These helpers turn both into one
``StoreFault`` naming the store directory, what happened to it and what to do.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from hallouminate.errors import HallouminateError, StoreFault
from hallouminate.storage.schema import TABLE

_OS_ERROR = re.compile(r"\(os error (\d+)\)")

# Errno values grouped by what the user has to do about them.
_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}

MISSING = "missing"
NOT_A_DIRECTORY = "not-a-directory"


def table_dir(store_dir: Path) -> Path:
    return store_dir / f"{TABLE}.lance"


def store_problem(store_dir: Path) -> str | None:
    """``MISSING`` when the store directory (or its table) is gone, ``NOT_A_DIRECTORY`` when something
    else stands where it was; None when it looks usable. A few stats: cheap enough before every request."""
    for path in (store_dir, table_dir(store_dir)):
        try:
            if not path.is_dir():
                return NOT_A_DIRECTORY if path.exists() else MISSING
        except OSError:
            return MISSING
    return None


def problem_error(store_dir: Path, problem: str) -> StoreFault:
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


def explain(store_dir: Path, exc: BaseException) -> StoreFault | None:
    """A clear ``StoreFault`` for a store failure we recognise (store gone, read-only, disk full), else None."""
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
