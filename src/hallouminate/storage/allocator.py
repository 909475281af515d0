"""Giving the daemon's freed native memory back to the system (ADR 0057).

LanceDB's reads (Rust) and numpy allocate through glibc's malloc. By default glibc raises its mmap
threshold as large blocks are freed (up to 32 MB), so the buffers of a 100k-row corpus's load end up on the
heap, and the heap keeps them when they are freed: measured on that load, ~400 MB stayed resident after
the rows were held until ``malloc_trim`` gave it back. A fixed threshold keeps large blocks mmap'd (returned
on free); a trim after each load returns the rest. Arrow allocates from the same malloc (its default pool,
mimalloc, kept the pages of freed columns: a 100k-row daemon peaked ~60-90 MB higher, bench/memory.py).
Elsewhere than glibc the thresholds and trim do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
from typing import Any

log = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks this big or bigger are mmap'd, and unmapped when freed (glibc's default start, kept fixed).
MMAP_THRESHOLD = 128 * 1024
# Free memory at the heap's top past this is returned at once (glibc's default, kept fixed with the above).
TRIM_THRESHOLD = 128 * 1024


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt  # noqa: B018 - glibc (or a libc offering these) only
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def tune() -> None:
    """Fix glibc's thresholds, so large freed blocks are returned, and have Arrow allocate through it (the
    daemon calls this at start, before Arrow's default pool is first used; the variable can override it)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    libc = _libc()
    if libc is None:
        return
    if not (
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    ):
        log.debug("mallopt refused the thresholds")


def release() -> None:
    """Return freed memory to the system: after a load that allocated and freed hundreds of MB."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
