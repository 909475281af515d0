"""The daemon's log: a size-rotated file under the XDG state directory."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

MAX_BYTES = 2 * 1024 * 1024
BACKUPS = 3


def setup_logging(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
