"""The daemon's allocator settings (storage/allocator.py, ADR 0057), in a fresh interpreter as the daemon
starts: Arrow allocates through the system malloc whose thresholds ``tune`` fixed (its default pool,
mimalloc, kept freed columns' pages), and ``release`` runs there."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
from hallouminate.storage import allocator
allocator.tune()
import pyarrow as pa
table = pa.table({"t": ["x" * 1000] * 10_000})
del table
allocator.release()
print(pa.default_memory_pool().backend_name)
"""


def test_arrow_allocates_through_the_tuned_system_malloc() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "system"
