"""Resolve a request's config off the event loop: cached, and one computation per cwd at a time.

A resolve reads TOML files and stats markers; from above every repository it also scans up to
``DISCOVERY_MAX_DIRS`` directories (~0.5 s). Run on the loop, that stalled every client, ``ping``
included. Here it runs in a pool of its own (so a slow scan never holds a thread that store reads or
query embeddings wait for), through the ``ResolveCache``.

Requests for a cwd whose resolve is already running wait for that one instead of starting another. They
take its answer only if it was known current at or after the moment they joined (``Lookup.current_at``):
a request sent after a config was edited must never get an answer read before the edit. Otherwise (or
when it failed) they try again, and the first to find nobody running starts a fresh resolve.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hallouminate.config.cache import Lookup, ResolveCache
from hallouminate.config.types import Resolved

# Resolves of different cwds running at once; a slow one (a scan) holds one thread.
RESOLVE_THREADS = 8


class Resolver:
    def __init__(self, cache: ResolveCache) -> None:
        self.cache = cache
        self._pool = ThreadPoolExecutor(RESOLVE_THREADS, thread_name_prefix="hallouminate-resolve")
        self._running: dict[Path, asyncio.Future[Lookup]] = {}
        # Requests answered by a resolve another request had started (status: `resolves_shared`).
        self.shared = 0

    async def resolve(self, cwd: Path) -> Resolved:
        while True:
            running = self._running.get(cwd)
            if running is None:
                return (await asyncio.shield(self._start(cwd))).resolved
            joined_at = self.cache.clock()
            try:
                lookup = await asyncio.shield(running)
            except Exception:
                lookup = None  # its error may predate this request (a config fixed meanwhile)
            if lookup is not None and lookup.current_at is not None and lookup.current_at >= joined_at:
                self.shared += 1
                return lookup.resolved
            if self._running.get(cwd) is running:
                del self._running[cwd]  # done: the next round starts a fresh resolve

    def _start(self, cwd: Path) -> asyncio.Future[Lookup]:
        future = asyncio.get_running_loop().run_in_executor(self._pool, self.cache.lookup, cwd)
        self._running[cwd] = future

        def landed(done: asyncio.Future[Lookup]) -> None:
            if self._running.get(cwd) is done:
                del self._running[cwd]
            # Read, so that an error nobody waits for any more (all cancelled) is not logged as lost.
            if not done.cancelled():
                done.exception()

        future.add_done_callback(landed)
        return future

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.cache.close()
