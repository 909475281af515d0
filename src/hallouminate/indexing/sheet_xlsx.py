"""Read an ``.xlsx``/``.xlsm`` workbook's sheets, values as shown (openpyxl; domain, bytes in).

The zip is checked against the decompression budget first (``zipguard.open_zip``); only then does
openpyxl open the bytes, in read-only mode (sheets streamed row by row, never loaded whole) with
``data_only`` (a formula cell shows its cached result; a file whose formulas were never calculated, as
openpyxl writes them, has none: such a cell is empty). The sheet's ``<dimension>`` claim is ignored
(``reset_dimensions``): a sheet claiming A1:Z1048576 is read as far as it has rows. Each value is
rendered with its cell's number format (``sheet_values``).
"""

from __future__ import annotations

import io
import warnings
from typing import Any

from defusedxml import DefusedXmlException  # type: ignore[import-untyped]

from hallouminate.indexing.documents import ChunkContext
from hallouminate.indexing.sheet_model import Collector, Workbook, row_line
from hallouminate.indexing.sheet_values import cell_text
from hallouminate.indexing.text_chunker import UnparseableFile
from hallouminate.indexing.zipguard import open_zip

__all__ = ["read_xlsx"]

# openpyxl warns about parts it does not read (data validation, conditional formatting extensions, a
# missing default style): nothing a reader of the values can act on.
warnings.filterwarnings("ignore", category=UserWarning, module=r"openpyxl(\.|$)")


def read_xlsx(data: bytes, ctx: ChunkContext) -> Workbook:
    """The workbook's sheets (worksheets only: chart sheets have no rows), under ``ctx.limits``."""
    open_zip(data, ctx.limits.max_decompressed_size, kind=".xlsx workbook").close()
    # Here, not at the top: a daemon start imports the readers, and openpyxl costs ~350 ms of CPU to import,
    # paid only once a workbook is read.
    from openpyxl import load_workbook  # type: ignore[import-untyped]

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises KeyError, ValueError, parse errors... on a broken file
        raise _unreadable(exc, "not a readable .xlsx workbook") from None
    collector = Collector(ctx.limits)
    try:
        title = " ".join((book.properties.title or "").split()) if book.properties else ""
        for sheet in book.worksheets:
            if collector.full:
                break
            collector.sheet(str(sheet.title))
            _read_sheet(sheet, collector)
    except Exception as exc:  # a damaged sheet part (bad XML, a failed CRC) midway through
        raise _unreadable(exc, "broken .xlsx workbook") from None
    finally:
        book.close()
    return collector.workbook(title)


def _unreadable(exc: BaseException, what: str) -> UnparseableFile:
    """The reason for a failure, naming a refused entity declaration (openpyxl wraps it) as such."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DefusedXmlException):
            return UnparseableFile(f"refused .xlsx workbook: its XML declares entities ({cause})")
        cause = cause.__cause__ or cause.__context__
    return UnparseableFile(f"{what}: {type(exc).__name__}: {exc}")


def _read_sheet(sheet: Any, collector: Collector) -> None:
    sheet.reset_dimensions()
    for number, cells in enumerate(sheet.iter_rows(), start=1):
        # A row is padded with empty cells up to its last one: count them all, as they cost the time.
        if not collector.spend_cells(len(cells) or 1, number):
            return
        line = row_line([_shown(cell) for cell in cells])
        if not line and collector.run_over(number):
            collector.stop_sheet(number)
            return
        if not collector.row(number, line):
            return


def _shown(cell: Any) -> str:
    value = cell.value
    if value is None:
        return ""
    return cell_text(value, cell.number_format)
