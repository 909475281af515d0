"""``resolve(cwd)`` remembered between requests while nothing it depends on has changed.

Resolving reads and merges one or two TOML files and walks up from ``cwd``: ~1 ms of every request, a
twentieth of a whole ``ground`` round trip. From above every repository it also scans the directories
below ``cwd`` for repositories: up to ``DISCOVERY_MAX_DIRS`` of them, ~0.5 s on a two-core machine.

Every entry is reused only while every config file it read and every marker it looked for walking up
(``.hallouminate/config.toml``, ``.git``) has the same stat signature, so an edited, added or removed
config takes effect on the very next request. An answer found by a discovery scan is reused only while,
in addition, its ``Watch`` reports no change: the daemon's watch puts an inotify watch on each directory
the scan reads *before* reading it (``daemon/dirwatch.py``), so a repository created, removed or renamed
below ``cwd``, an edited ignore file or repository config, is seen by the next request (the kernel queues
the event before the change's system call returns). Without a watch (the CLI, or inotify refused) a
discovery is not remembered.

What neither a stat nor a watch shows (a symlink in a configured path retargeted, a worktree's git files
rewritten, a change made on a network filesystem by another machine) is picked up within ``MAX_AGE_SECS``
(``DISCOVERY_MAX_AGE_SECS`` for an answer from a scan, which is dear to redo).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.discover import ScanObserver
from hallouminate.config.resolve import resolve
from hallouminate.config.types import Resolved

log = logging.getLogger("hallouminate.config")

MAX_AGE_SECS = 2.0
DISCOVERY_MAX_AGE_SECS = 30.0
MAX_ENTRIES = 256
# Answers from a scan held at once, each with a watch per directory read (up to DISCOVERY_MAX_DIRS): the
# watches count against the user's inotify limit, which editors and other tools need too.
MAX_WATCHED_ENTRIES = 2

Signature = tuple[int, int, int, int] | None


class Watch(ScanObserver, Protocol):
    """What tells whether a discovery's answer may have changed since its directories were read."""

    def changed(self) -> bool:
        """True once anything that could change the answer happened (or could not be watched)."""

    def close(self) -> None: ...


Resolver = Callable[[Path, ScanObserver | None], Resolved]


def _signature(path: Path) -> Signature:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def witness(cwd: Path) -> tuple[tuple[Signature, ...], bool]:
    """The stat signatures resolve's answer for ``cwd`` depends on, and whether ``cwd`` is inside a
    repository or checkout (False: above them all, where the answer depends on a directory scan)."""
    signatures = [_signature(xdg.baseline_config_file())]
    for directory in (cwd, *cwd.parents):
        config = _signature(directory / defaults.REPO_CONFIG)
        git = _signature(directory / ".git")
        signatures += [config, git]
        if config is not None or git is not None:
            return tuple(signatures), True
    return tuple(signatures), False


@dataclass(frozen=True)
class Lookup:
    """An answer, and the clock time at which it was known current (None: not known, e.g. a config
    changed while it was read; whoever asked first may use it, a request that came later may not)."""

    resolved: Resolved
    current_at: float | None


@dataclass
class _Entry:
    witness: tuple[Signature, ...]
    resolved: Resolved
    at: float
    watch: Watch | None

    def max_age(self) -> float:
        return MAX_AGE_SECS if self.watch is None else DISCOVERY_MAX_AGE_SECS


class ResolveCache:
    """Thread-safe; meant to be called from worker threads (a miss can scan for ~0.5 s)."""

    def __init__(
        self,
        resolver: Resolver = resolve,
        clock: Callable[[], float] = time.monotonic,
        watch_factory: Callable[[], Watch] | None = None,
    ) -> None:
        self._resolver = resolver
        self.clock = clock
        self._watch_factory = watch_factory
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        # Discovery scans run (answers from above every repository not found in the cache).
        self.discoveries = 0

    def resolve(self, cwd: Path) -> Resolved:
        return self.lookup(cwd).resolved

    def lookup(self, cwd: Path) -> Lookup:
        now = self.clock()
        seen, inside = witness(cwd)
        with self._lock:
            self._drop_expired(now)
            entry = self._entries.get(cwd)
            # The stats above were taken after `now`, the watch is read after them: current at `now`.
            if (
                entry is not None
                and entry.witness == seen
                and now - entry.at < entry.max_age()
                and (entry.watch is None or not entry.watch.changed())
            ):
                self._entries.move_to_end(cwd)
                return Lookup(entry.resolved, now)
            if entry is not None:
                self._drop(cwd)
        watch = None if inside else self._new_watch()
        if not inside:
            with self._lock:
                self.discoveries += 1
        started = time.perf_counter()
        try:
            resolved = self._resolver(cwd, watch)  # errors are not cached: the next request tries again
        except BaseException:
            if watch is not None:
                watch.close()
            raise
        if not inside:
            log.info(
                "discovery below %s: %d repositories in %.2f s",
                cwd,
                len(resolved.discovered),
                time.perf_counter() - started,
            )
        # Stat again: a config edited while it was being read must not be remembered as unchanged.
        checked = self.clock()
        unchanged = witness(cwd)[0] == seen
        if unchanged and (inside or (watch is not None and not watch.changed())):
            with self._lock:
                self._store(cwd, _Entry(seen, resolved, now, watch))
            return Lookup(resolved, checked)
        if watch is not None:
            watch.close()
        return Lookup(resolved, None)

    def close(self) -> None:
        with self._lock:
            for cwd in list(self._entries):
                self._drop(cwd)

    def _new_watch(self) -> Watch | None:
        if self._watch_factory is None:
            return None
        try:
            return self._watch_factory()
        except OSError as exc:  # no inotify here, or the per-user instance limit: scan every time
            log.info("cannot watch for repository discovery (%s): it is not cached", exc)
            return None

    # -- under the lock ----------------------------------------------------------------------------
    def _store(self, cwd: Path, entry: _Entry) -> None:
        if cwd in self._entries:
            self._drop(cwd)
        self._entries[cwd] = entry
        if entry.watch is not None:
            watched = [key for key, held in self._entries.items() if held.watch is not None]
            for key in watched[: max(0, len(watched) - MAX_WATCHED_ENTRIES)]:
                self._drop(key)
        while len(self._entries) > MAX_ENTRIES:
            self._drop(next(iter(self._entries)))

    def _drop(self, cwd: Path) -> None:
        entry = self._entries.pop(cwd)
        if entry.watch is not None:
            entry.watch.close()

    def _drop_expired(self, now: float) -> None:
        """Give the inotify watches of expired answers back at once, not when the cwd is next asked for."""
        for key in [k for k, e in self._entries.items() if e.watch is not None and now - e.at >= e.max_age()]:
            self._drop(key)
