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
import functools
import math
import operator
from collections.abc import Iterable, Sequence

from hallouminate.analysis import TokenFinder
from hallouminate.ports import ChunkRow

# A BM25 hit votes when its chunk holds at least this share of the query's (rarity-weighted) wording.
MIN_COVERAGE = 0.5
# Off: every distinct word weighs the same (the gate of ADR 0012); bench/eval_ranking.py --plain-gate.
WEIGHT_BY_RARITY = True


class TermMatcher:
    """The query's terms (``analysis.query_terms``), looked for in chunk rows: a row holds a term when
    analysing its text, breadcrumb or path gives one of its tokens (the analyser of BM25; ADR 0019)."""

    def __init__(self, terms: Sequence[str]) -> None:
        self._finder = TokenFinder(terms)
        self.terms = self._finder.terms

    def found(self, texts: Iterable[str]) -> tuple[bool, ...]:
        """For each term, whether any of ``texts`` holds it."""
        mask = self._finder.held("\n".join(texts))
        return tuple(bool(mask >> j & 1) for j in range(len(self.terms)))

    def found_in_rows(self, rows: Sequence[ChunkRow]) -> list[tuple[bool, ...]]:
        """``found`` for each row's text, breadcrumb and path."""
        masks, _ = self.masks(rows)
        bits = [1 << j for j in range(len(self.terms))]
        return [tuple(bool(mask & bit) for bit in bits) for mask in masks]

    def masks(self, rows: Sequence[ChunkRow]) -> tuple[list[int], list[int]]:
        """For each row, bit ``j`` set when its text, breadcrumb or path holds term ``j`` (as ``found``);
        and per term, how many rows hold it. Every candidate row is scanned, so this is on each query's
        path: ``TokenFinder.held`` screens with ``in`` before it reads any word."""
        held = self._finder.held
        # "\n".join(_haystack(row)), without a call per row.
        masks = [
            held(f"{row.get('text') or ''}\n{' '.join(row.get('heading_path') or ())}\n{row['path']}")
            for row in rows
        ]
        # Few distinct masks: count rows by mask, then terms by mask.
        by_mask = collections.Counter(masks)
        counts = [sum(n for mask, n in by_mask.items() if mask >> j & 1) for j in range(len(self.terms))]
        return masks, counts

    def coverage(self, texts: Iterable[str]) -> float:
        """The share (0..1) of the query's terms any of ``texts`` holds."""
        if not self.terms:
            return 0.0
        return sum(self.found(texts)) / len(self.terms)


class LiteralEvidence:
    """How much of the query's wording each candidate chunk holds, words weighted by rarity among them.

    Built once per query from the candidate rows (vector and BM25 results together), each scanned once.
    ``coverage`` is the weighted share of the query's words a row holds (0..1).
    """

    def __init__(self, terms: Sequence[str], candidates: Iterable[ChunkRow]) -> None:
        self.matcher = TermMatcher(terms)
        # The candidates by id, the first row of each kept (ground.assemble reads its rows from here).
        self.rows: dict[str, ChunkRow] = {}
        unique = self.rows
        for row in candidates:
            unique.setdefault(row["id"], row)
        masks, held = self.matcher.masks(list(unique.values()))
        # Bit ``j`` set when any candidate holds term ``j`` (search/confidence.py's ``terms_found``).
        self.found = functools.reduce(operator.or_, set(masks), 0)
        if WEIGHT_BY_RARITY:
            self.weights = _idf_weights(held, len(unique))
        else:
            self.weights = [1.0] * len(self.matcher.terms)
        self._total = sum(self.weights)
        self._by_mask: dict[int, float] = {}  # few distinct patterns: each summed once
        for mask in set(masks):
            self._share(mask)
        # Each candidate's share by id (read directly on the hot path; ``coverage`` for any row).
        self.shares = dict(zip(unique, map(self._by_mask.__getitem__, masks), strict=True))

    def coverage(self, row: ChunkRow) -> float:
        share = self.shares.get(row["id"])
        if share is None:  # not among the candidates it was built from
            share = self.shares[row["id"]] = self._share(self.matcher.masks([row])[0][0])
        return share

    def _share(self, mask: int) -> float:
        share = self._by_mask.get(mask)
        if share is None:
            # Summed in term order, as over the found flags: the same float for the same hits.
            held = sum(w for j, w in enumerate(self.weights) if mask >> j & 1)
            share = self._by_mask[mask] = held / self._total if self._total else 0.0
        return share

    def votes(self, keyword_rows: list[ChunkRow]) -> list[ChunkRow]:
        """The BM25 rows that hold at least ``MIN_COVERAGE`` of the query's wording, in BM25 order."""
        share = self.shares.get
        coverage = self.coverage
        # A share of 0.0 reads as missing and is looked up again (the same 0.0): cheaper than a call per row.
        return [row for row in keyword_rows if (share(row["id"]) or coverage(row)) >= MIN_COVERAGE]


def rarity_weights(found: Sequence[Sequence[bool]], terms: int) -> list[float]:
    """Each term's weight: BM25's IDF, ``ln(1 + (n - df + 0.5) / (df + 0.5))``, over the ``n`` candidates.

    A term no candidate holds weighs as much as the rarest term one does: it makes every candidate a
    partial match (so a paraphrase's own words keep the gate shut), but a word the corpus may simply not
    use must not outweigh the words that are found. With no term found, all weigh the same.
    """
    return _idf_weights([sum(1 for row in found if row[i]) for i in range(terms)], len(found))


def _idf_weights(df: Sequence[int], n: int) -> list[float]:
    """``rarity_weights`` from each term's count of candidates holding it (``df``) among ``n``."""
    idf = [math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for d in df]
    present = [w for w, d in zip(idf, df, strict=True) if d]
    if not present:
        return [1.0] * len(df)
    rarest = max(present)
    return [w if d else rarest for w, d in zip(idf, df, strict=True)]


def _haystack(row: ChunkRow) -> tuple[str, str, str]:
    """What a stored chunk row says about itself: its text, heading breadcrumb and file path."""
    return row.get("text") or "", " ".join(row.get("heading_path") or []), row["path"]


def chunk_coverage(matcher: TermMatcher, row: ChunkRow) -> float:
    """The unweighted share of the query's words a stored chunk row holds (text, breadcrumb, file path)."""
    return matcher.coverage(_haystack(row))


def lexical_votes(
    terms: Sequence[str],
    keyword_rows: list[ChunkRow],
    candidates: Iterable[ChunkRow] | None = None,
) -> list[ChunkRow]:
    """The BM25 rows holding at least ``MIN_COVERAGE`` of the query's wording, words weighted by rarity
    among ``candidates`` (default: the BM25 rows themselves), in BM25 order."""
    if not terms or not keyword_rows:
        return []
    return LiteralEvidence(terms, keyword_rows if candidates is None else candidates).votes(keyword_rows)
