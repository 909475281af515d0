"""The approximate vector index of large stores (issue 20; the ADR of the 1M tier says why and how it was tuned).

Stores past ``MIN_ROWS`` rows get a LanceDB vector index, built and refreshed by the daemon off the search
path; searches past the reader's in-memory bound use it with ``NPROBES`` and ``REFINE_FACTOR`` (exact
re-scoring of the candidates), and LanceDB also scans the rows written since the index was built, so a
chunk is found as soon as it is committed (read-your-writes).

This module is the one place that knows the index's parameters: the store builds with ``index_config``, the
reader searches with ``tune``, and bench/ measures recall with the same ``tune``.
"""

from __future__ import annotations

from typing import Any

# Rows from which the store holds an approximate index (below it, exact search is fast enough).
MIN_ROWS = 300_000  # placeholder until measured
# Partitions probed per query, and candidates re-scored exactly per result wanted.
NPROBES = 20  # placeholder until measured
REFINE_FACTOR = 10  # placeholder until measured


def index_config(rows: int, dim: int) -> Any:
    """The LanceDB index configuration for a table of ``rows`` vectors of ``dim`` dimensions."""
    raise NotImplementedError("issue 20: the ann helper implements this")


def tune(builder: Any) -> Any:
    """A LanceDB vector query builder with this index's search parameters applied."""
    return builder.nprobes(NPROBES).refine_factor(REFINE_FACTOR)
