"""The bounded history file and the comparison with the previous compatible run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hallouminate.cli.eval_command import DEFAULT_THRESHOLD as CLI_DEFAULT_THRESHOLD
from hallouminate.evaluation import (
    DEFAULT_THRESHOLD,
    HISTORY_LIMIT,
    QueryResult,
    Report,
    compare,
    compatible,
    describe_change,
    history_path,
    make_run,
    parse_golden,
    previous_compatible,
    read_history,
    render_text,
    score_query,
    write_history,
)
from hallouminate.evaluation.metrics import RankedDoc, aggregate

GOLDEN = parse_golden(
    "queries:\n  - {id: a, query: x, expected: [a.md]}\n  - {id: b, query: y, expected: [b.md]}\n", "yaml"
)
SETTINGS = {"corpus": None, "top_files": 10, "limit": 50, "chunk_tokens": 256}


def run_with(
    ranks: dict[str, list[str]], *, settings: dict[str, Any] = SETTINGS, model: str = "m"
) -> dict[str, Any]:
    """A real run record built from the ranked files each query got back."""
    scores = [
        score_query(query, [RankedDoc(p, "c", 1.0, (), 1) for p in ranks[query.id]], [1, 5])
        for query in GOLDEN.queries
    ]
    return make_run(
        GOLDEN,
        model=model,
        settings=settings,
        daemon_version="0.1.0",
        ks=[1, 5],
        metrics=aggregate(scores, [1, 5], [10.0, 12.0]),
        scores=scores,
        now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )


GOOD = {"a": ["a.md", "x.md"], "b": ["b.md", "x.md"]}
A_SLIPS = {"a": ["x.md", "y.md", "a.md"], "b": ["b.md", "x.md"]}


def test_history_sits_beside_the_golden_file() -> None:
    assert history_path(Path("/w/evals/golden.yaml")) == Path("/w/evals/golden.yaml.history.jsonl")


def test_history_keeps_the_last_runs_only_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml.history.jsonl"
    assert read_history(path) == ([], [])
    runs = [{**run_with(GOOD), "seq": i} for i in range(HISTORY_LIMIT + 7)]
    write_history(path, runs)
    lines = path.read_text().splitlines()
    assert len(lines) == HISTORY_LIMIT == 50
    back, warnings = read_history(path)
    assert warnings == []
    assert [r["seq"] for r in back] == list(range(7, HISTORY_LIMIT + 7))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_unreadable_history_lines_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    good = json.dumps(run_with(GOOD))
    path.write_text(f"{good}\n{{not json\n[1, 2]\n\n{good}\n")
    runs, warnings = read_history(path)
    assert len(runs) == 2
    assert [w.split(": ")[0] for w in warnings] == [f"{path}:2", f"{path}:3"]


def test_a_run_record_holds_identity_metrics_and_each_query_outcome() -> None:
    run = run_with(A_SLIPS)
    assert run["golden_digest"] == GOLDEN.digest and run["model"] == "m" and run["settings"] == SETTINGS
    assert run["time"] == "2026-01-02T03:04:05+00:00"
    assert run["queries"] == {
        "a": {"rank": 3, "exact": False, "ranks": {"a.md": 3}},
        "b": {"rank": 1, "exact": True, "ranks": {"b.md": 1}},
    }
    assert run["metrics"]["recall@1"] == 0.5 and run["metrics"]["mrr"] == round((1 / 3 + 1) / 2, 6)


def test_compatible_means_same_golden_content_model_and_settings() -> None:
    base = run_with(GOOD)
    assert compatible(base, run_with(A_SLIPS))  # a different outcome is what we compare
    assert compatible(base, {**run_with(GOOD), "daemon_version": "9.9.9"})  # an upgrade is compared too
    assert not compatible(base, run_with(GOOD, model="other-model"))
    assert not compatible(base, run_with(GOOD, settings={**SETTINGS, "limit": 100}))
    assert not compatible(base, run_with(GOOD, settings={**SETTINGS, "corpus": "repo:x:wiki"}))
    assert not compatible(base, {**run_with(GOOD), "golden_digest": "0" * 64})
    # Key order inside the settings is not a difference.
    assert compatible(base, run_with(GOOD, settings=dict(reversed(list(SETTINGS.items())))))


def test_previous_compatible_is_the_latest_matching_run() -> None:
    first, second = {**run_with(GOOD), "seq": 1}, {**run_with(GOOD), "seq": 2}
    other = {**run_with(GOOD, model="other"), "seq": 3}
    assert previous_compatible([first, second, other], run_with(GOOD))["seq"] == 2  # type: ignore[index]
    assert previous_compatible([other], run_with(GOOD)) is None
    assert previous_compatible([], run_with(GOOD)) is None


def test_a_drop_beyond_the_threshold_is_a_regression_and_names_the_query() -> None:
    comparison = compare(run_with(GOOD), run_with(A_SLIPS), DEFAULT_THRESHOLD)
    assert comparison.regressed
    dropped = {c.metric: round(c.delta, 6) for c in comparison.drops}
    # a: rank 1 -> 3. recall@1 1 -> 0.5; mrr 1 -> (1/3 + 1)/2; ndcg@1 1 -> 0.5; ndcg@5 1 -> (0.5 + 1)/2;
    # exact 1 -> 0.5. recall@5 stays 1, latency is never gated.
    assert dropped == {
        "recall@1": -0.5,
        "mrr": round((1 / 3 + 1) / 2 - 1, 6),
        "ndcg@1": -0.5,
        "ndcg@5": -0.25,
        "exact_top_chunk": -0.5,
    }
    assert [(c.id, c.previous, c.current) for c in comparison.worse] == [("a", 1, 3)]
    assert comparison.better == []
    # The way back is an improvement, not a regression.
    back = compare(run_with(A_SLIPS), run_with(GOOD), DEFAULT_THRESHOLD)
    assert not back.regressed and [(c.id, c.previous, c.current) for c in back.better] == [("a", 3, 1)]


def test_drops_within_the_threshold_are_not_regressions() -> None:
    before, after = run_with(GOOD), run_with(GOOD)
    after["metrics"] = {**after["metrics"], "mrr": before["metrics"]["mrr"] - 0.02, "recall@5": 0.985}
    after["metrics"]["latency_p50_ms"] = 999.0
    assert not compare(before, after, 0.02).regressed  # exactly the threshold, latency ignored
    after["metrics"]["mrr"] = before["metrics"]["mrr"] - 0.021
    assert [c.metric for c in compare(before, after, 0.02).drops] == ["mrr"]
    assert compare(before, after, 0.05).drops == []


def test_a_query_lost_from_the_results_ranks_below_any_rank() -> None:
    lost = {"a": ["x.md"], "b": ["b.md"]}
    comparison = compare(run_with(A_SLIPS), run_with(lost), DEFAULT_THRESHOLD)
    assert [(c.id, c.previous, c.current) for c in comparison.worse] == [("a", 3, None)]


def test_a_query_that_keeps_its_rank_but_loses_a_page_is_named_with_how() -> None:
    golden = parse_golden("queries:\n  - {id: both, query: x, expected: [a.md, b.md]}\n", "yaml")

    def run(files: list[str]) -> dict[str, Any]:
        scores = [score_query(golden.queries[0], [RankedDoc(p, "c", 1.0, (), 1) for p in files], [1, 5])]
        metrics = aggregate(scores, [1, 5], [1.0])
        return make_run(golden, model="m", settings=SETTINGS, daemon_version="0", ks=[1, 5], metrics=metrics,
                        scores=scores)  # fmt: skip

    # a.md stays first, b.md drops out of the answer: before, only the best rank was compared, so this
    # query was not listed at all.
    comparison = compare(run(["a.md", "b.md"]), run(["a.md", "x.md"]), DEFAULT_THRESHOLD)
    [change] = comparison.worse
    assert (change.id, change.previous, change.current, change.lost) == ("both", 1, 1, {"b.md": 2})
    assert describe_change(change) == "lost b.md (was rank 2)"
    back = compare(run(["a.md", "x.md"]), run(["a.md", "b.md"]), DEFAULT_THRESHOLD)
    assert [describe_change(c) for c in back.better] == ["found b.md (now rank 2)"]
    # A history written before ``ranks`` were recorded still compares by the best rank.
    old = run(["a.md", "b.md"])
    old["queries"]["both"].pop("ranks")
    assert [describe_change(c, 10) for c in compare(old, run(["x.md"]), DEFAULT_THRESHOLD).worse] == [
        "rank 1 -> not in the top 10; exact top chunk lost"
    ]


def test_metrics_at_other_cutoffs_are_compared_where_both_runs_have_them() -> None:
    before = run_with(GOOD)
    after = run_with(A_SLIPS)
    after["metrics"] = {k.replace("@5", "@3"): v for k, v in after["metrics"].items()}
    compared = {c.metric for c in compare(before, after, DEFAULT_THRESHOLD).changes}
    assert "recall@1" in compared and "recall@3" not in compared and "recall@5" not in compared


def test_text_report_shows_the_table_the_misses_and_the_regressions() -> None:
    previous, current = run_with(GOOD), run_with(A_SLIPS)
    results = [
        QueryResult(query, score_query(query, docs, [1, 5]), docs, 10.0, 5.0)
        for query, docs in zip(
            GOLDEN.queries,
            [[RankedDoc(p, "c", 1.0, (), 1) for p in A_SLIPS[qid]] for qid in ("a", "b")],
            strict=True,
        )
    ]
    report = Report(
        golden_path="g.yaml",
        golden=GOLDEN,
        corpus=None,
        model="m",
        ks=[1, 5],
        depth=10,
        metrics=current["metrics"],
        results=results,
        comparison=compare(previous, current, 0.02),
        history_file="g.yaml.history.jsonl",
        history_runs=2,
        history_limit=HISTORY_LIMIT,
    )
    text = render_text(report)
    assert "compared with the run of 2026-01-02T03:04:05+00:00" in text
    assert any(
        line.split()[:5] == ["recall@1", "0.500", "1.000", "-0.500", "REGRESSION"]
        for line in text.splitlines()
    )
    assert any(line.split()[:4] == ["recall@5", "1.000", "1.000", "+0.000"] for line in text.splitlines())
    assert "misses (1)" in text and "expected a.md rank 3; first: x.md" in text
    assert "regressions: 5 metric(s) fell by more than 0.02, 1 query(ies) answer worse" in text
    assert "  query a worse: rank 1 -> rank 3; exact top chunk lost" in text


def test_the_cli_default_threshold_is_the_library_one() -> None:
    assert CLI_DEFAULT_THRESHOLD == DEFAULT_THRESHOLD
