"""``[[wikilinks]]``: parse them (outside code) and find the pages linking to a page (``backlinks``).

Syntax: ``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]`` (and both), ``![[target]]`` embeds
too. A target names a page by its corpus-relative path, with or without ``.md`` (``guides/setup``,
``guides/setup.md``, a leading ``/`` is ignored), or by its bare stem (``setup``). Resolution, the same
for every link: an exact path wins; otherwise a target without ``/`` is a stem and links to every page of
that stem (two ``setup.md`` in different directories are both linked: for "what breaks if I rename this
page" over-reporting is the safe side). Matching is case-sensitive, like the filesystem.

Links are found with markdown-it-py plus an inline rule, so ``[[x]]`` inside a code span, a fenced or
indented code block, HTML or the YAML front matter is not a link.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from hallouminate.config import CorpusSpec
from hallouminate.errors import CallerError
from hallouminate.indexing.walker import corpus_files
from hallouminate.protocol.results import BacklinksResult
from hallouminate.sandbox import check_leaf, check_relative_path, read_file, resolve_inside

# Pages larger than this are not scanned for links (the indexer's default max_file_bytes).
SCAN_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class WikiLink:
    """One ``[[...]]``: the raw inner text, its page target (None for ``[[#heading]]``), its 1-based line."""

    raw: str
    target: str | None
    alias: str | None
    heading: str | None
    line: int


def link_target(raw: str) -> tuple[str | None, str | None, str | None]:
    """``(target, alias, heading)`` of the text between ``[[`` and ``]]``."""
    # In a table cell the pipe is escaped (`[[a\|b]]`); the backslash belongs to the table syntax.
    target, sep, alias = raw.replace("\\|", "|").partition("|")
    target, hsep, heading = target.partition("#")
    target = target.strip().lstrip("/")
    return (target or None, alias.strip() if sep else None, heading.strip() if hsep else None)


def parse_wikilinks(text: str) -> list[WikiLink]:
    """Every wikilink of a Markdown page outside code, HTML and front matter, in document order."""
    if "[[" not in text:
        return []
    links: list[WikiLink] = []
    for block in _parser().parse(text):
        if block.type != "inline" or not block.children:
            continue
        first_line = block.map[0] + 1 if block.map else 1
        for token in _walk(block.children):
            if token.type == "wikilink":
                target, alias, heading = link_target(token.content)
                links.append(WikiLink(token.content, target, alias, heading, first_line + token.meta["line"]))
    return links


def backlinks(spec: CorpusSpec, path: str) -> BacklinksResult:
    """``{corpus, path, backlinks: [corpus-relative paths]}``: the pages linking to ``path``.

    ``path`` goes through the sandbox (no symlink on its way in any root) but need not exist: the links to
    a deleted page are worth finding. Given without ``.md`` it is completed when only the ``.md`` page
    exists. A page linking to itself is not its own backlink. Sorted, each page once.
    """
    check_relative_path(path)
    for root in spec.roots:
        target = resolve_inside(root, path, must_exist=False)
        # A missing target is fine (see above), but one that exists must be a page: a directory or a FIFO
        # is refused as read_markdown refuses it, rather than answered as a page nobody links to.
        try:
            info = os.lstat(target)
        except OSError:
            continue
        check_leaf(path, info.st_mode)
    files = corpus_files(spec)
    listed = {rel for rel, _ in files}
    if path not in listed and f"{path}.md" in listed:
        path = f"{path}.md"
    pages = listed | {path}
    stems: dict[str, set[str]] = {}
    for rel in pages:
        stems.setdefault(_stem(rel), set()).add(rel)
    found: list[str] = []
    for rel, root in files:
        if rel == path:
            continue
        text = _read_text(root, rel)
        if text is None or "[[" not in text:
            continue
        for link in parse_wikilinks(text):
            if link.target is not None and path in resolve_link(link.target, pages, stems):
                found.append(rel)
                break
    return {"corpus": spec.name, "path": path, "backlinks": sorted(found)}


def resolve_link(target: str, pages: set[str], stems: dict[str, set[str]]) -> set[str]:
    """The pages a link target points to (empty when it resolves to none)."""
    if target in pages:
        return {target}
    if f"{target}.md" in pages:
        return {f"{target}.md"}
    if "/" not in target:
        return stems.get(target.removesuffix(".md"), set())
    return set()


def _stem(rel: str) -> str:
    name = PurePosixPath(rel).name
    return name.removesuffix(".md")


def _read_text(root: Path, rel: str) -> str | None:
    """The page's text, or None when it cannot be read safely (gone, a symlink swapped in, too big)."""
    try:
        # Through the sandbox: the walk saw a regular file; a link put on its way since is not followed.
        data, _ = read_file(root, rel, max_bytes=SCAN_MAX_BYTES)
    except (CallerError, OSError):
        return None
    return data.decode("utf-8", errors="replace")


def _walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        if token.children:
            out.extend(_walk(token.children))
    return out


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule run before ``link``: ``[[inner]]`` on one line, no brackets inside."""
    start = state.pos
    src = state.src
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2, state.posMax)
    if end < 0:
        return False
    inner = src[start + 2 : end]
    if not inner.strip() or "\n" in inner or "[" in inner or "]" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
        # Lines into the inline block; the block's own map gives the first line.
        token.meta = {"line": src.count("\n", 0, start)}
    state.pos = end + 2
    return True


_local = threading.local()


def _parser() -> MarkdownIt:
    # One parser per thread: the daemon runs these from worker threads, and a parser is cheap but not free.
    md: MarkdownIt | None = getattr(_local, "md", None)
    if md is None:
        md = MarkdownIt("commonmark").use(front_matter_plugin).enable(["table", "strikethrough"])
        md.inline.ruler.before("link", "wikilink", _wikilink_rule)
        _local.md = md
    return md
