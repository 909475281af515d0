"""Phrase scans over rows held as Arrow tables: one RE2 regex filters the text and counts occurrences.

The reader (reader.py) hands these functions the rows it keeps in memory between commits; search/phrase.py
turns the matches into a result. Counting runs in C++: Python's case-insensitive ``re`` took ~120 ms for
3,400 rows of 1 kB.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hallouminate.ports import ChunkRow
from hallouminate.storage.schema import RESULT_COLUMNS, plain

# What a phrase scan needs of a row: the result columns but the frontmatter and bookkeeping, plus the
# ordinal (a chunk's predecessor holds the text it may repeat).
SCAN_COLUMNS = [
    *(c for c in RESULT_COLUMNS if c not in ("fields", "content_hash", "indexed_at_ms")),
    "ordinal",
]
# Enough of each matching row to count and order occurrences; the rest is read for the rows shown.
LIGHT_COLUMNS = ["corpus", "path", "ordinal", "page", "line_start", "line_end"]


def sort_scan_rows(rows: Any) -> Any:
    """A corpus's rows in scan order (path, ordinal)."""
    return rows.sort_by([("path", "ascending"), ("ordinal", "ascending")])


class PhraseMatches:
    """The rows matching a phrase, in scan order (corpus, path, ordinal): satisfies ports.PhraseMatchesPort.

    ``rows`` holds the light columns and ``occurrences`` (non-overlapping matches in the row's text,
    counted by RE2); ``texts`` and ``full_rows`` read more of chosen rows, ``count`` counts in any text.
    """

    def __init__(self, table: Any, pattern: str, more: bool) -> None:
        self._table = table
        self._pattern = pattern
        self.more = more
        found = pc.count_substring_regex(table["text"], pattern=pattern, ignore_case=True)
        self.rows: list[ChunkRow] = (
            plain(table.select(LIGHT_COLUMNS)).append_column("occurrences", found).to_pylist()
        )

    def texts(self, indices: list[int]) -> list[str]:
        if not indices:
            return []
        return [text or "" for text in self._table["text"].take(_indices(indices)).to_pylist()]

    def full_rows(self, indices: list[int], columns: list[str] | None = None) -> list[ChunkRow]:
        if not indices:
            return []
        table = self._table if columns is None else self._table.select(columns)
        rows: list[ChunkRow] = plain(table.take(_indices(indices))).to_pylist()
        return rows

    def count(self, texts: list[str]) -> list[int]:
        """Occurrences of the phrase in each of ``texts``, by the same rules as ``occurrences``."""
        if not texts:
            return []
        found = pc.count_substring_regex(
            pa.array(texts, pa.string()), pattern=self._pattern, ignore_case=True
        )
        return [int(n) for n in found.to_pylist()]


def _indices(indices: list[int]) -> Any:
    return pa.array(indices, pa.int64())  # typed: an empty list would otherwise be of null type


def matching(table: Any, pattern: str, mask: Any = None) -> Any:
    """The rows of ``table`` whose ``text`` matches ``pattern`` (and ``mask`` lets through, when given):
    only those are copied (a held corpus filtered first was copied whole, ~80 MB at 100k rows, per scan)."""
    found = pc.match_substring_regex(table["text"], pattern=pattern, ignore_case=True)
    if mask is not None:
        found = pc.and_(found, pa.array(mask))
    return table.filter(found)


def match_rows(
    tables: list[Any], pattern: str, max_rows: int, more: bool = False, masks: list[Any] | None = None
) -> PhraseMatches:
    """The rows of ``tables`` (in order) whose ``text`` matches ``pattern``, among those ``masks`` (one per
    table, None: every row) let through: at most ``max_rows``. ``more``: the caller left out matching rows
    already (PhraseMatches.more)."""
    parts = []
    kept = 0
    for i, table in enumerate(tables):
        if table.num_rows == 0:
            continue
        matched = matching(table, pattern, masks[i] if masks is not None else None)
        if kept + matched.num_rows > max_rows:
            parts.append(matched.slice(0, max_rows - kept))
            more = True
            break
        parts.append(matched)
        kept += matched.num_rows
    if not parts:
        return PhraseMatches(
            pa.table({name: pa.array([], pa.string()) for name in ["text", *LIGHT_COLUMNS]}), pattern, more
        )
    return PhraseMatches(pa.concat_tables(parts), pattern, more)
