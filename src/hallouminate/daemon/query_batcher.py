"""Embed the queries of concurrent requests together: one model call for all that wait at that moment.

Eight clients searching at once used to start eight model calls, each asking onnxruntime for both cores;
they fought over them. Here one call runs at a time and takes every query queued meanwhile (up to
``MAX_BATCH``), which costs far less per query than separate calls. A lone query is embedded at once, so
an idle daemon answers exactly as fast as before.

The calls run one after another in a thread of the batcher's own, which takes the next batch the moment a
call returns. When the event loop started each call instead, the model sat idle after every batch until
the loop, busy assembling other requests' answers, came round to it: under 8 clients at 10k chunks the
daemon used 1.3 of 2 cores and its throughput stopped there (ADR 0061).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

MAX_BATCH = 16

_Waiting = tuple[str, asyncio.Future[np.ndarray], asyncio.AbstractEventLoop]


class QueryBatcher:
    def __init__(self, embed_many: Callable[[list[str]], np.ndarray]) -> None:
        self._embed_many = embed_many
        self._guard = threading.Lock()
        self._pending: list[_Waiting] = []
        self._draining = False  # the model thread is taking batches (guarded)
        # One thread: one model call at a time. Idle between bursts; it ends with the batcher.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-model")

    async def embed(self, text: str) -> np.ndarray:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[np.ndarray] = loop.create_future()
        with self._guard:
            self._pending.append((text, future, loop))
            start = not self._draining
            self._draining = True
        if start:
            self._thread.submit(self._drain)
        return await future

    def _drain(self) -> None:
        """In the model thread: batches until none waits."""
        while True:
            with self._guard:
                if not self._pending:
                    self._draining = False
                    return
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            outcome: np.ndarray | BaseException
            try:
                outcome = self._embed_many([text for text, _, _ in batch])
            except BaseException as exc:  # every waiting request gets the model's error; the thread goes on
                outcome = exc
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[int, asyncio.Future[np.ndarray]]]] = {}
            for i, (_, future, loop) in enumerate(batch):
                by_loop.setdefault(loop, []).append((i, future))
            for loop, futures in by_loop.items():
                with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits there any more
                    loop.call_soon_threadsafe(_settle, futures, outcome)


def _settle(
    futures: list[tuple[int, asyncio.Future[np.ndarray]]], outcome: np.ndarray | BaseException
) -> None:
    """On the requests' loop: each still-waiting request gets its vector or the model's error."""
    for i, future in futures:
        if future.done():  # a cancelled request no longer waits
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome[i])


def batcher_for(embedder: Any) -> QueryBatcher:
    return QueryBatcher(embedder.embed_queries)
