"""The run history beside a golden file, and the comparison of a run with the previous compatible one.

``<golden>.history.jsonl`` holds one JSON object per run, oldest first, at most ``HISTORY_LIMIT`` of them.
Two runs are compatible when they measured the same queries (golden digest) with the same model and the
same settings; only then is a difference a change of the system rather than of the test (ADR 0013).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hallouminate.evaluation.golden import Golden
from hallouminate.evaluation.metrics import QueryScore, quality_keys

HISTORY_LIMIT = 50
DEFAULT_THRESHOLD = 0.02
HISTORY_FORMAT = 1
# Float noise in a mean must not count as a drop of exactly the threshold.
_EPSILON = 1e-9


def history_path(golden: Path) -> Path:
    return golden.with_name(golden.name + ".history.jsonl")


def make_run(
    golden: Golden,
    *,
    model: str,
    settings: dict[str, Any],
    daemon_version: str,
    ks: Sequence[int],
    metrics: dict[str, float],
    scores: Sequence[QueryScore],
    now: datetime | None = None,
) -> dict[str, Any]:
    """The history record of one run: what was measured, with what, and each query's outcome."""
    return {
        "format": HISTORY_FORMAT,
        "time": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "golden_digest": golden.digest,
        "model": model,
        "settings": settings,
        "daemon_version": daemon_version,
        "ks": list(ks),
        "queries_count": len(scores),
        "metrics": {key: round(value, 6) for key, value in metrics.items()},
        # ``ranks`` (each expected page's rank, null when not returned): to say which page a query lost.
        "queries": {
            s.id: {"rank": s.first_rank, "exact": s.exact_top_chunk, "ranks": dict(s.ranks)} for s in scores
        },
    }


def compatible(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same golden content, same model, same settings (the daemon version is recorded, not compared: an
    upgrade that lowers recall is exactly what the comparison is for)."""
    return (
        a.get("golden_digest") == b.get("golden_digest")
        and a.get("model") == b.get("model")
        and _canonical(a.get("settings")) == _canonical(b.get("settings"))
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def read_history(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs recorded in ``path`` (none when it does not exist), and a warning per unreadable line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"history {path} could not be read ({exc}); starting a new one"]
    runs: list[dict[str, Any]] = []
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            run = json.loads(line)
        except json.JSONDecodeError as exc:
            warnings.append(f"{path}:{number}: skipped an unreadable run ({exc.msg})")
            continue
        if not isinstance(run, dict) or not isinstance(run.get("metrics"), dict):
            warnings.append(f"{path}:{number}: skipped a line that is not a run record")
            continue
        runs.append(run)
    return runs, warnings


def previous_compatible(runs: Sequence[dict[str, Any]], run: dict[str, Any]) -> dict[str, Any] | None:
    for earlier in runs[::-1]:
        if compatible(earlier, run):
            return earlier
    return None


def write_history(path: Path, runs: Sequence[dict[str, Any]], limit: int = HISTORY_LIMIT) -> None:
    """Replace ``path`` with the last ``limit`` runs, atomically (a crash leaves the old file whole)."""
    kept = list(runs)[-limit:]
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for run in kept:
                f.write(json.dumps(run, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class MetricChange:
    metric: str
    previous: float
    current: float

    @property
    def delta(self) -> float:
        return self.current - self.previous


@dataclass(frozen=True)
class RankChange:
    """How one query's answer changed: the rank of its best expected page (None: not returned), the
    expected pages it no longer returns (``lost``) or now returns (``found``), its exact top chunk."""

    id: str
    previous: int | None
    current: int | None
    lost: dict[str, int] = field(default_factory=dict)  # page -> its previous rank
    found: dict[str, int] = field(default_factory=dict)  # page -> its new rank
    exact_previous: bool | None = None
    exact_current: bool | None = None

    @property
    def worse(self) -> bool:
        return (
            _rank_order(self.current) > _rank_order(self.previous)
            or bool(self.lost)
            or (self.exact_previous is True and self.exact_current is False)
        )

    @property
    def changed(self) -> bool:
        return (
            self.previous != self.current
            or bool(self.lost or self.found)
            or (self.exact_previous is not None and self.exact_previous != self.exact_current)
        )


@dataclass(frozen=True)
class Comparison:
    previous_time: str
    threshold: float
    changes: list[MetricChange]
    # Quality metrics that fell by more than the threshold: what --fail-on-regression fails on.
    drops: list[MetricChange]
    # Queries whose answer got worse (best expected page lower or gone, an expected page lost, the exact
    # top chunk lost), and the others that changed (for the better).
    worse: list[RankChange] = field(default_factory=list)
    better: list[RankChange] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool(self.drops)


def compare(previous: dict[str, Any], current: dict[str, Any], threshold: float) -> Comparison:
    """``current`` against ``previous`` (a compatible run), metric by metric and query by query."""
    before: dict[str, float] = previous["metrics"]
    after: dict[str, float] = current["metrics"]
    changes = [MetricChange(key, float(before[key]), float(after[key])) for key in after if key in before]
    gated = set(quality_keys(after))
    drops = [c for c in changes if c.metric in gated and -c.delta > threshold + _EPSILON]
    worse: list[RankChange] = []
    better: list[RankChange] = []
    old_queries: dict[str, Any] = previous.get("queries") or {}
    for qid, outcome in (current.get("queries") or {}).items():
        if qid not in old_queries:
            continue
        change = _query_change(qid, old_queries[qid], outcome)
        if change.worse:
            worse.append(change)
        elif change.changed:
            better.append(change)
    return Comparison(str(previous.get("time", "?")), threshold, changes, drops, worse, better)


def _query_change(qid: str, was: dict[str, Any], now: dict[str, Any]) -> RankChange:
    # ``ranks`` and ``exact`` are compared only when both runs recorded them (older histories lack ranks).
    old_ranks: dict[str, int | None] = was.get("ranks") or {}
    new_ranks: dict[str, int | None] = now.get("ranks") or {}
    lost: dict[str, int] = {}
    found: dict[str, int] = {}
    for page, before in old_ranks.items():
        after = new_ranks.get(page)
        if page not in new_ranks:
            continue
        if before is not None and after is None:
            lost[page] = before
        elif before is None and after is not None:
            found[page] = after
    exact_was, exact_now = was.get("exact"), now.get("exact")
    both_exact = isinstance(exact_was, bool) and isinstance(exact_now, bool)
    return RankChange(
        qid,
        was.get("rank"),
        now.get("rank"),
        lost,
        found,
        exact_was if both_exact else None,
        exact_now if both_exact else None,
    )


def _rank_order(rank: int | None) -> float:
    return float("inf") if rank is None else float(rank)
