"""Snippets: the stretch of a chunk body that best shows why it matched (domain; pure)."""

from __future__ import annotations

import bisect
import re

from hallouminate.analysis import TokenFinder

ELLIPSIS = "…"
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}(?:\s.*)?$")
# A word as the analyser cuts them (its tokenizer splits on anything not alphanumeric, "_" included).
_WORD = re.compile(r"[^\W_]+")

# Finds the query's tokens in a chunk's text: the words whose token (by the analyser of BM25) is one of
# them, so a snippet shows the words that matched ("run the job" for "running jobs"). Built once per query.
TermFinder = TokenFinder


def make_snippet(text: str, terms: list[str], width: int, finder: TermFinder | None = None) -> str:
    """At most ``width`` characters of ``text`` (whitespace collapsed) around the densest run of terms."""
    flat = _flatten(without_leading_headings(text))
    if len(flat) <= width:
        return flat
    hits = (finder if finder is not None else TermFinder(terms)).positions(flat)
    start = _fit_hits(flat, hits, _best_start(hits, width), width) if hits else 0
    return window(flat, start, width)


def lead_in(match_start: int, match_end: int, width: int) -> int:
    """Where a window of ``width`` showing the match ``[match_start, match_end)`` starts: a fifth of the
    width of context before it, less when the match would not fit whole between the ellipses."""
    return max(0, min(match_start, max(match_start - width // 5, match_end - (width - 2))))


def _fit_hits(flat: str, hits: list[tuple[int, int]], start: int, width: int) -> int:
    """``start``, moved right as little as needed for the window's first matched words to show whole.

    The window keeps ``width // 5`` characters of context before its first hit; with a small width that
    lead pushed a long matched word (or the end of a phrase) past the cut: "…the hallouminate_c…". The
    context gives way first; a word longer than the window starts it (and is cut, as it must be)."""
    span = width - 2  # room between the two ellipses
    inside = [offset for offset, _ in hits if offset >= start]
    if not inside:
        return start
    first = inside[0]
    need = start
    for offset in inside:
        word = _WORD.match(flat, offset)
        end = word.end() if word else offset + 1
        if end - first > span:
            break
        need = max(need, end - span)
    if need == start and (word := _WORD.match(flat, first)) is not None and word.end() - first > span:
        need = first
    return max(start, min(need, first))


def _flatten(text: str) -> str:
    """``" ".join(text.split())``: whitespace runs collapsed to one space, none at either end."""
    # Most chunk bodies are lines of single-spaced words: replacing the line breaks is enough, and three C
    # scans check that (every whitespace character but the space is unprintable) instead of one string
    # per word.
    flat = text.replace("\n", " ")
    if flat.isprintable() and "  " not in flat and flat[:1] != " " and flat[-1:] != " ":
        return flat
    return " ".join(text.split())


def without_leading_headings(text: str) -> str:
    # The heading is already shown as the breadcrumb; keep it only when it is all there is. Walks only the
    # leading lines (most chunks have one heading line or none) instead of splitting the whole text.
    if text and text[0] != "#" and not text[0].isspace():  # a first line of text: no heading to drop
        return text
    at = 0
    while True:
        end = text.find("\n", at)
        line = text[at:] if end < 0 else text[at:end]
        if line and not line.isspace() and not _HEADING_LINE.match(line):
            return text[at:]
        if end < 0:
            return text  # nothing but headings and blank lines
        at = end + 1


def _best_start(hits: list[tuple[int, int]], width: int) -> int:
    # Window anchored a little before a hit; pick the one covering the most distinct terms, then the most
    # occurrences, then the earliest. Hits are in offset order, so each window's hits are a slice.
    lead = width // 5
    span = width - 2
    first = max(0, hits[0][0] - lead)
    if hits[-1][0] < first + span:
        # Common: the first window holds every hit, so no later one (starting later) can beat it.
        return first
    offsets, indexes = zip(*hits, strict=True)
    best_key: tuple[int, int, int] | None = None
    best_start = 0
    last_end = -1
    for offset in offsets:
        start = max(0, offset - lead)
        end = bisect.bisect_left(offsets, start + span)
        if end == last_end:
            # Same last hit as the window before, starting no earlier: it holds a subset of that one's
            # hits, so it cannot beat it (and ties go to the earlier).
            continue
        last_end = end
        inside = indexes[bisect.bisect_left(offsets, start) : end]
        key = (len(set(inside)), len(inside), -start)
        if best_key is None or key > best_key:
            best_key, best_start = key, start
    return best_start


def window(flat: str, start: int, width: int) -> str:
    # Reserve room for the ellipses, then snap both ends to word boundaries.
    if start > 0:
        room = width - 2
        start = min(start, max(0, len(flat) - room))
        if start > 0 and flat[start - 1] != " ":
            space = flat.find(" ", start)
            if 0 <= space < start + room // 3:
                start = space + 1
    room = width - (1 if start > 0 else 0)
    end = start + room
    if end >= len(flat):
        return (ELLIPSIS if start > 0 else "") + flat[start:]
    room -= 1  # the trailing ellipsis
    end = start + room
    space = flat.rfind(" ", start, end + 1)
    if space > start + room // 2:
        end = space
    return (ELLIPSIS if start > 0 else "") + flat[start:end].rstrip() + ELLIPSIS
