"""Metrics against numbers worked out by hand on a three-query fixture."""

from __future__ import annotations

from typing import Any

import pytest

from hallouminate.evaluation import (
    Expected,
    GoldenQuery,
    RankedDoc,
    aggregate,
    chunk_matches,
    percentile,
    ranked_docs,
    score_query,
)


def q(qid: str, *expected: Expected) -> GoldenQuery:
    return GoldenQuery(qid, f"query {qid}", expected, (), 1)


def docs(*paths: str) -> list[RankedDoc]:
    return [
        RankedDoc(p, "c", 1.0 / (i + 1), (p.removesuffix(".md").title(),), 1) for i, p in enumerate(paths)
    ]


# A: its one page at rank 2. B: two pages, at ranks 1 and 4. C: its page absent.
A = q("A", Expected("a.md"))
B = q("B", Expected("b.md"), Expected("c.md"))
C = q("C", Expected("z.md"))
A_DOCS = docs("x.md", "a.md", "y.md")
B_DOCS = docs("b.md", "x.md", "y.md", "c.md")
C_DOCS = docs("x.md")


def test_per_query_scores_match_hand_computation() -> None:
    a = score_query(A, A_DOCS, [1, 3, 5])
    assert a.ranks == {"a.md": 2} and a.first_rank == 2
    assert a.recall == {1: 0.0, 3: 1.0, 5: 1.0}
    assert a.reciprocal_rank == 0.5
    # DCG@3 = 1/log2(3) = 0.63093; IDCG = 1/log2(2) = 1.
    assert a.ndcg == {1: 0.0, 3: pytest.approx(0.63093, abs=1e-5), 5: pytest.approx(0.63093, abs=1e-5)}

    b = score_query(B, B_DOCS, [1, 3, 5])
    assert b.ranks == {"b.md": 1, "c.md": 4} and b.first_rank == 1
    assert b.recall == {1: 0.5, 3: 0.5, 5: 1.0}
    assert b.reciprocal_rank == 1.0
    # @1: 1/1. @3: 1 / (1 + 1/log2 3) = 1/1.63093. @5: (1 + 1/log2 5) / 1.63093 = 1.43068/1.63093.
    assert b.ndcg[1] == 1.0
    assert b.ndcg[3] == pytest.approx(0.61315, abs=1e-5)
    assert b.ndcg[5] == pytest.approx(0.87722, abs=1e-5)

    c = score_query(C, C_DOCS, [1, 3, 5])
    assert c.ranks == {"z.md": None} and c.first_rank is None
    assert c.recall == {1: 0.0, 3: 0.0, 5: 0.0} and c.ndcg == {1: 0.0, 3: 0.0, 5: 0.0}
    assert c.reciprocal_rank == 0.0


def test_aggregates_are_means_over_queries_and_latency_percentiles() -> None:
    scores = [score_query(A, A_DOCS, [1, 3]), score_query(B, B_DOCS, [1, 3]), score_query(C, C_DOCS, [1, 3])]
    metrics = aggregate(scores, [1, 3], [30.0, 10.0, 20.0])
    assert list(metrics) == [
        "recall@1",
        "recall@3",
        "mrr",
        "ndcg@1",
        "ndcg@3",
        "exact_top_chunk",
        "latency_p50_ms",
        "latency_p95_ms",
    ]
    assert metrics["recall@1"] == pytest.approx(0.5 / 3)  # (0 + 0.5 + 0) / 3
    assert metrics["recall@3"] == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert metrics["mrr"] == pytest.approx(0.5)  # (0.5 + 1 + 0) / 3
    assert metrics["ndcg@1"] == pytest.approx(1 / 3)
    assert metrics["ndcg@3"] == pytest.approx((0.63093 + 0.61315) / 3, abs=1e-5)
    # Only B's top file is expected, and B names no section: 1 of 3.
    assert metrics["exact_top_chunk"] == pytest.approx(1 / 3)
    assert (metrics["latency_p50_ms"], metrics["latency_p95_ms"]) == (20.0, 30.0)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([40.0, 10.0, 30.0, 20.0], 50) == 20.0
    assert percentile([40.0, 10.0, 30.0, 20.0], 95) == 40.0
    twenty = [float(i) for i in range(1, 21)]
    assert percentile(twenty, 95) == 19.0
    assert percentile(twenty, 50) == 10.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def top(path: str, heading_path: tuple[str, ...], line_start: int) -> RankedDoc:
    return RankedDoc(path, "c", 1.0, heading_path, line_start)


def test_exact_top_chunk_for_a_json_expectation_needs_heading_path_and_line() -> None:
    expected = Expected("backups.md", heading_path=("Backups", "Restoring a table"), line_start=12)
    assert chunk_matches(expected, top("backups.md", ("Backups", " restoring  A table "), 12))
    assert not chunk_matches(expected, top("backups.md", ("Backups", "Restoring a table"), 30))
    assert not chunk_matches(expected, top("backups.md", ("Backups",), 12))
    assert not chunk_matches(expected, top("other.md", ("Backups", "Restoring a table"), 12))
    no_line = Expected("backups.md", heading_path=("Backups", "Restoring a table"))
    assert chunk_matches(no_line, top("backups.md", ("Backups", "Restoring a table"), 30))


def test_exact_top_chunk_for_a_yaml_heading_is_trimmed_caseless_and_covers_subsections() -> None:
    expected = Expected("backups.md", heading="  restoring A TABLE ")
    assert chunk_matches(expected, top("backups.md", ("Backups", "Restoring a table"), 5))
    # A chunk of a subsection lies within the expected section.
    assert chunk_matches(expected, top("backups.md", ("Backups", "Restoring a table", "Step 2"), 9))
    assert not chunk_matches(expected, top("backups.md", ("Backups", "Retention"), 20))
    by_path = Expected("backups.md", heading="backups > restoring a table")
    assert chunk_matches(by_path, top("backups.md", ("Backups", "Restoring a table", "Step 2"), 9))
    assert not chunk_matches(by_path, top("backups.md", ("Backups", "Retention"), 20))
    # No heading: the page is the unit, any chunk of it is the expected one.
    assert chunk_matches(Expected("backups.md"), top("backups.md", ("Backups", "Retention"), 20))


def test_exact_top_chunk_counts_in_scores_only_for_the_top_file() -> None:
    expected = Expected("b.md", heading="Deploy")
    query = q("D", expected)
    first = score_query(query, [top("b.md", ("Deploy",), 1), top("x.md", (), 1)], [1])
    second = score_query(query, [top("x.md", (), 1), top("b.md", ("Deploy",), 1)], [1])
    wrong_section = score_query(query, [top("b.md", ("Rollback",), 9)], [1])
    assert (first.exact_top_chunk, second.exact_top_chunk, wrong_section.exact_top_chunk) == (
        True,
        False,
        False,
    )
    assert score_query(query, [], [1]).exact_top_chunk is False


def test_ranked_docs_reads_a_ground_result_and_keeps_a_path_at_its_first_rank() -> None:
    def doc(corpus: str, path: str, chunks: list[dict[str, Any]]) -> dict[str, Any]:
        return {"corpus": corpus, "path": path, "absolute_path": "/" + path, "score": 0.5, "chunks": chunks}

    chunk = {"heading_path": ["Guide", "Setup"], "line_start": 4, "line_end": 9, "score": 0.5, "snippet": ""}
    result = {"docs": [doc("w", "guide.md", [chunk]), doc("other", "guide.md", []), doc("w", "faq.md", [])]}
    ranked = ranked_docs(result)
    assert [(d.path, d.corpus) for d in ranked] == [("guide.md", "w"), ("faq.md", "w")]
    assert (ranked[0].heading_path, ranked[0].line_start) == (("Guide", "Setup"), 4)
    assert (ranked[1].heading_path, ranked[1].line_start) == ((), None)
