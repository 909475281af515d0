"""Test-only hooks: every way the test suite reaches inside a running hallouminate, and nothing else.

Each hook is one function here, and this module is the only place that reads their environment variables.
Production code calls the function; with the variable unset (always, outside the test suite) it gets the
normal behaviour. None of these is configuration: they are not for users and change with the tests.

- ``HALLOUMINATE_TEST_FAKE_VERSION`` (``fake_daemon_version``): ``ping`` claims this version, so a test
  can start a daemon of "another version" for a client to replace;
- ``HALLOUMINATE_TEST_FRAME_STALL_SECS`` (``frame_stall_secs``): a shorter limit for finishing a frame
  begun (stalled-client tests);
- ``HALLOUMINATE_TEST_HTTP_READ_SECS`` (``http_read_secs``): a shorter deadline for an HTTP request's
  headers and body (slowloris tests);
- ``HALLOUMINATE_TEST_SHIM_FINGERPRINT`` (``shim_fingerprint_salt``): a warm shim host that looks built
  from other code (host replacement tests);
- ``HALLOUMINATE_TEST_WRITE_FAULTS`` (``write_fault_point``): kills and pauses at points inside a wiki
  write (crash-safety and race tests);
- ``HALLOUMINATE_TEST_INDEX_PAUSE`` (``index_pause_point``): holds a whole-corpus index run at a progress
  report, so a test knows a search or a second index arrived while it was running;
- ``HALLOUMINATE_TEST_RERANK_PAUSE`` (``rerank_pause_point``): holds a reranker's model call, so a test
  sees the rerank time budget run out (and the daemon answer meanwhile);
- ``HALLOUMINATE_TEST_ANN_ROWS`` (``ann_rows``): a small store gets the approximate vector index and is
  searched in LanceDB (the index's threshold and the reader's in-memory bound lowered to it);
- ``HALLOUMINATE_TEST_ANN_PAUSE`` (``ann_pause_point``): holds a build of the approximate index once it
  has begun, so a test knows a search arrived while it was running;
- ``HALLOUMINATE_TEST_READ_DEADLINE_SECS`` (``read_deadline_secs``): a shorter deadline for an object
  store's reads (unreachable-bucket tests).

Standard library only: the shim's launcher imports it and must start in a few tens of milliseconds.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

FAKE_VERSION = "HALLOUMINATE_TEST_FAKE_VERSION"
FRAME_STALL_SECS = "HALLOUMINATE_TEST_FRAME_STALL_SECS"
SHIM_FINGERPRINT = "HALLOUMINATE_TEST_SHIM_FINGERPRINT"
HTTP_READ_SECS = "HALLOUMINATE_TEST_HTTP_READ_SECS"
WRITE_FAULTS = "HALLOUMINATE_TEST_WRITE_FAULTS"
INDEX_PAUSE = "HALLOUMINATE_TEST_INDEX_PAUSE"
RERANK_PAUSE = "HALLOUMINATE_TEST_RERANK_PAUSE"
ANN_ROWS = "HALLOUMINATE_TEST_ANN_ROWS"
ANN_PAUSE = "HALLOUMINATE_TEST_ANN_PAUSE"
READ_DEADLINE_SECS = "HALLOUMINATE_TEST_READ_DEADLINE_SECS"

# Every point a write passes, in order. "after-check": the path was checked, nothing opened yet;
# "temp-half-written": half the new bytes are in the temp file; "after-fsync": the temp file is whole and
# synced, not yet published; "after-publish": renamed (or linked) into place, directory not yet synced.
# "after-plan" (move_markdown only): the redo record of a multi-file write is durable, no file touched.
WRITE_FAULT_POINTS = ("after-check", "after-plan", "temp-half-written", "after-fsync", "after-publish")
PAUSE_LIMIT_SECS = 30.0
# An index held for a test that starts processes (a CLI, an MCP server) meanwhile, on a loaded machine.
INDEX_PAUSE_LIMIT_SECS = 180.0


def _read(variable: str) -> str:
    """The one read of the environment for every hook: at call time, since the warm shim host replaces
    its environment with each launcher's."""
    return os.environ.get(variable, "")


def fake_daemon_version() -> str | None:
    """The version ``ping`` should claim instead of the real one, or None."""
    return _read(FAKE_VERSION) or None


def frame_stall_secs(default: float) -> float:
    """How long a frame begun may take to finish (``default`` unless the suite shortens it)."""
    value = _read(FRAME_STALL_SECS)
    return float(value) if value else default


def http_read_secs(default: float) -> float:
    """How long an HTTP request's headers (or its body) may take to arrive (``default`` unless the suite
    shortens it)."""
    value = _read(HTTP_READ_SECS)
    return float(value) if value else default


def shim_fingerprint_salt() -> str:
    """Extra text in the warm shim host's fingerprint ("" unless the suite fakes another build)."""
    return _read(SHIM_FINGERPRINT)


def write_fault_point(point: str) -> None:
    """Fire the fault the suite armed for ``point`` of a wiki write, if any; otherwise do nothing.

    ``HALLOUMINATE_TEST_WRITE_FAULTS=<dir>`` turns the points on. At a point ``P`` the write looks in
    ``<dir>``:

    - ``P.kill`` exists: it is removed and the daemon SIGKILLs itself (crash-safety tests); when it holds
      a number N > 1, the point is passed N - 1 times first (the Nth file of a multi-file write);
    - ``P.pause`` exists: it is removed, ``P.reached`` is created, and the write waits until ``P.go``
      appears (then removes it), so a test can swap a symlink in at exactly that moment (race tests).

    Files rather than values of the variable, so one daemon serves every case of a test module and each
    fault fires once.
    """
    base = _read(WRITE_FAULTS)
    if not base:
        return
    directory = Path(base)
    if _countdown(directory / f"{point}.kill") and _take(directory / f"{point}.kill"):
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(10)  # never reached: SIGKILL is not deferred, but do not carry on writing meanwhile
    _pause(directory, point, PAUSE_LIMIT_SECS)


def index_pause_point() -> None:
    """Hold the index run that reports progress now, if the suite asked for it; otherwise do nothing.

    ``HALLOUMINATE_TEST_INDEX_PAUSE=<dir>`` turns it on: when ``<dir>/progress.pause`` exists, it is
    removed, ``progress.reached`` is created, and the run (in its worker thread) waits until
    ``progress.go`` appears. Called at each progress report of a whole-corpus run.
    """
    base = _read(INDEX_PAUSE)
    if base:
        _pause(Path(base), "progress", INDEX_PAUSE_LIMIT_SECS)


def rerank_pause_point() -> None:
    """Hold the reranker's model call now starting, if the suite asked for it; otherwise do nothing.

    ``HALLOUMINATE_TEST_RERANK_PAUSE=<dir>`` turns it on: when ``<dir>/rerank.pause`` exists, it is
    removed, ``rerank.reached`` is created, and the call (in its worker thread) waits until ``rerank.go``
    appears. Called before each rerank's model call.
    """
    base = _read(RERANK_PAUSE)
    if base:
        _pause(Path(base), "rerank", INDEX_PAUSE_LIMIT_SECS)


def ann_rows() -> int | None:
    """Rows from which the approximate index is built and searches leave memory for LanceDB, when the
    suite lowers both (``HALLOUMINATE_TEST_ANN_ROWS``); None: the product's bounds."""
    text = _read(ANN_ROWS)
    return int(text) if text.isdigit() else None


def read_deadline_secs() -> float | None:
    """An object store's read deadline when the suite shortens it; None: the store's own."""
    text = _read(READ_DEADLINE_SECS)
    try:
        return float(text) if text else None
    except ValueError:
        return None


def ann_pause_point() -> None:
    """Hold the approximate index's build now beginning, if the suite asked for it.

    ``HALLOUMINATE_TEST_ANN_PAUSE=<dir>``: when ``<dir>/ann.pause`` exists, it is removed, ``ann.reached``
    is created, and the build (in its worker thread) waits until ``ann.go`` appears.
    """
    base = _read(ANN_PAUSE)
    if base:
        _pause(Path(base), "ann", INDEX_PAUSE_LIMIT_SECS)


def _pause(directory: Path, point: str, limit: float) -> None:
    if _take(directory / f"{point}.pause"):
        (directory / f"{point}.reached").touch()
        go = directory / f"{point}.go"
        deadline = time.monotonic() + limit
        while not _take(go) and time.monotonic() < deadline:
            time.sleep(0.01)


def _countdown(marker: Path) -> bool:
    """Whether an armed ``marker`` fires now: its number (default 1) counts the passes down to 1."""
    try:
        text = marker.read_text().strip()
    except OSError:
        return False
    if text.isdigit() and int(text) > 1:
        marker.write_text(str(int(text) - 1))
        return False
    return True


def _take(marker: Path) -> bool:
    try:
        marker.unlink()
    except FileNotFoundError:
        return False
    return True
