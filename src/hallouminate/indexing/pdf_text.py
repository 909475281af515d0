"""Extract a PDF's text page by page (pypdf) and chunk each page like plain text (domain; no I/O).

Every chunk belongs to one page: its ``heading_path`` is ``[title, "page:N"]`` and its ``page`` is N
(1-based), where title is the PDF's own /Title when it has one, else the ``title`` passed in (the file
name). Overlap applies within a page, never across two. ``line_start``/``line_end`` are 1-based lines of
the page's *extracted* text (pypdf's layout of it, CRLF and CR read as LF), not of the PDF file.

A file pypdf cannot open raises ``UnparseableFile``; so does one that needs a password. A PDF encrypted
with an empty user password (only owner restrictions, it opens in any viewer without asking) is read.
A page whose text cannot be extracted is left out; if no page can be, the file is unparseable. A PDF
of scanned images has no text: it yields no chunks.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING

from hallouminate.indexing.overlap import CountTokens, Packer
from hallouminate.indexing.text_chunker import (
    Source,
    TextChunk,
    TextPage,
    UnparseableFile,
    first_paragraph,
    summarize,
)

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["PAGE_CRUMB", "UnparseableFile", "chunk_pdf", "page_texts", "pdf_title"]

PAGE_CRUMB = "page:{}"

log = logging.getLogger(__name__)


def chunk_pdf(data: bytes, count_tokens: CountTokens, budget: int, *, title: str) -> TextPage:
    """Chunk the text of each page of the PDF in ``data``."""
    if budget < 1:
        raise ValueError(f"budget must be positive, got {budget}")
    reader = _open(data)
    doc_title = _metadata_title(reader) or title
    chunks: list[TextChunk] = []
    first = ""
    failed = 0
    for number, text in enumerate(_page_texts(reader), start=1):
        if text is None:
            failed += 1
            continue
        source = Source(text)
        if not first and source.src.strip():
            first = first_paragraph(source.src)
        path = [doc_title, PAGE_CRUMB.format(number)] if doc_title else [PAGE_CRUMB.format(number)]
        packer = Packer(source.src, count_tokens, budget, path)
        chunks.extend(source.chunks(packer, path, packer.text_spans(0, len(source.src)), number))
    if failed and failed == len(reader.pages):
        raise UnparseableFile(f"broken PDF: text of none of its {failed} pages could be extracted")
    return TextPage(doc_title, summarize(doc_title, first), chunks)


def page_texts(data: bytes) -> list[str | None]:
    """The extracted text of each page of the PDF in ``data``, LF line ends (as the chunks' lines count
    them), None for a page whose text cannot be extracted: what ``read_markdown`` shows of a PDF.

    ``UnparseableFile`` as ``chunk_pdf``: a file pypdf cannot open, a password, no page extractable.
    """
    texts = _page_texts(_open(data))
    if texts and all(text is None for text in texts):
        raise UnparseableFile(f"broken PDF: text of none of its {len(texts)} pages could be extracted")
    return [None if text is None else Source(text).src for text in texts]


def pdf_title(data: bytes) -> str:
    """The PDF's own /Title, whitespace collapsed; "" when it states none or cannot be opened."""
    try:
        return _metadata_title(_open(data))
    except UnparseableFile:
        return ""


def _open(data: bytes) -> PdfReader:
    # pypdf raises many exception types on malformed input (its own, ValueError, KeyError, ...): any of
    # them means "cannot read this file", which the indexer reports as a skip.
    # Here, not at the top: a daemon start imports the readers, and pypdf costs ~200 ms of CPU to import,
    # paid only once a PDF is read.
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not _decrypt_empty(reader):
            raise UnparseableFile("encrypted PDF: a password is needed to read it")
        _ = len(reader.pages)  # walks the page tree: a broken one fails here rather than later
    except UnparseableFile:
        raise
    except Exception as exc:
        raise UnparseableFile(f"broken PDF: {type(exc).__name__}: {exc}") from exc
    return reader


def _decrypt_empty(reader: PdfReader) -> bool:
    try:
        return bool(reader.decrypt(""))
    except Exception:  # e.g. AES without the cryptography package: as good as locked
        return False


def _metadata_title(reader: PdfReader) -> str:
    try:
        meta = reader.metadata
        value = meta.title if meta is not None else None
    except Exception:  # a damaged Info dictionary costs the title, not the text
        return ""
    return " ".join(str(value).split()) if value else ""


def _page_texts(reader: PdfReader) -> list[str | None]:
    texts: list[str | None] = []
    for index in range(len(reader.pages)):
        try:
            texts.append(reader.pages[index].extract_text())
        except Exception as exc:  # one damaged page must not cost the others
            log.debug("pdf page %d: cannot extract text: %s", index + 1, exc)
            texts.append(None)
    return texts
