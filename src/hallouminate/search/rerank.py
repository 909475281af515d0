"""The rerank stage of ranked mode (domain): a model re-scores the best fused candidates, within a time budget.

Pipeline place (docs/search.md, "Rerank"): after the fusion of the vector and BM25 rankings, before the
per-file roll-up and the ``top_files`` cut. The pool is the best max(top_files x 5, 50) fused chunks
(GrooveSeek's over-fetch; ``ground`` draws at least that many candidates from each signal). Each is scored
with the query by the reranker (a cross-encoder reads the query and the passage together), and the pool is
re-ordered by those scores.

Scores stay on ranked mode's 0..1 scale and keep the pool above every chunk outside it: the pool's chunks
take evenly spaced scores from the pool's best fused score (given to the reranker's first) down to its
worst. A cross-encoder's raw scores (logits) have no fixed scale, and only the order is theirs to decide.

The model call runs off the event loop (the daemon's scorer); past ``budget_ms`` the stage gives up and the
fused order stands, with a ``rerank-timeout`` warning. A failing model gives the fused order too, with a
``rerank-failed`` warning: the stage is optional, the search is not.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass

from hallouminate.ports import ChunkRow, RerankScorer
from hallouminate.protocol.results import GroundWarning, RerankInfo
from hallouminate.search.fusion import RRF_K, pool_size, rrf

# As the indexer composes what the embedder sees (indexing/chunker.py): the model reads headings too.
BREADCRUMB_SEP = " > "


@dataclass(frozen=True)
class RerankStage:
    """A reranker to run: its name (reported), its scorer (off the loop) and its time budget."""

    name: str
    score: RerankScorer
    budget_ms: int
    # None: the model's order replaces the fused one (a cross-encoder reads query and passage together).
    # A weight: the model's ranking is one more vote, fused by weighted RRF with the fused ranking (a
    # bi-encoder's cosine alone loses exact-name questions BM25 had right; docs/adr/0051-query-levers.md).
    fuse_weight: float | None = None


@dataclass
class Reranked:
    """The fused scores after the stage (re-ordered, or as they were), what ran, and any warning."""

    scores: dict[str, float]
    info: RerankInfo | None = None
    warning: GroundWarning | None = None


def passage(row: ChunkRow) -> str:
    crumb = BREADCRUMB_SEP.join(row.get("heading_path") or [])
    text = row.get("text") or ""
    return f"{crumb}\n\n{text}" if crumb else text


async def rerank(
    query: str,
    fused: Mapping[str, float],
    rows: Mapping[str, ChunkRow],
    stage: RerankStage,
    top_files: int,
) -> Reranked:
    """Re-order the best ``pool_size(top_files)`` of ``fused`` (chunk id -> fused score) by ``stage``."""
    started = time.perf_counter()
    # Ties in the fused order resolve by id, so the pool is the same set on every call.
    pool = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))[: pool_size(top_files)]
    scores = dict(fused)
    if not pool:
        return Reranked(scores)
    try:
        async with asyncio.timeout(stage.budget_ms / 1000):
            model_scores = await stage.score(query, [passage(rows[chunk_id]) for chunk_id in pool])
    except TimeoutError:
        return Reranked(scores, warning=_timeout(stage, len(pool)))
    except Exception as exc:  # the model failed: the fused order still answers the query
        return Reranked(
            scores,
            warning={
                "code": "rerank-failed",
                "message": f"the reranker {stage.name} failed ({type(exc).__name__}: {exc}); the results "
                "are in the order of the fused ranking",
            },
        )
    if len(model_scores) != len(pool):
        raise ValueError(f"the reranker returned {len(model_scores)} scores for {len(pool)} passages")
    # Stable: passages the model scores alike keep their fused order.
    order = sorted(range(len(pool)), key=lambda i: -float(model_scores[i]))
    if stage.fuse_weight is not None:
        positions = [str(i) for i in range(len(pool))]
        votes = rrf([positions, [str(i) for i in order]], [1.0, stage.fuse_weight], RRF_K)
        order = sorted(range(len(pool)), key=lambda i: -votes[str(i)])
    high, low = scores[pool[0]], scores[pool[-1]]
    step = (high - low) / (len(pool) - 1) if len(pool) > 1 and high > low else 0.0
    for place, i in enumerate(order):
        # A pool of equal fused scores still needs distinct ones to keep the model's order.
        scores[pool[i]] = high - place * step if step else high - place * 1e-9
    took = round((time.perf_counter() - started) * 1000, 3)
    return Reranked(scores, info={"reranker": stage.name, "candidates": len(pool), "took_ms": took})


def _timeout(stage: RerankStage, candidates: int) -> GroundWarning:
    return {
        "code": "rerank-timeout",
        "message": f"the reranker {stage.name} did not score the {candidates} candidates within "
        f"{stage.budget_ms} ms ([search] rerank_budget_ms); the results are in the order of the fused "
        "ranking",
    }


def not_configured() -> GroundWarning:
    """``rerank: true`` asked of a daemon with no reranker."""
    return {
        "code": "rerank-unavailable",
        "message": "rerank was asked for, but no reranker is configured ([embeddings] reranker in the "
        'baseline config; docs/search.md, "Rerank"): the results are in the order of the fused ranking',
    }
