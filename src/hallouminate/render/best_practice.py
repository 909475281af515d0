"""``get_best_practice``'s text: the page (or its section) as it is, under one line naming what it is."""

from __future__ import annotations

from hallouminate.protocol.results import BestPracticeResult


def render_best_practice(result: BestPracticeResult) -> str:
    what = f"best practices for {result['target']}"
    if "category" in result:
        what += f", section {result['category']!r}"
    return f"# {what}\n\n{result['content']}"
