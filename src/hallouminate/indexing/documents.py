"""The one contract every non-Markdown document reader keeps (domain; pure: bytes in, values out).

A reader turns a file's bytes into two views that must agree:

- ``extract(data, ctx) -> Extracted``: the document's text as the reader shows it (``read_markdown``'s
  extracted-text view, ``get_document``): a list of ``Part``s (a PDF's pages, a deck's slides, a
  workbook's sheets; one unlabelled part for a Word document, an HTML page or a CSV file);
- ``chunk(data, ctx) -> TextPage``: the chunks the indexer embeds. A chunk's ``page`` is the 1-based number
  of its part (None when the document has a single unlabelled part) and ``line_start``/``line_end`` are
  1-based inclusive lines of that part's ``text``: whoever opens that part sees the chunk there.

Readers never touch the file system: the indexer and the read tools read the bytes through the sandbox and
hand them over. Limits come in ``ctx.limits``; a reader that stops early says why in ``TextPage.cut`` /
``Extracted.cut`` (the file is indexed as far as it got, and the reason recorded per file); one that cannot
read the file at all raises ``UnparseableFile`` (the file is skipped, with that reason).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from hallouminate.indexing.overlap import CountTokens
from hallouminate.indexing.text_chunker import TextPage, UnparseableFile

__all__ = [
    "ChunkContext",
    "Extracted",
    "FormatLimits",
    "Part",
    "Reader",
    "UnparseableFile",
]

# Defaults of the [indexing] limits (config/defaults.py reads these; the config may lower or raise them).
MAX_DECOMPRESSED_SIZE = 50 * 1024 * 1024
# Text a reader extracts from one document at most (characters); past it the rest is cut, with a reason.
MAX_EXTRACTED_CHARS = 4 * 1024 * 1024


@dataclass(frozen=True)
class FormatLimits:
    """What a reader may spend on one file."""

    # Sum of the declared uncompressed sizes of a zip-based file's members (docx, pptx, xlsx, ods).
    max_decompressed_size: int = MAX_DECOMPRESSED_SIZE
    # Characters of extracted text kept; a reader stops there and reports the cut.
    max_extracted_chars: int = MAX_EXTRACTED_CHARS


@dataclass(frozen=True)
class Part:
    """One part of a document's extracted text: a page, a slide, a sheet, or the whole document."""

    # The part's breadcrumb element ("page:3", "slide:2", "sheet:Budget"); "" for a single unlabelled part.
    label: str
    # The heading read_markdown gives the part ("Page 3", "Slide 2: Roadmap", "Sheet Budget"); "" for none.
    title: str
    # The text, LF line ends; chunks' line numbers count from 1 in it. None: nothing could be extracted.
    text: str | None


@dataclass(frozen=True)
class Extracted:
    """A document's extracted text, part by part, and why it was cut short (None: whole)."""

    parts: list[Part]
    # Document title when the file states one (docx core properties, <title>, PDF /Title), else "".
    title: str = ""
    cut: str | None = None


@dataclass(frozen=True)
class ChunkContext:
    """What a reader is told besides the bytes."""

    # Corpus-relative path, for the extension (a reader serving several: .xlsx/.ods, .py/.go/...).
    path: str
    # The breadcrumb root when the document states no title of its own: the file name.
    title: str
    count_tokens: CountTokens
    # Token budget of a chunk's embed_text.
    budget: int
    limits: FormatLimits = field(default_factory=FormatLimits)


class Reader(Protocol):
    """A document format's reader: see the module docstring for the contract between the two views."""

    def chunk(self, data: bytes, ctx: ChunkContext) -> TextPage: ...

    def extract(self, data: bytes, ctx: ChunkContext) -> Extracted: ...


@dataclass(frozen=True)
class FunctionReader:
    """A ``Reader`` made of two functions (most readers are)."""

    chunk_fn: Callable[[bytes, ChunkContext], TextPage]
    extract_fn: Callable[[bytes, ChunkContext], Extracted]

    def chunk(self, data: bytes, ctx: ChunkContext) -> TextPage:
        return self.chunk_fn(data, ctx)

    def extract(self, data: bytes, ctx: ChunkContext) -> Extracted:
        return self.extract_fn(data, ctx)
