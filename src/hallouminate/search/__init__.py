"""Search: weighted RRF fusion and snippets (domain) and ``ground`` (the hybrid query service, async)."""

from __future__ import annotations

from hallouminate.search.assembly import with_indexing
from hallouminate.search.filters import PARAMS as FILTER_PARAMS
from hallouminate.search.fusion import RRF_K, best_possible, rrf
from hallouminate.search.graph import connection_graph
from hallouminate.search.ground import BM25_WEIGHT, VECTOR_WEIGHT, ground
from hallouminate.search.snippet import make_snippet

__all__ = [
    "BM25_WEIGHT",
    "FILTER_PARAMS",
    "RRF_K",
    "VECTOR_WEIGHT",
    "best_possible",
    "connection_graph",
    "ground",
    "make_snippet",
    "rrf",
    "with_indexing",
]
