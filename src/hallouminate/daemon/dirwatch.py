"""Know, without rescanning, whether a repository discovery below a cwd may have a different answer now.

Each directory the discovery reads gets an inotify watch *before* it is read (``entering``), so a change
made after the read is always queued; ``changed()`` drains the queue without blocking. The kernel queues
an event before the system call that caused it returns, so a change finished before a request was sent is
seen by that request: no debounce, no polling interval.

Only events that can change the discovery's answer count (``relevant``); an ordinary file written in a
watched directory does not, so editing code under ``~/work`` does not throw the cached answer away.
Direct inotify (a few ``ctypes`` calls into libc) rather than ``watchfiles``: watchfiles arms its watches
when it starts, after the paths are known (a change between the read and the arming would be missed), and
delivers events after a debounce; ``inotify_simple`` would do the same calls, untyped.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import threading
from pathlib import Path

log = logging.getLogger("hallouminate.daemon")

# <sys/inotify.h>
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

# Entries appearing, going, renamed, rewritten or re-permissioned; the watched directory itself going.
# IN_MODIFY is left out: every write to a log file in a watched directory would be one event. An ignore
# file or a config is rewritten by an editor with a close or a rename, both of which are here.
WATCH_MASK = (
    IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
# The watch (or the whole queue) is gone or the directory moved: nothing about it is known any more.
_LOST = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED
# The names a discovery reads or acts on (`.hallouminate/config.toml`, ignore files, a checkout's `.git`
# and its `info/exclude`); any event about a subdirectory counts too.
RELEVANT_NAMES = frozenset(
    {".hallouminate", "config.toml", ".gitignore", ".ignore", ".git", "info", "exclude"}
)
# A directory we may not read, or one gone since its parent was listed: the discovery could not read it
# either, and its parent's watch reports it coming back (or its permissions changing).
_UNWATCHABLE_IS_FINE = {errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.ELOOP}
_EVENT = struct.Struct("iIII")


class _Libc:
    """The three inotify calls, bound once."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.init1 = libc.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.init1.restype = ctypes.c_int
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add_watch.restype = ctypes.c_int


_libc: _Libc | None = None
_libc_lock = threading.Lock()


def _calls() -> _Libc:
    global _libc
    with _libc_lock:
        if _libc is None:
            _libc = _Libc()
        return _libc


def relevant(mask: int, name: str) -> bool:
    """Whether one event can change what a discovery finds."""
    return bool(mask & (_LOST | IN_ISDIR)) or name in RELEVANT_NAMES


class DirectoryWatch:
    """Non-recursive inotify watches on the directories one discovery read (``ScanObserver`` and ``Watch``
    of ``config/cache.py``). Opening it raises ``OSError`` when inotify is unavailable or the per-user
    instance limit is reached; a watch that cannot be added (the per-user watch limit) leaves it broken,
    and a broken watch always reports a change, so its answer is never reused."""

    def __init__(self) -> None:
        calls = _calls()
        fd = calls.init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_init1: {os.strerror(code)}")
        self._fd = fd
        self._add = calls.add_watch
        self._lock = threading.Lock()
        self._changed = False
        self.watches = 0

    def entering(self, directory: Path) -> None:
        with self._lock:
            if self._changed or self._fd < 0:
                return  # stale already: more watches would only use up the user's limit
            if self._add(self._fd, os.fsencode(directory), WATCH_MASK) >= 0:
                self.watches += 1
                return
            code = ctypes.get_errno()
            if code not in _UNWATCHABLE_IS_FINE:
                # ENOSPC: the per-user watch limit (fs.inotify.max_user_watches); ENOMEM.
                log.info(
                    "cannot watch %s (%s): discovery below it is not cached", directory, os.strerror(code)
                )
                self._changed = True

    def changed(self) -> bool:
        """Whether anything that could change the discovery happened since its directories were read."""
        with self._lock:
            if self._changed or self._fd < 0:
                return True
            while not self._changed:
                try:
                    data = os.read(self._fd, 64 * 1024)
                except BlockingIOError:
                    break
                except OSError:
                    self._changed = True
                    break
                self._changed = any(relevant(mask, name) for mask, name in _events(data))
            return self._changed

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _events(data: bytes) -> list[tuple[int, str]]:
    """(mask, name) of each event in one read of an inotify descriptor."""
    events: list[tuple[int, str]] = []
    pos = 0
    while pos + _EVENT.size <= len(data):
        _wd, mask, _cookie, size = _EVENT.unpack_from(data, pos)
        pos += _EVENT.size
        name = data[pos : pos + size].split(b"\0", 1)[0]
        pos += size
        events.append((mask, os.fsdecode(name)))
    return events
