"""Our temp files: recognisable names, a journal of the directories they live in, and the sweep.

Every write stages its bytes in ``.hallouminate-write.<16 hex>.tmp`` next to its target. Before the temp
file is created, a record naming its directory is written (and synced) under the daemon's state
directory; it is removed once the write is over. A daemon that was killed mid-write leaves the record
behind, and the next daemon sweeps that directory when it starts. Each write also sweeps its own
directory first, which catches what a lost record (power cut) would miss.

The names start with a dot, so the watcher and the corpus globs (``**/*.md``) never take them for pages.
Writes are serialised daemon-wide and the daemon is a singleton, so a temp file found by a sweep is
always stale.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import stat
from pathlib import Path

log = logging.getLogger("hallouminate.wiki")

TEMP_PREFIX = ".hallouminate-write."
TEMP_SUFFIX = ".tmp"
TEMP_NAME = re.compile(r"\.hallouminate-write\.[0-9a-f]{16}\.tmp")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def new_temp_name() -> str:
    return f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def sweep_dir_fd(dir_fd: int) -> list[str]:
    """Remove our stale temp files (regular files with our exact name pattern) from one directory."""
    removed: list[str] = []
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return removed
    for name in names:
        if not TEMP_NAME.fullmatch(name):
            continue
        try:
            if stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                os.unlink(name, dir_fd=dir_fd)
                removed.append(name)
        except OSError:
            continue
    return removed


def sweep_dir(directory: str) -> list[str]:
    """``sweep_dir_fd`` on a directory named by path; its last component must not be a symlink."""
    try:
        fd = os.open(directory, _DIR_FLAGS | os.O_NOFOLLOW)
    except OSError:
        return []
    try:
        return [os.path.join(directory, name) for name in sweep_dir_fd(fd)]
    finally:
        os.close(fd)


class Journal:
    """Records of the directories holding a temp file of a write in progress."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def begin(self, parent: str) -> Path:
        """Record, durably, that a temp file is about to be created in the directory ``parent``."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = self.directory / f"{secrets.token_hex(8)}.json"
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps({"dir": parent}).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(self.directory)
        return record

    def end(self, record: Path) -> None:
        # Not synced: a record that survives a crash only costs one harmless sweep.
        with contextlib.suppress(FileNotFoundError):
            record.unlink()

    def recover(self) -> list[str]:
        """Sweep every directory a killed write left a record for; the temp files removed."""
        removed: list[str] = []
        try:
            records = sorted(self.directory.glob("*.json"))
        except OSError:
            return removed
        for record in records:
            try:
                parent = json.loads(record.read_text()).get("dir")
            except (OSError, ValueError, AttributeError):
                parent = None
            if isinstance(parent, str) and os.path.isabs(parent):
                removed.extend(sweep_dir(parent))
            self.end(record)
        if removed:
            log.info("removed %d temp file(s) left by an interrupted write: %s", len(removed), removed)
        return removed


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, _DIR_FLAGS)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
