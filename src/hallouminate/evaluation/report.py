"""What an evaluation run prints: an aggregate table, the misses and the regressions (text), or all of it
with per-query ranks and top results (JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hallouminate.evaluation.golden import Golden, GoldenQuery
from hallouminate.evaluation.history import Comparison, RankChange
from hallouminate.evaluation.metrics import QueryScore, RankedDoc, aggregate, quality_keys


@dataclass(frozen=True)
class QueryResult:
    query: GoldenQuery
    score: QueryScore
    docs: list[RankedDoc]
    latency_ms: float
    took_ms: float | None


@dataclass
class Report:
    golden_path: str
    golden: Golden
    corpus: str | None
    model: str
    ks: list[int]
    depth: int
    metrics: dict[str, float]
    results: list[QueryResult]
    comparison: Comparison | None
    history_file: str
    history_runs: int
    history_limit: int
    warnings: list[str] = field(default_factory=list)


def by_tag(results: list[QueryResult], ks: list[int]) -> dict[str, dict[str, Any]]:
    """The quality metrics of each tag's queries (a query may carry several tags)."""
    tags = sorted({t for r in results for t in r.query.tags})
    out: dict[str, dict[str, Any]] = {}
    for tag in tags:
        subset = [r for r in results if tag in r.query.tags]
        metrics = aggregate([r.score for r in subset], ks, [r.latency_ms for r in subset])
        out[tag] = {"queries": len(subset), "metrics": {k: metrics[k] for k in quality_keys(metrics)}}
    return out


def as_json(report: Report) -> dict[str, Any]:
    comparison = report.comparison
    return {
        "golden": report.golden_path,
        "format": report.golden.format,
        "golden_digest": report.golden.digest,
        "queries_count": len(report.results),
        "corpus": report.corpus,
        "model": report.model,
        "ks": report.ks,
        "depth": report.depth,
        "metrics": report.metrics,
        "by_tag": by_tag(report.results, report.ks),
        "queries": [_query_json(r, report.ks) for r in report.results],
        "previous": None
        if comparison is None
        else {
            "time": comparison.previous_time,
            "metrics": {c.metric: c.previous for c in comparison.changes},
        },
        "regression": None
        if comparison is None
        else {
            "threshold": comparison.threshold,
            "regressed": comparison.regressed,
            "drops": [
                {"metric": c.metric, "previous": c.previous, "current": c.current, "delta": c.delta}
                for c in comparison.drops
            ],
            "worse": [_change_json(c) for c in comparison.worse],
            "better": [_change_json(c) for c in comparison.better],
        },
        "history": {"path": report.history_file, "runs": report.history_runs, "limit": report.history_limit},
        "warnings": report.warnings,
    }


def _change_json(c: RankChange) -> dict[str, Any]:
    return {
        "id": c.id,
        "previous": c.previous,
        "current": c.current,
        "lost": c.lost,
        "found": c.found,
        "exact_previous": c.exact_previous,
        "exact_current": c.exact_current,
        "how": describe_change(c),
    }


def describe_change(c: RankChange, depth: int | None = None) -> str:
    """How a query's answer changed, in words: "rank 1 -> 4; lost b.md (was rank 2); exact top chunk
    lost"."""
    parts = []
    if c.previous != c.current:
        parts.append(f"{_rank(c.previous, depth)} -> {_rank(c.current, depth)}")
    parts.extend(f"lost {page} (was rank {rank})" for page, rank in sorted(c.lost.items()))
    parts.extend(f"found {page} (now rank {rank})" for page, rank in sorted(c.found.items()))
    if c.exact_previous is not None and c.exact_previous != c.exact_current:
        parts.append("exact top chunk " + ("lost" if c.exact_previous else "gained"))
    return "; ".join(parts) or "unchanged"


def _query_json(r: QueryResult, ks: list[int]) -> dict[str, Any]:
    s = r.score
    return {
        "id": r.query.id,
        "query": r.query.query,
        "tags": list(r.query.tags),
        "expected": [e.as_dict() for e in r.query.expected],
        "rank": s.first_rank,
        "ranks": s.ranks,
        "reciprocal_rank": s.reciprocal_rank,
        "recall": {str(k): s.recall[k] for k in ks},
        "ndcg": {str(k): s.ndcg[k] for k in ks},
        "exact_top_chunk": s.exact_top_chunk,
        "latency_ms": round(r.latency_ms, 3),
        "took_ms": r.took_ms,
        "top": [d.as_dict() for d in r.docs[: max(ks)]],
    }


def render_text(report: Report) -> str:
    comparison = report.comparison
    where = f"corpus {report.corpus}" if report.corpus else "every corpus"
    lines = [f"eval {report.golden_path}: {len(report.results)} queries, {where}, model {report.model}"]
    if comparison is None:
        lines.append("no previous compatible run (same golden content, model and settings) to compare with")
    else:
        lines.append(f"compared with the run of {comparison.previous_time}")
    lines.append("")
    lines.extend(_metric_table(report))
    tags = by_tag(report.results, report.ks)
    if tags:
        lines.append("")
        lines.extend(_tag_table(tags))
    lines.append("")
    lines.extend(_misses(report))
    if comparison is not None:
        lines.append("")
        lines.extend(_regressions(comparison, report.depth))
    lines.append("")
    lines.append(
        f"history: {report.history_file} ({report.history_runs} run(s) kept, at most {report.history_limit})"
    )
    return "\n".join(lines) + "\n"


def _metric_table(report: Report) -> list[str]:
    comparison = report.comparison
    previous = {c.metric: c for c in comparison.changes} if comparison is not None else {}
    dropped = {c.metric for c in comparison.drops} if comparison is not None else set()
    rows = [("metric", "value", "previous", "change", "")]
    for key, value in report.metrics.items():
        change = previous.get(key)
        rows.append(
            (
                key,
                _num(key, value),
                _num(key, change.previous) if change else "-",
                _signed(key, change.delta) if change else "-",
                "REGRESSION" if key in dropped else "",
            )
        )
    return _table(rows, frozenset({0, 4}))


def _tag_table(tags: dict[str, dict[str, Any]]) -> list[str]:
    first = next(iter(tags.values()))["metrics"]
    keys = [k for k in first if k.startswith("recall@") or k == "mrr"]
    rows = [("tag", "queries", *keys)]
    for tag, info in tags.items():
        rows.append((tag, str(info["queries"]), *(_num(k, info["metrics"][k]) for k in keys)))
    return _table(rows)


def _misses(report: Report) -> list[str]:
    cut = max(report.ks)
    missed = [r for r in report.results if is_miss(r.score, cut)]
    if not missed:
        return [f"misses: none (every query ranked an expected page first and all of them in the top {cut})"]
    lines = [f"misses ({len(missed)}): no expected page ranked first, or one is not in the top {cut}"]
    for r in missed:
        placed = ", ".join(f"{path} {_rank(rank, report.depth)}" for path, rank in r.score.ranks.items())
        top = r.docs[0].path if r.docs else "nothing"
        lines.append(f"  {r.query.id}  {_quote(r.query.query)}")
        lines.append(f"      expected {placed}; first: {top}")
    return lines


def is_miss(score: QueryScore, cut: int) -> bool:
    """A query worth a look: its first hit is not an expected page, or an expected page is below ``cut``."""
    return score.first_rank != 1 or any(r is None or r > cut for r in score.ranks.values())


def _regressions(comparison: Comparison, depth: int) -> list[str]:
    if not comparison.drops and not comparison.worse:
        lines = [f"regressions: none (no quality metric fell by more than {comparison.threshold:g})"]
    else:
        lines = [
            f"regressions: {len(comparison.drops)} metric(s) fell by more than {comparison.threshold:g}, "
            f"{len(comparison.worse)} query(ies) answer worse"
        ]
    for c in comparison.drops:
        lines.append(f"  {c.metric}  {c.previous:.3f} -> {c.current:.3f} ({c.delta:+.3f})")
    for q in comparison.worse:
        lines.append(f"  query {q.id} worse: {describe_change(q, depth)}")
    for q in comparison.better:
        lines.append(f"  query {q.id} better: {describe_change(q, depth)}")
    return lines


def _rank(rank: int | None, depth: int | None) -> str:
    if rank is not None:
        return f"rank {rank}"
    return f"not in the top {depth}" if depth is not None else "not returned"


def _num(key: str, value: float) -> str:
    return f"{value:.1f}" if key.endswith("_ms") else f"{value:.3f}"


def _signed(key: str, value: float) -> str:
    return f"{value:+.1f}" if key.endswith("_ms") else f"{value:+.3f}"


def _quote(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return '"' + (text if len(text) <= limit else text[: limit - 3] + "...") + '"'


def _table(rows: Sequence[tuple[str, ...]], text_columns: frozenset[int] = frozenset({0})) -> list[str]:
    """Aligned columns: text to the left, numbers to the right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [
            cell.ljust(widths[i]) if i in text_columns else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        out.append("  ".join(cells).rstrip())
    return out
