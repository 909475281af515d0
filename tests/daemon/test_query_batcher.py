"""Concurrent searches share model calls, get exactly the vectors they would have got alone, and the model
never waits for the event loop between two batches."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np

from hallouminate.daemon.query_batcher import MAX_BATCH, QueryBatcher
from hallouminate.embedding import Embedder


class HeldModel:
    """The real model behind a gate: the first call waits until the test opens it."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.calls: list[int] = []
        self.started: list[float] = []
        self.gate = threading.Event()
        self.in_first = threading.Event()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.started.append(time.monotonic())
        if len(self.calls) == 1:
            self.in_first.set()
            self.gate.wait(10)
        return self.embedder.embed_queries(texts)


async def busy(embedder: Embedder) -> tuple[HeldModel, QueryBatcher, asyncio.Future[np.ndarray]]:
    """A batcher whose model is inside its first call (held until ``model.gate`` opens)."""
    model = HeldModel(embedder)
    batcher = QueryBatcher(model)
    first = asyncio.ensure_future(batcher.embed("the query the model is busy with"))
    await asyncio.to_thread(model.in_first.wait, 10)
    return model, batcher, first


async def test_queries_waiting_together_go_in_one_model_call(embedder: Embedder) -> None:
    model, batcher, first = await busy(embedder)
    # These all arrive while the model is busy: a full batch, then the rest.
    queries = [f"how is service number {i} deployed to production?" for i in range(MAX_BATCH + 4)]
    waiting = [asyncio.ensure_future(batcher.embed(q)) for q in queries]
    await asyncio.sleep(0)
    model.gate.set()
    vectors = await asyncio.gather(*waiting)
    await first
    assert model.calls == [1, MAX_BATCH, len(queries) - MAX_BATCH]
    alone = await batcher.embed("a lone query")
    assert model.calls[-1] == 1 and np.allclose(alone, embedder.embed_query("a lone query"), atol=1e-5)
    for query, vector in zip(queries, vectors, strict=True):
        assert np.allclose(vector, embedder.embed_query(query), atol=1e-5)


async def test_the_next_batch_starts_while_the_loop_is_busy(embedder: Embedder) -> None:
    model, batcher, first = await busy(embedder)
    second = asyncio.ensure_future(batcher.embed("queued behind it"))
    await asyncio.sleep(0)
    # The loop is now busy (a request's assembly, say) for 0.5 s; the model finishes meanwhile.
    threading.Timer(0.05, model.gate.set).start()
    busy_from = time.monotonic()
    time.sleep(0.5)
    busy_until = time.monotonic()
    await asyncio.gather(first, second)
    assert len(model.started) == 2
    # The second batch began inside the loop's busy half-second, not after it.
    assert busy_from < model.started[1] < busy_until


async def test_a_model_failure_reaches_every_waiting_request_and_the_batcher_recovers(
    embedder: Embedder,
) -> None:
    failing = {"on": True}

    def embed_many(texts: list[str]) -> np.ndarray:
        if failing["on"]:
            raise RuntimeError("model gone")
        return embedder.embed_queries(texts)

    batcher = QueryBatcher(embed_many)
    results = await asyncio.gather(*(batcher.embed(f"q{i}") for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    failing["on"] = False
    assert (await batcher.embed("after the failure")).shape == (embedder.dim,)


async def test_a_cancelled_request_does_not_stop_the_others(embedder: Embedder) -> None:
    model, batcher, first = await busy(embedder)
    gone = asyncio.ensure_future(batcher.embed("a client that hangs up"))
    kept = asyncio.ensure_future(batcher.embed("a client that waits"))
    await asyncio.sleep(0)
    gone.cancel()
    model.gate.set()
    assert (await kept).shape == (embedder.dim,)
    await first
    assert gone.cancelled()
