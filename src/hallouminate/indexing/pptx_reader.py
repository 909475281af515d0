"""Read a slide deck (.pptx, python-pptx): one part per slide, each chunked like plain text (domain; no I/O).

Slide N (1-based, in the deck's order, hidden slides included) is part N: label ``slide:N``, title
``Slide N: <slide title>`` (``Slide N`` when the slide has no title placeholder or it is empty). Its text:

- the slide title on the first line;
- then every shape's text in reading order (top to bottom, then left to right; a group's shapes in that
  order within the group), one line per paragraph or line break, blank lines dropped;
- a table row by row, cells joined with `` | `` (a merged cell once, line breaks inside a cell as spaces);
- then the speaker notes, after a line ``Notes:``;
- blocks (title, each shape, the notes) separated by a blank line;
- pictures, charts and SmartArt give no text; a shape python-pptx cannot read is left out.

Chunks never straddle two slides (overlap stays within a slide) nor the body and the notes of one: each
chunk's ``page`` is its slide number, its lines are lines of that slide's text, and its breadcrumb is
``[deck title, "slide:N", slide title]`` (no slide title element when there is none), with a last element
``notes`` on the chunks of the notes (the first of which starts at the ``Notes:`` line). The deck title is
the core property ``title`` when set, else the file name.

Limits: the zip is checked by ``open_zip`` before python-pptx sees a byte (``OverBudget`` past
``max_decompressed_size``); slides stop at ``max_extracted_chars`` of text in all (the cut is reported).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hallouminate.indexing.documents import ChunkContext, Extracted, Part
from hallouminate.indexing.docx_reader import cut_at_space, library_error
from hallouminate.indexing.overlap import Packer
from hallouminate.indexing.text_chunker import (
    Source,
    TextChunk,
    TextPage,
    UnparseableFile,
    first_paragraph,
    summarize,
)
from hallouminate.indexing.zipguard import open_zip

__all__ = ["NOTES_MARKER", "SLIDE_CRUMB", "chunk_pptx", "extract_pptx"]

KIND = ".pptx file"
SLIDE_CRUMB = "slide:{}"
NOTES_MARKER = "Notes:"
NOTES_CRUMB = "notes"
_SPACES = re.compile(r"\s+")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Slide:
    number: int
    title: str
    text: str
    # Offset in ``text`` of the ``Notes:`` line; len(text) when the slide has no notes.
    notes_at: int


@dataclass(frozen=True)
class _Deck:
    title: str  # the core property, "" when unset
    slides: list[_Slide]
    cut: str | None


def chunk_pptx(data: bytes, ctx: ChunkContext) -> TextPage:
    """Chunk the deck in ``data`` slide by slide (see the module docstring)."""
    if ctx.budget < 1:
        raise ValueError(f"budget must be positive, got {ctx.budget}")
    deck = _read(data, ctx)
    root = deck.title or ctx.title
    chunks: list[TextChunk] = []
    first = ""
    for slide in deck.slides:
        source = Source(slide.text)
        if not first and source.src.strip():
            first = first_paragraph(source.src)
        path = [root, SLIDE_CRUMB.format(slide.number)] + ([slide.title] if slide.title else [])
        runs = [(path, 0, slide.notes_at), ([*path, NOTES_CRUMB], slide.notes_at, len(source.src))]
        for crumbs, start, end in runs:
            if start < end:
                packer = Packer(source.src, ctx.count_tokens, ctx.budget, crumbs)
                spans = packer.text_spans(start, end)
                chunks.extend(source.chunks(packer, crumbs, spans, slide.number))
    return TextPage(root, summarize(root, first), chunks, deck.cut)


def extract_pptx(data: bytes, ctx: ChunkContext) -> Extracted:
    """One part per slide, what ``read_markdown`` shows."""
    deck = _read(data, ctx)
    parts = [
        Part(
            SLIDE_CRUMB.format(s.number),
            f"Slide {s.number}: {s.title}" if s.title else f"Slide {s.number}",
            s.text,
        )
        for s in deck.slides
    ]
    return Extracted(parts, title=deck.title, cut=deck.cut)


def _read(data: bytes, ctx: ChunkContext) -> _Deck:
    open_zip(data, ctx.limits.max_decompressed_size, kind=KIND).close()
    # python-pptx raises whatever its zip, XML and part layers raise on a damaged file (KeyError for a
    # missing part, XMLSyntaxError for a broken one, ...): all of them mean "cannot read this file".
    # Here, not at the top: a daemon start imports the readers, and python-pptx costs ~250 ms of CPU to import,
    # paid only once a deck is read.
    import pptx

    try:
        deck = pptx.Presentation(io.BytesIO(data))
        title = _collapse(deck.core_properties.title or "")
        slides: list[_Slide] = []
        left = ctx.limits.max_extracted_chars
        cut: str | None = None
        for number, slide in enumerate(deck.slides, start=1):
            one = _slide(number, slide)
            if len(one.text) > left:
                text = cut_at_space(one.text, left)
                one = _Slide(number, one.title, text, min(one.notes_at, len(text)))
                cut = (
                    f"the text of this {KIND} is longer than max_extracted_chars "
                    f"({ctx.limits.max_extracted_chars} characters): slide {number} is cut there and "
                    "the slides after it are not indexed"
                )
            slides.append(one)
            left -= len(one.text)
            if cut is not None:
                break
    except Exception as exc:
        raise UnparseableFile(f"broken {KIND}: {library_error(exc)}") from exc
    return _Deck(title, slides, cut)


def _slide(number: int, slide: Any) -> _Slide:
    title_shape = slide.shapes.title
    title = _collapse(title_shape.text_frame.text) if title_shape is not None else ""
    blocks = [title] if title else []
    skip = title_shape.shape_id if title_shape is not None else None
    for shape in _reading_order(slide.shapes):
        if shape.shape_id == skip and shape.is_placeholder:
            continue
        blocks.extend(_shape_blocks(shape))
    body = "\n\n".join(blocks)
    notes = _notes(slide)
    if not notes:
        return _Slide(number, title, body, len(body))
    head = body + "\n\n" if body else ""
    return _Slide(number, title, f"{head}{NOTES_MARKER}\n{notes}", len(head))


def _reading_order(shapes: Any) -> list[Any]:
    return sorted(shapes, key=_position)


def _position(shape: Any) -> tuple[int, int]:
    # Placeholders without a position of their own inherit the layout's; none at all is the top left.
    try:
        return (shape.top or 0, shape.left or 0)
    except Exception:  # a damaged transform costs the shape its place, not the deck
        return (0, 0)


def _shape_blocks(shape: Any) -> list[str]:
    """The shape's text blocks; a shape python-pptx cannot read (a damaged or unknown element) gives none,
    as one damaged PDF page costs only itself."""
    try:
        return [block for block in _blocks(shape) if block]
    except Exception as exc:
        log.debug("pptx shape %s: cannot read its text: %s", getattr(shape, "shape_id", "?"), exc)
        return []


def _blocks(shape: Any) -> Iterator[str]:
    from pptx.shapes.group import GroupShape  # loaded by _read already

    # isinstance, not shape_type: python-pptx raises on the type of a shape it does not recognise.
    if isinstance(shape, GroupShape):
        for child in _reading_order(shape.shapes):
            yield from _shape_blocks(child)
    elif shape.has_table:
        rows = []
        for row in shape.table.rows:
            cells = [_collapse(cell.text) for cell in row.cells if not cell.is_spanned]
            if any(cells):
                rows.append(" | ".join(cells))
        yield "\n".join(rows)
    elif shape.has_text_frame:
        yield _lines(shape.text_frame.text)


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return _lines(frame.text) if frame is not None else ""


def _lines(text: str) -> str:
    """A text frame's text, one line per paragraph or line break (PowerPoint's vertical tab), no blanks."""
    lines = (line.strip() for line in text.replace("\v", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def _collapse(text: str) -> str:
    return _SPACES.sub(" ", text).strip()
