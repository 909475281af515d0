"""Measuring retrieval on a user's own golden queries: parsing, metrics, history, reports.

Pure logic over `ground` results: this package imports the standard library, PyYAML and the protocol
only, so ``hallouminate eval`` loads no engine module (checked by tests/test_architecture.py).
"""

from hallouminate.evaluation.golden import (
    Expected,
    Golden,
    GoldenError,
    GoldenQuery,
    load_golden,
    parse_golden,
)
from hallouminate.evaluation.history import (
    DEFAULT_THRESHOLD,
    HISTORY_LIMIT,
    Comparison,
    compare,
    compatible,
    history_path,
    make_run,
    previous_compatible,
    read_history,
    write_history,
)
from hallouminate.evaluation.metrics import (
    QueryScore,
    RankedDoc,
    aggregate,
    chunk_matches,
    percentile,
    ranked_docs,
    ranked_hits,
    score_query,
)
from hallouminate.evaluation.report import QueryResult, Report, as_json, describe_change, render_text

__all__ = [
    "DEFAULT_THRESHOLD",
    "HISTORY_LIMIT",
    "Comparison",
    "Expected",
    "Golden",
    "GoldenError",
    "GoldenQuery",
    "QueryResult",
    "QueryScore",
    "RankedDoc",
    "Report",
    "aggregate",
    "as_json",
    "chunk_matches",
    "compare",
    "compatible",
    "describe_change",
    "history_path",
    "load_golden",
    "make_run",
    "parse_golden",
    "percentile",
    "previous_compatible",
    "ranked_docs",
    "ranked_hits",
    "read_history",
    "render_text",
    "score_query",
    "write_history",
]
