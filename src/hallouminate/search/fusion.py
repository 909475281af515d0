"""Weighted reciprocal rank fusion (domain; pure)."""

from __future__ import annotations

# A small k lets first places count: see BM25_WEIGHT in ground.py for the measurement.
RRF_K = 10.0


def rrf(ranked_lists: list[list[str]], weights: list[float], k: float = RRF_K) -> dict[str, float]:
    """``sum(weight / (k + rank))`` over the lists holding each id (rank 1-based, first occurrence).

    RRF needs only ranks, so BM25 scores and cosine similarities, which live on unrelated scales, combine
    without calibration.
    """
    if len(ranked_lists) != len(weights):
        raise ValueError(f"{len(ranked_lists)} ranked lists but {len(weights)} weights")
    fused: dict[str, float] = {}
    for ranked, weight in zip(ranked_lists, weights, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def best_possible(weights: list[float], k: float = RRF_K) -> float:
    """The fused score of an item ranked first in every list: the scale used to report 0..1 scores."""
    return sum(weights) / (k + 1)
