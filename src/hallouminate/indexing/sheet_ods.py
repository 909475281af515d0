"""Read an OpenDocument spreadsheet's (``.ods``) sheets from its ``content.xml`` (lxml; domain, bytes in).

ODS stores what each cell shows (``<text:p>``, the value formatted by the application that saved it), so
that text is taken as is: no number formats to apply. The XML is streamed (``iterparse``, each row
dropped once read) with entities unresolved, no network and lxml's default size guards, from a zip
checked against the decompression budget first (``zipguard.open_zip``).

Repeats (``table:number-rows-repeated``, ``table:number-columns-repeated``) are honoured without
materialising empty ones: a million repeated empty rows (LibreOffice ends every sheet so) are one element
and one counter increment, and trailing empty cells are never built. A repeated non-empty row or cell is
expanded, within the workbook's row, cell and character limits.
"""

from __future__ import annotations

import zipfile
from typing import IO

from lxml import etree  # type: ignore[import-untyped]

from hallouminate.indexing.documents import ChunkContext
from hallouminate.indexing.sheet_model import CELL_SEP, Collector, Workbook
from hallouminate.indexing.text_chunker import UnparseableFile
from hallouminate.indexing.zipguard import open_zip

__all__ = ["read_ods"]

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DC = "http://purl.org/dc/elements/1.1/"
_T_TABLE = f"{{{_TABLE}}}table"
_T_ROW = f"{{{_TABLE}}}table-row"
_T_CELL = f"{{{_TABLE}}}table-cell"
_T_COVERED = f"{{{_TABLE}}}covered-table-cell"
_P = f"{{{_TEXT}}}p"
_S = f"{{{_TEXT}}}s"
_TAB = f"{{{_TEXT}}}tab"
_BREAK = f"{{{_TEXT}}}line-break"
_NAME = f"{{{_TABLE}}}name"
_ROWS_REPEATED = f"{{{_TABLE}}}number-rows-repeated"
_COLUMNS_REPEATED = f"{{{_TABLE}}}number-columns-repeated"
_STRING_VALUE = f"{{{_OFFICE}}}string-value"
_VALUE = f"{{{_OFFICE}}}value"
# Most columns a spreadsheet application has (LibreOffice since 7.4, Excel): repeats past it are ignored.
MAX_COLUMNS = 16_384
# Finished rows are cleared at once and removed in batches of this many.
_DROP_EVERY = 256
# The most spaces one <text:s text:c="..."/> may stand for.
_MAX_SPACES = 1_000


def read_ods(data: bytes, ctx: ChunkContext) -> Workbook:
    """The spreadsheet's tables as sheets, under ``ctx.limits``."""
    archive = open_zip(data, ctx.limits.max_decompressed_size, kind=".ods spreadsheet")
    with archive:
        title = _meta_title(archive)
        try:
            stream = archive.open("content.xml")
        except KeyError:
            raise UnparseableFile("not a readable .ods spreadsheet: it has no content.xml") from None
        collector = Collector(ctx.limits)
        try:
            with stream:
                _parse(stream, collector)
        except (etree.XMLSyntaxError, zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise UnparseableFile(f"broken .ods spreadsheet: {type(exc).__name__}: {exc}") from None
    return collector.workbook(title)


def _parser_options() -> dict[str, bool]:
    return {"resolve_entities": False, "no_network": True, "huge_tree": False, "load_dtd": False}


def _meta_title(archive: zipfile.ZipFile) -> str:
    try:
        raw = archive.read("meta.xml")
    except (KeyError, zipfile.BadZipFile, OSError, ValueError):
        return ""
    try:
        root = etree.fromstring(raw, etree.XMLParser(**_parser_options()))
    except etree.XMLSyntaxError:
        return ""
    node = root.find(f".//{{{_DC}}}title")
    return " ".join((node.text or "").split()) if node is not None else ""


def _parse(stream: IO[bytes], collector: Collector) -> None:
    # End events only (half the events of start+end): a table is named at its first row's end, or at
    # its own end when it has no row.
    events = etree.iterparse(
        stream, events=("end",), tag=(_T_TABLE, _T_ROW, _T_CELL, _T_COVERED), **_parser_options()
    )
    table: etree._Element | None = None  # the sheet being read
    number = 0  # the last row number of the current sheet
    cells: list[tuple[str, int]] = []  # the current row's cells: (text, repeat)
    dropped = 0
    holder: etree._Element | None = None  # the parent of the last row seen, and its table
    owner: etree._Element | None = None
    sheet_rows = False
    for _, element in events:
        tag = element.tag
        if tag == _T_TABLE:
            if element is not table and _is_sheet(element):
                if collector.full:
                    return
                collector.sheet(_sheet_name(element, collector))  # a sheet without rows
            table = None
            _drop(element)
            continue
        if tag == _T_ROW:
            parent = element.getparent()
            if parent is not holder:  # rows of one table share a parent: look its table up once
                holder, owner = parent, _table_of(element)
                sheet_rows = owner is not None and _is_sheet(owner)
            if not sheet_rows:
                cells = []
                continue  # a table inside a cell (never written by spreadsheets) is not a sheet
            if owner is not table:
                if collector.full:
                    return
                table, number = owner, 0
                collector.sheet(_sheet_name(owner, collector))
            repeat = _count(element.get(_ROWS_REPEATED))
            if collector.taking():
                _take_row(collector, number, repeat, cells)
            number += repeat
            cells = []
            element.clear(keep_tail=False)
            dropped += 1
            if dropped % _DROP_EVERY == 0:
                _drop_before(element)
        else:  # a cell, covered or not: its text is kept until its row ends
            cells.append((_cell_text(element), _count(element.get(_COLUMNS_REPEATED))))
            element.clear(keep_tail=False)


def _table_of(row: etree._Element) -> etree._Element | None:
    """The table a row belongs to (rows may sit in header-row, row-group or rows wrappers)."""
    owner = row.getparent()
    while owner is not None and owner.tag != _T_TABLE:
        owner = owner.getparent()
    return owner


def _is_sheet(table: etree._Element) -> bool:
    return next(table.iterancestors(_T_TABLE), None) is None


def _sheet_name(table: etree._Element, collector: Collector) -> str:
    return str(table.get(_NAME) or f"Sheet{len(collector.sheets) + 1}")


def _take_row(collector: Collector, number: int, repeat: int, cells: list[tuple[str, int]]) -> None:
    while cells and not cells[-1][0]:
        cells.pop()  # trailing empty cells, however often repeated, are never built
    if not cells:
        return  # empty rows, however many: only the row counter moves
    # Columns past MAX_COLUMNS are ignored: measure what will be built, before building it.
    kept: list[tuple[str, int]] = []
    width = 0
    for text, count in cells:
        count = min(count, MAX_COLUMNS - width)
        kept.append((text, count))
        width += count
        if width >= MAX_COLUMNS:
            break
    cells = kept
    length = sum(len(text) * count for text, count in cells) + len(CELL_SEP) * (width - 1)
    first = number + 1
    if not collector.spend_cells(width, first) or not collector.fits(first, length):
        return
    line = CELL_SEP.join(text for text, count in cells for _ in range(count))
    for row in range(first, first + repeat):
        if not collector.row(row, line):
            return


def _count(value: str | None) -> int:
    try:
        return max(1, int(value)) if value else 1
    except ValueError:
        return 1


def _cell_text(cell: etree._Element) -> str:
    """The cell's shown text: its paragraphs joined by a space (a comment's paragraphs left out)."""
    if not len(cell):  # the usual empty cell: no paragraph, no value
        return " ".join((cell.get(_STRING_VALUE) or cell.get(_VALUE) or "").split())
    paragraphs = [_inline(p) for p in cell.iterchildren(_P)]
    if paragraphs:
        return " ".join(" ".join(p.split()) for p in paragraphs if p.strip())
    # No paragraph: some writers give only the value.
    return " ".join((cell.get(_STRING_VALUE) or cell.get(_VALUE) or "").split())


def _inline(element: etree._Element) -> str:
    parts = [element.text or ""]
    for child in element:
        if child.tag == _S:
            parts.append(" " * min(_count(child.get(f"{{{_TEXT}}}c")), _MAX_SPACES))
        elif child.tag in (_TAB, _BREAK):
            parts.append(" ")
        elif isinstance(child.tag, str):
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _drop(element: etree._Element) -> None:
    """Free a finished element and the finished siblings before it (iterparse keeps them otherwise)."""
    element.clear(keep_tail=False)
    _drop_before(element)


def _drop_before(element: etree._Element) -> None:
    parent = element.getparent()
    if parent is not None:
        del parent[: parent.index(element)]  # one slice: a delete per row costs more than the parse
