"""Hostile files for the indexer: each generator writes one into ``directory`` and returns its path.

Bombs, a spreadsheet of a million empty rows, 100,000 nested divs, 5 MB of minified JavaScript on one line,
and corrupt files (a truncated Word document, a PDF named .xlsx, a CSV with an invalid UTF-8 byte). Each is
built in a second or two and never held whole in memory: the zip bombs stream their 512 MiB member through
``zipfile``'s writer in 1 MiB blocks, the big XML and text are written piece by piece.

Used by tests/indexing/test_hostile_files.py and bench/hostile_rss.py; ``GENERATORS`` lists them all.
"""

from __future__ import annotations

import io
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

MIB = 1024 * 1024
# What a bomb's member inflates to: 10 times the default max_decompressed_size (50 MiB), and more than
# the 300 MB a daemon may grow by while indexing it. Deflated, ~2.3 MB: under every size cap (4 MiB is
# the smallest), so it is the decompression budget that must stop it.
BOMB_BYTES = 512 * MIB
# The empty rows of empty_rows_xlsx, and the rows its sheet claims (Excel's last row).
EMPTY_ROWS = 1_000_000
SHEET_LAST_ROW = 1_048_576
NESTED_DIVS = 100_000
MINIFIED_BYTES = 5_000_000
# Level 1 deflates 512 MiB of blanks in ~1 s (levels 4-9 shrink it 4 times more, 7 times slower).
_BOMB_LEVEL = 1

# Words the real parts of these files say, for a test to look for.
DOC_PHRASE = "the quarterly vendor review checklist"
SHEET_HEADER = ("Region", "Owner", "Budget")
SHEET_ROWS = (("North", "Ada", 1200), ("South", "Grace", 950), ("East", "Linus", 1730))


def _docx_bytes() -> bytes:
    """A small real Word document (python-docx)."""
    from docx import Document

    document = Document()
    document.core_properties.title = "Vendor review"
    document.add_heading("Vendor review", level=1)
    for n in range(12):
        document.add_paragraph(f"Step {n}: {DOC_PHRASE} asks the owner to confirm contract {n}.")
    document.add_heading("Escalation", level=2)
    document.add_paragraph("Escalate a missed review to the procurement lead within a week.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _xlsx_bytes() -> bytes:
    """A small real workbook (openpyxl): a header row and three rows."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Budget"
    sheet.append(SHEET_HEADER)
    for row in SHEET_ROWS:
        sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _rewrite_zip(
    source: bytes, target: Path, member: str, write_member: Callable[[bytes, io.BufferedIOBase], None]
) -> None:
    """``source``'s members copied into ``target`` in their order, ``member`` replaced by what
    ``write_member(original_bytes, stream)`` writes (streamed: the member is never held in memory)."""
    with (
        zipfile.ZipFile(io.BytesIO(source)) as old,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=_BOMB_LEVEL) as new,
    ):
        for info in old.infolist():
            data = old.read(info)
            if info.filename != member:
                new.writestr(info.filename, data)
                continue
            with new.open(info.filename, "w", force_zip64=True) as stream:
                write_member(data, stream)  # type: ignore[arg-type]


def _blanks(stream: io.BufferedIOBase, total: int) -> None:
    block = b" " * MIB
    for _ in range(total // MIB):
        stream.write(block)


def _inflated_at(marker: bytes) -> Callable[[bytes, io.BufferedIOBase], None]:
    """A member writer: the original XML with BOMB_BYTES of blanks (whitespace between elements, still
    well-formed XML) right after ``marker``, so the part a reader must parse is the one that explodes."""

    def write(original: bytes, stream: io.BufferedIOBase) -> None:
        at = original.index(marker) + len(marker)
        stream.write(original[:at])
        _blanks(stream, BOMB_BYTES)
        stream.write(original[at:])

    return write


def zip_bomb_docx(directory: Path, name: str = "bomb.docx") -> Path:
    """A real Word document whose word/document.xml inflates to 512 MiB (blanks inside <w:body>); the zip
    declares that size honestly, ~2.3 MB on disk."""
    path = directory / name
    _rewrite_zip(_docx_bytes(), path, "word/document.xml", _inflated_at(b"<w:body>"))
    return path


def zip_bomb_xlsx(directory: Path, name: str = "bomb.xlsx") -> Path:
    """A real workbook whose first sheet's XML inflates to 512 MiB (blanks inside <sheetData>)."""
    path = directory / name
    _rewrite_zip(_xlsx_bytes(), path, "xl/worksheets/sheet1.xml", _inflated_at(b"<sheetData>"))
    return path


_SHEET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<dimension ref="A1:Z%d"/><sheetData>'
)


def _cell(ref: str, value: str | int) -> str:
    if isinstance(value, int):
        return f'<c r="{ref}"><v>{value}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'


def _empty_rows_sheet(_original: bytes, stream: io.BufferedIOBase) -> None:
    stream.write(_SHEET_HEAD % SHEET_LAST_ROW)
    for r, row in enumerate((SHEET_HEADER, *SHEET_ROWS), 1):
        cells = "".join(_cell(f"{col}{r}", v) for col, v in zip("ABC", row, strict=True))
        stream.write(f'<row r="{r}">{cells}</row>'.encode())
    first = len(SHEET_ROWS) + 2
    batch = 10_000
    for start in range(first, first + EMPTY_ROWS, batch):
        stop = min(start + batch, first + EMPTY_ROWS)
        stream.write("".join(f'<row r="{r}"/>' for r in range(start, stop)).encode())
    stream.write(b"</sheetData></worksheet>")


def empty_rows_xlsx(directory: Path, name: str = "empty-rows.xlsx") -> Path:
    """A workbook whose sheet claims A1:Z1048576: a header and three real rows, then 1,000,000 empty
    ``<row>`` elements (~18 MB of XML: within the decompression budget, so the reader meets them)."""
    path = directory / name
    _rewrite_zip(_xlsx_bytes(), path, "xl/worksheets/sheet1.xml", _empty_rows_sheet)
    return path


def deep_html(directory: Path, name: str = "deep.html") -> Path:
    """100,000 nested divs around one paragraph (~1.1 MB)."""
    path = directory / name
    with path.open("w") as f:
        f.write("<!doctype html><html><head><title>Deep</title></head><body>\n")
        f.write("<div>" * NESTED_DIVS)
        f.write("<p>The innermost paragraph of a very deep page.</p>")
        f.write("</div>" * NESTED_DIVS)
        f.write("\n</body></html>\n")
    return path


_JS_SHAPES = (
    "function {a}({b},{c}){{return {b}.{d}({c})||{b}[{n}]}}",
    "var {a}={b}.{d}(function({c}){{return {c}.{e}>{n}?{c}:null}});",
    "{a}.prototype.{d}=function({b}){{this.{e}={b};return this}};",
    "if(!{a}||{a}.{e}==={n}){{{b}=[{n},{m},'{d}']}}else{{{c}({a},{b})}}",
    "const {a}=({b},{c})=>{b}.{d}({c}).then(({e})=>{e}.{a}||{n});",
    "for(var {a}=0;{a}<{b}.length;{a}++){{{c}[{a}]={b}[{a}].{d}}}",
    "try{{{a}=JSON.parse({b})}}catch({c}){{{a}={{{e}:{n}}}}}",
)


def minified_js(directory: Path, name: str = "bundle.min.js") -> Path:
    """5 MB of minified-looking JavaScript on one line: short names, no whitespace, varied statements."""
    rng = random.Random(17)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$"
    names = [a + b for a in letters for b in letters + "0123456789"][:2000]
    props = ["map", "filter", "call", "apply", "push", "value", "length", "id", "next", "done", "key"]
    path = directory / name
    written = 0
    with path.open("w") as f:
        f.write("!function(){'use strict';")
        while written < MINIFIED_BYTES:
            pieces = []
            for _ in range(500):
                a, b, c = rng.sample(names, 3)
                d, e = rng.choice(props), rng.choice(props)
                n, m = rng.randrange(1000), rng.randrange(1000)
                pieces.append(rng.choice(_JS_SHAPES).format(a=a, b=b, c=c, d=d, e=e, n=n, m=m))
            text = "".join(pieces)
            f.write(text)
            written += len(text)
        f.write("}();\n")
    return path


def truncated_docx(directory: Path, name: str = "truncated.docx") -> Path:
    """A real python-docx file cut in half (its zip directory, at the end, is gone)."""
    data = _docx_bytes()
    path = directory / name
    path.write_bytes(data[: len(data) // 2])
    return path


def pdf_named_xlsx(directory: Path, name: str = "report.xlsx") -> Path:
    """A real PDF (fpdf2) named .xlsx."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 5, "Quarterly figures, exported as PDF and misnamed as a spreadsheet.")
    path = directory / name
    path.write_bytes(bytes(pdf.output()))
    return path


def bad_utf8_csv(directory: Path, name: str = "people.csv") -> Path:
    """A CSV whose first rows are valid UTF-8, then a row with a byte that is not (0xff), then more."""
    rows = [b"name,team,role"] + [f"person{n},team{n % 4},engineer".encode() for n in range(50)]
    rows.append(b"Jos\xff,team9,manager")
    rows += [f"later{n},team{n % 4},analyst".encode() for n in range(10)]
    path = directory / name
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path


GENERATORS: dict[str, Callable[[Path], Path]] = {
    "zip_bomb_docx": zip_bomb_docx,
    "zip_bomb_xlsx": zip_bomb_xlsx,
    "empty_rows_xlsx": empty_rows_xlsx,
    "deep_html": deep_html,
    "minified_js": minified_js,
    "truncated_docx": truncated_docx,
    "pdf_named_xlsx": pdf_named_xlsx,
    "bad_utf8_csv": bad_utf8_csv,
}
