"""search/parent.py's expansion against the rule written out with exact counts: whole page when the
chunk has under 100 tokens and the page at most 2,000; else siblings under the same heading, one a side
per round, nearest first, while the run stays within 2,000. The module counts only where a bound
(words <= tokens <= characters outside whitespace) cannot decide: its decisions must be the same."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hallouminate.search import parent


def _exact(at: int, page: list[dict[str, Any]], count: Any) -> tuple[Any, ...]:
    cost = [count(row["text"]) for row in page]
    if cost[at] < 100 and sum(cost) <= 2000:
        return ("whole_document", len(page))
    heading = page[at]["heading_path"]
    low = high = at
    budget = 2000 - cost[at]
    grew = True
    while grew:
        grew = False
        for i in (low - 1, high + 1):
            if 0 <= i < len(page) and page[i]["heading_path"] == heading and cost[i] <= budget:
                budget -= cost[i]
                low, high = min(low, i), max(high, i)
                grew = True
    return ("adjacent", low, high)


def _count(text: str) -> int:
    """A stand-in tokenizer between the bounds: words, plus some of the letters past one a word."""
    words, letters = len(text.split()), len(text.replace(" ", ""))
    return words + (letters - words) * (len(text) % 5) // 8


@pytest.mark.parametrize("seed", range(10))
def test_expansion_is_the_exact_counts_rule(seed: int) -> None:
    rng = random.Random(seed)
    for trial in range(100):
        page = [
            {
                "id": f"{seed}-{trial}-{i}",
                "ordinal": i,
                "content_hash": "h",
                "heading_path": [str(rng.randint(0, 2))],
                "line_start": 3 * i + 1,
                "line_end": 3 * i + 2,
                "text": " ".join("x" * rng.randint(1, 6) for _ in range(rng.choice([5, 30, 90, 200, 400]))),
            }
            for i in range(rng.randint(1, 25))
        ]
        at = rng.randrange(len(page))
        grown = parent.expand(page[at], page, _count)  # type: ignore[arg-type]
        assert grown is not None
        rows, how = grown
        got = (
            ("whole_document", how["total_chunks"])
            if how["kind"] == "whole_document"
            else ("adjacent", how["from_index"], how["to_index"])
        )
        assert got == _exact(at, page, _count)
        assert [row["ordinal"] for row in rows] == list(range(rows[0]["ordinal"], rows[-1]["ordinal"] + 1))
        assert sum(_count(row["text"]) for row in rows) <= 2000
