"""Know, without rescanning, whether a repository discovery below a cwd may have a different answer now.

Each directory the discovery reads gets an inotify watch *before* it is read (``entering``), so a change
made after the read is always queued; ``changed()`` drains the queue without blocking. The kernel queues
an event before the system call that caused it returns, so a change finished before a request was sent is
seen by that request: no debounce, no polling interval.

Only events that can change the discovery's answer count (``relevant``); an ordinary file written in a
watched directory does not, so editing code under ``~/work`` does not throw the cached answer away.
inotify_simple (plain inotify calls) rather than ``watchfiles``: watchfiles arms its watches when it
starts, after the paths are known (a change between the read and the arming would be missed), and delivers
events after a debounce.
"""

from __future__ import annotations

import errno
import logging
import threading
from pathlib import Path

from inotify_simple import INotify, flags

log = logging.getLogger("hallouminate.daemon")

# Entries appearing, going, renamed, rewritten or re-permissioned; the watched directory itself going.
# IN_MODIFY is left out: every write to a log file in a watched directory would be one event. An ignore
# file or a config is rewritten by an editor with a close or a rename, both of which are here.
WATCH_MASK = (
    flags.ATTRIB
    | flags.CLOSE_WRITE
    | flags.MOVED_FROM
    | flags.MOVED_TO
    | flags.CREATE
    | flags.DELETE
    | flags.DELETE_SELF
    | flags.MOVE_SELF
    | flags.ONLYDIR
)
# The watch (or the whole queue) is gone or the directory moved: nothing about it is known any more.
_LOST = flags.DELETE_SELF | flags.MOVE_SELF | flags.UNMOUNT | flags.Q_OVERFLOW | flags.IGNORED
# The names a discovery reads or acts on (`.hallouminate/config.toml`, ignore files, a checkout's `.git`
# and its `info/exclude`); any event about a subdirectory counts too.
RELEVANT_NAMES = frozenset(
    {".hallouminate", "config.toml", ".gitignore", ".ignore", ".git", "info", "exclude"}
)
# A directory we may not read, or one gone since its parent was listed: the discovery could not read it
# either, and its parent's watch reports it coming back (or its permissions changing).
_UNWATCHABLE_IS_FINE = {errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.ELOOP}


def relevant(mask: int, name: str) -> bool:
    """Whether one event can change what a discovery finds."""
    return bool(mask & (_LOST | flags.ISDIR)) or name in RELEVANT_NAMES


class DirectoryWatch:
    """Non-recursive inotify watches on the directories one discovery read (``ScanObserver`` and ``Watch``
    of ``config/cache.py``). Opening it raises ``OSError`` when inotify is unavailable or the per-user
    instance limit is reached; a watch that cannot be added (the per-user watch limit) leaves it broken,
    and a broken watch always reports a change, so its answer is never reused."""

    def __init__(self) -> None:
        self._inotify: INotify | None = INotify(nonblocking=True)
        self._lock = threading.Lock()
        self._changed = False
        self.watches = 0

    def entering(self, directory: Path) -> None:
        with self._lock:
            if self._changed or self._inotify is None:
                return  # stale already: more watches would only use up the user's limit
            try:
                self._inotify.add_watch(directory, WATCH_MASK)
            except OSError as exc:
                if exc.errno not in _UNWATCHABLE_IS_FINE:
                    # ENOSPC: the per-user watch limit (fs.inotify.max_user_watches); ENOMEM.
                    log.info(
                        "cannot watch %s (%s): discovery below it is not cached", directory, exc.strerror
                    )
                    self._changed = True
            else:
                self.watches += 1

    def changed(self) -> bool:
        """Whether anything that could change the discovery happened since its directories were read."""
        with self._lock:
            if self._changed or self._inotify is None:
                return True
            try:
                events = self._inotify.read(timeout=0)
            except OSError:
                self._changed = True
            else:
                self._changed = any(relevant(event.mask, event.name) for event in events)
            return self._changed

    def close(self) -> None:
        with self._lock:
            if self._inotify is not None:
                self._inotify.close()
                self._inotify = None
