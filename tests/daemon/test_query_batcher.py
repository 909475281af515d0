"""Concurrent searches share model calls, and get exactly the vectors they would have got alone."""

from __future__ import annotations

import asyncio

import numpy as np

from hallouminate.daemon.query_batcher import MAX_BATCH, QueryBatcher
from hallouminate.embedding import Embedder


async def test_queries_waiting_together_go_in_one_model_call(embedder: Embedder) -> None:
    calls: list[int] = []

    def embed_many(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return embedder.embed_queries(texts)

    batcher = QueryBatcher(embed_many)
    queries = [f"how is service number {i} deployed to production?" for i in range(MAX_BATCH + 4)]
    vectors = await asyncio.gather(*(batcher.embed(q) for q in queries))
    # All 20 were queued before the first call started: a full batch, then the rest.
    assert calls == [MAX_BATCH, len(queries) - MAX_BATCH]
    alone = await batcher.embed("a lone query")
    assert calls[-1] == 1 and np.allclose(alone, embedder.embed_query("a lone query"), atol=1e-5)
    for query, vector in zip(queries, vectors, strict=True):
        assert np.allclose(vector, embedder.embed_query(query), atol=1e-5)


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
