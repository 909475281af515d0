"""Test-only fault points inside a write, armed by files; inert unless an environment variable is set.

``HALLOUMINATE_TEST_WRITE_FAULTS=<dir>`` turns the points on (the test suite sets it; nothing else should).
At a point ``P`` the write looks in ``<dir>``:

- ``P.kill`` exists: it is removed and the daemon SIGKILLs itself (crash-safety tests);
- ``P.pause`` exists: it is removed, ``P.reached`` is created, and the write waits until ``P.go`` appears
  (then removes it), so a test can swap a symlink in at exactly that moment (race tests).

Files rather than values of the variable, so one daemon serves every case of a test module and each
fault fires once.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ENV = "HALLOUMINATE_TEST_WRITE_FAULTS"
# Every point a write passes, in order. "after-check": the path was checked, nothing opened yet;
# "temp-half-written": half the new bytes are in the temp file; "after-fsync": the temp file is whole and
# synced, not yet published; "after-publish": renamed (or linked) into place, directory not yet synced.
POINTS = ("after-check", "temp-half-written", "after-fsync", "after-publish")
PAUSE_LIMIT_SECS = 30.0


def fault_point(point: str) -> None:
    """Fire the fault armed for ``point``, if the suite enabled faults and armed one."""
    base = os.environ.get(ENV)
    if not base:
        return
    directory = Path(base)
    if _take(directory / f"{point}.kill"):
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(10)  # never reached: SIGKILL is not deferred, but do not carry on writing meanwhile
    if _take(directory / f"{point}.pause"):
        (directory / f"{point}.reached").touch()
        go = directory / f"{point}.go"
        deadline = time.monotonic() + PAUSE_LIMIT_SECS
        while not _take(go) and time.monotonic() < deadline:
            time.sleep(0.01)


def _take(marker: Path) -> bool:
    try:
        marker.unlink()
    except FileNotFoundError:
        return False
    return True
