"""``mmr``: maximal marginal relevance over the fused candidates (domain; pure but for numpy arithmetic).

GrooveSeek's semantics (docs/search.md, "Diversity (mmr)"): the pool is the ``max(top_files x 5, 50)``
best fused chunks; relevance is the fused score min-max normalised over the pool; chunks are picked one
at a time by ``lambda * rel - (1 - lambda) * max_sim - penalty * [a chunk of the same page was picked]``,
``max_sim`` the highest cosine between the chunk and those picked before it (0 for the first pick).

Our results are files, ranked by their best chunk: the order MMR picks chunks in becomes the files' order
(a file ranks where its first picked chunk was picked; files with no chunk in the pool follow, by score).
Scores are not rewritten: a file keeps its best fused score, so a score still means relevance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hallouminate.errors import InvalidArgument
from hallouminate.protocol import limits

if TYPE_CHECKING:
    from hallouminate.ports import Vector


@dataclass(frozen=True)
class MmrParams:
    """The checked ``mmr`` parameters of one request."""

    lam: float
    same_doc_penalty: float


def take(params: dict[str, object]) -> MmrParams | None:
    """Pop ``mmr``, ``mmr_lambda`` and ``mmr_same_doc_penalty`` from ``ground``'s keyword arguments and
    check them: None when ``mmr`` is off (the other two are still checked, so a typo is not ignored)."""
    on = params.pop("mmr", None)
    lam = _fraction(params.pop("mmr_lambda", None), limits.MMR_LAMBDA)
    penalty = _fraction(params.pop("mmr_same_doc_penalty", None), limits.MMR_SAME_DOC_PENALTY)
    if on is not None and not isinstance(on, bool):
        raise InvalidArgument(f"mmr must be true or false, got {on!r}", {"param": "mmr"})
    return MmrParams(lam, penalty) if on else None


def _fraction(value: object, bound: limits.Fraction) -> float:
    if value is None:
        return bound.default
    if value not in bound:
        raise InvalidArgument(
            f"{bound.name} must be a number from {bound.low} to {bound.high}, got {value!r}",
            {"param": bound.name},
        )
    return float(value)  # type: ignore[arg-type]  # checked by ``in`` above


# Up to this pool size, similarities are computed without BLAS: on a busy 2-core machine its threads made
# the 50 x 50 product cost up to 20 ms (measured), einsum ~1 ms; bigger pools need BLAS's speed.
SMALL_POOL = 100


def order(scores: Sequence[float], docs: Sequence[object], vectors: Vector, params: MmrParams) -> list[int]:
    """The positions of the pool's chunks (``scores``, the page each is of, their unit ``vectors``) in
    the order MMR picks them, up to the first pick of the last page: a page ranks by its first pick, so
    later picks change nothing (and the pool is often half chunks of pages already picked).

    Plain Python over lists: for a pool of 50, numpy's per-call cost made the loop ~6x slower (measured).
    """
    n = len(scores)
    if n == 0:
        return []
    low, high = min(scores), max(scores)
    rel = [(score - low) / (high - low) for score in scores] if high > low else [1.0] * n
    unit = np.asarray(vectors, dtype=np.float32)
    product = np.einsum("ij,kj->ik", unit, unit) if n <= SMALL_POOL else unit @ unit.T
    sims: list[list[float]] = product.astype(np.float64).tolist()
    page = {doc: i for i, doc in enumerate(dict.fromkeys(docs))}
    page_of = [page[doc] for doc in docs]
    lam, novelty, penalty = params.lam, 1.0 - params.lam, params.same_doc_penalty
    left = list(range(n))
    max_sim = [0.0] * n  # the highest cosine to a chunk picked (0 before the first pick)
    same = [False] * n
    seen: set[int] = set()
    picked: list[int] = []

    def gain(i: int) -> tuple[float, int]:  # ties: the earlier (better fused) chunk
        return lam * rel[i] - novelty * max_sim[i] - penalty * same[i], -i

    while len(seen) < len(page):
        best = max(left, key=gain)
        picked.append(best)
        left.remove(best)
        row = sims[best]
        # The first pick sets max_sim (a cosine may be negative); later ones only raise it.
        max_sim = (
            list(row) if len(picked) == 1 else [m if m >= r else r for m, r in zip(max_sim, row, strict=True)]
        )
        if page_of[best] not in seen:
            seen.add(page_of[best])
            for i in left:
                same[i] = same[i] or page_of[i] == page_of[best]
    return picked
