"""Markdown-it tokens -> a tree of blocks with true line ranges (domain; no I/O).

markdown-it's ``map`` gives each block its ``[first, last)`` line range, which is why a ``#`` line inside a
code fence is never taken for a heading and why chunk line numbers stay exact.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

_local = threading.local()


def _parser() -> MarkdownIt:
    # One parser per thread: index and ground may run concurrently and the parser holds rule state.
    md = getattr(_local, "md", None)
    if md is None:
        # Footnote definitions stay where they are written (move_to_end=False) so they keep their line
        # map; inline ``^[...]`` notes are left as text, they already sit in the citing paragraph.
        md = (
            MarkdownIt("commonmark")
            .use(front_matter_plugin)
            .use(footnote_plugin, inline=False, move_to_end=False)
            .enable(["table", "strikethrough"])
        )
        _local.md = md
    return md


@dataclass
class Block:
    kind: str  # markdown-it token type without "_open": paragraph, heading, fence, bullet_list, ...
    tag: str
    start: int  # first line, 0-based
    end: int  # one past the last line
    children: list[Block] = field(default_factory=list)
    inline: Token | None = None
    # The label of a footnote definition (kind "footnote_reference"); YAML source of "front_matter".
    label: str | None = None
    content: str = ""

    @property
    def heading_level(self) -> int | None:
        if self.kind == "heading" and re.fullmatch(r"h[1-6]", self.tag):
            return int(self.tag[1])
        return None

    def plain_text(self) -> str:
        return inline_plain_text(self.inline) if self.inline is not None else ""

    def footnote_refs(self) -> list[str]:
        """Labels of the footnotes this block and its descendants cite, in order. markdown-it only
        makes a reference of ``[^x]`` when ``x`` is defined and it is not in a code span or fence."""
        labels = [
            child.meta["label"]
            for child in (self.inline.children or [] if self.inline is not None else [])
            if child.type == "footnote_ref" and child.meta.get("label") is not None
        ]
        for child in self.children:
            labels.extend(child.footnote_refs())
        return labels


def parse_blocks(source: str) -> list[Block]:
    """The top-level blocks of ``source`` (newlines already normalised to ``\\n``)."""
    root = Block("root", "", 0, 0)
    stack = [root]
    for tok in _parser().parse(source):
        if tok.nesting == 1:
            node = Block(tok.type.removesuffix("_open"), tok.tag, *(tok.map or (-1, -1)))
            if tok.type == "footnote_reference_open":
                node.label = tok.meta.get("label")
            stack[-1].children.append(node)
            stack.append(node)
        elif tok.nesting == -1:
            stack.pop()
        elif tok.type == "inline":
            stack[-1].inline = tok
        elif tok.map is not None:
            leaf = Block(tok.type, tok.tag, tok.map[0], tok.map[1])
            if tok.type == "front_matter":
                leaf.content = tok.content
            stack[-1].children.append(leaf)
    return [_hoist(b) for b in root.children]


def _hoist(block: Block) -> Block:
    # Table cells carry no line map; lift the mapped descendants of unmapped nodes to their parent.
    mapped: list[Block] = []
    for child in block.children:
        child = _hoist(child)
        if child.start >= 0:
            mapped.append(child)
        else:
            mapped.extend(child.children)
    block.children = mapped
    return block


def inline_plain_text(token: Token) -> str:
    """The text a reader sees: inline markup, link targets and HTML dropped, whitespace collapsed."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(inline_plain_text(child))
    return " ".join("".join(parts).split())
