"""The literal signal: how much of a query's wording a chunk holds verbatim (domain; pure).

BM25 ranks every chunk that shares any query word, so on a paraphrased question its first places go to
chunks sharing one or two incidental words ("shop", "days") and reciprocal rank fusion rewards them as
much as a true keyword hit. Measured on our evaluation set, genuine keyword matches hold at least two thirds
of the query's content words and incidental ones under half. So a BM25 hit votes in the fusion only when
its chunk covers at least half of the query's content words, counted over its text, heading breadcrumb
and file path (a chunk cut from the middle of a section does not repeat its heading, yet is about it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hallouminate.search.terms import stem

# A BM25 hit votes when its chunk holds at least this share of the query's distinct content words.
MIN_COVERAGE = 0.5
# Stems this short match only whole words: a lone "b" or "go" would otherwise match any word it starts.
_WHOLE_WORD_BELOW = 3


class TermMatcher:
    """The query's distinct stems, each looked for at a word start (``str.find``: no regex to compile)."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.stems = list(dict.fromkeys(stem(term) for term in terms))

    def coverage(self, texts: Iterable[str]) -> float:
        """The share (0..1) of the query's distinct stems found at a word start in any of ``texts``."""
        if not self.stems:
            return 0.0
        haystack = "\n".join(texts).lower()
        return sum(_occurs(haystack, s) for s in self.stems) / len(self.stems)

    def covers(self, texts: Iterable[str], share: float) -> bool:
        """``coverage(texts) >= share``, stopping as soon as the answer is known."""
        if not self.stems:
            return False
        haystack = "\n".join(texts).lower()
        need = share * len(self.stems)
        found = 0
        for index, term_stem in enumerate(self.stems):
            if _occurs(haystack, term_stem):
                found += 1
                if found >= need:
                    return True
            elif found + len(self.stems) - index - 1 < need:  # even if all the rest matched: too few
                return False
        return found >= need


def _occurs(haystack: str, term_stem: str) -> bool:
    """``term_stem`` starts a word somewhere in ``haystack`` (and ends it, for very short stems)."""
    whole = len(term_stem) < _WHOLE_WORD_BELOW
    at = haystack.find(term_stem)
    while at >= 0:
        end = at + len(term_stem)
        if (at == 0 or not _word_char(haystack[at - 1])) and (
            not whole or end == len(haystack) or not _word_char(haystack[end])
        ):
            return True
        at = haystack.find(term_stem, at + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _haystack(row: dict[str, Any]) -> tuple[str, str, str]:
    """What a stored chunk row says about itself: its text, heading breadcrumb and file path."""
    return row.get("text") or "", " ".join(row.get("heading_path") or []), row["path"]


def chunk_coverage(matcher: TermMatcher, row: dict[str, Any]) -> float:
    """The share of the query's words a stored chunk row holds (text, breadcrumb, file path)."""
    return matcher.coverage(_haystack(row))


def lexical_votes(terms: Sequence[str], keyword_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The BM25 rows that hold at least ``MIN_COVERAGE`` of the query's words, in BM25 order."""
    if not terms or not keyword_rows:
        return []
    matcher = TermMatcher(terms)
    return [row for row in keyword_rows if matcher.covers(_haystack(row), MIN_COVERAGE)]
