"""What the write tools need to know of a page's structure: headings, its H1, its frontmatter (pure).

Parsed with markdown-it (CommonMark + YAML frontmatter), so a ``#`` line inside a code fence or the
frontmatter is never taken for a heading. Line numbers are 0-based here; callers show them 1-based.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

_local = threading.local()


def parse(text: str) -> list[Token]:
    md: MarkdownIt | None = getattr(_local, "md", None)
    if md is None:
        # One parser per thread: writes run in worker threads and a parser holds rule state.
        md = MarkdownIt("commonmark").use(front_matter_plugin).enable(["table", "strikethrough"])
        _local.md = md
    return md.parse(text)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # the heading's inline source, trailing '#'s and outer whitespace removed
    start: int  # its first line (0-based)
    end: int  # one past its last line (a setext heading spans two)


def headings(tokens: list[Token]) -> list[Heading]:
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        inline = tokens[index + 1] if index + 1 < len(tokens) else None
        text = inline.content.strip() if inline is not None and inline.type == "inline" else ""
        found.append(Heading(int(token.tag[1]), text, token.map[0], token.map[1]))
    return found


def first_h1(text: str) -> str | None:
    """The page's title: the text of its first level-1 heading, if it has one."""
    if "#" not in text and "=" not in text:
        return None
    for heading in headings(parse(text)):
        if heading.level == 1 and heading.text:
            return heading.text
    return None


@dataclass(frozen=True)
class Frontmatter:
    content: str  # the YAML between the fences
    start: int  # the opening fence's line (0-based)
    end: int  # one past the closing fence's line


def frontmatter(tokens: list[Token]) -> Frontmatter | None:
    for token in tokens:
        if token.type == "front_matter" and token.map is not None:
            return Frontmatter(token.content, token.map[0], token.map[1])
    return None
