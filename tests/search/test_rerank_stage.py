"""The rerank stage's own rules (search/rerank.py): the pool, the scores it gives, the fallbacks.

The scorer here is a plain function of the passage text standing in for a model (the stage only awaits a
``RerankScorer``); the daemon's real one, a cross-encoder, is driven in test_ground_rerank.py.
"""

from __future__ import annotations

import asyncio

import pytest

from hallouminate.ports import ChunkRow
from hallouminate.search.fusion import pool_size
from hallouminate.search.rerank import RerankStage, passage, rerank


def _rows(n: int) -> tuple[dict[str, float], dict[str, ChunkRow]]:
    # Fused scores falling with the number: c000 is the fused best.
    fused = {f"c{i:03d}": 1.0 - i / 1000 for i in range(n)}
    rows: dict[str, ChunkRow] = {
        key: {"id": key, "heading_path": ["Page", key], "text": f"text of {key}"} for key in fused
    }
    return fused, rows


def _stage(score: object, budget_ms: int = 60_000) -> RerankStage:
    async def run(query: str, passages: list[str]) -> list[float]:
        assert callable(score)
        result = score(query, passages)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, list)
        return result

    return RerankStage("test-reranker", run, budget_ms)


def test_the_pool_is_max_top_files_x5_or_50() -> None:
    assert [pool_size(n) for n in (1, 10, 11, 100)] == [50, 50, 55, 500]


async def test_only_the_pool_is_scored_and_reversed_its_scores_keep_the_fused_range() -> None:
    fused, rows = _rows(80)
    seen: list[list[str]] = []

    def reverse(query: str, passages: list[str]) -> list[float]:
        seen.append(passages)
        return [float(i) for i in range(len(passages))]  # the fused worst of the pool scores best

    out = await rerank("q", fused, rows, _stage(reverse), top_files=10)
    (passages,) = seen
    assert passages == [passage(rows[f"c{i:03d}"]) for i in range(50)]
    assert passages[0] == "Page > c000\n\ntext of c000"  # the breadcrumb, as the indexer embeds it
    assert out.info == {"reranker": "test-reranker", "candidates": 50, "took_ms": out.info["took_ms"]}
    order = sorted(out.scores, key=lambda k: -out.scores[k])
    assert order[:50] == [f"c{i:03d}" for i in reversed(range(50))]
    assert order[50:] == [f"c{i:03d}" for i in range(50, 80)]  # outside the pool: untouched, below it
    assert out.scores["c049"] == fused["c000"] and out.scores["c000"] == pytest.approx(fused["c049"])
    assert all(out.scores[f"c{i:03d}"] == fused[f"c{i:03d}"] for i in range(50, 80))


async def test_passages_the_model_scores_alike_keep_their_fused_order_even_with_equal_fused_scores() -> None:
    fused = {"a": 0.5, "b": 0.5, "c": 0.5}
    rows: dict[str, ChunkRow] = {k: {"id": k, "heading_path": [], "text": k} for k in fused}
    out = await rerank("q", fused, rows, _stage(lambda q, p: [0.0, 1.0, 0.0]), top_files=1)
    assert sorted(out.scores, key=lambda k: -out.scores[k]) == ["b", "a", "c"]


async def test_past_the_budget_or_on_a_model_failure_the_fused_scores_stand_with_a_warning() -> None:
    fused, rows = _rows(5)

    async def slow(query: str, passages: list[str]) -> list[float]:
        await asyncio.sleep(30)
        return [0.0] * len(passages)

    timed_out = await rerank("q", fused, rows, _stage(slow, budget_ms=10), top_files=1)
    assert timed_out.scores == fused and timed_out.info is None
    assert timed_out.warning is not None and timed_out.warning["code"] == "rerank-timeout"
    assert "10 ms" in timed_out.warning["message"]

    def broken(query: str, passages: list[str]) -> list[float]:
        raise RuntimeError("session gone")

    failed = await rerank("q", fused, rows, _stage(broken), top_files=1)
    assert failed.scores == fused and failed.info is None
    assert failed.warning is not None and failed.warning["code"] == "rerank-failed"
    assert "session gone" in failed.warning["message"]


async def test_no_candidates_means_no_model_call() -> None:
    def never(query: str, passages: list[str]) -> list[float]:
        raise AssertionError("called")

    out = await rerank("q", {}, {}, _stage(never), top_files=1)
    assert out.scores == {} and out.info is None and out.warning is None


async def test_a_fusing_reranker_is_one_more_vote_beside_the_fused_order() -> None:
    # A bi-encoder's ranking joins the pool's fused ranking by weighted RRF (k 10), it does not replace it.
    fused, rows = _rows(5)

    def reverse(query: str, passages: list[str]) -> list[float]:
        return [float(i) for i in range(len(passages))]  # the model's order: c004, c003, ..., c000

    async def run(query: str, passages: list[str]) -> list[float]:
        return reverse(query, passages)

    equal = await rerank("q", fused, rows, RerankStage("bi", run, 60_000, fuse_weight=1.0), top_files=1)
    # Fused rank i+1 and model rank 5-i: every chunk gets 1/(10+i+1) + 1/(10+5-i); the ends tie and keep
    # the fused order, so c000 stays first and the middle chunk c002 falls last.
    assert sorted(equal.scores, key=lambda k: -equal.scores[k]) == ["c000", "c004", "c001", "c003", "c002"]
    heavy = await rerank("q", fused, rows, RerankStage("bi", run, 60_000, fuse_weight=3.0), top_files=1)
    assert sorted(heavy.scores, key=lambda k: -heavy.scores[k]) == ["c004", "c003", "c002", "c001", "c000"]
    replaced = await rerank("q", fused, rows, RerankStage("ce", run, 60_000), top_files=1)
    assert sorted(replaced.scores, key=lambda k: -replaced.scores[k]) == [
        "c004",
        "c003",
        "c002",
        "c001",
        "c000",
    ]
