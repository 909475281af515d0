"""search/mmr.py's pick order against the formula written out naively (GrooveSeek's): every chunk left
scored ``lambda * rel - (1 - lambda) * max_sim - penalty * [its page was picked]`` at each step, rel the
min-max normalised score, max_sim the highest cosine to a chunk picked before (0 for the first pick)."""

from __future__ import annotations

import numpy as np
import pytest

from hallouminate.search.mmr import MmrParams, order


def _naive(
    scores: list[float], docs: list[int], vectors: np.ndarray, lam: float, penalty: float
) -> list[int]:
    rel = np.asarray(scores)
    rel = (rel - rel.min()) / (rel.max() - rel.min())
    sims = (vectors @ vectors.T).astype(np.float64)
    picked: list[int] = []
    while len(picked) < len(scores):
        best, best_gain = -1, -np.inf
        for i in range(len(scores)):
            if i in picked:
                continue
            max_sim = max((sims[i, j] for j in picked), default=0.0)
            same = any(docs[j] == docs[i] for j in picked)
            gain = lam * rel[i] - (1 - lam) * max_sim - penalty * same
            if gain > best_gain + 1e-12:  # ties: the earlier (better fused) chunk
                best, best_gain = i, gain
        picked.append(best)
    return picked


@pytest.mark.parametrize("seed", range(40))
def test_the_order_is_the_formulas_up_to_the_last_pages_first_pick(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = sorted(rng.random(n).tolist(), reverse=True)
    docs = rng.integers(0, max(1, n // 3), n).tolist()
    lam, penalty = float(rng.random()), float(rng.random()) * (seed % 2)
    picked = order(scores, docs, vectors, MmrParams(lam, penalty))
    expected = _naive(scores, docs, vectors, lam, penalty)
    assert picked == expected[: len(picked)]
    # It stops at the last page's first pick: every page is represented, the last one just now.
    assert {docs[i] for i in picked} == set(docs)
    assert docs[picked[-1]] not in {docs[i] for i in picked[:-1]}


def test_near_duplicates_fall_back_and_lambda_one_keeps_the_fused_order() -> None:
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.0, 1.0], dtype=np.float32)
    # Three copies of one chunk, another chunk, and a weak one (the pool's floor: relevance 0).
    vectors = np.stack([a, a, a, b, (a + b) / np.sqrt(2)])
    scores = [1.0, 0.99, 0.98, 0.9, 0.1]
    pages = [0, 1, 2, 3, 4]
    assert order(scores, pages, vectors, MmrParams(0.7, 0.0))[:2] == [0, 3]
    assert order(scores, pages, vectors, MmrParams(1.0, 0.0)) == [0, 1, 2, 3, 4]
