"""A search's eligibility filter (ports.EligibilityPort) applied to rows held as Arrow tables, before ranking.

The page rules (path, frontmatter) are asked once per distinct page, not per row, and the answer is kept per
corpus until the next commit under the filter's ``page_key``; the quality floor is one vectorised compare.
The result is a boolean mask over a corpus's rows: the reader zeroes ineligible vector scores with it, turns
it into the file set tantivy may match (storage/lexical.py ``Scope``), and filters phrase scans by it. Text
rules (excluded terms, quoted phrases) are exact per chunk and asked of candidates only, in score order
(``best_passing``), so their cost grows with the candidates looked at, not with the corpus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hallouminate.ports import EligibilityPort
from hallouminate.storage import sql
from hallouminate.storage.lexical import Scope, file_key, page_number

# Masks kept per corpus until the next commit; past this many distinct filters the cache starts over.
MASKS_KEPT = 64
# BM25 names at most this many files (in or out) in its query: a term set costs ~10 us a file per query
# (measured on 100k chunks: 1,000 files 15 ms, against 4 ms unfiltered); past it the hits are checked by
# their file's number (the index's ``page`` fast field, read in bulk).
# Files in cost less (~100 files added nothing measurable; 400, 3.6 ms): up to 256 are named.
FILE_TERMS_MAX = 64
FILE_TERMS_IN_MAX = 256
# A file set larger than this goes to LanceDB as the complement (or, both large, is left to the check).
SQL_PATHS_MAX = 4096


class Pages:
    """A corpus's distinct pages (path, frontmatter JSON) and each row's page, from ``rows``' columns."""

    def __init__(self, rows: Any) -> None:
        encoded = pc.dictionary_encode(rows["path"]).combine_chunks()
        self.page_of = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        self.paths: list[str] = encoded.dictionary.to_pylist()
        if len(self.page_of):
            first = np.full(len(self.paths), -1, dtype=np.int64)
            # Each page's first row (its frontmatter is repeated on every row of the page).
            first[self.page_of[::-1]] = np.arange(len(self.page_of) - 1, -1, -1)
            fields = (
                rows["fields"].take(pa.array(first)).to_pylist() if "fields" in rows.column_names else None
            )
            # Each page's file mtime (the same on every row of the page), for changed_since.
            mtimes = (
                rows["file_mtime_ns"].take(pa.array(first)).to_numpy(zero_copy_only=False).astype(np.int64)
                if "file_mtime_ns" in rows.column_names
                else None
            )
        else:
            fields = mtimes = None
        self.fields: list[str | None] = fields if fields is not None else [None] * len(self.paths)
        self.mtimes: np.ndarray | None = mtimes
        self.masks: dict[str, np.ndarray] = {}
        self.scopes: dict[str, tuple[list[str] | None, list[str]]] = {}
        self.numbers: dict[str, frozenset[int]] = {}

    def page_mask(self, eligible: EligibilityPort) -> np.ndarray:
        """Which pages pass the page rules (cached under the rules' key)."""
        key = eligible.page_key
        mask = self.masks.get(key)
        if mask is None:
            # The path and frontmatter rules ask each page once per filter; changed_since (whose instant
            # moves with each request for a duration) is one compare over the pages' mtimes on top.
            rules_key = "rules:" + eligible.rules_key
            rules = self.masks.get(rules_key)
            if rules is None:
                rules = np.fromiter(
                    (eligible.page_passes(p, f) for p, f in zip(self.paths, self.fields, strict=True)),
                    dtype=bool,
                    count=len(self.paths),
                )
            since = eligible.changed_since_ns
            if since is None:
                mask = rules
            elif self.mtimes is None:
                mask = np.zeros(len(self.paths), dtype=bool)
            else:
                mask = rules & (self.mtimes >= since)
            if len(self.masks) >= MASKS_KEPT:
                self.masks.clear()
            self.masks[rules_key] = rules
            self.masks[key] = mask
        return mask

    def by_number(self, corpus: str, eligible: EligibilityPort) -> frozenset[int] | None:
        """The ``page_number`` of each passing page when BM25 checks its hits by number (the files are
        too many to name in its query either way: ``file_scope`` names none); None otherwise."""
        mask = self.page_mask(eligible)
        passing = int(mask.sum())
        if passing == len(mask) or passing <= FILE_TERMS_IN_MAX or len(mask) - passing <= FILE_TERMS_MAX:
            return None
        key = "numbers:" + eligible.page_key
        numbers = self.numbers.get(key)
        if numbers is None:
            numbers = frozenset(page_number(corpus, self.paths[i]) for i in np.flatnonzero(mask))
            if len(self.numbers) >= MASKS_KEPT:
                self.numbers.clear()
            self.numbers[key] = numbers
        return numbers

    def file_scope(self, corpus: str, eligible: EligibilityPort) -> tuple[list[str] | None, list[str]]:
        """(file keys in, file keys out) for tantivy, whichever is the smaller side (None in: any file);
        cached with the mask."""
        key = "files:" + eligible.page_key
        scope = self.scopes.get(key)
        if scope is None:
            mask = self.page_mask(eligible)
            passing = int(mask.sum())
            if passing == len(mask) or (passing > FILE_TERMS_IN_MAX and len(mask) - passing > FILE_TERMS_MAX):
                # Every file, or too many either way to name cheaply: the hits are checked by mask.
                scope = (None, [])
            elif passing <= FILE_TERMS_IN_MAX:
                scope = ([file_key(corpus, self.paths[i]) for i in np.flatnonzero(mask)], [])
            else:
                scope = (None, [file_key(corpus, self.paths[i]) for i in np.flatnonzero(~mask)])
            if len(self.scopes) >= MASKS_KEPT:
                self.scopes.clear()
            self.scopes[key] = scope
        return scope


def quality_mask(rows: Any, min_quality: float) -> np.ndarray | None:
    """Rows at or above ``min_quality`` (null quality passes); None when nothing can be dropped (no such
    column yet, or a floor of 0)."""
    if min_quality <= 0.0 or "quality" not in rows.column_names:
        return None
    quality = rows["quality"].to_numpy(zero_copy_only=False).astype(np.float64)  # nulls become NaN
    return np.isnan(quality) | (quality >= min_quality)  # type: ignore[no-any-return]


def row_mask(rows: Any, pages: Pages | None, eligible: EligibilityPort | None) -> np.ndarray | None:
    """Eligible rows of ``rows`` (the page rules and quality; not the text rules); None: every row."""
    if eligible is None:
        return None
    mask = None
    if eligible.filters_pages and pages is not None:
        mask = pages.page_mask(eligible)[pages.page_of]
    quality = quality_mask(rows, eligible.min_quality)
    if quality is not None:
        mask = quality if mask is None else mask & quality
    return mask


def path_mask(rows: Any, pages: Pages | None, eligible: EligibilityPort) -> np.ndarray | None:
    """As ``row_mask`` for rows that are not ``pages``' own (matched by path)."""
    mask = None
    if pages is not None:
        passing = pages.page_mask(eligible)
        allowed = pa.array([pages.paths[i] for i in np.flatnonzero(passing)], pa.string())
        mask = pc.is_in(rows["path"], value_set=allowed).to_numpy(zero_copy_only=False)
    quality = quality_mask(rows, eligible.min_quality)
    if quality is not None:
        mask = quality if mask is None else mask & quality
    return mask


def best_passing(
    scores: np.ndarray,
    limit: int,
    mask: np.ndarray | None,
    texts_pass: Callable[[np.ndarray], list[bool]] | None,
) -> np.ndarray:
    """Indices of the best ``limit`` scores among eligible entries (``mask``), those whose text passes
    (``texts_pass``, asked of candidates in score order, in growing rounds, until ``limit`` pass)."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
        eligible = int(mask.sum())
    else:
        eligible = len(scores)
    want = min(limit, eligible)
    if want <= 0:
        return np.empty(0, dtype=np.int64)
    if texts_pass is None:
        return _top(scores, want)
    chosen: list[int] = []
    examined = 0
    k = want
    while True:
        k = min(k, eligible)
        top = _top(scores, k)
        top = top[np.argsort(-scores[top], kind="stable")]
        fresh = top[examined:]
        for index, ok in zip(fresh.tolist(), texts_pass(fresh), strict=True):
            if ok:
                chosen.append(index)
                if len(chosen) == limit:
                    return np.asarray(chosen, dtype=np.int64)
        examined = k
        if k >= eligible:
            return np.asarray(chosen, dtype=np.int64)
        k *= 4


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    if k >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(-scores, k - 1)[:k]


def lexical_scope(eligible: EligibilityPort, files: dict[str, tuple[list[str] | None, list[str]]]) -> Scope:
    """tantivy's scope: each corpus's file set (``Pages.file_scope``) and the text rules."""
    return Scope(
        files=files,
        exclude=[list(g) for g in eligible.excluded_tokens],
        require=[list(tokens) for tokens in eligible.phrase_tokens],
    )


def sql_filter(
    corpus: str, pages: Pages, eligible: EligibilityPort, has_quality: bool
) -> tuple[str, np.ndarray | None]:
    """A LanceDB prefilter for one corpus (its rows, the pages passing, quality) and the page mask; where
    the file set is too large to name either way, the pages are left to the check after the search."""
    where = f"corpus = {sql.literal(corpus)}"
    mask = pages.page_mask(eligible) if eligible.filters_pages else None
    if mask is not None:
        passing = int(mask.sum())
        if passing == 0:
            return "false", mask
        if passing <= SQL_PATHS_MAX:
            where += f" AND {sql.in_list('path', [pages.paths[i] for i in np.flatnonzero(mask)])}"
        elif len(mask) - passing <= SQL_PATHS_MAX and passing < len(mask):
            where += f" AND NOT ({sql.in_list('path', [pages.paths[i] for i in np.flatnonzero(~mask)])})"
    if has_quality and eligible.min_quality > 0.0:
        where += f" AND (quality IS NULL OR quality >= {float(eligible.min_quality)!r})"
    return where, mask
