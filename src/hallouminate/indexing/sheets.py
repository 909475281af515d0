"""Spreadsheets and CSV: the readers of ``.xlsx``/``.xlsm``, ``.ods``, ``.csv`` and ``.tsv`` (domain; pure).

The extracted view: one part per sheet (label ``sheet:NAME``, title ``Sheet NAME``), line k of a part =
the sheet's row k (empty rows as empty lines, trailing ones dropped), cells joined with `` | ``. A CSV or
TSV file is one unlabelled part, line k = record k. ``sheet_xlsx``, ``sheet_ods`` and ``sheet_csv`` read
the files into a ``Workbook`` (under the limits of ``sheet_model``); both views are built from it, so they
agree.

Chunks, per sheet: the header row (the sheet's first non-empty row) and a run of the rows after it, as
many as fit the budget. The first chunk starts at the header row itself; every later chunk repeats the
header at the top of its ``text`` and ``embed_text``, its ``line_start``/``line_end`` being the run's row
range. So a chunk's text is its rows' view lines (empty rows inside a run included), after the header
line when the header is repeated. Breadcrumb ``[title, "sheet:NAME", "rows:12-40"]`` (CSV/TSV:
``[file name, "rows:12-40"]``); ``page`` = the sheet's number (1-based), None for CSV/TSV. Rows do not
overlap between chunks: a row is a record, and the repeated header gives each chunk its context.

A header worth more than half of what the breadcrumb leaves is repeated cut to its first cells that fit.
A row too long for the budget on its own (with the repeated header) is split at cell boundaries (`` | ``),
a cell too long at words, then characters (the plain-text packer), each piece a chunk of that one row
whose pieces overlap by a few words as plain text does; every piece is a slice of the row's line.
"""

from __future__ import annotations

import re

from hallouminate.indexing.documents import ChunkContext, Extracted, FunctionReader, Part
from hallouminate.indexing.overlap import WORD, Grammar, Packer, fit_prefix
from hallouminate.indexing.sheet_csv import read_csv
from hallouminate.indexing.sheet_model import CELL_SEP, Sheet, Workbook
from hallouminate.indexing.sheet_ods import read_ods
from hallouminate.indexing.sheet_xlsx import read_xlsx
from hallouminate.indexing.text_chunker import TextChunk, TextPage, summarize

__all__ = [
    "CSV_READER",
    "ODS_READER",
    "SHEET_CRUMB",
    "TSV_READER",
    "XLSX_READER",
    "chunk_workbook",
    "extract_workbook",
]

SHEET_CRUMB = "sheet:{}"
ROWS_CRUMB = "rows:{}-{}"
# A long row is cut between cells first, then between words.
_CELLS = Grammar((re.compile(re.escape(CELL_SEP)),), WORD)


def chunk_workbook(book: Workbook, ctx: ChunkContext) -> TextPage:
    """The chunks of every sheet of ``book`` (see the module docstring)."""
    if ctx.budget < 1:
        raise ValueError(f"budget must be positive, got {ctx.budget}")
    title = book.title or ctx.title
    chunks: list[TextChunk] = []
    for number, sheet in enumerate(book.sheets, start=1):
        chunks.extend(_SheetChunker(sheet, number if book.labelled else None, title, ctx).chunks())
    first = next((sheet.rows[0][1] for sheet in book.sheets if sheet.rows), "")
    return TextPage(title, summarize(title, " ".join(first[:2000].split())), chunks, book.cut)


def extract_workbook(book: Workbook) -> Extracted:
    """The extracted view of ``book``: a part per sheet, or one unlabelled part (CSV/TSV)."""
    if not book.labelled:
        text = book.sheets[0].text() if book.sheets else ""
        return Extracted([Part("", "", text)], title=book.title, cut=book.cut)
    parts = [
        Part(SHEET_CRUMB.format(sheet.name), f"Sheet {sheet.name}", sheet.text()) for sheet in book.sheets
    ]
    return Extracted(parts, title=book.title, cut=book.cut)


class _SheetChunker:
    def __init__(self, sheet: Sheet, page: int | None, title: str, ctx: ChunkContext) -> None:
        self.sheet = sheet
        self.page = page
        self.count = ctx.count_tokens
        self.budget = ctx.budget
        self.base = [title, SHEET_CRUMB.format(sheet.name)] if page is not None else [title]
        self.lines = sheet.lines()

    def path(self, first: int, last: int) -> list[str]:
        return [*self.base, ROWS_CRUMB.format(first, last)]

    def chunks(self) -> list[TextChunk]:
        rows = self.sheet.rows
        if not rows:
            return []
        widest = rows[-1][0]
        prefix_cost = self._cost(fit_prefix(self.path(widest, widest), self.count, self.budget))
        lead = self._lead(rows[0][1], prefix_cost)
        lead_cost = self._cost(lead)
        costs = [self.count(line) for _, line in rows]
        out: list[TextChunk] = []
        i = 0
        while i < len(rows):
            # The first chunk starts at the header row; later ones repeat the header.
            header = "" if i == 0 else lead
            used = prefix_cost + (lead_cost if header else 0) + costs[i]
            j = i + 1
            while j < len(rows) and used + costs[j] <= self.budget:
                used += costs[j]
                j += 1
            chunk = self._run(header, i, j)
            # Counts per line are summed (exact for WordPiece, which splits at whitespace); one exact
            # count per chunk keeps any other tokenizer under the budget too.
            over = self.count(chunk.embed_text) > self.budget
            while over and j - 1 > i:
                j -= 1
                chunk = self._run(header, i, j)
                over = self.count(chunk.embed_text) > self.budget
            if over:
                out.extend(self._split_row(header, rows[i][0], rows[i][1]))
            else:
                out.append(chunk)
            i = j
        return out

    def _run(self, header: str, i: int, j: int) -> TextChunk:
        first, last = self.sheet.rows[i][0], self.sheet.rows[j - 1][0]
        body = "\n".join(self.lines[first - 1 : last])
        return self._chunk(header, first, last, body)

    def _chunk(self, header: str, first: int, last: int, body: str) -> TextChunk:
        path = self.path(first, last)
        text = f"{header}\n{body}" if header else body
        prefix = fit_prefix(path, self.count, self.budget)
        embed = f"{prefix}\n\n{text}" if prefix else text
        return TextChunk(path, first, last, text, embed, self.page)

    def _split_row(self, header: str, number: int, line: str) -> list[TextChunk]:
        """A row too long alone: pieces of its line, at cell boundaries, then words, then characters."""
        path = self.path(number, number)
        reserve = self.count(header) + 1 if header else 0
        pieces: list[TextChunk] = []
        for attempt in range(4):
            # The packer budgets the breadcrumb and the piece; the repeated header's share is set aside.
            budget = max(1, self.budget - reserve - attempt * max(1, self.budget // 16))
            packer = Packer(line, self.count, budget, path)
            spans = packer.text_spans(0, len(line), _CELLS)
            pieces = [self._chunk(header, number, number, line[s:e]) for s, e in spans if e > s]
            if all(self.count(p.embed_text) <= self.budget for p in pieces):
                break
        return pieces

    def _lead(self, header: str, prefix_cost: int) -> str:
        """The header as repeated: whole if it takes at most half of what the breadcrumb leaves, else its
        first cells that do (or its first characters, when even one cell is too long)."""
        limit = max(1, (self.budget - prefix_cost) // 2)
        if self.count(header) <= limit:
            return header
        cells = header.split(CELL_SEP)
        kept = ""
        for k in range(1, len(cells) + 1):
            candidate = CELL_SEP.join(cells[:k])
            if self.count(candidate) > limit:
                break
            kept = candidate
        if kept:
            return kept
        lo, hi = 0, len(cells[0])
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(cells[0][:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return cells[0][:lo].rstrip()

    def _cost(self, text: str) -> int:
        return self.count(text) if text else 0


def _xlsx_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    return chunk_workbook(read_xlsx(data, ctx), ctx)


def _xlsx_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    return extract_workbook(read_xlsx(data, ctx))


def _ods_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    return chunk_workbook(read_ods(data, ctx), ctx)


def _ods_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    return extract_workbook(read_ods(data, ctx))


def _csv_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    return chunk_workbook(read_csv(data, ctx, tabs=False), ctx)


def _csv_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    return extract_workbook(read_csv(data, ctx, tabs=False))


def _tsv_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    return chunk_workbook(read_csv(data, ctx, tabs=True), ctx)


def _tsv_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    return extract_workbook(read_csv(data, ctx, tabs=True))


XLSX_READER = FunctionReader(_xlsx_chunk, _xlsx_extract)
ODS_READER = FunctionReader(_ods_chunk, _ods_extract)
CSV_READER = FunctionReader(_csv_chunk, _csv_extract)
TSV_READER = FunctionReader(_tsv_chunk, _tsv_extract)
