"""Retrieval metrics over `ground` results: recall@k, MRR, nDCG@k, exact-top-chunk rate, latency.

Relevance is binary and judged by file: a result is relevant when its corpus-relative path is one of the
query's expected pages. Only the exact-top-chunk rate looks inside the file (docs/evaluation.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hallouminate.evaluation.golden import Expected, GoldenQuery, normalise_heading
from hallouminate.protocol.results import GroundChunk, GroundResult, SearchResult

LATENCY_KEYS = ("latency_p50_ms", "latency_p95_ms")


@dataclass(frozen=True)
class RankedDoc:
    """One file of a `ground` answer, with its best chunk (the one shown first)."""

    path: str
    corpus: str
    score: float
    heading_path: tuple[str, ...]
    line_start: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "corpus": self.corpus,
            "score": self.score,
            "heading_path": list(self.heading_path),
            "line_start": self.line_start,
        }


def ranked_docs(result: GroundResult) -> list[RankedDoc]:
    """The files of a `ground` result, best first; a path met again (from another corpus) keeps its first
    rank, since expectations name corpus-relative paths."""
    docs: list[RankedDoc] = []
    seen: set[str] = set()
    for doc in result.get("docs", []):
        if doc["path"] in seen:
            continue
        seen.add(doc["path"])
        first: GroundChunk | None = None
        if "chunks" in doc:  # a counts doc has none
            first = next(iter(doc["chunks"]), None)
        docs.append(
            RankedDoc(
                path=doc["path"],
                corpus=doc.get("corpus", ""),
                score=float(doc.get("score", 0.0)),
                heading_path=tuple(first.get("heading_path") or ()) if first is not None else (),
                line_start=first.get("line_start") if first is not None else None,
            )
        )
    return docs


def ranked_hits(result: SearchResult) -> list[RankedDoc]:
    """The files of a GrooveSeek-face ``search`` result (flat chunk hits, best first): each path at its
    first hit, which is its best chunk (search/hits.py keeps ground's file order that way), so the files
    and their first chunks are those of the ``ground`` call the search ran."""
    docs: list[RankedDoc] = []
    seen: set[str] = set()
    for hit in result.get("results", []):
        if hit["path"] in seen:
            continue
        seen.add(hit["path"])
        docs.append(
            RankedDoc(
                path=hit["path"],
                corpus="kb",
                score=float(hit["score"]),
                heading_path=tuple(hit.get("heading_path") or ()),
                line_start=None,  # GrooveSeek's hits carry no line numbers
            )
        )
    return docs


@dataclass(frozen=True)
class QueryScore:
    id: str
    # Rank (1-based) of each expected page in the answer, None when it is not among the files returned.
    ranks: dict[str, int | None]
    recall: dict[int, float]
    ndcg: dict[int, float]
    reciprocal_rank: float
    exact_top_chunk: bool

    @property
    def first_rank(self) -> int | None:
        found = [r for r in self.ranks.values() if r is not None]
        return min(found) if found else None


def chunk_matches(expected: Expected, doc: RankedDoc) -> bool:
    """Whether ``doc``'s first chunk is the section ``expected`` names (any chunk, when it names none).

    JSON expectations name one chunk: its heading path (element by element) and, when given, its first
    line. A YAML ``heading`` matches the chunk's own heading or one of its ancestors (the chunk lies in
    that section); "A > B" names a heading path from the top.
    """
    if expected.path != doc.path:
        return False
    if expected.heading_path is not None:
        same_path = [normalise_heading(h) for h in expected.heading_path] == [
            normalise_heading(h) for h in doc.heading_path
        ]
        return same_path and expected.line_start in (None, doc.line_start)
    if expected.line_start is not None and expected.line_start != doc.line_start:
        return False
    if expected.heading is None:
        return True
    wanted = normalise_heading(expected.heading)
    levels = [normalise_heading(h) for h in doc.heading_path]
    prefixes = {" > ".join(levels[: i + 1]) for i in range(len(levels))}
    return wanted in levels or wanted in prefixes


def score_query(query: GoldenQuery, docs: Sequence[RankedDoc], ks: Sequence[int]) -> QueryScore:
    expected = query.expected_paths
    position = {doc.path: i + 1 for i, doc in enumerate(docs)}
    ranks = {path: position.get(path) for path in expected}
    found = sorted(r for r in ranks.values() if r is not None)
    recall = {k: sum(1 for r in found if r <= k) / len(expected) for k in ks}
    ndcg: dict[int, float] = {}
    for k in ks:
        dcg = sum(1.0 / math.log2(r + 1) for r in found if r <= k)
        ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(expected), k) + 1))
        ndcg[k] = dcg / ideal
    exact = bool(docs) and any(chunk_matches(e, docs[0]) for e in query.expected)
    return QueryScore(
        id=query.id,
        ranks=ranks,
        recall=recall,
        ndcg=ndcg,
        reciprocal_rank=1.0 / found[0] if found else 0.0,
        exact_top_chunk=exact,
    )


def percentile(values: Iterable[float], p: float) -> float:
    """The nearest-rank percentile: the smallest value with at least p% of the values at or below it."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = max(0, math.ceil(p / 100 * len(ordered)) - 1)
    return ordered[index]


def aggregate(
    scores: Sequence[QueryScore], ks: Sequence[int], latencies_ms: Sequence[float]
) -> dict[str, float]:
    """Means over the queries, in a fixed key order: recall@k..., mrr, ndcg@k..., exact, then latency."""
    n = len(scores)
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = sum(s.recall[k] for s in scores) / n
    out["mrr"] = sum(s.reciprocal_rank for s in scores) / n
    for k in ks:
        out[f"ndcg@{k}"] = sum(s.ndcg[k] for s in scores) / n
    out["exact_top_chunk"] = sum(s.exact_top_chunk for s in scores) / n
    out["latency_p50_ms"] = percentile(latencies_ms, 50)
    out["latency_p95_ms"] = percentile(latencies_ms, 95)
    return out


def quality_keys(metrics: dict[str, float]) -> list[str]:
    """The metrics a regression is judged on: every one but latency (too noisy to gate a build on)."""
    return [key for key in metrics if key not in LATENCY_KEYS]
