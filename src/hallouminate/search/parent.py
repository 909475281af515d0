"""``parent``: a returned chunk grows to the text around it (domain; pure but for the page read it awaits).

GrooveSeek's parent retriever (docs/search.md, "Parent expansion"): a chunk of fewer than
``PARENT_SHORT_TOKENS`` tokens grows to its whole page, any other to its adjacent sibling chunks (the
page's chunks next to it under the same heading path), in both directions, nearest first, up to
``PARENT_MAX_TOKENS`` tokens. A page longer than that bound cannot be given whole: a short chunk of one
grows to its siblings instead (``kind: "adjacent"``), so the bound always holds. Tokens are the embedding
model's, the unit chunks were cut in.

The expanded text is the chunks' stored texts in page order, each gap of lines between two chunks kept
as that many line breaks: where chunks end on line ends (all but a paragraph split mid-line), it is the
page's lines ``line_start``..``line_end`` verbatim, which the chunk then spans. Score and order do not
change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hallouminate.protocol.limits import PARENT_MAX_TOKENS, PARENT_SHORT_TOKENS
from hallouminate.protocol.results import ExpandedFrom, GroundChunk, ParentApplied

if TYPE_CHECKING:
    from hallouminate.ports import ChunkRow, ReaderPort

TokenCounter = Callable[[str], int]

# Token counts by chunk (id, file hash): the tokenizer costs ~0.1-0.5 ms a chunk, and an agent's searches
# keep returning the same pages. Started over when full.
_counted: dict[tuple[str, str], int] = {}
COUNT_CACHE_SIZE = 1 << 16


def estimate_tokens(text: str) -> int:
    """Without the model's tokenizer (a caller that has none): ~4/3 word-piece tokens a word, the
    all-MiniLM-L6-v2 average over this repository's wiki."""
    return (len(text.split()) * 4 + 2) // 3


def join(rows: Sequence[ChunkRow]) -> str:
    """The stored texts of consecutive chunks of one page, in order, their line gaps kept."""
    parts: list[str] = []
    last_end: int | None = None
    for row in rows:
        if last_end is not None:
            parts.append("\n" * max(1, int(row["line_start"]) - last_end))
        parts.append(row["text"] or "")
        last_end = int(row["line_end"])
    return "".join(parts)


class _Costs:
    """The tokens of a page's chunks, counted only where bounds cannot decide: a chunk has at least as
    many tokens as words (each word gives one or more) and at most as many as characters outside
    whitespace (each token covers one or more). Decisions are those of exact counts."""

    def __init__(self, page: Sequence[ChunkRow], count: TokenCounter) -> None:
        self.page = page
        self.count = count
        self.exact: dict[int, int] = {}

    def low(self, i: int) -> int:
        return self.exact[i] if i in self.exact else len((self.page[i]["text"] or "").split())

    def high(self, i: int) -> int:
        if i in self.exact:
            return self.exact[i]
        text = self.page[i]["text"] or ""
        return len(text) - sum(map(text.count, (" ", "\n", "\t")))

    def tokens(self, i: int) -> int:
        if i not in self.exact:
            row = self.page[i]
            key = (row["id"], row.get("content_hash") or "")
            counted = _counted.get(key)
            if counted is None:
                if len(_counted) >= COUNT_CACHE_SIZE:
                    _counted.clear()
                counted = _counted[key] = self.count(row["text"] or "")
            self.exact[i] = counted
        return self.exact[i]

    def under(self, chunks: Sequence[int], bound: int) -> bool:
        """Whether the chunks' tokens together are at most ``bound``."""
        if sum(self.high(i) for i in chunks) <= bound:
            return True
        if sum(self.low(i) for i in chunks) > bound:
            return False
        return sum(self.tokens(i) for i in chunks) <= bound


def expand(
    hit: ChunkRow, page: Sequence[ChunkRow], count: TokenCounter
) -> tuple[list[ChunkRow], ExpandedFrom] | None:
    """The chunks ``hit`` grows to (consecutive, page order) and how; None if ``hit`` is not in ``page``."""
    at = next((i for i, row in enumerate(page) if row["id"] == hit["id"]), None)
    if at is None:  # a commit replaced the page since the search found the chunk
        return None
    costs = _Costs(page, count)
    if costs.under([at], PARENT_SHORT_TOKENS - 1) and costs.under(range(len(page)), PARENT_MAX_TOKENS):
        return list(page), {"kind": "whole_document", "total_chunks": len(page)}
    heading = page[at]["heading_path"] or []
    low = high = at
    grew = True
    while grew:  # one sibling on each side per round, nearest first, while they fit
        grew = False
        for i in (low - 1, high + 1):
            if not (0 <= i < len(page) and (page[i]["heading_path"] or []) == heading):
                continue
            if costs.under([*range(min(low, i), max(high, i) + 1)], PARENT_MAX_TOKENS):
                low, high = min(low, i), max(high, i)
                grew = True
    own = [int(page[i]["ordinal"]) for i in (low, high)]
    return list(page[low : high + 1]), {"kind": "adjacent", "from_index": own[0], "to_index": own[1]}


async def expand_chunks(
    reader: ReaderPort,
    shown: Sequence[tuple[str, ChunkRow, GroundChunk]],
    count: TokenCounter,
) -> ParentApplied:
    """Grow each shown chunk (its store key, its row, its formatted entry) in place: ``text``,
    ``expanded_from``, and ``line_start``/``line_end`` spanning the text."""
    pages: dict[tuple[str, str], list[ChunkRow]] = {}
    expanded = 0
    for key, row, chunk in shown:
        where = (key, row["path"])
        page = pages.get(where)
        if page is None:
            page = pages[where] = await reader.page_rows(key, row["path"])
        grown = expand(row, page, count)
        if grown is None:
            continue
        rows, how = grown
        chunk["text"] = join(rows)
        chunk["line_start"] = int(rows[0]["line_start"])
        chunk["line_end"] = max(int(r["line_end"]) for r in rows)
        chunk["expanded_from"] = how
        expanded += 1
    return {"short_tokens": PARENT_SHORT_TOKENS, "max_tokens": PARENT_MAX_TOKENS, "expanded": expanded}
