"""Snippets: the stretch of a chunk body that best shows why it matched (domain; pure)."""

from __future__ import annotations

import re

from hallouminate.search.terms import stem

ELLIPSIS = "…"
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}(?:\s.*)?$")


def term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """One regex finding every term's stem at a word start; group ``t<i>`` names the term.

    Built once per query: compiling and scanning per term and per chunk cost ~150 us a snippet.
    """
    if not terms:
        return None
    # Longer stems first so that one stem being a prefix of another does not hide the longer one.
    order = sorted(range(len(terms)), key=lambda i: -len(stem(terms[i])))
    alternatives = "|".join(f"(?P<t{i}>{re.escape(stem(terms[i]))})" for i in order)
    return re.compile(r"(?<!\w)(?:" + alternatives + ")")


def make_snippet(text: str, terms: list[str], width: int, pattern: re.Pattern[str] | None = None) -> str:
    """At most ``width`` characters of ``text`` (whitespace collapsed) around the densest run of terms."""
    flat = " ".join(_without_leading_headings(text).split())
    if len(flat) <= width:
        return flat
    hits = _term_positions(flat, pattern if pattern is not None else term_pattern(terms))
    start = _best_start(hits, width) if hits else 0
    return _window(flat, start, width)


def _without_leading_headings(text: str) -> str:
    # The heading is already shown as the breadcrumb; keep it only when it is all there is.
    lines = text.split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or _HEADING_LINE.match(lines[i])):
        i += 1
    rest = "\n".join(lines[i:])
    return rest if rest.strip() else text


def _term_positions(flat: str, pattern: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """``(offset, term index)`` of each occurrence of a term's stem at a word start."""
    if pattern is None:
        return []
    return [(match.start(), int(str(match.lastgroup)[1:])) for match in pattern.finditer(flat.lower())]


def _best_start(hits: list[tuple[int, int]], width: int) -> int:
    # Window anchored a little before a hit; pick the one covering the most distinct terms, then the most
    # occurrences, then the earliest.
    lead = width // 5
    best_key: tuple[int, int, int] | None = None
    best_start = 0
    for offset, _ in hits:
        start = max(0, offset - lead)
        inside = [t for o, t in hits if start <= o < start + width - 2]
        key = (len(set(inside)), len(inside), -start)
        if best_key is None or key > best_key:
            best_key, best_start = key, start
    return best_start


def _window(flat: str, start: int, width: int) -> str:
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
