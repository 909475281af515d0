"""Read a ``.csv``/``.tsv`` file's records (the csv module; domain, bytes in).

The bytes are decoded strictly as UTF-8 (a leading byte-order mark dropped): invalid UTF-8 makes the file
unparseable, with the byte offset named. Record k is line k of the view: a quoted field spanning lines is
one record, its line breaks shown as spaces. A ``.tsv`` is tab-separated (quotes honoured as in CSV); a
``.csv`` is comma-separated unless its first line has more fields split on ``;`` (or a tab), the usual
export of spreadsheets in locales where the comma is the decimal mark.

The csv module refuses a field longer than its limit (``csv.field_size_limit()``, 131,072 characters by
default; a process-wide setting, left alone): reading stops there and the file is cut, with the row named.
"""

from __future__ import annotations

import codecs
import csv
import io

from hallouminate.indexing.documents import ChunkContext
from hallouminate.indexing.sheet_model import Collector, Workbook, row_line
from hallouminate.indexing.sheet_values import cell_text
from hallouminate.indexing.text_chunker import UnparseableFile

__all__ = ["read_csv"]

_CANDIDATES = (",", ";", "\t")
# The head of the file the delimiter is judged on.
_SNIFF_CHARS = 64 * 1024


def read_csv(data: bytes, ctx: ChunkContext, *, tabs: bool) -> Workbook:
    """The file's records as one unnamed sheet, under ``ctx.limits``."""
    text = decode_utf8(data, "a .tsv file" if tabs else "a .csv file")
    delimiter = "\t" if tabs else _delimiter(text)
    collector = Collector(ctx.limits, labelled=False)
    collector.sheet("")
    records = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    number = 0
    while True:
        try:
            record = next(records)
        except StopIteration:
            break
        except csv.Error as exc:
            kept = f"indexed up to row {number:,}" if number else "not indexed"
            collector.cut(f"row {number + 1:,}: {exc} (the csv reader's limit); the file is {kept}")
            break
        number += 1
        line = row_line([cell_text(field, None) for field in record])
        if not line and collector.run_over(number):
            collector.stop_sheet(number)
            break
        if not collector.row(number, line):
            break
    return collector.workbook("")


def decode_utf8(data: bytes, kind: str) -> str:
    """``data`` as UTF-8 (a byte-order mark dropped); ``UnparseableFile`` naming the first bad byte."""
    body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(data) - len(body)
        line = data.count(b"\n", 0, offset) + 1
        raise UnparseableFile(
            f"{kind} that is not valid UTF-8: byte 0x{data[offset]:02x} at byte offset {offset:,}"
            f" (line {line:,}); save it as UTF-8 to index it"
        ) from None


def _delimiter(text: str) -> str:
    head = text[:_SNIFF_CHARS]
    first = head.split("\n", 1)[0]
    best, most = ",", 0
    for candidate in _CANDIDATES:
        try:
            fields = len(next(csv.reader([first], delimiter=candidate), []))
        except csv.Error:
            continue
        if fields > most:
            best, most = candidate, fields
    return best
