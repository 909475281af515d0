"""The pages a Markdown page links to: its ``[[wikilinks]]`` and its relative Markdown links (the connection
graph's link edges, search/graph.py).

A wikilink resolves as ``backlinks`` resolves it (browse/wikilinks.py ``resolve_link``: an exact path, the
path + ``.md``, or a bare stem naming every page of that stem). A Markdown link ``[text](href)`` counts when
``href`` is relative (no scheme, not ``/``-rooted, not only a ``#fragment``): its fragment and query are
dropped, it is percent-decoded, resolved against the page's directory, and kept when it lands on one of
``pages`` (as written, or + ``.md``) without leaving the corpus. Links inside code, HTML and front matter
are not links (markdown-it parses them, as for wikilinks).
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Collection
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from hallouminate.browse.wikilinks import SCAN_MAX_BYTES, parse_wikilinks, resolve_link
from hallouminate.config import CorpusSpec
from hallouminate.errors import CallerError
from hallouminate.sandbox import is_markdown, read_file

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_local = threading.local()


def page_links(spec: CorpusSpec, path: str, pages: Collection[str]) -> list[str]:
    """The pages of ``pages`` that ``path`` links to, in document order (wikilinks first), each once,
    without ``path`` itself; [] for a page that is not Markdown or cannot be read safely."""
    if not is_markdown(path):
        return []
    text = _read(spec, path)
    if text is None:
        return []
    known = set(pages)
    stems: dict[str, set[str]] = {}
    for page in known:
        stems.setdefault(posixpath.basename(page).removesuffix(".md"), set()).add(page)
    found: list[str] = []
    for link in parse_wikilinks(text):
        if link.target is not None:
            found.extend(sorted(resolve_link(link.target, known, stems)))
    for href in markdown_hrefs(text):
        target = relative_target(path, href)
        if target is None:
            continue
        if target in known:
            found.append(target)
        elif f"{target}.md" in known:
            found.append(f"{target}.md")
    return [page for page in dict.fromkeys(found) if page != path]


def markdown_hrefs(text: str) -> list[str]:
    """The destinations of a page's Markdown links (inline and reference), outside code and HTML."""
    if "](" not in text and "]:" not in text and "][" not in text:
        return []
    out: list[str] = []
    for block in _parser().parse(text):
        if block.type != "inline" or not block.children:
            continue
        for token in _walk(block.children):
            href = token.attrGet("href") if token.type == "link_open" else None
            if isinstance(href, str):
                out.append(href)
    return out


def relative_target(page: str, href: str) -> str | None:
    """The corpus-relative path a relative ``href`` of ``page`` names; None for any other link."""
    href = href.split("#", 1)[0].split("?", 1)[0]
    if not href or _SCHEME.match(href) or href.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(href)))
    if joined in (".", "..") or joined.startswith("../"):
        return None  # outside the corpus: not a page of it
    return joined


def _read(spec: CorpusSpec, path: str) -> str | None:
    for root in spec.roots:
        try:
            # Through the sandbox: no symlink is followed, nothing outside the root is read.
            data, _ = read_file(root, path, max_bytes=SCAN_MAX_BYTES)
        except (CallerError, OSError):
            continue
        return data.decode("utf-8", errors="replace")
    return None


def _walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        if token.children:
            out.extend(_walk(token.children))
    return out


def _parser() -> MarkdownIt:
    md: MarkdownIt | None = getattr(_local, "md", None)  # one per thread, as browse/wikilinks.py
    if md is None:
        md = MarkdownIt("commonmark").use(front_matter_plugin).enable(["table"])
        _local.md = md
    return md
