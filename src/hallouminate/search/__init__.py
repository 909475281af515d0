"""Search: weighted RRF fusion and snippets (domain) and ``ground`` (the hybrid query service)."""

from __future__ import annotations

from hallouminate.search.fusion import RRF_K, best_possible, rrf
from hallouminate.search.ground import BM25_WEIGHT, VECTOR_WEIGHT, ground, ground_async
from hallouminate.search.snippet import make_snippet

__all__ = [
    "BM25_WEIGHT",
    "RRF_K",
    "VECTOR_WEIGHT",
    "best_possible",
    "ground",
    "ground_async",
    "make_snippet",
    "rrf",
]
