"""The GrooveSeek face's search mapped onto ``ground`` (search/hits.py ``plan``): GrooveSeek's bounds,
clamps and defaults, as pure functions (the searches themselves: tests/shim/test_grooveseek_face.py)."""

from __future__ import annotations

import math

import pytest

from hallouminate.errors import InvalidArgument
from hallouminate.search import hits


def test_limit_is_clamped_and_drives_the_files_and_candidates() -> None:
    assert hits.plan({"query": "q"}, 50).limit == 5  # GrooveSeek's default
    for asked, kept in ((0, 1), (7, 7), (1000, 1000), (10**9, 1000)):
        plan = hits.plan({"query": "q", "limit": asked}, 50)
        assert plan.limit == kept
        assert plan.ground["top_files"] == min(kept, 100)  # each of the best `limit` chunks may be a page
        assert plan.ground["limit"] == max(kept, 50)  # never fewer candidates than configured


def test_the_query_bound_is_in_bytes() -> None:
    hits.plan({"query": "a" * 1024}, 50)
    with pytest.raises(InvalidArgument, match="1026 bytes"):
        hits.plan({"query": "検索" * 171}, 50)  # 342 characters


def test_grooveseeks_clamps_defaults_and_renames() -> None:
    plan = hits.plan({"query": "q", "min_quality": 7, "parent_retriever": True, "mmr": True}, 50)
    assert plan.ground["min_quality"] == 1.0 and plan.ground["parent"] is True and plan.ground["mmr"] is True
    assert "parent_retriever" not in plan.ground
    assert hits.plan({"query": "q", "min_quality": -1}, 50).ground["min_quality"] == 0.0
    assert "min_quality" not in hits.plan({"query": "q", "min_quality": math.nan}, 50).ground
    assert hits.plan({"query": "q"}, 50).ground["min_confidence_ratio"] == 1.5
    assert hits.plan({"query": "q", "min_confidence_ratio": 0}, 50).ground["min_confidence_ratio"] == 0


def test_a_date_filter_that_can_match_nothing_skips_the_search() -> None:
    for dates in (
        {"date_from": "2026/01/01"},
        {"date_to": "soon"},
        {"date_from": "2026-02-01", "date_to": "2026-01-01"},
    ):
        plan = hits.plan({"query": "q", **dates}, 50)
        assert plan.nothing == dates
        assert hits.nothing(plan) == {"results": [], "low_confidence": True, "filter_applied": dates}
    assert hits.plan({"query": "q", "date_from": "2026-01-01"}, 50).nothing is None
