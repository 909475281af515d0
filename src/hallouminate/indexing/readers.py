"""Which reader handles each document format: the one table the indexer and the read tools dispatch on.

Markdown, plain text and JSON are text files read verbatim (their chunkers take a decoded string); every
other format has a ``Reader`` here (indexing/documents.py states the contract). A format listed in
``sandbox.formats`` but missing here is skipped by the indexer as unparseable, with a reason naming it.
"""

from __future__ import annotations

from hallouminate.indexing.code import chunk_code, extract_code
from hallouminate.indexing.documents import ChunkContext, Extracted, FunctionReader, Part, Reader
from hallouminate.indexing.docx_reader import chunk_docx, extract_docx
from hallouminate.indexing.html_reader import html_chunk, html_extract
from hallouminate.indexing.pdf_text import PAGE_CRUMB, chunk_pdf, page_texts, pdf_title
from hallouminate.indexing.pptx_reader import chunk_pptx, extract_pptx
from hallouminate.indexing.sheets import CSV_READER, ODS_READER, TSV_READER, XLSX_READER
from hallouminate.indexing.text_chunker import TextPage
from hallouminate.sandbox.formats import Format, file_format

__all__ = ["READERS", "reader_for"]


def _pdf_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    return chunk_pdf(data, ctx.count_tokens, ctx.budget, title=ctx.title)


def _pdf_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    texts = page_texts(data)
    parts = [Part(PAGE_CRUMB.format(n), f"Page {n}", text) for n, text in enumerate(texts, 1)]
    return Extracted(parts, title=pdf_title(data))


READERS: dict[Format, Reader] = {
    "pdf": FunctionReader(_pdf_chunk, _pdf_extract),
    "docx": FunctionReader(chunk_docx, extract_docx),
    "pptx": FunctionReader(chunk_pptx, extract_pptx),
    "xlsx": XLSX_READER,
    "ods": ODS_READER,
    "csv": CSV_READER,
    "tsv": TSV_READER,
    "html": FunctionReader(html_chunk, html_extract),
    "code": FunctionReader(chunk_code, extract_code),
}


def reader_for(path: str) -> Reader | None:
    """The reader of ``path``'s format; None for the text formats read verbatim (Markdown, text, JSON)."""
    return READERS.get(file_format(path))
