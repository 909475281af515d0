"""A page's keywords: its frontmatter tags, then its most distinctive content words (domain; pure).

Computed per page from its chunks, without corpus statistics, so indexing one file never needs the
others. "Distinctive" is frequency in the page with stop words, filler words and numbers dropped and
heading words weighted up; inflected forms ("index", "indexes", "indexing") count as one word, shown in
the form the page uses most. Forms are grouped by their token, and stop words are the ones search drops:
the analyser of BM25 (``analysis.py``, ADR 0019). The order is deterministic: score, then first
appearance.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hallouminate.analysis import content_tokens

MAX_KEYWORDS = 8
# A word in a heading names what the section is about: it counts as much as this many body mentions.
HEADING_WEIGHT = 3
# Tags longer than this are prose, not tags.
MAX_TAG_CHARS = 64

# Words frequent in any technical prose that say nothing about a page, on top of the analyser's stop words.
# Their inflected forms ("makes", "making") go with them.
_FILLER_TEXT = """
    also always another anything around back can cannot could either else even ever every etc get gets
    getting got however instead like likely make makes many may might much must need needs never next
    one ones onto per rather really see seen shall since still sure take takes thing things though thus
    two use used uses using usually via want way ways well whether within without yet true false null none
    http https www com org html md e g i.e eg ie
"""
_FILLER = frozenset(_FILLER_TEXT.split())

# Letters first (numbers and "3rd" are dropped), then letters, digits, inner hyphens/apostrophes/underscores.
_TOKEN = re.compile(r"[^\W\d_](?:[\w'-]*\w)?")
# Link targets and bare URLs are addresses, not words of the page.
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_FRONTMATTER_KEYS = ("tags", "keywords")


class ChunkLike(Protocol):
    @property
    def heading_path(self) -> list[str]: ...

    @property
    def text(self) -> str: ...


def page_keywords(
    chunks: Iterable[ChunkLike],
    *,
    headings: bool = True,
    tags: Sequence[str] = (),
    limit: int = MAX_KEYWORDS,
) -> list[str]:
    """Up to ``limit`` keywords: ``tags`` first (as written), then the page's top content words.

    ``headings``: weight the words of the chunks' breadcrumbs (Markdown). Off for text, JSON and PDF,
    whose breadcrumb is a file name or a page number rather than words of the author.
    """
    out: list[str] = []
    taken: set[str] = set()
    for tag in tags:
        key = _key(tag.lower()) or tag.lower()  # a tag of stop words ("IT") is still a tag
        if key not in taken and len(out) < limit:
            out.append(tag)
            taken.add(key)
    # Raw tokens are tallied first and normalised once each at the end: a page has a few hundred tokens
    # but far fewer distinct ones. Insertion order is the order of first appearance.
    tally: dict[str, list[int]] = {}  # token -> [weighted count, first appearance]
    seen_headings: set[str] = set()
    for chunk in chunks:
        if headings:
            for heading in chunk.heading_path:
                if heading not in seen_headings:  # every chunk repeats its breadcrumb: count each once
                    seen_headings.add(heading)
                    _tally(heading, HEADING_WEIGHT, tally)
        _tally(_prose(chunk.text), 1, tally)
    words: dict[str, _Word] = {}
    for token, (score, first) in tally.items():
        form = token.split("'", 1)[0].strip("-")  # "user's" -> "user", "don't" -> "don"
        if len(form) < 3 or form in _FILLER:
            continue
        key = _key(form)
        if not key or key in _filler_keys():  # no key: stop words alone
            continue
        word = words.get(key)
        if word is None:
            word = words[key] = _Word(key, first)
        word.score += score
        word.forms[form] = word.forms.get(form, 0) + score
    # First appearances are distinct, so this order has no ties.
    ranked = sorted(words.values(), key=lambda w: (-w.score, w.first))
    for word in ranked:
        if len(out) >= limit:
            break
        if word.key not in taken:
            out.append(word.display)
            taken.add(word.key)
    return out


def frontmatter_tags(source: str) -> list[str]:
    """The ``tags`` then ``keywords`` of a YAML frontmatter block, in order, without duplicates.

    A small reader of the three forms pages use (``tags: [a, b]``, ``tags: a, b``, and a ``- a`` list
    below ``tags:``); anything else in the frontmatter is ignored, so no YAML library is needed.
    """
    lines = source.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return []
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            break
        item = re.match(r"\s*-\s+(.*)$", line)
        if item and current is not None:
            current.extend(_tag_values(item.group(1)))
            continue
        current = None
        entry = re.match(r"([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if entry and entry.group(1).lower() in _FRONTMATTER_KEYS:
            values = found.setdefault(entry.group(1).lower(), [])
            rest = entry.group(2).strip()
            if rest:
                values.extend(_tag_values(rest.removeprefix("[").removesuffix("]")))
            else:
                current = values
    else:
        return []  # no closing line: not frontmatter
    return tags_from_fields(found)


def tags_from_fields(fields: Mapping[str, Any]) -> list[str]:
    """The ``tags`` then ``keywords`` of a parsed frontmatter mapping, in order, without duplicates.

    Each may be a list of scalars or one comma-separated string; nested structures are not tags.
    """
    tags: list[str] = []
    lowered: set[str] = set()
    for key in _FRONTMATTER_KEYS:
        value = fields.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        for item in items:
            if isinstance(item, (dict, list)) or item is None:
                continue
            for tag in _tag_values(str(item)) if isinstance(item, str) else [str(item)]:
                if tag.lower() not in lowered and len(tag) <= MAX_TAG_CHARS:
                    tags.append(tag)
                    lowered.add(tag.lower())
    return tags


def _tag_values(text: str) -> list[str]:
    text = text.split(" #", 1)[0]  # a YAML comment
    values = []
    for part in text.split(","):
        value = part.strip().strip("[]").strip().strip("'\"").strip()
        if value and len(value) <= MAX_TAG_CHARS:
            values.append(value)
    return values


@dataclass
class _Word:
    key: str
    first: int
    score: int = 0
    forms: dict[str, int] = field(default_factory=dict)

    @property
    def display(self) -> str:
        # The form the page uses most; ties to the shorter, then alphabetical, so it never depends on order.
        return min(self.forms, key=lambda f: (-self.forms[f], len(f), f))


def _tally(text: str, weight: int, tally: dict[str, list[int]]) -> None:
    for token in _TOKEN.findall(text.lower()):
        entry = tally.get(token)
        if entry is None:
            tally[token] = [weight, len(tally)]
        else:
            entry[0] += weight


def _prose(text: str) -> str:
    """The text without fenced code, link targets and URLs: code is counted only when there is no prose."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        marker = _FENCE.match(line)
        if fence is None and marker:
            fence = marker.group(1)[0] * 3
            continue
        if fence is not None:
            if marker and marker.group(1).startswith(fence):
                fence = None
            continue
        kept.append(line)
    prose = "\n".join(kept)
    if not _TOKEN.search(prose):
        prose = text
    return _URL.sub(" ", _LINK_TARGET.sub("]", prose))


@functools.lru_cache(maxsize=16384)  # pages of one corpus share most of their vocabulary
def _key(word: str) -> str:
    """What the forms of one word share: its tokens ("caches", "caching" -> "cach"), "" for stop words."""
    return " ".join(content_tokens(word))


@functools.cache
def _filler_keys() -> frozenset[str]:
    return frozenset(key for key in map(_key, _FILLER) if key)
