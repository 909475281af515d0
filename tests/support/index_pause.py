"""Holding an index run at its first progress report (``testing_hooks.index_pause_point``), so a test
knows the run was still going when something else happened: the daemon runs with
``HALLOUMINATE_TEST_INDEX_PAUSE`` set to ``pause``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

# Bounds a hang only: never a speed figure.
HOLD_DEADLINE_SECS = 180.0


def hold_next_run(pause: Path) -> None:
    pause.mkdir(exist_ok=True)
    (pause / "progress.pause").touch()


async def until_held(pause: Path, deadline_secs: float = HOLD_DEADLINE_SECS) -> None:
    deadline = time.monotonic() + deadline_secs
    while not (pause / "progress.reached").exists():
        assert time.monotonic() < deadline, "the index run never reached its first progress report"
        await asyncio.sleep(0.05)


def release(pause: Path) -> None:
    (pause / "progress.go").touch()
