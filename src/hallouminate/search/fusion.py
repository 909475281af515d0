"""Weighted reciprocal rank fusion (domain; pure)."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any

from hallouminate.protocol import limits

# A small k lets first places count: see BM25_WEIGHT in ground.py and docs/adr/0012-ranking.md.
RRF_K = 10.0
# Scores closer than this (relative; absolute below 1) are the same evidence: 4x float32's epsilon. A
# float32 matrix-vector product gives identical vectors cosines up to one epsilon (2^-23) apart depending
# on their row (BLAS blocks rows; measured), so identical chunks would otherwise rank apart by where they
# are stored.
TIE_TOLERANCE = 4 * 2.0**-23


def tied_ranks(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """``(id, rank)`` best first by ``score`` (higher is better); equal scores share a rank (1, 1, 3).

    A search engine returns equal scores in any order, and position ranks would give two identical chunks
    different fused scores. Shared ranks keep equal evidence equal, so ties are settled where they are
    documented (files: priority corpus, the query's wording held, corpus, path; chunks: line). Scores
    within ``TIE_TOLERANCE`` of the next better one count as equal; equal scores list by id. Rows without
    a score keep their given order and rank by position.
    """
    rows = list(rows)
    if not all(map(operator.contains, rows, itertools.repeat("score"))):
        return [(row["id"], rank) for rank, row in enumerate(rows, start=1)]
    # This runs for every candidate list of every query: a few flat passes, no Python step per group.
    keys = [-float(row["score"]) for row in rows]
    order = sorted(range(len(rows)), key=keys.__getitem__)  # stable, as a sort of the rows by -score
    ranked = [keys[i] for i in order]  # -score, best first
    ids = [rows[i]["id"] for i in order]
    # A score joins the group of the one before it when within tolerance of it. The gap ``better -
    # score`` is ``-score - -better``, exactly (negation is exact).
    gaps = list(map(operator.sub, ranked[1:], ranked))
    # No magnitude exceeds ``top``, so a gap wider than the tolerance relative to it is never a tie: only
    # the narrower gaps (picked in C) get the exact test. ``joins`` are the places holding the same score
    # as the one before them.
    top = sum(map(abs, ranked))  # NaN only if a score is: then every gap gets the exact test
    loose = TIE_TOLERANCE * max(1.0, top) if top == top else math.inf
    narrow = itertools.compress(range(1, len(ranked)), map(operator.le, gaps, itertools.repeat(loose)))
    joins = [i for i in narrow if gaps[i - 1] <= TIE_TOLERANCE * max(1.0, abs(ranked[i - 1]), abs(ranked[i]))]
    out = list(zip(ids, range(1, len(ids) + 1), strict=True))  # ranks by position where nothing ties
    at = 0
    while at < len(joins):
        # One group of equal scores: the place before the first join up to the last consecutive join;
        # listed by id, all at the rank of its first place.
        first = joins[at] - 1
        end = joins[at] + 1
        at += 1
        while at < len(joins) and joins[at] == end:
            end += 1
            at += 1
        out[first:end] = [(row_id, first + 1) for row_id in sorted(ids[first:end], key=str)]
    return out


def rrf(ranked_lists: list[list[str]], weights: list[float], k: float = RRF_K) -> dict[str, float]:
    """``sum(weight / (k + rank))`` over the lists holding each id (rank 1-based, first occurrence).

    RRF needs only ranks, so BM25 scores and cosine similarities, which live on unrelated scales, combine
    without calibration.
    """
    return rrf_ranks(
        [[(item, rank) for rank, item in enumerate(ranked, start=1)] for ranked in ranked_lists], weights, k
    )


def rrf_ranks(
    rank_lists: list[list[tuple[str, int]]], weights: list[float], k: float = RRF_K
) -> dict[str, float]:
    """``rrf`` over lists of ``(id, rank)``, for ranks that may be shared (see ``tied_ranks``)."""
    if len(rank_lists) != len(weights):
        raise ValueError(f"{len(rank_lists)} ranked lists but {len(weights)} weights")
    fused: dict[str, float] = {}
    for ranked, weight in zip(rank_lists, weights, strict=True):
        seen: set[str] = set()
        for item, rank in ranked:
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def best_possible(weights: list[float], k: float = RRF_K) -> float:
    """The fused score of an item ranked first in every list: the scale used to report 0..1 scores."""
    return sum(weights) / (k + 1)


def pool_size(top_files: int) -> int:
    """How many fused candidates the post-fusion stages (rerank, mmr) work on, and the least drawn from
    each signal when one of them runs (GrooveSeek's over-fetch; protocol/limits.py)."""
    return max(top_files * limits.POOL_PER_FILE, limits.POOL_MIN)
