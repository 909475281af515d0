"""The literal signal: how much of a query's wording a chunk holds verbatim (domain; pure).

BM25 ranks every chunk that shares any query word, so on a paraphrased question its first places go to
chunks sharing one or two incidental words ("shop", "days") and reciprocal rank fusion rewards them as
much as a true keyword hit. So a BM25 hit votes in the fusion only when its chunk holds at least half of
the query's wording, counted over its text, heading breadcrumb and file path (a chunk cut from the middle
of a section does not repeat its heading, yet is about it). ADR 0012.

Words are weighted by how rare they are among the candidates, the rows both searches returned for this
query (an IDF over at most ``2 * limit`` rows: no corpus-wide statistics, no extra search). A word every
candidate holds ("page", "service" in a wiki of look-alike pages) says little about which one is meant;
a word one candidate holds says a lot. Unweighted, a block of look-alike pages holding the common half of
a query outvoted the one page holding its rare word. ADR 0016.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from typing import Any

from hallouminate.search.terms import stem

# A BM25 hit votes when its chunk holds at least this share of the query's (rarity-weighted) wording.
MIN_COVERAGE = 0.5
# Off: every distinct word weighs the same (the gate of ADR 0012); bench/eval_ranking.py --plain-gate.
WEIGHT_BY_RARITY = True
# Stems this short match only whole words: a lone "b" or "go" would otherwise match any word it starts.
_WHOLE_WORD_BELOW = 3


class TermMatcher:
    """The query's distinct stems, each looked for at a word start (``str.find``: no regex to compile)."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.stems = list(dict.fromkeys(stem(term) for term in terms))

    def found(self, texts: Iterable[str]) -> tuple[bool, ...]:
        """For each stem, whether it starts a word somewhere in ``texts``."""
        haystack = "\n".join(texts).lower()
        return tuple(_word_start(haystack, s, 0) >= 0 for s in self.stems)

    def found_in_rows(self, rows: Sequence[dict[str, Any]]) -> list[tuple[bool, ...]]:
        """``found`` for each row's text, breadcrumb and path, in one pass per stem over them all.

        Every candidate row is scanned, so this is on each query's path: one ``str.find`` sweep per stem
        over the joined rows costs about half as much as a ``find`` per stem and row.
        """
        parts = ["\n".join(_haystack(row)) for row in rows]
        joined = "\0".join(parts)  # not a word character: a row's end is a word boundary
        lowered = joined.lower()
        if len(lowered) != len(joined):  # a few characters lower-case to two: lower each row alone
            parts = [part.lower() for part in parts]
            lowered = "\0".join(parts)
        starts: list[int] = []
        offset = 0
        for part in parts:
            starts.append(offset)
            offset += len(part) + 1
        hits = [[False] * len(self.stems) for _ in parts]
        for j, term_stem in enumerate(self.stems):
            at = _word_start(lowered, term_stem, 0)
            while at >= 0:
                row = bisect.bisect_right(starts, at) - 1
                hits[row][j] = True
                after = row + 1  # this row holds it: look on from the next one
                at = _word_start(lowered, term_stem, starts[after]) if after < len(starts) else -1
        return [tuple(h) for h in hits]

    def coverage(self, texts: Iterable[str]) -> float:
        """The share (0..1) of the query's distinct stems found at a word start in any of ``texts``."""
        if not self.stems:
            return 0.0
        return sum(self.found(texts)) / len(self.stems)


class LiteralEvidence:
    """How much of the query's wording each candidate chunk holds, words weighted by rarity among them.

    Built once per query from the candidate rows (vector and BM25 results together), scanned together
    once. ``coverage`` is the weighted share of the query's words a row holds (0..1).
    """

    def __init__(self, terms: Sequence[str], candidates: Iterable[dict[str, Any]]) -> None:
        self.matcher = TermMatcher(terms)
        unique: dict[str, dict[str, Any]] = {}
        for row in candidates:
            unique.setdefault(row["id"], row)
        found = self.matcher.found_in_rows(list(unique.values()))
        if WEIGHT_BY_RARITY:
            self.weights = rarity_weights(found, len(self.matcher.stems))
        else:
            self.weights = [1.0] * len(self.matcher.stems)
        self._total = sum(self.weights)
        self._shares: dict[tuple[bool, ...], float] = {}  # few distinct patterns: each summed once
        self._coverage = {key: self._share(hits) for key, hits in zip(unique, found, strict=True)}

    def coverage(self, row: dict[str, Any]) -> float:
        share = self._coverage.get(row["id"])
        if share is None:  # not among the candidates it was built from
            share = self._coverage[row["id"]] = self._share(self.matcher.found(_haystack(row)))
        return share

    def _share(self, hits: tuple[bool, ...]) -> float:
        share = self._shares.get(hits)
        if share is None:
            held = sum(w for w, hit in zip(self.weights, hits, strict=True) if hit)
            share = self._shares[hits] = held / self._total if self._total else 0.0
        return share

    def votes(self, keyword_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The BM25 rows that hold at least ``MIN_COVERAGE`` of the query's wording, in BM25 order."""
        return [row for row in keyword_rows if self.coverage(row) >= MIN_COVERAGE]


def rarity_weights(found: Sequence[Sequence[bool]], stems: int) -> list[float]:
    """Each stem's weight: BM25's IDF, ``ln(1 + (n - df + 0.5) / (df + 0.5))``, over the ``n`` candidates.

    A stem no candidate holds weighs as much as the rarest stem one does: it makes every candidate a
    partial match (so a paraphrase's own words keep the gate shut), but a word the corpus may simply not
    use must not outweigh the words that are found. With no stem found, all weigh the same.
    """
    n = len(found)
    df = [sum(1 for row in found if row[i]) for i in range(stems)]
    idf = [math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for d in df]
    present = [w for w, d in zip(idf, df, strict=True) if d]
    if not present:
        return [1.0] * stems
    rarest = max(present)
    return [w if d else rarest for w, d in zip(idf, df, strict=True)]


def _word_start(haystack: str, term_stem: str, start: int) -> int:
    """Where ``term_stem`` first starts a word in ``haystack`` from ``start`` (and ends it, for very short
    stems), or -1."""
    whole = len(term_stem) < _WHOLE_WORD_BELOW
    at = haystack.find(term_stem, start)
    while at >= 0:
        end = at + len(term_stem)
        if (at == 0 or not _word_char(haystack[at - 1])) and (
            not whole or end == len(haystack) or not _word_char(haystack[end])
        ):
            return at
        at = haystack.find(term_stem, at + 1)
    return -1


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _haystack(row: dict[str, Any]) -> tuple[str, str, str]:
    """What a stored chunk row says about itself: its text, heading breadcrumb and file path."""
    return row.get("text") or "", " ".join(row.get("heading_path") or []), row["path"]


def chunk_coverage(matcher: TermMatcher, row: dict[str, Any]) -> float:
    """The unweighted share of the query's words a stored chunk row holds (text, breadcrumb, file path)."""
    return matcher.coverage(_haystack(row))


def lexical_votes(
    terms: Sequence[str],
    keyword_rows: list[dict[str, Any]],
    candidates: Iterable[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The BM25 rows holding at least ``MIN_COVERAGE`` of the query's wording, words weighted by rarity
    among ``candidates`` (default: the BM25 rows themselves), in BM25 order."""
    if not terms or not keyword_rows:
        return []
    return LiteralEvidence(terms, keyword_rows if candidates is None else candidates).votes(keyword_rows)
