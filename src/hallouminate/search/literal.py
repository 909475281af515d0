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

import collections
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
    """The query's distinct stems, each looked for at a word start (``in``/``str.find``: no regex to
    compile)."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.stems = list(dict.fromkeys(stem(term) for term in terms))

    def found(self, texts: Iterable[str]) -> tuple[bool, ...]:
        """For each stem, whether it starts a word somewhere in ``texts``."""
        haystack = "\n".join(texts).lower()
        return tuple(_word_start(haystack, s, 0) >= 0 for s in self.stems)

    def found_in_rows(self, rows: Sequence[dict[str, Any]]) -> list[tuple[bool, ...]]:
        """``found`` for each row's text, breadcrumb and path."""
        masks, _ = self.masks(rows)
        bits = [1 << j for j in range(len(self.stems))]
        return [tuple(bool(mask & bit) for bit in bits) for mask in masks]

    def masks(self, rows: Sequence[dict[str, Any]]) -> tuple[list[int], list[int]]:
        """For each row, bit ``j`` set when its text, breadcrumb or path holds stem ``j`` (as ``found``);
        and per stem, how many rows hold it.

        Every candidate row is scanned for every stem, so this is on each query's path. The tests are
        ``in`` (no call, no argument parsing, measured faster than one sweep over all rows joined): a
        stem absent is settled by one scan, one present mostly follows a space, and only the few others
        need ``_word_start``'s walk over their occurrences.
        """
        stems = [(1 << j, s, " " + s, len(s) < _WHOLE_WORD_BELOW) for j, s in enumerate(self.stems)]
        masks: list[int] = []
        for row in rows:
            # "\n".join(_haystack(row)), without a call per row. Lower-cased alone: what lower-casing
            # all rows together gives for it (case mappings look no further than the line).
            haystack = (
                f"{row.get('text') or ''}\n{' '.join(row.get('heading_path') or ())}\n{row['path']}".lower()
            )
            mask = 0
            for bit, term_stem, spaced, whole in stems:
                if whole:  # a short stem must also end the word
                    if _word_start(haystack, term_stem, 0) >= 0:
                        mask |= bit
                elif term_stem in haystack and (
                    spaced in haystack or _word_start(haystack, term_stem, 0) >= 0
                ):
                    mask |= bit
            masks.append(mask)
        # Few distinct masks: count rows by mask, then stems by mask.
        by_mask = collections.Counter(masks)
        counts = [sum(n for mask, n in by_mask.items() if mask & bit) for bit, _, _, _ in stems]
        return masks, counts

    def coverage(self, texts: Iterable[str]) -> float:
        """The share (0..1) of the query's distinct stems found at a word start in any of ``texts``."""
        if not self.stems:
            return 0.0
        return sum(self.found(texts)) / len(self.stems)


class LiteralEvidence:
    """How much of the query's wording each candidate chunk holds, words weighted by rarity among them.

    Built once per query from the candidate rows (vector and BM25 results together), each scanned once.
    ``coverage`` is the weighted share of the query's words a row holds (0..1).
    """

    def __init__(self, terms: Sequence[str], candidates: Iterable[dict[str, Any]]) -> None:
        self.matcher = TermMatcher(terms)
        # The candidates by id, the first row of each kept (ground.assemble reads its rows from here).
        self.rows: dict[str, dict[str, Any]] = {}
        unique = self.rows
        for row in candidates:
            unique.setdefault(row["id"], row)
        masks, held = self.matcher.masks(list(unique.values()))
        if WEIGHT_BY_RARITY:
            self.weights = _idf_weights(held, len(unique))
        else:
            self.weights = [1.0] * len(self.matcher.stems)
        self._total = sum(self.weights)
        self._by_mask: dict[int, float] = {}  # few distinct patterns: each summed once
        for mask in set(masks):
            self._share(mask)
        # Each candidate's share by id (read directly on the hot path; ``coverage`` for any row).
        self.shares = dict(zip(unique, map(self._by_mask.__getitem__, masks), strict=True))

    def coverage(self, row: dict[str, Any]) -> float:
        share = self.shares.get(row["id"])
        if share is None:  # not among the candidates it was built from
            share = self.shares[row["id"]] = self._share(self.matcher.masks([row])[0][0])
        return share

    def _share(self, mask: int) -> float:
        share = self._by_mask.get(mask)
        if share is None:
            # Summed in stem order, as over the found flags: the same float for the same hits.
            held = sum(w for j, w in enumerate(self.weights) if mask >> j & 1)
            share = self._by_mask[mask] = held / self._total if self._total else 0.0
        return share

    def votes(self, keyword_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The BM25 rows that hold at least ``MIN_COVERAGE`` of the query's wording, in BM25 order."""
        share = self.shares.get
        coverage = self.coverage
        # A share of 0.0 reads as missing and is looked up again (the same 0.0): cheaper than a call per row.
        return [row for row in keyword_rows if (share(row["id"]) or coverage(row)) >= MIN_COVERAGE]


def rarity_weights(found: Sequence[Sequence[bool]], stems: int) -> list[float]:
    """Each stem's weight: BM25's IDF, ``ln(1 + (n - df + 0.5) / (df + 0.5))``, over the ``n`` candidates.

    A stem no candidate holds weighs as much as the rarest stem one does: it makes every candidate a
    partial match (so a paraphrase's own words keep the gate shut), but a word the corpus may simply not
    use must not outweigh the words that are found. With no stem found, all weigh the same.
    """
    return _idf_weights([sum(1 for row in found if row[i]) for i in range(stems)], len(found))


def _idf_weights(df: Sequence[int], n: int) -> list[float]:
    """``rarity_weights`` from each stem's count of candidates holding it (``df``) among ``n``."""
    idf = [math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for d in df]
    present = [w for w, d in zip(idf, df, strict=True) if d]
    if not present:
        return [1.0] * len(df)
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
