"""Rewrite the links of one page for a move of ``from`` to ``to`` (pure: text in, text out).

Two kinds of link are rewritten, each only outside code (fenced and indented blocks, inline code spans),
HTML blocks and the front matter, as the link parsers read them:

- ``[[wikilinks]]`` (browse/wikilinks.py resolves them: an exact path, with or without ``.md``, else a bare
  stem) that resolve to ``from``: the target becomes ``to`` in the link's own style (a bare stem stays
  a bare stem when the new stem names ``to`` alone, else it becomes the path; ``.md`` and a leading
  ``/`` are kept as written), and ``#heading`` and ``|alias`` are kept. A stem naming several pages is
  left as it is, with a warning: which page it meant is not ours to guess.
- relative Markdown links, inline (``[x](../a/b.md#anchor)``, ``<...>`` destinations too) and reference
  definitions (``[x]: ../a/b.md``): one resolving, from the page's directory, to ``from`` is pointed at
  ``to``; in the moved page itself every relative link is re-aimed from its new directory, so it still
  reaches what it reached. The ``#anchor`` and ``?query`` are kept, and so are ``./`` and the
  percent-encoding style.

Positions come from a scan of each prose line (markdown-it gives no offsets of inline tokens); the lines
markdown-it parses as code, HTML or front matter are skipped, and inline code spans masked.
"""

from __future__ import annotations

import posixpath
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from hallouminate.browse.wikilinks import resolve_link

_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
# An inline link's destination: after "](", a <bracketed> one or a run without spaces and parentheses
# (a balanced pair inside is rare in wiki links and left alone).
_INLINE = re.compile(r"\]\(\s*(<[^<>\n]*>|[^\s()<>]+)")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_SKIPPED_BLOCKS = {"fence", "code_block", "html_block", "front_matter"}
# What a link destination may hold unencoded (quote's safe set, plus "/").
_URL_SAFE = "/!$&'*+,;=:@-._~"


@dataclass(frozen=True)
class Move:
    """A move of ``source`` to ``target`` in a corpus whose pages are ``before`` (and ``after`` it)."""

    source: str
    target: str
    before: set[str]
    after: set[str]
    stems_before: dict[str, set[str]] = field(default_factory=dict)
    stems_after: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, source: str, target: str, pages: set[str]) -> Move:
        before = pages | {source}
        after = (pages - {source}) | {target}
        return cls(source, target, before, after, _stems(before), _stems(after))


@dataclass
class Relinked:
    text: str
    links: int = 0
    ambiguous: list[tuple[int, str]] = field(default_factory=list)  # (line, link) left as written


def may_link(text: str, page: str, move: Move) -> bool:
    """Whether ``text`` can hold a link to the moved page (a cheap test before the parse): every link
    to it names its stem (a wikilink's path or stem, a Markdown link's file name), maybe percent-encoded.
    The moved page itself always can (its relative links are re-aimed)."""
    if page == move.source:
        return True
    stem = posixpath.basename(move.source).removesuffix(".md")
    return stem in text or quote(stem) in text


def relink(text: str, page: str, move: Move) -> Relinked:
    """``text`` of ``page`` (its path before the move) with its links to ``move.source`` rewritten; the
    moved page's own relative links re-aimed from its new directory."""
    if ("[[" not in text and "](" not in text and "]:" not in text) or not may_link(text, page, move):
        return Relinked(text)
    out = Relinked(text)
    skipped = _skipped_lines(text)
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if number in skipped or ("[" not in line):
            continue
        masked = _mask_code(line)
        lines[number] = _rewrite_line(line, masked, number + 1, page, move, out)
    out.text = "".join(lines)
    return out


def _rewrite_line(line: str, masked: str, number: int, page: str, move: Move, out: Relinked) -> str:
    edits: list[tuple[int, int, str]] = []
    for match in _WIKILINK.finditer(masked):
        inner = line[match.start(1) : match.end(1)]
        new = _wikilink(inner, move)
        if new is _AMBIGUOUS:
            out.ambiguous.append((number, f"[[{inner}]]"))
        elif new is not None:
            edits.append((match.start(1), match.end(1), new))
    for pattern in (_INLINE, _REFERENCE):
        group = 2 if pattern is _REFERENCE else 1
        for match in pattern.finditer(masked):
            start, end = match.start(group), match.end(group)
            new = _destination(line[start:end], page, move)
            if new is not None:
                edits.append((start, end, new))
    if not edits:
        return line
    out.links += len(edits)
    for start, end, new in sorted(edits, reverse=True):
        line = line[:start] + new + line[end:]
    return line


# -- wikilinks ---------------------------------------------------------------------------------------------
_AMBIGUOUS = "\0ambiguous"
_TARGET_END = re.compile(r"\\?\||#")


def _wikilink(inner: str, move: Move) -> str | None:
    """The new inner text of ``[[inner]]``, None to keep it, ``_AMBIGUOUS`` for a stem naming several."""
    end = _TARGET_END.search(inner)
    part = inner if end is None else inner[: end.start()]
    core = part.strip()
    target = core.lstrip("/")
    if not target:
        return None
    found = resolve_link(target, move.before, move.stems_before)
    if move.source not in found:
        return None
    if len(found) > 1:
        return _AMBIGUOUS
    new_target = _new_wikitarget(target, move)
    if new_target == target:
        return None
    slash = "/" if core.startswith("/") else ""
    lead = part[: len(part) - len(part.lstrip())]
    trail = part[len(part.rstrip()) :]
    return lead + slash + new_target + trail + ("" if end is None else inner[end.start() :])


def _new_wikitarget(target: str, move: Move) -> str:
    suffix = ".md" if target.endswith(".md") else ""
    if "/" not in target:
        stem = posixpath.basename(move.target).removesuffix(".md")
        candidate = stem + suffix
        if resolve_link(candidate, move.after, move.stems_after) == {move.target}:
            return candidate
    path = move.target if suffix else move.target.removesuffix(".md")
    if resolve_link(path, move.after, move.stems_after) == {move.target}:
        return path
    return move.target  # the exact path resolves first, always


# -- Markdown links ----------------------------------------------------------------------------------------
def _destination(dest: str, page: str, move: Move) -> str | None:
    """The new destination of a relative link of ``page``, None to keep it."""
    bracketed = dest.startswith("<") and dest.endswith(">")
    raw = dest[1:-1] if bracketed else dest
    if not raw or raw.startswith(("#", "/", "\\")) or _SCHEME.match(raw):
        return None
    cut = min((i for i in (raw.find("#"), raw.find("?")) if i >= 0), default=len(raw))
    path, rest = raw[:cut], raw[cut:]
    if not path:
        return None
    decoded = unquote(path)
    here = posixpath.dirname(page)
    resolved = posixpath.normpath(posixpath.join(here, decoded))
    moved_page = page == move.source
    if resolved != move.source and not moved_page:
        return None
    aimed = move.target if resolved == move.source else resolved
    new_here = posixpath.dirname(move.target) if moved_page else here
    # relpath between two paths under one fake root: a link reaching above the corpus root still does.
    new_path = posixpath.relpath(posixpath.normpath("/r/" + aimed), "/r/" + new_here if new_here else "/r")
    if decoded.endswith("/") and not new_path.endswith("/"):
        new_path += "/"
    if path.startswith("./") and not new_path.startswith("../"):
        new_path = "./" + new_path
    if new_path == decoded:
        return None
    encoded = _encode(new_path, path, bracketed)
    if encoded == path:
        return None
    new = encoded + rest
    return f"<{new}>" if bracketed else new


def _encode(new_path: str, old_path: str, bracketed: bool) -> str:
    if bracketed and "%" not in old_path:
        return new_path
    if "%" in old_path or any(c in new_path for c in " ()<>"):
        return quote(new_path, safe=_URL_SAFE)
    return new_path


# -- where links may be --------------------------------------------------------------------------------------
_local = threading.local()


def _parser() -> MarkdownIt:
    # One per thread, as browse/wikilinks.py keeps its own: moves run in worker threads.
    md: MarkdownIt | None = getattr(_local, "md", None)
    if md is None:
        md = MarkdownIt("commonmark").use(front_matter_plugin).enable(["table", "strikethrough"])
        _local.md = md
    return md


def _skipped_lines(text: str) -> set[int]:
    """0-based lines markdown-it parses as code, HTML or front matter (links there are not links)."""
    skipped: set[int] = set()
    for token in _parser().parse(text):
        if token.type in _SKIPPED_BLOCKS and token.map:
            skipped.update(range(token.map[0], token.map[1]))
    return skipped


def _mask_code(line: str) -> str:
    """``line`` with each inline code span blanked (same length), so no link is found inside one."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group()), line)


def _stems(pages: set[str]) -> dict[str, set[str]]:
    stems: dict[str, set[str]] = {}
    for rel in pages:
        stems.setdefault(posixpath.basename(rel).removesuffix(".md"), set()).add(rel)
    return stems
