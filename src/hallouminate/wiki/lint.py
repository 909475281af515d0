"""Advisory lint of a page that was just written: warnings, never a refusal (pure, over text).

Each warning is ``{code, message, line?}`` (line 1-based). Codes:

- ``heading-jump``: a heading more than one level deeper than the one before it (``#`` then ``###``);
- ``empty-link``: a link or image with an empty destination (``[text]()``);
- ``empty-mermaid``: a ```` ```mermaid ```` block with nothing in it;
- ``missing-title``: the first non-blank line after the frontmatter is not ``# Title``;
- ``stem-not-kebab``: the file name is not lower-case kebab-case (``release-notes.md``);
- ``wikilink-unresolved`` / ``wikilink-ambiguous``: a ``[[link]]`` that names no page, or several;
- ``frontmatter-malformed``: the YAML frontmatter is not valid YAML, not a mapping, or not closed.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from markdown_it.token import Token

from hallouminate.browse.wikilinks import parse_wikilinks, resolve_link
from hallouminate.indexing.frontmatter import parse_frontmatter
from hallouminate.protocol.results import WriteWarning
from hallouminate.wiki.markdown import frontmatter, headings, parse

KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Warnings of one kind beyond this many are summed up in one last warning.
MAX_PER_CODE = 20


def lint_page(path: str, text: str, pages: set[str]) -> list[WriteWarning]:
    """Warnings for the Markdown page ``path`` holding ``text``; ``pages`` are the corpus' files."""
    tokens = parse(text)
    warnings: list[WriteWarning] = []
    warnings += _frontmatter(text, tokens)
    warnings += _title(text, tokens)
    warnings += _heading_jumps(tokens)
    warnings += _empty_links(tokens)
    warnings += _empty_mermaid(tokens)
    warnings += _stem(path)
    warnings += _wikilinks(text, pages)
    return _capped(warnings)


def _warn(code: str, message: str, line: int | None = None) -> WriteWarning:
    warning: WriteWarning = {"code": code, "message": message}
    if line is not None:
        warning["line"] = line
    return warning


def _frontmatter(text: str, tokens: list[Token]) -> list[WriteWarning]:
    block = frontmatter(tokens)
    if block is None:
        first = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
        if first == "---":
            return [
                _warn(
                    "frontmatter-malformed",
                    "the frontmatter opened by '---' on line 1 is never closed by a '---' line",
                    1,
                )
            ]
        return []
    _, error = parse_frontmatter(block.content, first_line=block.start + 2)
    if error is None:
        return []
    return [
        _warn(
            "frontmatter-malformed",
            f"{error}; the block is indexed as plain text until it is fixed",
            block.start + 1,
        )
    ]


def _title(text: str, tokens: list[Token]) -> list[WriteWarning]:
    block = frontmatter(tokens)
    lines = text.lstrip("\ufeff").split("\n")
    for number in range((block.end if block else 0), len(lines)):
        line = lines[number].strip()
        if not line:
            continue
        if re.match(r"# +\S", line):
            return []
        return [
            _warn(
                "missing-title",
                f"the first line ({_short(line)!r}) is not a '# Title' heading: the H1 names the page in "
                "search results and in the parent index.md",
                number + 1,
            )
        ]
    return [_warn("missing-title", "the page is empty: start it with a '# Title' line")]


def _heading_jumps(tokens: list[Token]) -> list[WriteWarning]:
    out = []
    previous = None
    for heading in headings(tokens):
        if previous is not None and heading.level > previous + 1:
            out.append(
                _warn(
                    "heading-jump",
                    f"'{'#' * heading.level} {_short(heading.text)}' (h{heading.level}) follows an "
                    f"h{previous}: use h{previous + 1}",
                    heading.start + 1,
                )
            )
        previous = heading.level
    return out


def _empty_links(tokens: list[Token]) -> list[WriteWarning]:
    out = []
    for block in tokens:
        if block.type != "inline" or not block.children:
            continue
        line = block.map[0] + 1 if block.map else None
        for child in block.children:
            if child.type == "link_open" and not str(child.attrs.get("href", "")).strip():
                out.append(_warn("empty-link", "a link has an empty destination: '[text]()'", line))
            elif child.type == "image" and not str(child.attrs.get("src", "")).strip():
                out.append(_warn("empty-link", "an image has an empty source: '![alt]()'", line))
    return out


def _empty_mermaid(tokens: list[Token]) -> list[WriteWarning]:
    out = []
    for token in tokens:
        if (
            token.type == "fence"
            and token.info.strip().split()[:1] == ["mermaid"]
            and not token.content.strip()
        ):
            out.append(
                _warn("empty-mermaid", "a mermaid block is empty", token.map[0] + 1 if token.map else None)
            )
    return out


def _stem(path: str) -> list[WriteWarning]:
    name = PurePosixPath(path).name
    stem = name.rsplit(".", 1)[0]
    if KEBAB.fullmatch(stem):
        return []
    slug = "-".join(re.findall(r"[a-z0-9]+", stem.lower())) or "page"
    return [
        _warn(
            "stem-not-kebab",
            f"the file name {name!r} is not lower-case kebab-case: e.g. '{slug}.md' (rename by writing the new "
            "path and deleting this one)",
        )
    ]


def _wikilinks(text: str, pages: set[str]) -> list[WriteWarning]:
    stems: dict[str, set[str]] = {}
    for rel in pages:
        stems.setdefault(PurePosixPath(rel).name.removesuffix(".md"), set()).add(rel)
    out = []
    for link in parse_wikilinks(text):
        if link.target is None:
            continue
        found = resolve_link(link.target, pages, stems)
        if not found:
            out.append(
                _warn("wikilink-unresolved", f"[[{link.raw}]] names no page of this corpus", link.line)
            )
        elif len(found) > 1:
            out.append(
                _warn(
                    "wikilink-ambiguous",
                    f"[[{link.raw}]] names {len(found)} pages ({', '.join(sorted(found))}): write the path",
                    link.line,
                )
            )
    return out


def _capped(warnings: list[WriteWarning]) -> list[WriteWarning]:
    counts: dict[str, int] = {}
    out = []
    for warning in warnings:
        code = warning["code"]
        counts[code] = counts.get(code, 0) + 1
        if counts[code] <= MAX_PER_CODE:
            out.append(warning)
    for code, count in counts.items():
        if count > MAX_PER_CODE:
            out.append(_warn(code, f"{count - MAX_PER_CODE} more {code} warnings not shown"))
    return out


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
