"""A spreadsheet as the sheet readers hand it over, and the limits they read it under (domain; pure).

Every sheet reader (xlsx, ods, csv/tsv) feeds its rows, in order, to a ``Collector``, which keeps the
non-empty ones as ``(row number, line)`` and enforces the limits that keep a hostile file cheap:

- a run of ``MAX_EMPTY_RUN`` empty rows past the last data (or from the top) ends the sheet: a reader that
  can skip empty rows cheaply (ODS repeats) reads on and cuts only if data follows the run; one that
  cannot (xlsx row elements) stops at the run's end, and either way the reason names the row;
- at most ``MAX_ROWS`` non-empty rows and ``MAX_CELLS`` cells visited (empty ones a library pads a row
  with included) per workbook, and ``limits.max_extracted_chars`` characters of text.

A limit reached sets the workbook's ``cut`` (the rows so far are indexed, the reason recorded per file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hallouminate.indexing.documents import FormatLimits

__all__ = ["CELL_SEP", "MAX_CELLS", "MAX_EMPTY_RUN", "MAX_ROWS", "Collector", "Sheet", "Workbook", "row_line"]

CELL_SEP = " | "
MAX_EMPTY_RUN = 1_000
MAX_ROWS = 200_000
MAX_CELLS = 10_000_000
# Reasons named in a workbook's cut (one per sheet cut); the rest are counted.
_MAX_REASONS = 3


@dataclass
class Sheet:
    """A sheet's non-empty rows: ``(row number, line)``, ascending; the row numbers are 1-based, as the
    spreadsheet numbers them (a CSV's record numbers)."""

    name: str
    rows: list[tuple[int, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The sheet's view, line k = row k: empty rows as empty lines, trailing empty rows dropped."""
        if not self.rows:
            return []
        lines = [""] * self.rows[-1][0]
        for number, line in self.rows:
            lines[number - 1] = line
        return lines

    def text(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class Workbook:
    """What a sheet reader read: the sheets (one unnamed one for a CSV/TSV file), the workbook's own
    title ("" when it states none) and why reading stopped early (None: read whole)."""

    sheets: list[Sheet]
    title: str = ""
    cut: str | None = None
    # Whether sheets are named parts (xlsx, ods) or the file is one unlabelled part (csv, tsv).
    labelled: bool = True


def row_line(cells: list[str]) -> str:
    """Cells joined with `` | ``, trailing empty cells dropped ("" for an empty row)."""
    end = len(cells)
    while end and not cells[end - 1]:
        end -= 1
    return CELL_SEP.join(cells[:end])


class Collector:
    """Takes a workbook's rows sheet by sheet under the limits (see the module docstring)."""

    def __init__(self, limits: FormatLimits, *, labelled: bool = True) -> None:
        self.labelled = labelled
        self.sheets: list[Sheet] = []
        self.cuts: list[str] = []
        self.max_chars = limits.max_extracted_chars
        self.chars_left = limits.max_extracted_chars
        self.rows_left = MAX_ROWS
        self.cells_left = MAX_CELLS
        # A workbook-wide limit was reached: the reader stops reading altogether.
        self.full = False
        # The current sheet's rows are no longer taken (its empty-row run ended it).
        self.closed = False

    @property
    def current(self) -> Sheet:
        return self.sheets[-1]

    @property
    def last(self) -> int:
        """The current sheet's last non-empty row (0: none yet)."""
        rows = self.current.rows
        return rows[-1][0] if rows else 0

    def where(self, number: int) -> str:
        return f"sheet '{self.current.name}' row {number:,}" if self.labelled else f"row {number:,}"

    def sheet(self, name: str) -> None:
        self.sheets.append(Sheet(name))
        self.closed = False

    def taking(self) -> bool:
        """Whether rows of the current sheet are still taken."""
        return not (self.full or self.closed)

    def run_over(self, number: int) -> bool:
        """Whether empty row ``number`` ends a run of ``MAX_EMPTY_RUN`` empty rows."""
        return number - self.last >= MAX_EMPTY_RUN

    def stop_sheet(self, number: int) -> None:
        """A reader that cannot skip empty rows cheaply stops the sheet at empty row ``number``."""
        after = f"after row {self.last:,}" if self.last else "from the top"
        self.cut(
            f"{self.where(number)}: {MAX_EMPTY_RUN:,} empty rows {after};"
            " reading of the sheet stopped there (rows below it, if any, are not indexed)"
        )
        self.closed = True

    def spend_cells(self, count: int, number: int) -> bool:
        """Count ``count`` cells visited for row ``number``; False once past ``MAX_CELLS``."""
        self.cells_left -= count
        if self.cells_left < 0 and not self.full:
            self.cut(f"more than {MAX_CELLS:,} cells: reading stopped at {self.where(number)}")
            self.full = True
        return not self.full

    def fits(self, number: int, length: int) -> bool:
        """Whether a line of ``length`` characters at row ``number`` fits the character limit; when not,
        the workbook is full (checked before a reader builds a long line)."""
        gap = max(0, number - self.last - 1)
        if gap + length + 1 <= self.chars_left:
            return True
        if not self.full:
            self.cut(
                f"more than max_extracted_chars ({self.max_chars:,}) characters of text:"
                f" reading stopped at {self.where(number)}"
            )
            self.full = True
        return False

    def row(self, number: int, line: str) -> bool:
        """Take row ``number`` (its line; "" for an empty row); False when the reader should stop reading
        the current sheet (its empty-row run ended it, or the workbook is full)."""
        if not self.taking():
            return False
        if not line:
            return True
        gap = number - self.last - 1
        if gap >= MAX_EMPTY_RUN:
            kept = f"indexed up to row {self.last:,}" if self.last else "not indexed"
            self.cut(f"{self.where(number)} comes after {gap:,} empty rows: the sheet is {kept}")
            self.closed = True
            return False
        if self.rows_left <= 0:
            self.cut(f"more than {MAX_ROWS:,} non-empty rows: reading stopped at {self.where(number)}")
            self.full = True
            return False
        if not self.fits(number, len(line)):
            return False
        self.current.rows.append((number, line))
        self.rows_left -= 1
        self.chars_left -= gap + len(line) + 1
        return True

    def cut(self, reason: str) -> None:
        self.cuts.append(reason)

    def workbook(self, title: str) -> Workbook:
        reasons = self.cuts[:_MAX_REASONS]
        if len(self.cuts) > _MAX_REASONS:
            reasons.append(f"and {len(self.cuts) - _MAX_REASONS} more sheets cut")
        cut = "; ".join(reasons) if reasons else None
        return Workbook(self.sheets, title=title, cut=cut, labelled=self.labelled)
