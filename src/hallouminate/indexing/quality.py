"""How much a chunk is worth showing, 0..1, scored once at index time (domain; pure; ADR 0029).

GrooveSeek's rule: start at 1.0; shorter than 30 characters -0.6; boilerplate -0.5; a single line
shorter than 80 characters -0.3; clamped to 0..1. ``ground`` drops chunks under ``min_quality`` (0.3 by
default), so only a chunk with two of the three faults falls out: a short one-liner (0.1), a
boilerplate one-liner (0.2), short boilerplate (0.0).

Length and lines are read on the chunk's whole text, its heading line included, as GrooveSeek reads
its chunks: a short fact under its heading ("## Owner" / "@alice") is the section's content and stays
(0.4), while a lone heading has no text (below). A page's only chunk is never short: it is the whole
page, however brief, and a page its author wrote must stay findable. Boilerplate is read on the *body*
(the text without its heading lines, whose words are the breadcrumb, ``heading_path``).

Boilerplate is what any wiki carries besides its content, recognised by its form, not by its topic:

- ``links-only``: every line is links (navigation, "see also" lists, a table of contents, badges, a
  breadcrumb trail, reference definitions), with at most a few words beside them ("Next:", "See").
  A link with a description ("[Runbook](r.md): failing the database over") is content.
- ``licence``: licence and copyright statements (a copyright line, "all rights reserved", SPDX tags,
  the MIT, Apache, GPL and Creative Commons boilerplate), alone or with link lines. Words in a code
  span or a short quotation are a mention, not a statement: a page describing licence lines is content.
- ``contents``: a section named as a table of contents ("Contents", "On this page", ...) that is only a
  list, linked or not.
- ``no-text``: no words outside markup (only headings, rules, HTML comments or tags, an image without
  alt text).

Code (inside fences) is always content, whatever it holds: a URL in a ``curl`` line is no link list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Reason = Literal["short", "one-line", "links-only", "licence", "contents", "no-text"]

SHORT_CHARS = 30
SHORT_PENALTY = 0.6
BOILERPLATE_PENALTY = 0.5
ONE_LINE_CHARS = 80
ONE_LINE_PENALTY = 0.3
# Words a line of links may carry besides them ("See also:", "Next:", "Up: ... | Home") and stay one.
LINK_LINE_WORDS = 3

_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_WORD = re.compile(r"[^\W_]+")
# Each removed from a line before its other words are counted; every match is one link. Bounded, so a
# line of unclosed brackets costs linear time, not quadratic.
_LINKS = re.compile(
    r"\[[^\[\]]{0,500}\]\([^()]{0,500}\)"  # [text](url), and a badge, [![alt](src)](url), once its image is alt text
    r"|\[[^\]]{0,500}\]\[[^\]]{0,500}\]"  # [text][ref]
    r"|\[\[[^\]]{1,500}\]\]"  # [[wikilink]]
    r"|<(?:https?|mailto|ftp):[^>\s]+>"  # <autolink>
    r"|\b(?:https?|ftp)://\S+"  # a bare URL
    r"|<a\b[^<>]{0,500}>[^<]{0,500}</a>",  # an HTML link
    re.IGNORECASE,
)
# An image stands for its alt text: a described diagram is content, a bare one is no text.
_IMAGE = re.compile(r"!\[([^\[\]]{0,500})\]\([^()]{0,500}\)")
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+")
_HTML_TAG = re.compile(r"<[^<>]{1,500}>")
_LICENCE = re.compile(
    r"\bcopyright\s*(?:©|\(c\)|\d{4})"
    r"|©"
    r"|\bcopyright notice\b"
    r"|\ball rights reserved\b"
    r"|\bSPDX-License-Identifier\b"
    r"|\bpermission is hereby granted\b"
    r"|\bwithout warrant(?:y|ies)\b"
    r"|\bunless required by applicable law\b"
    r"|\byou may not use this file except\b"
    r"|\blicensed under (?:the|a|an)\b(?:[^.\n]|\.\d){0,80}\blicen[cs]e\b"  # "Version 2.0" in between
    r"|\bCC[ -]BY(?:-(?:SA|NC|ND))*\b"  # a Creative Commons licence as footers name it
    r"|\bis free software[;:,]? you can redistribute it\b",  # the GPL's notice
    re.IGNORECASE,
)
# Cheap first test: a paragraph holding none of these (lowercased, whitespace runs as one space) cannot
# match ``_LICENCE``, whose search costs ~0.2 ms a paragraph.
_LICENCE_HINTS = (
    "copyright",
    "©",
    "rights reserved",
    "spdx",
    "permission is hereby",
    "warrant",
    "required by applicable law",
    "use this file except",
    "licensed under",
    "cc by",
    "cc-by",
    "is free software",
)
# A code span or a short quotation mentions the words; it does not state them ("a line saying `©`").
_MENTION = re.compile(r"`[^`\n]*`|\"[^\"\n]{0,80}\"|“[^”\n]{0,80}”")
_CONTENTS_HEADING = re.compile(
    r"^(?:table of contents|contents|toc|on this page|in this (?:page|article|section))\s*:?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quality:
    score: float
    # Why it is below 1.0, in the order the penalties apply; empty for a full score.
    reasons: tuple[Reason, ...]


def chunk_quality(text: str, heading_path: list[str] | None = None, *, whole_page: bool = False) -> Quality:
    """Score one chunk from its stored ``text`` (verbatim lines) and its breadcrumb; ``whole_page``: it
    is its page's only chunk (then it is not penalised for length)."""
    body = _body(text)
    whole = text.strip()
    flat = " ".join(whole.split())
    reasons: list[Reason] = []
    penalty = 0.0
    if len(flat) < SHORT_CHARS and not whole_page:
        reasons.append("short")
        penalty += SHORT_PENALTY
    boilerplate = _boilerplate(body, heading_path or [])
    if boilerplate is not None:
        reasons.append(boilerplate)
        penalty += BOILERPLATE_PENALTY
    if "\n" not in whole and len(flat) < ONE_LINE_CHARS and not whole_page:
        reasons.append("one-line")
        penalty += ONE_LINE_PENALTY
    # Rounded so the possible scores are the exact decimals 1.0, 0.7, 0.5, 0.4, 0.2, 0.1 and 0.0.
    return Quality(round(min(1.0, max(0.0, 1.0 - penalty)), 2), tuple(reasons))


def _body(text: str) -> str:
    """The chunk's lines without its heading lines (ATX, or a setext underline's title), outer blanks
    trimmed: the headings' words are the breadcrumb (boilerplate is judged without them)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    fence: str | None = None
    for line in lines:
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            kept.append(line)
            continue
        if opened:
            fence = opened.group(1)
            kept.append(line)
            continue
        if _HEADING_LINE.match(line):
            continue
        if _SETEXT_UNDERLINE.match(line) and kept and kept[-1].strip():
            kept.pop()  # the title line above it
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def _boilerplate(body: str, heading_path: list[str]) -> Reason | None:
    """Which boilerplate the body is, or None when it holds content."""
    if not _WORD.search(body):
        return "no-text"
    paragraphs = _paragraphs(body)
    kinds = [_paragraph_kind(p) for p in paragraphs]
    if "content" not in kinds:
        if "licence" in kinds:
            return "licence"
        return "links-only" if "links" in kinds else "no-text"
    section = heading_path[-1].strip() if heading_path else ""
    if _CONTENTS_HEADING.match(section) and all(_is_list(p) for p in paragraphs):
        return "contents"
    return None


def _paragraphs(body: str) -> list[list[str]]:
    """Runs of non-blank lines; a fenced block is one paragraph, blank lines and all."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        opened = _FENCE.match(line)
        if fence is None and not line.strip():
            if current:
                paragraphs.append(current)
                current = []
            continue
        if fence is None and opened:
            if current:
                paragraphs.append(current)
            current, fence = [line], opened.group(1)
            continue
        current.append(line)
        if fence is not None and opened and opened.group(1)[0] == fence[0]:
            paragraphs.append(current)
            current, fence = [], None
    if current:
        paragraphs.append(current)
    return paragraphs


def _paragraph_kind(lines: list[str]) -> Literal["content", "licence", "links", "empty"]:
    if _FENCE.match(lines[0]):
        return "content"  # code is content, URLs and all
    if _licence(" ".join(lines)):
        return "licence"
    kinds = [_line_kind(line) for line in lines]
    if "content" in kinds:
        return "content"
    return "links" if "links" in kinds else "empty"


def _licence(text: str) -> bool:
    lowered = " ".join(text.split()).lower()
    if not any(hint in lowered for hint in _LICENCE_HINTS):
        return False
    return _LICENCE.search(" ".join(_MENTION.sub(" ", text).split())) is not None


def _line_kind(line: str) -> Literal["content", "links", "empty"]:
    if _REFERENCE_DEFINITION.match(line):
        return "links"
    rest = _IMAGE.sub(r" \1 ", _LIST_ITEM.sub("", line, count=1))
    rest, links = _LINKS.subn(" ", rest)
    words = len(_WORD.findall(_HTML_TAG.sub(" ", rest)))
    if links:
        return "links" if words <= LINK_LINE_WORDS else "content"
    return "content" if words else "empty"


def _is_list(lines: list[str]) -> bool:
    return all(_LIST_ITEM.match(line) or line.startswith((" ", "\t")) for line in lines)
