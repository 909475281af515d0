"""The daemon's process runs numpy with one BLAS thread: OpenBLAS's workers only spun beside eight
concurrent searches' work on two cores (25% of the daemon's CPU per ``ground``; docs/adr/0058)."""

from __future__ import annotations

import os
import subprocess
import sys

# Threads of a fresh interpreter after numpy loaded, with or without the daemon's preparation first.
PROBE = """
import os, sys
if sys.argv[1] == "daemon":
    from hallouminate.cli.main import prepare_daemon_process
    prepare_daemon_process()
import numpy
print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS"))
"""


def _threads(kind: str, **extra: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_"))}
    env.update(extra)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, kind], env=env, capture_output=True, text=True, check=True
    )
    count, setting = done.stdout.split()
    return int(count), setting


def test_the_daemon_process_loads_numpy_with_one_blas_thread() -> None:
    assert _threads("daemon") == (1, "1")
    if (os.cpu_count() or 1) > 1:  # the control: left alone, OpenBLAS starts a worker per core
        assert _threads("plain")[0] > 1


def test_an_operators_own_blas_setting_wins() -> None:
    assert _threads("daemon", OPENBLAS_NUM_THREADS="2") == (2, "2")
