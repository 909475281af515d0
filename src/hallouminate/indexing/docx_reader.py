"""Read a Word document (.docx, python-docx): a Markdown-like view, chunked like Markdown (domain; no I/O).

The extracted view is ONE unlabelled part (``page`` is None on every chunk), built from the body's block
items in document order (paragraphs and tables interleaved, content controls opened):

- a paragraph styled ``Title`` is a ``#`` line, ``Heading N`` a line of N ``#`` (at most six);
- a list paragraph (numbered, or a ``List ...`` style) is a ``- `` line, indented two spaces per level;
  consecutive items stay together, as one Markdown list;
- any other paragraph is its text (a line break inside it starts a new line); empty ones are dropped;
- a table is one line per row, cells joined with `` | `` (a merged cell once; line breaks inside a cell
  become spaces, a nested table becomes its cells' text in row order, separated by spaces);
- blocks are separated by a blank line.

A line that Markdown would read as structure it is not in Word (``#``, a ``---`` or ``===`` rule, which at
the top would also open YAML frontmatter, a fence, an HTML block, a footnote or link definition) is
escaped with a leading backslash, so the headings of the view are exactly Word's.

The view is chunked with ``chunk_markdown`` (heading sections within the budget); a chunk's lines are its
lines in the view. The breadcrumb is rooted at the document title: the core property ``title`` when set,
else the first ``Title`` paragraph, else the ``Heading 1`` when there is exactly one (several are chapters:
the first does not name the others), else the file name; the root is prepended to a chunk's heading path
unless it already starts with it.

Limits: the zip is checked by ``open_zip`` before python-docx sees a byte (``OverBudget`` past
``max_decompressed_size``); the view stops at ``max_extracted_chars`` (the cut is reported).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hallouminate.indexing.chunker import BREADCRUMB_SEP, chunk_markdown
from hallouminate.indexing.documents import ChunkContext, Extracted, Part
from hallouminate.indexing.markdown_tree import parse_blocks
from hallouminate.indexing.text_chunker import TextChunk, TextPage, UnparseableFile, summarize
from hallouminate.indexing.zipguard import open_zip

__all__ = ["chunk_docx", "cut_at_space", "docx_view", "extract_docx", "library_error"]

KIND = ".docx file"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# Containers whose runs are part of a paragraph's visible text (hyperlinks, tracked insertions, fields,
# content controls); anything else (deletions, moved-from text, drawings, text boxes) is not read.
_RUN_CONTAINERS = frozenset(
    _W + tag
    for tag in ("hyperlink", "ins", "moveTo", "smartTag", "fldSimple", "customXml", "sdt", "sdtContent")
)
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
# Word's list styles ("List Bullet 2", "List Number"); "List Paragraph" is a list only with numbering.
_LIST_STYLE = re.compile(r"list(?: bullet| number)?(?: ([1-9]))?", re.IGNORECASE)
# Lines Markdown would read as structure: ATX headings, fences, HTML blocks, footnote/link definitions,
# and lines of rule characters only (thematic breaks, setext underlines, a frontmatter fence).
_NEEDS_ESCAPE = re.compile(r"#|`{3}|~{3}|<[A-Za-z/!?]|\[[^\]]*\]:|[-=_*+~ \t]+$")
_SPACES = re.compile(r"\s+")
_STREAM_NAME = re.compile(r"file '<_io\.BytesIO object at 0x[0-9a-f]+>' ")


@dataclass(frozen=True)
class DocxView:
    """The view text, the title the file states ("" if none), its first body paragraph, and the cut."""

    text: str
    title: str
    first_paragraph: str
    # The title the body states: its first Title paragraph, else its Heading 1 when it has only one
    # (several are chapters, none of which names the whole document); "" for neither.
    body_title: str
    cut: str | None


def chunk_docx(data: bytes, ctx: ChunkContext) -> TextPage:
    """Chunk the Word document in ``data`` by heading sections (see the module docstring)."""
    view = docx_view(data, ctx)
    budget, count = ctx.budget, ctx.count_tokens
    root = view.title or view.body_title or ctx.title
    extra = count(root + BREADCRUMB_SEP) if root else 0
    # The root takes its tokens from the body's budget, unless it is absurdly long (then the embedding
    # keeps chunk_markdown's own breadcrumb and the root is only in heading_path).
    inner = budget - extra if root and extra <= budget // 4 else budget
    page = chunk_markdown(view.text, count, inner)
    chunks: list[TextChunk] = []
    for chunk in page.chunks:
        path = list(chunk.heading_path)
        embed = chunk.embed_text
        if root and path[:1] != [root]:
            crumb = BREADCRUMB_SEP.join(path)
            path.insert(0, root)
            if inner != budget:
                if not crumb:
                    candidate = f"{root}\n\n{embed}"
                elif embed.startswith(crumb + "\n\n"):
                    candidate = root + BREADCRUMB_SEP + embed
                else:  # chunk_markdown shortened a long breadcrumb: leave it as it chose
                    candidate = embed
                if count(candidate) <= budget:
                    embed = candidate
        chunks.append(TextChunk(path, chunk.line_start, chunk.line_end, chunk.text, embed, None))
    return TextPage(root, summarize(root, view.first_paragraph), chunks, view.cut)


def extract_docx(data: bytes, ctx: ChunkContext) -> Extracted:
    """The document's view as one unlabelled part, what ``read_markdown`` shows."""
    view = docx_view(data, ctx)
    return Extracted([Part("", "", view.text)], title=view.title, cut=view.cut)


def docx_view(data: bytes, ctx: ChunkContext) -> DocxView:
    """The Markdown-like view of the document in ``data`` (``UnparseableFile`` if it cannot be read)."""
    archive = open_zip(data, ctx.limits.max_decompressed_size, kind=KIND)
    archive.close()
    # python-docx raises whatever its zip, XML and part layers raise on a damaged file (KeyError for a
    # missing part, XMLSyntaxError, ValueError for a non-Word content type, ...): all mean "cannot read".
    # Here, not at the top: a daemon start imports the readers, and python-docx costs ~150 ms of CPU to import,
    # paid only once a Word file is read.
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        title = _collapse(document.core_properties.title or "")
        builder = _ViewBuilder(_style_names(document), ctx.limits.max_extracted_chars)
        builder.add_body(document.element.body)
    except Exception as exc:
        raise UnparseableFile(f"broken {KIND}: {library_error(exc)}") from exc
    body_title = builder.first_title or (builder.first_h1 if builder.h1_count == 1 else "")
    return DocxView(builder.text(), title, builder.first_paragraph, _as_heading_path(body_title), builder.cut)


def _style_names(document: Any) -> dict[str, str]:
    # paragraph.style looks the id up in styles.xml at every call; one table serves the whole body.
    names: dict[str, str] = {}
    for style in document.styles:
        style_id = getattr(style, "style_id", None)
        if style_id:
            names[style_id] = style.name or ""
    return names


class _ViewBuilder:
    """Accumulates the view's blocks in body order until the character limit."""

    def __init__(self, styles: dict[str, str], limit: int) -> None:
        self.styles = styles
        self.limit = limit
        self.blocks: list[str] = []
        self.size = 0
        self.first_paragraph = ""
        self.first_title = ""  # of the first Title paragraph
        self.first_h1 = ""
        self.h1_count = 0
        self.cut: str | None = None
        self.in_list = False  # the last block is a list whose next item joins it without a blank line

    def text(self) -> str:
        return "".join(self.blocks) + ("\n" if self.blocks else "")

    def add(self, block: str, *, list_item: bool = False) -> None:
        if self.cut is not None:
            return
        sep = "" if not self.blocks else "\n" if list_item and self.in_list else "\n\n"
        piece = sep + block
        if self.size + len(piece) > self.limit:
            piece = cut_at_space(piece, self.limit - self.size)
            self.cut = (
                f"the text of this {KIND} is longer than max_extracted_chars ({self.limit} characters): "
                "the rest is not indexed"
            )
        if piece.strip():
            self.blocks.append(piece)
            self.size += len(piece)
        self.in_list = list_item

    def add_body(self, body: Any) -> None:
        for element in _block_items(body):
            if self.cut is not None:
                return
            if element.tag == _W + "tbl":
                rows = [_escape(row) for row in _table_rows(element)]
                if rows:
                    self.add("\n".join(rows))
            else:
                self.add_paragraph(element)

    def add_paragraph(self, p: Any) -> None:
        text = _paragraph_text(p)
        if not text.strip():
            return
        style = self.style_name(p)
        heading = _heading_level(style)
        if heading is not None:
            if style.lower() == "title":
                self.first_title = self.first_title or _collapse(text)
            elif heading == 1:
                self.first_h1 = self.first_h1 or _collapse(text)
                self.h1_count += 1
            self.add("#" * heading + " " + _collapse(text))
            return
        level = _list_level(p, style)
        lines = [_escape(line) for line in (line.strip() for line in text.split("\n")) if line]
        if level is not None:
            indent = "  " * level
            self.add(indent + "- " + ("\n" + indent + "  ").join(lines), list_item=True)
            return
        if not self.first_paragraph:
            self.first_paragraph = _collapse(text)
        self.add("\n".join(lines))

    def style_name(self, p: Any) -> str:
        style_id = None
        ppr = p.find(_W + "pPr")
        if ppr is not None:
            pstyle = ppr.find(_W + "pStyle")
            if pstyle is not None:
                style_id = pstyle.get(_W + "val")
        return self.styles.get(style_id or "", "") if style_id else "Normal"


def _block_items(container: Any) -> Iterator[Any]:
    """Paragraphs and tables of a body or cell in document order; content controls are opened."""
    for child in container.iterchildren():
        if child.tag in (_W + "p", _W + "tbl"):
            yield child
        elif child.tag in (_W + "sdt", _W + "customXml"):
            content = child.find(_W + "sdtContent") if child.tag == _W + "sdt" else child
            if content is not None:
                yield from _block_items(content)


def _paragraph_text(p: Any) -> str:
    return "".join(_runs_text(p))


def _runs_text(container: Any) -> Iterator[str]:
    for child in container.iterchildren():
        if child.tag == _W + "r":
            for piece in child.iterchildren():
                tag = piece.tag
                if tag == _W + "t":
                    yield piece.text or ""
                elif tag == _W + "tab":
                    yield "\t"
                elif tag in (_W + "br", _W + "cr"):
                    yield "\n"
                elif tag == _W + "noBreakHyphen":
                    yield "-"
        elif child.tag in _RUN_CONTAINERS:
            yield from _runs_text(child)


def _table_rows(tbl: Any) -> Iterator[str]:
    for tr in tbl.iterchildren(_W + "tr"):
        # Each <w:tc> once: a horizontally merged cell is one element spanning several grid columns, and
        # the continuation of a vertical merge is an empty cell, so no merged text is repeated.
        cells = [_cell_text(tc) for tc in tr.iterchildren(_W + "tc")]
        if any(cells):
            yield " | ".join(cells)


def _cell_text(tc: Any) -> str:
    pieces: list[str] = []
    for element in _block_items(tc):
        if element.tag == _W + "tbl":
            # A nested table, flattened into the cell: its cells in row order, separated by spaces (no
            # " | " inside a cell, which would read as more cells of the outer row).
            pieces.extend(
                _cell_text(inner)
                for tr in element.iterchildren(_W + "tr")
                for inner in tr.iterchildren(_W + "tc")
            )
        else:
            pieces.append(_paragraph_text(element))
    return _collapse(" ".join(pieces))


def _heading_level(style: str) -> int | None:
    if style.lower() == "title":
        return 1
    match = _HEADING_STYLE.fullmatch(style.strip())
    return min(int(match.group(1)), 6) if match else None


def _list_level(p: Any, style: str) -> int | None:
    ppr = p.find(_W + "pPr")
    numpr = ppr.find(_W + "numPr") if ppr is not None else None
    if numpr is not None:
        ilvl = numpr.find(_W + "ilvl")
        num_id = numpr.find(_W + "numId")
        if num_id is not None and num_id.get(_W + "val") == "0":
            return None  # numId 0 switches numbering off
        try:
            return int(ilvl.get(_W + "val")) if ilvl is not None else 0
        except (TypeError, ValueError):
            return 0
    match = _LIST_STYLE.fullmatch(style.strip())
    if match is None:
        return None
    return int(match.group(1)) - 1 if match.group(1) else 0


def _as_heading_path(text: str) -> str:
    """``text`` as chunk_markdown puts it in a heading path (inline markup read), so a root equal to the
    path's first element is recognised as such."""
    if not text:
        return ""
    blocks = parse_blocks("# " + text)
    return (blocks[0].plain_text() if blocks else "") or text


def _escape(line: str) -> str:
    return "\\" + line if _NEEDS_ESCAPE.match(line) else line


def _collapse(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def cut_at_space(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` characters, at the last whitespace when the cut falls in a word."""
    if len(text) <= room:
        return text
    head = text[: max(room, 0)]
    if not text[len(head)].isspace():
        space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if space > 0:
            head = head[:space]
    return head.rstrip()


def library_error(exc: Exception) -> str:
    """An Office library's exception as a reason: its type and message, without the in-memory stream's
    repr that python-docx/python-pptx put in ("file '<_io.BytesIO ...>' is not a Word file")."""
    return f"{type(exc).__name__}: {_STREAM_NAME.sub('it ', str(exc))}"
