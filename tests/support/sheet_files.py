"""Spreadsheet files written by the tests: xlsx by openpyxl, hand-made xlsx and ods zips for the shapes
openpyxl does not write (cached formula results, a million empty rows, repeats)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any
from xml.sax.saxutils import escape

from openpyxl import Workbook

# A cell: a value, or (value, number format).
Cell = Any


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[Cell]]], *, title: str | None = None) -> bytes:
    """A workbook written by openpyxl: one sheet per entry, rows from row 1 (None: an empty cell; a
    tuple ``(value, number_format)`` formats the cell; a string starting "=" is a formula, which
    openpyxl stores without a cached result)."""
    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for r, row in enumerate(rows, start=1):
            for c, cell in enumerate(row, start=1):
                value, number_format = cell if isinstance(cell, tuple) else (cell, None)
                if value is None:
                    continue
                target = sheet.cell(row=r, column=c, value=value)
                if number_format:
                    target.number_format = number_format
    if title:
        book.properties.title = title
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="{name}" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/></Relationships>'
)


def raw_xlsx(
    sheet_rows: Iterable[str], *, name: str = "Data", dimension: str = "A1", doctype: str = ""
) -> bytes:
    """A minimal one-sheet workbook whose sheet XML rows are given verbatim (``<row r="1">...</row>``),
    as a spreadsheet application writes them (cached formula values, styles-free inline strings);
    ``doctype`` goes before the root element (a hostile DTD)."""
    sheet = io.StringIO()
    sheet.write(
        f'<?xml version="1.0" encoding="UTF-8"?>{doctype}'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f'<dimension ref="{dimension}"/><sheetData>'
    )
    for row in sheet_rows:
        sheet.write(row)
    sheet.write("</sheetData></worksheet>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("xl/workbook.xml", _WORKBOOK.format(name=escape(name)))
        archive.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        archive.writestr("xl/worksheets/sheet1.xml", sheet.getvalue())
    return out.getvalue()


def with_padding(container: bytes, size: int) -> bytes:
    """``container`` (a zip) plus a member of ``size`` zero bytes: a zip bomb of a few kilobytes."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(container)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb,
    ):
        for item in source.infolist():
            bomb.writestr(item, source.read(item))
        bomb.writestr("xl/media/padding.bin", b"\0" * size)
    return out.getvalue()


def inline_cell(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{escape(text)}</t></is></c>'


_ODS_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" office:version="1.2"'
)


def ods_bytes(tables: dict[str, str], *, title: str | None = None) -> bytes:
    """A minimal valid ODS: ``tables`` maps a sheet name to its rows' XML (``table:table-row`` elements,
    written by the test so repeats and shown texts are exactly as wanted)."""
    body = "".join(
        f'<table:table table:name="{escape(name, {chr(34): "&quot;"})}">{rows}</table:table>'
        for name, rows in tables.items()
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODS_NS}>'
        f"<office:body><office:spreadsheet>{body}</office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        # The mimetype comes first and stored, as the OpenDocument packaging asks.
        archive.writestr(
            zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet", zipfile.ZIP_STORED
        )
        archive.writestr("content.xml", content)
        if title is not None:
            archive.writestr(
                "meta.xml",
                f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {_ODS_NS}>'
                f"<office:meta><dc:title>{escape(title)}</dc:title></office:meta></office:document-meta>",
            )
        archive.writestr(
            "META-INF/manifest.xml",
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
            '<manifest:file-entry manifest:full-path="/" '
            'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
            '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
            "</manifest:manifest>",
        )
    return out.getvalue()


def ods_row(*cells: str, repeat: int = 1) -> str:
    """A ``table:table-row`` of cells (each from ``ods_cell``), repeated ``repeat`` times."""
    attr = f' table:number-rows-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-row{attr}>{''.join(cells)}</table:table-row>"


def ods_cell(shown: str = "", *, value: str | None = None, repeat: int = 1) -> str:
    """A cell showing ``shown`` (its ``text:p``; "" for an empty cell), a float ``value`` if given."""
    attrs = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    if value is not None:
        attrs += f' office:value-type="float" office:value="{value}"'
    elif shown:
        attrs += ' office:value-type="string"'
    if not shown:
        return f"<table:table-cell{attrs}/>"
    return f"<table:table-cell{attrs}><text:p>{escape(shown)}</text:p></table:table-cell>"
