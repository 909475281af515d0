"""Split a plain-text file into overlapping chunks that fit the embedding model (domain; pure).

Also home of the types the plain-text, JSON and PDF chunkers share: ``TextChunk`` (a Markdown ``Chunk``
plus an optional page number), ``TextPage`` and ``UnparseableFile``.

A chunk's ``text`` is the verbatim slice of the source (CRLF and CR read as LF) between the first and last
character it covers; ``line_start``/``line_end`` are the 1-based lines of those two characters. A chunk
may start or end mid-line (a cut between sentences or words), and consecutive chunks share text: each
repeats the last words of the previous one, about ``OVERLAP_SHARE`` of the budget (see ``overlap``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hallouminate.indexing.chunker import SUMMARY_CHARS, Chunk
from hallouminate.indexing.overlap import OVERLAP_SHARE, PARAGRAPH_BREAK, CountTokens, Packer, Span

__all__ = [
    "OVERLAP_SHARE",
    "TextChunk",
    "TextPage",
    "UnparseableFile",
    "chunk_text",
]

_SPACES = re.compile(r"\s+")


class UnparseableFile(ValueError):
    """The file is not what its extension says (invalid JSON, a broken or encrypted PDF): skip it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TextChunk(Chunk):
    """A ``Chunk`` that may come from a part of a document (a PDF page, a slide, a sheet: 1-based, its
    lines counted in that part's extracted text); ``None`` for text, JSON and single-part documents."""

    page: int | None = None
    # Source code only: the grammar's own word for the definition (``function_definition``, ...).
    symbol_kind: str | None = None


@dataclass(frozen=True)
class TextPage:
    title: str
    summary: str
    chunks: list[TextChunk]
    # Why the reader stopped before the end of the file (a limit), None when it read it whole: the chunks
    # are indexed and the reason recorded as the file's problem.
    cut: str | None = None


def chunk_text(text: str, count_tokens: CountTokens, budget: int, *, title: str) -> TextPage:
    """Chunk plain ``text`` under breadcrumb ``[title]``; ``count_tokens(c.embed_text) <= budget``."""
    source = Source(text)
    path = [title] if title else []
    packer = Packer(source.src, count_tokens, budget, path)
    chunks = source.chunks(packer, path, packer.text_spans(0, len(source.src)))
    return TextPage(title, summarize(title, first_paragraph(source.src)), chunks)


class Source:
    """A text normalised to LF line ends, with the offsets of its lines."""

    def __init__(self, text: str) -> None:
        # Same normalisation as the Markdown chunker: a lone CR is a line end too.
        self.src = text.replace("\r\n", "\n").replace("\r", "\n")
        self.line_offsets = [0]
        for match in re.finditer("\n", self.src):
            self.line_offsets.append(match.end())

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return bisect.bisect_right(self.line_offsets, offset)

    def chunks(
        self, packer: Packer, path: Sequence[str], spans: list[Span], page: int | None = None
    ) -> list[TextChunk]:
        return [
            TextChunk(
                list(path),
                self.line_of(start),
                self.line_of(end - 1),
                self.src[start:end],
                packer.embed_text(start, end),
                page,
            )
            for start, end in spans
            if end > start
        ]


def first_paragraph(src: str) -> str:
    """The first non-blank paragraph, whitespace collapsed."""
    # A bounded window: the summary keeps 280 characters, and a file may be one huge paragraph.
    body = src.lstrip()[: 16 * SUMMARY_CHARS]
    match = PARAGRAPH_BREAK.search(body)
    return _SPACES.sub(" ", body[: match.start()] if match else body).strip()


def summarize(title: str, first: str) -> str:
    """``"title - first paragraph"``, capped at ``SUMMARY_CHARS`` like a Markdown page's summary."""
    text = f"{title} - {first}" if title and first else (first or title)
    if len(text) <= SUMMARY_CHARS:
        return text
    cut = text[: SUMMARY_CHARS - 1]
    if " " in cut[SUMMARY_CHARS // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"
