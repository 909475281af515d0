"""Chunk source code by its definitions, read with tree-sitter (domain; pure: bytes in, chunks out).

The file is its own view: ``extract`` returns the decoded text (CRLF and CR read as LF) as one unlabelled
part, so a chunk's ``line_start``/``line_end`` are the file's own lines (1-based, inclusive).

What becomes a chunk (code_grammars.py lists the node types per language):

- each definition at the top level (a function, a class, a struct, an impl, ...): its lines, from the
  first of the comments or attributes directly above it (no blank line between) or of its decorators /
  ``export`` / ``template<...>`` through its last line; ``symbol_kind`` is the grammar's node type of the
  definition itself (a decorated Python function is a ``function_definition``, an exported TypeScript
  interface an ``interface_declaration``) and the breadcrumb ``[file name, "Name"]``;
- the member definitions of a container (a class's methods, an impl's functions, a namespace's contents)
  are chunks of their own, named ``Outer.member``; what is left of the container (its header, docstring,
  fields, the text between members) is chunked under the container's name and kind;
- the text between definitions (imports, constants, statements, comments) is chunked under ``[file
  name]`` with no ``symbol_kind``; a run of lines without a letter or digit (a lone ``}``) is dropped.

A chunk over the token budget is cut at blank lines, then lines (overlapping as plain text does); each
piece but the first repeats the definition's signature (its lines up to its body) at the top of its
``embed_text``, while ``text`` stays the file's own lines.

Limits: a file that is mostly very long lines (minified or generated code) is skipped; text past
``limits.max_extracted_chars`` is cut at a line end (``TextPage.cut`` says so); invalid UTF-8 raises
``UnicodeDecodeError``, as a text file's bytes do (the indexer's ``not-utf8`` skip, with the offset). Walking the tree never recurses in Python: the nesting of the
file cannot exhaust the stack.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import tree_sitter

from hallouminate.indexing.chunker import BREADCRUMB_SEP
from hallouminate.indexing.code_grammars import Grammar, grammar_for, language
from hallouminate.indexing.documents import ChunkContext, Extracted, Part
from hallouminate.indexing.overlap import LINE_END, PARAGRAPH_BREAK, Packer
from hallouminate.indexing.overlap import Grammar as Breaks
from hallouminate.indexing.text_chunker import (
    TextChunk,
    TextPage,
    UnparseableFile,
    first_paragraph,
    summarize,
)

__all__ = ["MINIFIED_LINE_CHARS", "chunk_code", "code_text", "extract_code"]

# Minified or generated code: more than half the file's characters sit on lines longer than this.
MINIFIED_LINE_CHARS = 1000
# A signature repeated in front of each piece of a split definition: at most this many lines.
SIGNATURE_LINES = 8
# A qualified name's parts are cut to this many characters (a C declarator can be long).
NAME_CHARS = 120
ANONYMOUS = "(anonymous)"
# Containers nested deeper than this are chunked whole: members keep their container's chunk, and a
# hostile file of thousands of nested namespaces costs no more than a plain one.
MAX_NESTING = 16

# A cut of code: at blank lines, then line ends, then spaces (a long line: without that level it would be
# cut by bisection over characters, one tokenization of the rest of the line per step: 590 s for a 400 kB
# line of numbers with the real tokenizer); the overlap repeats whole lines.
_LINE = re.compile(r"[^\n]*\S[^\n]*")
_BLANKS = re.compile(r"[ \t\f\v]+")
CODE_BREAKS = Breaks((PARAGRAPH_BREAK, LINE_END, _BLANKS), _LINE)
_WORDY = re.compile(r"\w")
_SPACES = re.compile(r"\s+")
_FUNCTION_VALUES = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
        "class",
    }
)


@dataclass(frozen=True)
class _Source:
    """The decoded, LF-normalised text and where it was cut."""

    text: str
    cut: str | None


def code_text(data: bytes, ctx: ChunkContext) -> _Source:
    """The file's text as chunks and the view count it: decoded, LF line ends, cut at the limit."""
    return _cut(_decode(data), ctx.limits.max_extracted_chars)


def _decode(data: bytes) -> str:
    # Invalid UTF-8 raises UnicodeDecodeError as for any text file: the indexer skips the file as
    # ``not-utf8`` ("not valid UTF-8 (byte N)") and the read tools answer BadEncoding with its offset.
    text = data.decode("utf-8-sig")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _cut(text: str, limit: int) -> _Source:
    if len(text) <= limit:
        return _Source(text, None)
    end = text.rfind("\n", 0, limit) + 1  # whole lines only; 0 when the first line is already over
    line = text.count("\n", 0, end)
    reason = (
        f"cut after line {line}: the file has {len(text)} characters, "
        f"[indexing] max_extracted_chars is {limit}"
    )
    return _Source(text[:end], reason)


def extract_code(data: bytes, ctx: ChunkContext) -> Extracted:
    """The file itself as one unlabelled part: the view whose lines the chunks cite."""
    source = code_text(data, ctx)
    return Extracted([Part("", "", source.text)], cut=source.cut)


def chunk_code(data: bytes, ctx: ChunkContext) -> TextPage:
    """Chunk a source file by its definitions (see the module docstring)."""
    if ctx.budget < 1:
        raise ValueError(f"budget must be positive, got {ctx.budget}")
    grammar = grammar_for(ctx.path)
    if grammar is None:
        raise UnparseableFile(f"no grammar for {ctx.path!r}")
    text = _decode(data)
    _refuse_minified(text)  # on the whole file: a cut could leave just its harmless first line
    source = _cut(text, ctx.limits.max_extracted_chars)
    summary = summarize(ctx.title, first_paragraph(source.text))
    if not source.text.strip():
        return TextPage(ctx.title, summary, [], source.cut)
    lines = _Lines(source.text)
    segments = _segments(grammar, lines)  # the tree (~50 bytes per source byte) is gone before chunking
    chunks = [c for seg in segments for c in _chunks(seg, lines, ctx)]
    chunks.sort(key=lambda c: (c.line_start, c.line_end))
    return TextPage(ctx.title, summary, chunks, source.cut)


def _segments(grammar: Grammar, lines: _Lines) -> list[_Segment]:
    tree = tree_sitter.Parser(language(grammar)).parse(lines.data)
    return _Walker(grammar, lines).segments(tree.root_node)


def _refuse_minified(text: str) -> None:
    if not text:
        return
    long_chars = 0
    longest = 0
    for line in text.split("\n"):
        if len(line) > MINIFIED_LINE_CHARS:
            long_chars += len(line)
            longest = max(longest, len(line))
    if long_chars * 2 > len(text):
        share = round(100 * long_chars / len(text))
        raise UnparseableFile(
            f"minified or generated code: {share}% of its characters are on lines over "
            f"{MINIFIED_LINE_CHARS} characters (the longest has {longest}); not indexed"
        )


class _Lines:
    """The text, its UTF-8 bytes (what tree-sitter reads) and where each line starts in both."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.byte_starts = [0] + [m.end() for m in re.finditer(b"\n", self.data)]
        self.count = len(self.starts)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Character offsets of rows ``first..last`` (0-based, inclusive), without the last line end."""
        end = self.starts[last + 1] - 1 if last + 1 < self.count else len(self.text)
        return self.starts[first], end

    def rows(self, first: int, last: int) -> str:
        start, end = self.span(first, last)
        return self.text[start:end]


@dataclass(frozen=True)
class _Segment:
    """A run of whole lines chunked under one name: a definition, a container's rest, module text."""

    first: int  # 0-based rows, inclusive
    last: int
    name: str  # qualified name; "" for module text
    kind: str | None
    # The definition's first row and its signature, repeated in front of pieces that start below it.
    top: int
    signature: str


@dataclass(frozen=True)
class _Definition:
    first: int  # including its leading comments
    last: int
    name: str
    kind: str
    node: tree_sitter.Node  # the definition itself (inside any wrapper)
    signature: str
    container: bool


@dataclass(frozen=True)
class _Region:
    """A body to look for definitions in, and what its leftover lines are chunked as."""

    body: tree_sitter.Node | None
    first: int
    last: int
    name: str
    kind: str | None
    top: int
    signature: str
    depth: int = 0


class _Walker:
    def __init__(self, grammar: Grammar, lines: _Lines) -> None:
        self.grammar = grammar
        self.lines = lines
        self.wrappers = dict(grammar.wrappers)

    def segments(self, root: tree_sitter.Node) -> list[_Segment]:
        """Every segment of the file: an explicit stack of regions, never Python recursion."""
        out: list[_Segment] = []
        stack = [_Region(root, 0, self.lines.count - 1, "", None, 0, "")]
        while stack:
            region = stack.pop()
            cursor = region.first
            for found in self.definitions(region):
                self.gap(out, region, cursor, found.first - 1)
                nested = found.container and region.depth < MAX_NESTING
                body = found.node.child_by_field_name("body") if nested else None
                stack.append(
                    _Region(
                        body,
                        found.first,
                        found.last,
                        found.name,
                        found.kind,
                        found.first,
                        found.signature,
                        region.depth + 1,
                    )
                )
                cursor = found.last + 1
            self.gap(out, region, cursor, region.last)
        return out

    def gap(self, out: list[_Segment], region: _Region, first: int, last: int) -> None:
        """Lines of ``region`` no member covers: chunked under the region's name, if they say anything."""
        while first <= last and not self.lines.rows(first, first).strip():
            first += 1
        while last >= first and not self.lines.rows(last, last).strip():
            last -= 1
        if first > last or not _WORDY.search(self.lines.rows(first, last)):
            return
        out.append(_Segment(first, last, region.name, region.kind, region.top, region.signature))

    def definitions(self, region: _Region) -> list[_Definition]:
        """The definitions directly in ``region``'s body (through transparent nodes), in order, each
        with its leading comments, clamped to the region and to rows no earlier one took."""
        if region.body is None:
            return []
        found: list[_Definition] = []
        leading: list[tree_sitter.Node] = []
        taken = region.first - 1  # last row already given to a definition or other code
        for node in self.members(region.body):
            if node.type in self.grammar.leading:
                if leading and node.start_point.row > _last_row(leading[-1]) + 1:
                    leading = []
                if not leading and node.start_point.row <= taken:
                    continue  # a comment at the end of a line of code belongs to that code
                leading.append(node)
                continue
            inner = self.definition(node)
            if inner is None:
                taken = max(taken, _last_row(node))
                leading = []
                continue
            first = node.start_point.row
            if leading and _last_row(leading[-1]) + 1 >= first:
                first = leading[0].start_point.row
            leading = []
            first = max(first, taken + 1, region.first)
            last = min(_last_row(node), region.last)
            if first > last:
                continue  # on rows an earlier definition already took (two on one line)
            name = self.qualified(region.name, inner)
            container = inner.type in self.grammar.containers
            found.append(
                _Definition(first, last, name, inner.type, inner, self.signature(node, inner), container)
            )
            taken = last
        return found

    def members(self, body: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
        """The children of ``body`` in order, transparent nodes replaced by their own children."""
        stack: list[Iterator[tree_sitter.Node]] = [iter(body.children)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            if node.type in self.grammar.transparent:
                stack.append(iter(node.children))
            elif node.is_named:
                yield node

    def definition(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The definition ``node`` is or wraps, if it is one that counts."""
        for _ in range(4):  # wrappers nest a few deep at most (export of a decorated class)
            if node.type not in self.wrappers:
                break
            field = self.wrappers[node.type]
            inner = node.child_by_field_name(field) if field else None
            if inner is None:
                named = [c for c in node.named_children if c.type in self.grammar.definitions]
                inner = named[-1] if named else None
            if inner is None:
                return None
            node = inner
        if node.type not in self.grammar.definitions:
            return None
        if node.type in self.grammar.need_body and not _has_body(node):
            return None
        if node.type in self.grammar.bind_functions and not _binds_function(node):
            return None
        return node

    def qualified(self, outer: str, node: tree_sitter.Node) -> str:
        name = _name(self.grammar, node) or ANONYMOUS
        return f"{outer}.{name}" if outer else name

    def signature(self, outer: tree_sitter.Node, inner: tree_sitter.Node) -> str:
        """The definition's lines up to its body (decorators included), at most ``SIGNATURE_LINES``."""
        first = outer.start_point.row
        last = first
        body = inner.child_by_field_name("body")
        if body is not None:
            row = body.start_point.row
            before = self.lines.data[self.lines.byte_starts[row] : body.start_byte]
            last = row - 1 if not before.strip() else row
        last = max(first, min(last, first + SIGNATURE_LINES - 1, _last_row(outer)))
        return self.lines.rows(first, last)


def _last_row(node: tree_sitter.Node) -> int:
    """The last row holding a character of ``node`` (a line comment may end at column 0 of the next)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def _has_body(node: tree_sitter.Node) -> bool:
    if node.child_by_field_name("body") is not None:
        return True
    kind = node.child_by_field_name("type")  # typedef struct { ... } Name;
    return kind is not None and kind.child_by_field_name("body") is not None


def _binds_function(node: tree_sitter.Node) -> bool:
    for child in node.named_children:
        if child.type == "variable_declarator":
            value = child.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                return True
    return False


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return _SPACES.sub(" ", node.text.decode("utf-8", errors="replace")).strip()[:NAME_CHARS]


def _name(grammar: Grammar, node: tree_sitter.Node) -> str:
    """The name a definition gives itself (a Go method: ``Receiver.Method``; an impl: its type)."""
    kind = node.type
    if kind in ("lexical_declaration", "variable_declaration"):
        for child in node.named_children:
            if child.type == "variable_declarator":
                return _text(child.child_by_field_name("name"))
    if kind == "type_declaration":  # Go: type ( A ...; B ... )
        specs = [_text(c.child_by_field_name("name")) for c in node.named_children]
        return ", ".join(s for s in specs if s)
    if kind == "method_declaration" and grammar.name == "go":
        receiver = node.child_by_field_name("receiver")
        owner = ""
        if receiver is not None:
            for param in receiver.named_children:
                owner = _text(param.child_by_field_name("type")).lstrip("*").split("[")[0]
        method = _text(node.child_by_field_name("name"))
        return f"{owner}.{method}" if owner else method
    if kind == "impl_item":
        return _text(node.child_by_field_name("type")).split("<")[0]
    if kind in ("function_definition", "type_definition") and grammar.name in ("c", "cpp"):
        return _declarator_name(node)
    named = node.child_by_field_name("name")
    if named is not None:
        return _text(named)
    if kind == "type_definition":
        return _declarator_name(node)
    return ""


def _declarator_name(node: tree_sitter.Node) -> str:
    """The identifier deep in a C declarator (``int *(*f)(int)``): follow ``declarator`` fields down."""
    current = node.child_by_field_name("declarator")
    for _ in range(64):  # declarators nest a few deep; a hostile file must not loop long
        if current is None:
            return ""
        deeper = current.child_by_field_name("declarator")
        if deeper is None:
            return _text(current)
        current = deeper
    return _text(current)


def _chunks(seg: _Segment, lines: _Lines, ctx: ChunkContext) -> list[TextChunk]:
    """A segment as one chunk when it fits, else cut in pieces each repeating the signature."""
    path = [ctx.title, seg.name] if seg.name else [ctx.title]
    start, end = lines.span(seg.first, seg.last)
    # Most segments fit: one count of the text that would be embedded, no packer (which counts the
    # breadcrumb and the signature again).
    text = lines.text[start:end]
    head = f"{seg.signature}\n" if seg.signature and seg.first > seg.top else ""
    crumb = BREADCRUMB_SEP.join(path)
    whole = f"{crumb}\n\n{head}{text}" if crumb else f"{head}{text}"
    if ctx.count_tokens(whole) <= ctx.budget:
        return [TextChunk(path, seg.first + 1, seg.last + 1, text, whole, None, seg.kind)]
    packer = _SignedPacker(lines.text, ctx, path, seg, lines.starts[seg.top])
    spans = packer.text_spans(start, end, CODE_BREAKS)
    out = []
    for s, e in spans:
        # A piece starting at a line's first word takes the line's indentation too (whole lines), unless
        # a tokenizer that counts spaces would then see it over the budget.
        line_start = lines.starts[_row_of(lines, s)]
        if line_start < s and not lines.text[line_start:s].strip() and packer.fits(line_start, e):
            s = line_start
        out.append(
            TextChunk(
                path,
                _row_of(lines, s) + 1,
                _row_of(lines, max(s, e - 1)) + 1,
                lines.text[s:e],
                packer.embed_text(s, e),
                None,
                seg.kind,
            )
        )
    return out


def _row_of(lines: _Lines, offset: int) -> int:
    return bisect.bisect_right(lines.starts, offset) - 1


class _SignedPacker(Packer):
    """A packer whose pieces below a definition's first line start with its signature."""

    def __init__(self, src: str, ctx: ChunkContext, path: Sequence[str], seg: _Segment, top: int) -> None:
        super().__init__(src, ctx.count_tokens, ctx.budget, path)
        self.top = top
        signature = seg.signature
        if signature and ctx.count_tokens(signature) > self.room // 2:
            signature = signature.split("\n", 1)[0]
            if ctx.count_tokens(signature) > self.room // 2:
                signature = ""  # a monstrous one-line signature: the breadcrumb must do
        self.signature = signature
        if signature:
            self.room -= ctx.count_tokens(signature)
            self.overlap = max(0, min(self.overlap, self.room // 3))

    def embed_text(self, start: int, end: int) -> str:
        body = self.src[start:end]
        if self.signature and start > self.top:
            body = f"{self.signature}\n{body}"
        return f"{self.prefix}\n\n{body}" if self.prefix else body
