"""Read an HTML page as a Markdown-like view of its main text, and chunk that view like Markdown (domain;
pure: bytes in, values out).

The view (``html_view``) is ONE unlabelled part: headings as ``#`` lines, paragraphs and other blocks
separated by blank lines, list items as ``- `` lines, ``pre`` as a fenced block kept verbatim, table rows
one per line with cells joined by `` | ``, ``br`` as a line break, inline text with whitespace collapsed.
A line of text that Markdown would read as syntax (``#``, ``---``, ``>``, ``1.``, ``|``, ``<``, ``[``...
at its start) is escaped with a backslash, so the chunker never mistakes a sentence for a heading, a
table or a front matter. Scripts, styles, hidden elements, forms' controls and the page's chrome
(``nav``, ``aside``, a page-level ``header``/``footer``, ARIA navigation/banner/contentinfo landmarks)
are dropped; of a page with a ``<main>`` (or a ``role=main``, or a single top-level ``<article>``) only
that is read.

Chunks are ``chunk_markdown``'s on the view, so their lines are the view's lines (what ``read_markdown``
shows); the breadcrumb is rooted at the page's title (``<title>``, else its first ``h1``, else the file
name) and ``page`` is None.

Hostile pages: lexbor (selectolax's parser) spends time quadratic in the nesting depth (100,000 nested
``<div>`` take minutes: each block start tag scans the stack of open elements), so before parsing a
scan of the tags drops every start tag that would nest deeper than ``MAX_DEPTH`` (browsers flatten too:
Chromium's parser stops nesting at 512); the text is kept, in order. The tree is walked iteratively, never
recursively, and the view stops at ``limits.max_extracted_chars`` characters (``cut`` says so).
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from hallouminate.indexing.chunker import BREADCRUMB_SEP, chunk_markdown, compose_embed_text
from hallouminate.indexing.documents import ChunkContext, Extracted, Part
from hallouminate.indexing.text_chunker import TextChunk, TextPage, UnparseableFile, summarize

__all__ = ["MAX_DEPTH", "HtmlView", "html_chunk", "html_extract", "html_view"]

# Deepest element nesting handed to the parser; deeper start tags are dropped (their text kept). Real
# pages nest a few dozen deep; 256 keeps lexbor's per-tag scope scans short (measured in
# docs/indexing.md#html).
MAX_DEPTH = 256

# -- decoding --------------------------------------------------------------------------------------------
# A <meta charset> or http-equiv Content-Type is looked for in the first bytes, as browsers prescan them.
_PRESCAN_BYTES = 8192
_META_CHARSET = re.compile(rb"<meta\b[^>]{0,512}?\bcharset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]{1,40})", re.I)
# The encoding labels browsers read differently from Python (the WHATWG Encoding standard): Latin-1 and
# ASCII labels mean windows-1252; UTF-16/32 declared in a page that is not UTF-16 means UTF-8.
_WHATWG_LABELS = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "latin5": "cp1254",
    "tis-620": "cp874",
    "gb2312": "gbk",
    "x-user-defined": "cp1252",
}


def decode_html(data: bytes) -> str:
    """The page's text: UTF-8 (a BOM wins), or the encoding its ``<meta>`` declares when Python knows it.

    Invalid bytes are not replaced: the page is ``UnparseableFile`` with the offset, as a text file that is
    not UTF-8 is skipped, rather than indexed with holes that no phrase search would find.
    """
    if data.startswith(codecs.BOM_UTF8):
        return _decode(data, "utf-8-sig", "UTF-8 (the page starts with a UTF-8 byte order mark)")
    declared = _declared_charset(data[:_PRESCAN_BYTES])
    if declared is not None:
        label = declared.decode("ascii").lower()
        try:
            name = codecs.lookup(_WHATWG_LABELS.get(label, label)).name
        except LookupError:
            name = "utf-8"  # a charset Python does not know: read as UTF-8, said if that fails
        if not name.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
            return _decode(data, name, f"{name} (the page's <meta> declares charset {label!r})")
    return _decode(data, "utf-8", "UTF-8 (the page declares no other encoding in a <meta charset>)")


def _declared_charset(head: bytes) -> bytes | None:
    match = _META_CHARSET.search(head)
    return match.group(1) if match else None


def _decode(data: bytes, encoding: str, said: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UnparseableFile(
            f"not valid {said}: invalid byte at offset {exc.start}; save the page as UTF-8 or declare "
            "its encoding with <meta charset=...>"
        ) from None


def _names(text: str) -> list[str]:
    return text.split()


# -- depth guard -----------------------------------------------------------------------------------------
# Start tags that never stay open (void) or that the parser closes by itself when a sibling starts (their
# end tag is optional): neither can nest deep on its own, so the scan does not count them.
_VOID = frozenset(
    _names(
        "area base basefont bgsound br col embed frame hr image img input keygen link meta param source "
        "track wbr"
    )
)
_SELF_CLOSING_SIBLINGS = frozenset(
    _names(
        "html head body p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp"
    )
)
_RAW_TEXT = ("script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title")
_RAW_TEXT_END = {name: re.compile(rf"</{name}[\t\n\f\r />]", re.I) for name in _RAW_TEXT}
_MARKUP = re.compile(r"<(?:(/?)([A-Za-z][^\t\n\f\r />]*)|!--|[!?])")
# The rest of a tag after its name, as the HTML tokenizer reads it: attributes with quoted or unquoted
# values, up to the '>' outside quotes. Possessive: no backtracking, linear even when it fails.
_TAG_REST = re.compile(
    r"(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+"
    r"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"|'[^']*+'|[^\t\n\f\r >]*+))?+)*+>"
)
_COMMENT_END = re.compile(r"--!?>")


def flatten_depth(src: str, max_depth: int = MAX_DEPTH) -> tuple[str, int]:
    """``src`` without the start tags that would nest deeper than ``max_depth`` elements, and how many
    were dropped. An estimate of the parser's stack (it counts neither void elements nor those whose end
    tag is optional, and pops to the matching open element on an end tag): it bounds the parser's work
    on hostile pages; on real ones it drops nothing."""
    if src.count("<") <= max_depth:
        return src, 0
    stack: list[str] = []
    open_names: Counter[str] = Counter()
    kept: list[str] = []
    last = pos = dropped = 0
    while (match := _MARKUP.search(src, pos)) is not None:
        start = match.start()
        name = match.group(2)
        if name is None:  # a comment, a doctype, a processing instruction: no tags inside
            if src.startswith("<!--", start):
                if src.startswith(("<!-->", "<!--->"), start):
                    pos = src.index(">", start + 4) + 1
                    continue
                end_match = _COMMENT_END.search(src, start + 4)
                if end_match is None:
                    break  # an unclosed comment runs to the end of the file
                pos = end_match.end()
                continue
            close = src.find(">", start + 2)
            if close < 0:
                break
            pos = close + 1
            continue
        rest = _TAG_REST.match(src, match.end())
        if rest is None:
            break  # an unterminated tag runs to the end of the file: nothing after it is markup
        end = rest.end()
        pos = end
        name = name.lower()
        if match.group(1):  # an end tag closes its element and whatever is still open inside it
            if open_names[name]:
                while stack:
                    top = stack.pop()
                    open_names[top] -= 1
                    if top == name:
                        break
            continue
        if name in _RAW_TEXT_END:
            raw_end = _RAW_TEXT_END[name].search(src, end)
            if raw_end is None:
                break
            pos = raw_end.start()
            continue
        if name == "plaintext":
            break
        if name in _VOID or name in _SELF_CLOSING_SIBLINGS:
            continue
        if src[end - 2] == "/" and (open_names["svg"] or open_names["math"]):
            continue  # <path/> in SVG or MathML closes itself (in HTML, <div/> does not)
        if len(stack) >= max_depth:
            kept.append(src[last:start])
            last = end
            dropped += 1
            continue
        stack.append(name)
        open_names[name] += 1
    if not dropped:
        return src, 0
    kept.append(src[last:])
    return "".join(kept), dropped


# -- the view --------------------------------------------------------------------------------------------
# Elements whose content is never the page's text.
_DROPPED = frozenset(
    _names(
        "script style noscript template svg math iframe frame frameset object embed canvas video audio map "
        "nav aside head title meta link base button input select textarea option optgroup datalist output "
        "progress meter dialog"
    )
)
_CHROME_SELECTOR = (
    '[hidden]:not([hidden="until-found" i]), [aria-hidden="true" i], [role~="navigation" i], '
    '[role~="banner" i], [role~="contentinfo" i], [role~="complementary" i], [role~="search" i]'
)
# header/footer are the page's banner and footer only outside a sectioning element (ARIA's rule): inside
# an <article> or <main> they hold its title and byline, which are text.
_PAGE_CHROME = frozenset(("header", "footer"))
_SECTIONING = frozenset(("article", "main", "section"))
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = frozenset(("ul", "ol", "menu", "dir"))
_CELLS = frozenset(("td", "th"))
_BLOCKS = frozenset(
    _names(
        "address article blockquote body center dd details div dl dt fieldset figcaption figure form "
        "hgroup hr legend main p section summary caption search header footer li ul ol menu dir table "
        "thead tbody tfoot tr td th pre h1 h2 h3 h4 h5 h6 html"
    )
)
_TEXT = "-text"
_BREAK = "\x00"  # a <br> in the inline buffer (the parser drops NUL characters from text)
_MAX_LIST_INDENT = 8  # nested lists deeper than this are not indented further (the chunker's parser nests)
# A line Markdown would read as block syntax: escaped with a backslash at its start.
_BLOCK_SYNTAX = frozenset("#>-+*=_|<[`~:\\")
_ORDERED = re.compile(r"(\d{1,9})([.)])(?=\s|$)")
# Inline markup in a heading (emphasis, code, links, HTML, entities, strikethrough): escaped so the heading
# path reads as the heading's text; a lone "&" or "<" stays as it is.
_HEADING_INLINE = re.compile(r"[\\`*_\[\]]|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)|~~")
_CLOSING_HASHES = re.compile(r"(^|\s)(#+)$")
_BACKTICKS = re.compile(r"`{3,}")

# Exit actions pushed on the walk's stack for an element whose end matters.
_NONE, _FLUSH, _HEADING, _ITEM, _LIST, _ROW, _CELL, _TABLE, _SECTION, _SOFT = range(10)


@dataclass(frozen=True)
class HtmlView:
    """A page's extracted view: the text, the breadcrumb root, its first paragraph and why it was cut."""

    text: str
    # <title>, else the first h1 of the view; "" when the page states neither.
    stated_title: str
    first_paragraph: str
    cut: str | None


def html_view(data: bytes, ctx: ChunkContext) -> HtmlView:
    """The Markdown-like view of the page's main text (see the module docstring)."""
    src, dropped = flatten_depth(decode_html(data))
    # The text is all kept, but the page's structure below that depth is not: recorded as the file's
    # problem so its owner learns why its headings or lists there look flat.
    flattened = (
        f"nested deeper than {MAX_DEPTH} elements: {dropped:,} start tags past that depth were dropped"
        " (their text is kept, their structure flattened)"
        if dropped
        else None
    )
    tree = LexborHTMLParser(src)
    hidden = {node.mem_id for node in tree.css(_CHROME_SELECTOR)}
    limit = ctx.limits.max_extracted_chars
    body = tree.body
    root = _main_element(tree, hidden) or body
    if root is None:
        return HtmlView("", _page_title(tree), "", flattened)
    builder = _Builder(limit, hidden, sectioned=_within_sectioning(root))
    builder.walk(root)
    if not builder.has_text() and root is not body and body is not None:
        builder = _Builder(limit, hidden, sectioned=False)  # an empty <main>: the page's text is elsewhere
        builder.walk(body)
    text = builder.text()
    title = _page_title(tree) or builder.first_h1
    cut = "; ".join(reason for reason in (flattened, builder.cut) if reason) or None
    return HtmlView(text, title, builder.first_paragraph, cut)


def html_extract(data: bytes, ctx: ChunkContext) -> Extracted:
    view = html_view(data, ctx)
    return Extracted([Part("", "", view.text)], title=view.stated_title, cut=view.cut)


def html_chunk(data: bytes, ctx: ChunkContext) -> TextPage:
    """``chunk_markdown`` on the view, each chunk's breadcrumb rooted at the page's title."""
    if ctx.budget < 1:
        raise ValueError(f"budget must be positive, got {ctx.budget}")
    view = html_view(data, ctx)
    title = view.stated_title or ctx.title
    summary = summarize(title, view.first_paragraph)
    if not view.text.strip():
        return TextPage(title, summary, [], view.cut)
    # Room for the title the chunker does not know it must prepend (when it is short enough to keep).
    reserve = ctx.count_tokens(title + BREADCRUMB_SEP)
    budget = ctx.budget - reserve if reserve <= ctx.budget // 4 else ctx.budget
    page = chunk_markdown(view.text, ctx.count_tokens, budget)
    chunks: list[TextChunk] = []
    for chunk in page.chunks:
        path = chunk.heading_path if chunk.heading_path[:1] == [title] else [title, *chunk.heading_path]
        embed = compose_embed_text(path, chunk.text)
        if ctx.count_tokens(embed) > ctx.budget:
            embed = chunk.embed_text  # fits the smaller budget it was made for
        chunks.append(TextChunk(path, chunk.line_start, chunk.line_end, chunk.text, embed))
    return TextPage(title, summary, chunks, view.cut)


def _main_element(tree: LexborHTMLParser, hidden: set[int]) -> LexborNode | None:
    """The page's main content: <main>, else role=main, else its one top-level <article>."""
    for selector in ("main", '[role~="main" i]'):
        for node in tree.css(selector):
            if node.mem_id not in hidden:
                return node
    articles = [node for node in tree.css("article") if not _has_ancestor(node, frozenset(("article",)))]
    return articles[0] if len(articles) == 1 and articles[0].mem_id not in hidden else None


def _has_ancestor(node: LexborNode, tags: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:  # iterative; the depth is bounded by MAX_DEPTH
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


def _within_sectioning(node: LexborNode) -> bool:
    return node.tag in _SECTIONING or _has_ancestor(node, _SECTIONING)


def _page_title(tree: LexborHTMLParser) -> str:
    head = tree.head
    node = head.css_first("title") if head is not None else None
    return " ".join((node.text() if node is not None else "").split())


def _collapse(text: str) -> str:
    return " ".join(text.split())


def escape_line(line: str) -> str:
    """``line`` made safe to stand at the start of a Markdown line: its first character escaped when it
    would open a block (heading, quote, list, rule, fence, table, HTML, link definition)."""
    if not line:
        return line
    if line[0] in _BLOCK_SYNTAX:
        return "\\" + line
    if line[0].isdigit():
        ordered = _ORDERED.match(line)
        if ordered:
            return f"{ordered.group(1)}\\{line[ordered.end(1) :]}"
    return line


def heading_line(level: int, text: str) -> str:
    """An ATX heading whose inline text the Markdown parser reads back exactly as ``text``."""
    escaped = _HEADING_INLINE.sub(lambda m: "".join("\\" + c for c in m.group(0)), text)
    escaped = _CLOSING_HASHES.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped)
    return "#" * level + " " + escaped


def _fence(code: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}\n{code}\n{fence}"


class _Builder:
    """Walks a subtree iteratively and renders the view block by block."""

    def __init__(self, limit: int, hidden: set[int], *, sectioned: bool) -> None:
        self.limit = limit
        self.hidden = hidden
        self.sectioning = 1 if sectioned else 0
        self.out: list[str] = []
        self.size = 0
        self.group: object = None  # the list or table the last emitted line belongs to
        self.buf: list[str] = []
        self.buf_size = 0
        self.heading = 0  # level of the heading being read, 0 outside one
        self.soft = 0  # inside a heading or a table cell: blocks are only spaces
        self.items: list[bool] = []  # per open <li>: whether its "- " line was emitted
        self.lists = 0
        self.list_group = 0
        self.row: list[str] | None = None
        self.tables: list[int] = []
        self.table_count = 0
        self.cut: str | None = None
        self.first_h1 = ""
        self.first_paragraph = ""

    # -- walking -----------------------------------------------------------------------------------------
    def walk(self, root: LexborNode) -> None:
        exits: list[int] = []
        node = root.child
        while node is not None and self.cut is None:
            action = self.enter(node)
            child = node.child if action >= 0 else None
            if child is not None:
                exits.append(action)
                node = child
                continue
            if action > 0:
                self.leave(action)
            while node is not None:
                following = node.next
                if following is not None:
                    node = following
                    break
                if not exits:
                    node = None
                    break
                node = node.parent
                self.leave(exits.pop())
                if self.cut is not None:
                    return
        if self.cut is None:
            self.flush()

    def enter(self, node: LexborNode) -> int:
        """Handle the start of ``node``; the action to take at its end, or -1 to skip its content."""
        tag = node.tag
        if tag == _TEXT:
            text = node.text_content or ""
            self.buf.append(text)
            self.buf_size += len(text)
            if self.size + self.buf_size > self.limit and not self.soft:
                self.flush()  # past the limit: emit what fits and stop (a heading or cell: at its end)
            return _NONE
        if tag is None or tag.startswith(("-", "!")) or tag in _DROPPED:
            return -1
        if self.hidden and node.mem_id in self.hidden:
            return -1
        if tag in _PAGE_CHROME and not self.sectioning:
            return -1
        if tag not in _BLOCKS and tag != "br":
            return _NONE  # inline (or unknown, which browsers show inline)
        if tag == "br":
            self.add(" " if self.soft else _BREAK)
            return _NONE
        if self.soft:
            self.add(" ")
            return _SOFT
        if tag in _SECTIONING:
            self.sectioning += 1
        level = _HEADINGS.get(tag)
        if level is not None:
            self.flush()
            self.heading = level
            self.soft += 1
            return _HEADING
        if tag == "pre":
            self.flush()
            code = self.pre_text(node)
            if code:
                self.emit(_fence(code), None)
            return -1
        if tag == "li":
            self.flush()
            self.items.append(False)
            return _ITEM
        if tag in _LISTS:
            self.flush()
            if not self.lists:
                self.list_group += 1
            self.lists += 1
            return _LIST
        if tag == "table":
            self.flush()
            self.table_count += 1
            self.tables.append(self.table_count)
            return _TABLE
        if tag == "tr" and self.tables:
            self.flush()
            self.row = []
            return _ROW
        if tag in _CELLS and self.row is not None:
            self.buf.clear()  # whitespace between cells
            self.buf_size = 0
            self.soft += 1
            return _CELL
        if self.items and tag not in _SECTIONING:
            self.add(" ")  # a <p> or <div> inside a list item continues its line
            return _SOFT
        self.flush()
        return _SECTION if tag in _SECTIONING else _FLUSH

    def leave(self, action: int) -> None:
        if action == _SOFT:
            self.add(" ")
        elif action == _FLUSH:
            self.flush()
        elif action == _SECTION:
            self.flush()
            self.sectioning -= 1
        elif action == _HEADING:
            self.soft -= 1
            text = _collapse(self.take())
            if text:
                if self.heading == 1 and not self.first_h1:
                    self.first_h1 = text
                self.emit(heading_line(self.heading, text), None)
            self.heading = 0
        elif action == _ITEM:
            self.flush()
            self.items.pop()
        elif action == _LIST:
            self.flush()
            self.lists -= 1
        elif action == _TABLE:
            self.flush()
            self.tables.pop()
        elif action == _ROW:
            cells, self.row = self.row or [], None
            self.take()
            if any(cells):
                self.emit(escape_line(" | ".join(cells)), ("table", self.tables[-1]))
        elif action == _CELL:
            self.soft -= 1
            if self.row is not None:
                self.row.append(_collapse(self.take()))

    def pre_text(self, pre: LexborNode) -> str:
        """The text of a ``pre`` subtree as written (iteratively; ``br`` as a line end)."""
        parts: list[str] = []
        size = 0
        node = pre.child
        depth = 1  # of ``node`` below the pre
        while node is not None and size <= self.limit:
            tag = node.tag
            if tag == _TEXT:
                text = node.text_content or ""
                parts.append(text)
                size += len(text)
            elif tag == "br":
                parts.append("\n")
            child = node.child if tag not in _DROPPED else None
            if child is not None:
                node = child
                depth += 1
                continue
            while node is not None:
                following = node.next
                if following is not None:
                    node = following
                    break
                if depth == 1:
                    node = None
                    break
                node = node.parent
                depth -= 1
        return "".join(parts).strip("\n").rstrip()

    # -- rendering ---------------------------------------------------------------------------------------
    def add(self, text: str) -> None:
        self.buf.append(text)
        self.buf_size += len(text)

    def take(self) -> str:
        text = "".join(self.buf).replace(_BREAK, " ")
        self.buf.clear()
        self.buf_size = 0
        return text

    def flush(self) -> None:
        """Emit the inline text gathered so far: a paragraph, or the lines of the open list item."""
        if not self.buf:
            return
        raw = "".join(self.buf)
        self.buf.clear()
        self.buf_size = 0
        lines: list[str] = []
        for piece in raw.split(_BREAK):
            line = _collapse(piece)
            if line or (lines and lines[-1]):
                lines.append(line)  # runs of <br> give one blank line at most
        while lines and not lines[-1]:
            lines.pop()
        if not lines:
            return
        if self.items:
            indent = "  " * min(max(self.lists - 1, 0), _MAX_LIST_INDENT)
            rendered = []
            for line in lines:
                lead = "  " if self.items[-1] else "- "
                self.items[-1] = True
                rendered.append(f"{indent}{lead}{escape_line(line)}" if line else "")
            self.emit("\n".join(rendered), ("list", self.list_group))
            return
        if not self.first_paragraph:
            self.first_paragraph = " ".join(line for line in lines if line)
        self.emit("\n".join(escape_line(line) for line in lines), None)

    def emit(self, block: str, group: object) -> None:
        if self.cut is not None:
            return
        separator = "" if not self.out else ("\n" if group is not None and group == self.group else "\n\n")
        room = self.limit - self.size - len(separator)
        if len(block) > room:
            block = _shorten(block, room)
            self.cut = (
                f"the page's text is longer than max_extracted_chars ({self.limit:,} characters): "
                "the rest is not read"
            )
            if not block.strip():
                return
        self.out.append(separator + block)
        self.size += len(separator) + len(block)
        self.group = group

    def has_text(self) -> bool:
        return bool(self.out)

    def text(self) -> str:
        return "".join(self.out) + "\n" if self.out else ""


def _shorten(block: str, room: int) -> str:
    """The start of ``block`` within ``room`` characters, cut at a space; a fence stays closed."""
    if room <= 0:
        return ""
    fence = re.match(r"`{3,}", block)
    if fence:
        closing = "\n" + fence.group(0)
        body = block[: max(room - len(closing), 0)]
        if "\n" not in body:
            return ""
        line_end = body.rfind("\n")
        if line_end > len(body) // 2:
            body = body[:line_end]  # at a line end, unless that loses more than half (a huge line)
        return body.rstrip() + closing
    cut = block[:room]
    if " " in cut[room // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip()
