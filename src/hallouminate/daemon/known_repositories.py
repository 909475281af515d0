"""The repositories this daemon has served, remembered across restarts for the start-up catch-up."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from pathlib import Path

log = logging.getLogger("hallouminate.daemon")

# Bounded: the oldest entries fall off first.
MAX_ENTRIES = 256


class KnownRepositories:
    """Read at start-up (before the event loop runs); ``add`` and ``roots`` touch the disk, so the daemon
    calls them in worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._roots: list[str] = self._read()
        self._lock = threading.Lock()

    def _read(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return []
        return [item for item in data if isinstance(item, str)] if isinstance(data, list) else []

    def roots(self) -> list[Path]:
        return [Path(root) for root in self._roots if Path(root).is_dir()]

    def has(self, root: Path) -> bool:
        return str(root) in self._roots

    def add(self, root: Path) -> None:
        text = str(root)
        with self._lock:
            if text in self._roots:
                return  # called on every request: no write unless something is new
            self._roots = [*self._roots, text][-MAX_ENTRIES:]
            self._write()

    def _write(self) -> None:
        # Write-then-rename: a crash never leaves a torn file.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".known-", suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump(self._roots, handle)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot record known repositories in %s: %s", self.path, exc)
