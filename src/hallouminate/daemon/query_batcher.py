"""Embed the queries of concurrent requests together: one model call for all that wait at that moment.

Eight clients searching at once used to start eight model calls, each asking onnxruntime for both cores;
they fought over them. Here one call runs at a time and takes every query queued meanwhile (up to
``MAX_BATCH``), which costs far less per query than separate calls. A lone query is embedded at once, so
an idle daemon answers exactly as fast as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np

MAX_BATCH = 16


class QueryBatcher:
    def __init__(self, embed_many: Callable[[list[str]], np.ndarray]) -> None:
        self._embed_many = embed_many
        self._pending: list[tuple[str, asyncio.Future[np.ndarray]]] = []
        self._draining = False
        self._task: asyncio.Task[None] | None = None  # held: a task nobody references may be collected

    async def embed(self, text: str) -> np.ndarray:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self._pending.append((text, future))
        if not self._draining:
            self._draining = True
            self._task = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
                try:
                    vectors = await asyncio.to_thread(self._embed_many, [text for text, _ in batch])
                except Exception as exc:  # every waiting request gets the model's error
                    for _text, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_text, future), vector in zip(batch, vectors, strict=True):
                    if not future.done():  # a cancelled request no longer waits
                        future.set_result(vector)
        finally:
            self._draining = False


def batcher_for(embedder: Any) -> QueryBatcher:
    return QueryBatcher(embedder.embed_queries)
