"""Word documents and slide decks written by python-docx / python-pptx for the format tests.

Each writer takes a small description and returns the file's bytes: the tests generate their fixtures,
no binary is committed. Also the hostile variants: truncated, a PDF under the wrong name, a part whose
XML is broken, a zip bomb.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import docx
import pptx
import pytest
from pptx.enum.shapes import MSO_SHAPE
from pptx.util import Inches

from hallouminate.indexing.documents import ChunkContext, Reader
from hallouminate.indexing.text_chunker import UnparseableFile

# -- Word ------------------------------------------------------------------------------------------------
# A document is a list of blocks:
#   ("title", text)          the Title style
#   ("h", level, text)       Heading <level>
#   ("p", text)              a Normal paragraph ("\n" in text: a line break)
#   ("bullet", text) / ("number", text)   List Bullet / List Number
#   ("table", rows)          rows of cell texts; a cell "<merge" is merged into its left neighbour,
#                            a cell given as a list of rows is a nested table
Block = tuple[Any, ...]


def docx_bytes(blocks: Sequence[Block], *, title: str | None = None) -> bytes:
    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    for block in blocks:
        kind = block[0]
        if kind == "title":
            document.add_paragraph(block[1], style="Title")
        elif kind == "h":
            document.add_heading(block[2], level=block[1])
        elif kind == "p":
            document.add_paragraph(block[1])
        elif kind == "bullet":
            document.add_paragraph(block[1], style="List Bullet")
        elif kind == "number":
            document.add_paragraph(block[1], style="List Number")
        elif kind == "table":
            _add_table(document, block[1])
        else:
            raise ValueError(f"unknown block {kind!r}")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _add_table(container: Any, rows: list[list[Any]]) -> None:
    width = max(len(row) for row in rows)
    table = container.add_table(rows=len(rows), cols=width)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            cell = table.cell(r, c)
            if value == "<merge":
                table.cell(r, c - 1).merge(cell)
            elif isinstance(value, list):
                cell.paragraphs[0].text = ""
                _add_table(cell, value)
            else:
                cell.text = value


# -- Slides ----------------------------------------------------------------------------------------------
@dataclass
class Box:
    """A text box at (left, top) inches; ``text`` lines become paragraphs."""

    left: float
    top: float
    text: str


@dataclass
class Slide:
    title: str | None = None
    boxes: list[Box] = field(default_factory=list)
    # A table at (left, top) inches: rows of cell texts; "<merge" merges into the left neighbour.
    table: tuple[float, float, list[list[str]]] | None = None
    # Text boxes grouped together, placed at the group's position.
    group: list[Box] = field(default_factory=list)
    notes: str | None = None
    # Rectangles (autoshapes) with text, as opposed to text boxes.
    rectangles: list[Box] = field(default_factory=list)


def pptx_bytes(slides: Sequence[Slide], *, title: str | None = None) -> bytes:
    deck = pptx.Presentation()
    if title is not None:
        deck.core_properties.title = title
    title_only, blank = deck.slide_layouts[5], deck.slide_layouts[6]
    for spec in slides:
        slide = deck.slides.add_slide(title_only if spec.title is not None else blank)
        if spec.title is not None:
            slide.shapes.title.text = spec.title
        for box in spec.boxes:
            _add_box(slide.shapes, box)
        for box in spec.rectangles:
            shape = slide.shapes.add_shape(
                MSO_SHAPE.RECTANGLE, Inches(box.left), Inches(box.top), Inches(3), Inches(1)
            )
            shape.text_frame.text = box.text
        if spec.table is not None:
            left, top, rows = spec.table
            frame = slide.shapes.add_table(
                len(rows), max(len(r) for r in rows), Inches(left), Inches(top), Inches(6), Inches(1)
            )
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    if value == "<merge":
                        frame.table.cell(r, c - 1).merge(frame.table.cell(r, c))
                    else:
                        frame.table.cell(r, c).text = value
        if spec.group:
            group = slide.shapes.add_group_shape()
            for box in spec.group:
                _add_box(group.shapes, box)
        if spec.notes is not None:
            slide.notes_slide.notes_text_frame.text = spec.notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _add_box(shapes: Any, box: Box) -> None:
    shape = shapes.add_textbox(Inches(box.left), Inches(box.top), Inches(3), Inches(0.5))
    shape.text_frame.text = box.text


# -- Hostile ---------------------------------------------------------------------------------------------
def zip_bomb(member: str, size: int) -> bytes:
    """A zip whose one member ``member`` inflates to ``size`` zero bytes (deflate: ~1000:1)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open(member, "w", force_zip64=True) as stream,
    ):
        chunk = b"\0" * (1 << 20)
        for _ in range(size // len(chunk)):
            stream.write(chunk)
        stream.write(b"\0" * (size % len(chunk)))
    return out.getvalue()


def with_member(data: bytes, name: str, content: bytes | Callable[[bytes], bytes]) -> bytes:
    """The zip ``data`` with member ``name`` replaced by ``content`` (or by ``content(old bytes)``), the
    others copied as they are."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            member = source.read(info.filename)
            if info.filename == name:
                member = content(member) if callable(content) else content
            target.writestr(info, member)
    return out.getvalue()


def refused(reader: Reader, data: bytes, ctx: ChunkContext) -> UnparseableFile:
    """The reason both views of ``reader`` give for refusing ``data`` (they must give the same one)."""
    with pytest.raises(UnparseableFile) as chunked:
        reader.chunk(data, ctx)
    with pytest.raises(UnparseableFile) as extracted:
        reader.extract(data, ctx)
    assert chunked.value.reason == extracted.value.reason
    return chunked.value
