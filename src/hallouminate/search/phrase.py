"""``match: "phrase"``: bounded, case-insensitive literal lookup of the whole query in chunk bodies.

No BM25, no vectors (the query is not embedded), no reranker. The query matches as a substring of a
chunk's ``text`` (never its breadcrumb or its file's summary): every character literally (stop words,
punctuation, quotes, ``%``, ``_``), letters without regard to case, and each run of whitespace (line
break, tab, repeated spaces, non-breaking space, ...) in the query or the text as one space. Leading and
trailing whitespace of the query is ignored.

The scan (storage/phrase_scan.py, through the reader): the daemon keeps each corpus's rows in memory
between commits and one RE2 regex filters their text and counts the occurrences of each matching row, in
C++. Rows are scanned by corpus, path and chunk order; the scan stops at ``SCAN_CAP`` occurrences.

Text, JSON and PDF chunks repeat the end of the previous chunk (indexing/overlap.py): an occurrence that
lies wholly in that repeated head counts once, in the earlier chunk. Markdown chunks do not overlap.

A chunk's score is its occurrence count; a file's score is the sum over its chunks in the pool.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hallouminate.analysis import phrase_runs
from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidArgument
from hallouminate.ports import ChunkRow, PhraseMatchesPort, ReaderPort
from hallouminate.protocol import limits
from hallouminate.protocol.results import (
    ChunkedDoc,
    CountsDoc,
    GroundChunk,
    GroundDoc,
    GroundResult,
    GroundWarning,
)
from hallouminate.sandbox.formats import Format, file_format, is_markdown
from hallouminate.search.assembly import (
    FileEntry,
    check_params,
    corpus_keys,
    cut,
    empty_keys,
    is_stale,
    not_indexed,
    rank_files,
)
from hallouminate.search.footnotes import view
from hallouminate.search.grouping import group_pages, page_of
from hallouminate.search.modes import Mode
from hallouminate.search.snippet import lead_in, window, without_leading_headings

# The published bounds (protocol/limits.py).
PHRASE_MAX_CHARS = limits.PHRASE_CHARS.high
SCAN_CAP = limits.SCAN_CAP
COUNTS_MAX_FILES = limits.COUNTS_MAX_FILES


@functools.lru_cache(maxsize=4096)  # asked for each pair of consecutive matching chunks of a file
def _overlaps(path: str) -> bool:
    """Whether the indexer cuts ``path`` into chunks that repeat the end of the previous one: every
    format but Markdown (indexing/overlap.py)."""
    return not is_markdown(path)


# Exactly the characters ``str.isspace`` accepts, written for RE2 (whose ``\s`` is ASCII only): ASCII
# whitespace, the separators \x1c-\x1f, NEL, and every Unicode separator (\p{Z}: NBSP, U+2028, ...).
_RE2_SPACE = r"[\t\n\x{0b}\f\r \x{1c}-\x{1f}\x{85}\p{Z}]+"
# What a shown file needs of its rows beyond the light columns.
_FILE_COLUMNS = ["abs_path", "summary", "keywords", "file_size", "file_mtime_ns"]

# Phrase mode's file entry: its hits as (occurrences, row index in the scan). Its score is their sum.
PhraseFile = FileEntry[tuple[int, int]]


@dataclass(frozen=True)
class Phrase:
    """A checked phrase query: the RE2 pattern that scans and counts, and an ``re`` one for snippets."""

    re2: str
    pattern: re.Pattern[str]
    # Runs of index tokens every matching text holds (analysis.phrase_runs): a scan may read only their rows.
    runs: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def parse(cls, query: Any) -> Phrase:
        if not isinstance(query, str) or not query.strip():
            raise InvalidArgument(
                f"query must hold 1 to {PHRASE_MAX_CHARS} characters, not only whitespace, in phrase mode",
                {"param": "query", "min": 1, "max": PHRASE_MAX_CHARS},
            )
        if len(query) > PHRASE_MAX_CHARS:
            raise InvalidArgument(
                f"query is {len(query)} characters; phrase mode takes 1 to {PHRASE_MAX_CHARS}: "
                "search for the most distinctive part of the phrase",
                {"param": "query", "min": 1, "max": PHRASE_MAX_CHARS},
            )
        words = query.split()
        return cls(
            _RE2_SPACE.join(_re2_literal(w) for w in words),
            re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE),
            tuple(phrase_runs(words)),
        )


def _re2_literal(word: str) -> str:
    out = []
    for ch in word:
        if ch.isascii() and not ch.isalnum():
            # RE2 takes any escaped ASCII punctuation as itself; control characters go by code.
            out.append("\\" + ch if ch.isprintable() else f"\\x{{{ord(ch):02x}}}")
        else:
            out.append(ch)
    return "".join(out)


@dataclass
class Scan:
    """The chunks holding the phrase (occurrences, row index), in scan order."""

    matches: PhraseMatchesPort
    hits: list[tuple[int, int]]
    occurrences: int
    capped: bool


def count(matches: PhraseMatchesPort, cap: int = SCAN_CAP, footnotes: str = "include") -> Scan:
    """Each matching row's own occurrences, in scan order, stopping after ``cap`` in all."""
    rows = matches.rows
    found = [int(row["occurrences"]) for row in rows]
    _drop_repeated(matches, found)
    _drop_repeated_headers(matches, found)
    if footnotes != "include":
        # Recount in the part of each matching chunk that ``footnotes`` reads (body or definitions).
        matched = [i for i, n in enumerate(found) if n > 0]
        views = [view(text, footnotes) for text in matches.texts(matched)]
        for i, n in zip(matched, matches.count(views), strict=True):
            found[i] = min(found[i], n)
    hits: list[tuple[int, int]] = []
    total = 0
    over = False
    for index, n in enumerate(found):
        if n <= 0:
            continue
        if total + n > cap:
            n, over = cap - total, True
        if n:
            hits.append((n, index))
            total += n
        if over:
            break
    return Scan(matches, hits, total, over or matches.more)


def _drop_repeated(matches: PhraseMatchesPort, found: list[int]) -> None:
    """Take off each row the occurrences lying wholly in the text it repeats from its predecessor.

    Only a predecessor that itself matched can hold a whole occurrence in its repeated end, and it comes
    just before in scan order.
    """
    rows = matches.rows
    pairs = [i for i in range(1, len(rows)) if _continues(rows[i - 1], rows[i])]
    if not pairs:
        return
    need = sorted({j for i in pairs for j in (i - 1, i)})
    texts = dict(zip(need, matches.texts(need), strict=True))
    heads: list[str] = []
    owners: list[int] = []
    for i in pairs:
        length = repeated_length(texts[i - 1], texts[i], rows[i - 1]["line_end"], rows[i]["line_start"])
        if length:
            heads.append(texts[i][:length])
            owners.append(i)
    # The pattern is literal words joined by whitespace runs, so the matches found in a head are exactly
    # the matches of the whole text that end inside it.
    for i, n in zip(owners, matches.count(heads), strict=True):
        found[i] -= n


# Formats whose chunks repeat a header line above their own lines (indexing/sheets.py): a sheet's header
# row leads every later chunk of rows.
_HEADER_REPEATING: frozenset[Format] = frozenset(("xlsx", "ods", "csv", "tsv"))


def _drop_repeated_headers(matches: PhraseMatchesPort, found: list[int]) -> None:
    """Take off each row of a sheet the occurrences in the header line it repeats.

    Such a chunk's text holds one line more than its line range (the header, then its rows); the chunk
    that holds the header row itself has no extra line, so the header's occurrences count there, once.
    """
    rows = matches.rows
    sheets = [
        i for i, row in enumerate(rows) if found[i] > 0 and file_format(row["path"]) in _HEADER_REPEATING
    ]
    if not sheets:
        return
    heads: list[str] = []
    owners: list[int] = []
    for i, text in zip(sheets, matches.texts(sheets), strict=True):
        span = rows[i]["line_end"] - rows[i]["line_start"] + 1
        if "\n" in text and text.count("\n") + 1 > span:
            heads.append(text[: text.index("\n")])
            owners.append(i)
    for i, n in zip(owners, matches.count(heads), strict=True):
        found[i] -= n


def _continues(previous: ChunkRow, row: ChunkRow) -> bool:
    return (
        previous["corpus"] == row["corpus"]
        and previous["path"] == row["path"]
        and previous["ordinal"] == row["ordinal"] - 1
        and previous.get("page") == row.get("page")
        and _overlaps(row["path"])
    )


def repeated_length(before: str, after: str, before_line_end: int, after_line_start: int) -> int:
    """The length of the longest head of ``after`` that is also the tail of ``before``.

    Both are verbatim slices of one source, so a real repeat also spans exactly the lines the two chunks
    share (``before_line_end - after_line_start`` line breaks): that check rejects coincidences.
    """
    shared_breaks = before_line_end - after_line_start
    if shared_breaks < 0 or not before or not after:
        return 0
    i = before.find(after[0], max(0, len(before) - len(after)))
    while i != -1:
        tail = before[i:]
        if after.startswith(tail) and tail.count("\n") == shared_breaks:
            return len(tail)
        i = before.find(after[0], i + 1)
    return 0


# -- the whole request ------------------------------------------------------------------------------
async def ground_phrase(
    reader: ReaderPort, corpora: Sequence[CorpusSpec], query: str, mode: Mode, **params: Any
) -> GroundResult:
    """Phrase mode: the scan from the reader's in-memory rows (``ground`` with ``match: "phrase"``)."""
    started = time.perf_counter()
    eligible = params.pop("eligible", None)  # the filters (search/filters.py), applied in the scan
    phrase, keys, display, priority = _prepare(corpora, query, params)
    found = await reader.phrase_rows(keys, phrase.re2, SCAN_CAP + 1, eligible, phrase.runs)
    scan = count(found, footnotes=mode.footnotes)
    empty = await empty_keys(reader, keys)
    return _assemble(query, phrase, scan, mode, keys, display, priority, empty, started, params)


def _prepare(
    corpora: Sequence[CorpusSpec], query: str, params: dict[str, Any]
) -> tuple[Phrase, list[str], dict[str, str], str | None]:
    phrase = Phrase.parse(query)
    check_params(
        query,
        corpora,
        top_files=params["top_files"],
        chunks_per_file=params["chunks_per_file"],
        limit=params["limit"],
        snippet_chars=params["snippet_chars"],
    )
    keys, display, priority = corpus_keys(corpora, params["priority_corpus"])
    return phrase, keys, display, priority


def _assemble(
    query: str,
    phrase: Phrase,
    scan: Scan,
    mode: Mode,
    keys: list[str],
    display: dict[str, str],
    priority: str | None,
    empty: list[str],
    started: float,
    params: dict[str, Any],
) -> GroundResult:
    cuts: list[tuple[str, str]] = []
    warnings = not_indexed([display[key] for key in empty])
    docs: list[GroundDoc]
    if mode.counts:
        docs = _counts(scan, priority, warnings)
    else:
        reserve = priority if priority in keys and len(keys) > 1 else None
        docs = _ranked_docs(scan, phrase, mode, priority, reserve, params, cuts)
    if scan.capped:
        cuts.append(
            (
                "scan_cap",
                f"the scan stopped at the {SCAN_CAP:,}-match cap (chunks and files after the first "
                f"{scan.occurrences:,} occurrences were not read)",
            )
        )
    if cuts:
        warnings.append(
            {
                "code": "phrase-truncated",
                "message": "the phrase results are incomplete: "
                + "; ".join(text for _, text in cuts)
                + ". Do not conclude absence or uniqueness from them: raise that bound, pin a corpus or "
                "lengthen the phrase.",
                "bounds": [name for name, _ in cuts],
            }
        )
    for doc in docs:
        doc["corpus"] = display.get(doc["corpus"], doc["corpus"])
        if "chunks" in doc:
            for chunk in doc["chunks"]:
                chunk["corpus"] = doc["corpus"]
    return {
        "query": query,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
        "stats": {"hits": len(scan.hits), "occurrences": scan.occurrences},
        "docs": docs,
        "warnings": warnings,
        # A literal match is the whole evidence: confident whenever the phrase was found; an empty
        # result says "no matches" itself, so no weak-match warning (ADR 0025).
        "low_confidence": not docs,
    }


def _files(scan: Scan, hits: list[tuple[int, int]]) -> list[PhraseFile]:
    """Hits rolled up per file; the file's own fields are filled in by ``_fill`` once it is shown."""
    rows = scan.matches.rows
    files: dict[tuple[str, str], PhraseFile] = {}
    for found, index in hits:
        row = rows[index]
        key = (row["corpus"], row["path"])
        entry = files.get(key)
        if entry is None:
            entry = files[key] = FileEntry(row["corpus"], row["path"], 0)
        entry.chunks.append((found, index))
        entry.score += found
    return list(files.values())


def _fill(scan: Scan, entries: list[PhraseFile]) -> None:
    full = scan.matches.full_rows([int(e.chunks[0][1]) for e in entries], _FILE_COLUMNS)
    for entry, row in zip(entries, full, strict=True):
        entry.abs_path = row["abs_path"] or ""
        entry.summary = row["summary"] or ""
        entry.keywords = list(row["keywords"] or [])
        entry.size, entry.mtime_ns = int(row["file_size"]), int(row["file_mtime_ns"])


def _counts(scan: Scan, priority: str | None, warnings: list[GroundWarning]) -> list[GroundDoc]:
    """output "counts": every file holding the phrase (up to ``COUNTS_MAX_FILES``) with its coverage."""
    ranked = rank_files(_files(scan, scan.hits), priority)
    if len(ranked) > COUNTS_MAX_FILES:
        warnings.append(
            {
                "code": "counts-truncated",
                "message": f"{len(ranked):,} files hold the phrase; counts list the first "
                f"{COUNTS_MAX_FILES:,} (most occurrences first): pin a corpus or lengthen the phrase "
                "to see the rest",
            }
        )
        ranked = ranked[:COUNTS_MAX_FILES]
    _fill(scan, ranked)
    rows = scan.matches.rows
    docs: list[GroundDoc] = []
    for entry in ranked:
        pages = {page_of(rows[index]) for _, index in entry.chunks} - {None}
        doc: CountsDoc = {
            "corpus": entry.corpus,
            "path": entry.path,
            "absolute_path": entry.abs_path,
            "score": int(entry.score),  # a sum of occurrence counts
            "stale": is_stale(entry),
            "coverage": {"chunks": len(entry.chunks), "pages": len(pages) if pages else None},
        }
        docs.append(doc)
    return docs


def _ranked_docs(
    scan: Scan,
    phrase: Phrase,
    mode: Mode,
    priority: str | None,
    reserve: str | None,
    params: dict[str, Any],
    cuts: list[tuple[str, str]],
) -> list[GroundDoc]:
    limit, top_files, per_file = params["limit"], params["top_files"], params["chunks_per_file"]
    rows = scan.matches.rows
    # The candidate pool: the `limit` chunks with the most occurrences (the priority corpus wins ties).
    pool = sorted(
        scan.hits,
        key=lambda h: (
            -h[0],
            rows[h[1]]["corpus"] != priority,
            rows[h[1]]["corpus"],
            rows[h[1]]["path"],
            h[1],
        ),
    )
    if len(pool) > limit:
        cuts.append(("limit", f"limit={limit} kept {limit} of {len(pool)} matching chunks"))
        pool = pool[:limit]
    ranked = rank_files(_files(scan, pool), priority)
    chosen = cut(ranked, top_files, reserve)
    if len(ranked) > len(chosen):
        cuts.append(
            ("top_files", f"top_files={top_files} kept {len(chosen)} of {len(ranked)} matching files")
        )
    _fill(scan, chosen)
    entries = [_entries(entry, rows, mode) for entry in chosen]
    hidden = sum(len(e) > per_file for e in entries)
    if hidden:
        unit = "pages" if mode.group_by else "chunks"
        cuts.append(("chunks_per_file", f"chunks_per_file={per_file} hid {unit} of {hidden} file(s)"))
    shown = [e[:per_file] for e in entries]
    full = iter(scan.matches.full_rows([index for e in shown for (_, index), _ in e]))
    docs: list[GroundDoc] = []
    for entry, file_entries in zip(chosen, shown, strict=True):
        chunks = [
            _chunk(found, next(full), on_page, phrase, params["snippet_chars"], mode.footnotes)
            for (found, _), on_page in file_entries
        ]
        doc: ChunkedDoc = {
            "corpus": entry.corpus,
            "path": entry.path,
            "absolute_path": entry.abs_path,
            "score": int(entry.score),  # a sum of occurrence counts
            "summary": entry.summary,
            "keywords": entry.keywords,
            "stale": is_stale(entry),
            "chunks": chunks,
        }
        docs.append(doc)
    return docs


def _entries(entry: PhraseFile, rows: list[ChunkRow], mode: Mode) -> list[tuple[tuple[int, int], int | None]]:
    """A file's hits, most occurrences first (then chunk order), grouped per page when asked."""
    best = sorted(entry.chunks, key=lambda c: (-c[0], rows[c[1]]["ordinal"]))
    if mode.group_by == "page":
        return group_pages(best, lambda c: page_of(rows[c[1]]))
    return [(c, None) for c in best]


def _chunk(
    found: int, row: ChunkRow, on_page: int | None, phrase: Phrase, width: int, footnotes: str
) -> GroundChunk:
    chunk: GroundChunk = {
        "heading_path": list(row["heading_path"] or []),
        "line_start": int(row["line_start"]),
        "line_end": int(row["line_end"]),
        "score": found,
        "snippet": phrase_snippet(view(row["text"] or "", footnotes), phrase, width),
    }
    page = row.get("page")
    if page is not None:
        chunk["page"] = int(page)
    symbol_kind = row.get("symbol_kind")
    if symbol_kind:  # a definition in source code; absent (never null) on every other chunk
        chunk["symbol_kind"] = symbol_kind
    if on_page is not None:
        chunk["chunk_count"] = on_page
    return chunk


def phrase_snippet(text: str, phrase: Phrase, width: int) -> str:
    """At most ``width`` characters of the chunk (whitespace collapsed) from just before the first
    occurrence; one below the leading heading lines is preferred, as the breadcrumb shows those."""
    flat = " ".join(without_leading_headings(text).split())
    found = phrase.pattern.search(flat)
    if found is None:
        whole = " ".join(text.split())
        found = phrase.pattern.search(whole)
        flat = whole if found is not None else flat
    if len(flat) <= width:
        return flat
    return window(flat, lead_in(found.start(), found.end(), width) if found is not None else 0, width)
