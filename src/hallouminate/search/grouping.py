"""``group_by: "page"``: one entry per PDF page, the page's best chunk with its chunk count (domain; pure).

A PDF chunk carries its 1-based ``page`` and a ``page:N`` breadcrumb (indexing/pdf_text.py). Chunks of
other formats have neither and stay single entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from hallouminate.ports import ChunkRow
from hallouminate.protocol.results import ChunkedDoc, GroundChunk

T = TypeVar("T")

_PAGE_CRUMB = re.compile(r"page:([1-9][0-9]*)")


def page_of(chunk: GroundChunk | ChunkRow) -> int | None:
    """The chunk's page: its ``page`` field, else a ``page:N`` element of its breadcrumb."""
    page = chunk.get("page")
    if isinstance(page, int) and not isinstance(page, bool):
        return page
    for crumb in reversed(list(chunk.get("heading_path") or [])):
        match = _PAGE_CRUMB.fullmatch(str(crumb))
        if match:
            return int(match.group(1))
    return None


def group_pages(items: Sequence[T], page: Callable[[T], int | None]) -> list[tuple[T, int | None]]:
    """``items`` (best first) as entries: per page its first item with the page's item count; every
    item without a page on its own (count ``None``). Entries keep the order of their best item."""
    counts: dict[int, int] = {}
    for item in items:
        number = page(item)
        if number is not None:
            counts[number] = counts.get(number, 0) + 1
    entries: list[tuple[T, int | None]] = []
    seen: set[int] = set()
    for item in items:
        number = page(item)
        if number is None:
            entries.append((item, None))
        elif number not in seen:
            seen.add(number)
            entries.append((item, counts[number]))
    return entries


def group_doc_chunks(doc: ChunkedDoc, chunks_per_file: int) -> bool:
    """Replace the formatted chunks of a ranked ``doc`` (best first) by page entries, at most
    ``chunks_per_file``; True when entries were cut."""
    entries = group_pages(doc["chunks"], page_of)
    chunks: list[GroundChunk] = []
    for chunk, count in entries[:chunks_per_file]:
        if count is not None:
            chunk = {**chunk, "chunk_count": count}
        chunks.append(chunk)
    doc["chunks"] = chunks
    return len(entries) > chunks_per_file
