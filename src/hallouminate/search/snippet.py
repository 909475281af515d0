"""Snippets: the stretch of a chunk body that best shows why it matched (domain; pure)."""

from __future__ import annotations

import bisect
import re

from hallouminate.search.terms import stem

ELLIPSIS = "…"
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}(?:\s.*)?$")


class TermFinder:
    """Every term's stem at a word start, found with ``str.find``; built once per query.

    It finds what one regex of the stems (longest first) would, without compiling one per query (that
    cost ~165 us, measured): at each offset the longest stem found names the term (the first term of a
    repeated stem), and matches never overlap (a stem that is a prefix of another does not hide it).
    """

    def __init__(self, terms: list[str]) -> None:
        stems = [stem(term) for term in terms]
        order = sorted(range(len(terms)), key=lambda i: -len(stems[i]))
        first: dict[str, int] = {}
        for i in order:
            first.setdefault(stems[i], i)
        # query_terms never gives an empty term; one would match everywhere and find nothing here.
        self.stems = [(s, i, len(s)) for s, i in first.items() if s]
        # Stems of word characters (all query_terms gives) cannot overlap where each starts a word: a
        # match inside another would follow a word character. Others need the regex scan's overlap rule.
        letters = "".join(s for s, _, _ in self.stems).replace("_", "a")  # \w is alphanumeric or "_"
        self._words_only = not letters or letters.isalnum()

    def positions(self, lowered: str) -> list[tuple[int, int]]:
        """``(offset, term index)`` of each occurrence in ``lowered`` (a lower-cased text), in order."""
        found: dict[int, int] = {}
        lengths: dict[int, int] = {}
        find = lowered.find
        for term_stem, index, length in self.stems:  # longest first: the first stem found at an offset wins
            at = find(term_stem)
            while at >= 0:
                before = lowered[at - 1] if at else " "
                if (before == " " or not (before.isalnum() or before == "_")) and at not in found:
                    found[at] = index
                    lengths[at] = length
                at = find(term_stem, at + 1)
        if self._words_only:
            return sorted(found.items())
        hits: list[tuple[int, int]] = []
        end = 0
        for offset, index in sorted(found.items()):
            if offset >= end:  # a regex scan resumes after each match
                hits.append((offset, index))
                end = offset + lengths[offset]
        return hits


def make_snippet(text: str, terms: list[str], width: int, finder: TermFinder | None = None) -> str:
    """At most ``width`` characters of ``text`` (whitespace collapsed) around the densest run of terms."""
    flat = _flatten(without_leading_headings(text))
    if len(flat) <= width:
        return flat
    hits = (finder if finder is not None else TermFinder(terms)).positions(flat.lower())
    start = _best_start(hits, width) if hits else 0
    return window(flat, start, width)


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
