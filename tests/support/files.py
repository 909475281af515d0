"""Writing test files: parents created as needed."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def touch(path: Path, text: str = "# x\n") -> Path:
    """A small Markdown page at ``path`` (walker and browse tests need files, rarely their words)."""
    return write(path, text)


def pdf_bytes(pages: list[str], title: str | None = None) -> bytes:
    """A real PDF (fpdf2) with one page per string of ``pages``, in Helvetica 11."""
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 5, text)
    return bytes(pdf.output())
