"""Split a JSON document along its structure into chunks that fit the embedding model (domain; pure).

``json.loads`` validates the document (its error becomes ``UnparseableFile``); a small scanner then walks
the validated source once to find the character span of every value and of every member (an object
member spans its key to the end of its value; an array element is its value), so each chunk's ``text``
is a verbatim slice of the file and its line numbers are the file's own (1-based, CRLF read as LF).

- A value whose text fits the budget is one chunk: small subtrees stay whole.
- A larger object or array is cut into runs of consecutive members packed under the budget, their
  breadcrumb the container's key path. A member too large alone is chunked the same way one level down.
  Runs repeat whole trailing members of the previous run worth at most ``OVERLAP_SHARE`` of the budget.
- A huge string is cut like plain text (escaped blank lines, sentences, escaped line ends, words) with
  word overlap; its text is the string's verbatim content between the quotes, escapes as written.

``heading_path`` is ``[title, key, ...]`` with array indices as decimal strings, e.g.
``["config.json", "servers", "0", "name"]``; the root's path is ``[title]``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from hallouminate.indexing.overlap import (
    Atom,
    CountTokens,
    Grammar,
    Packer,
)
from hallouminate.indexing.text_chunker import (
    Source,
    TextChunk,
    TextPage,
    UnparseableFile,
    summarize,
)

__all__ = ["chunk_json"]

_WS = re.compile(r"[ \t\n\r]*")
# Only run on validated JSON, so these need not reject anything.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,:\]}]+")

# Inside a JSON string, line ends are written as escapes ("\n"); (?<!\\) skips an escaped backslash
# followed by "n", which is text, not a line end.
_ESC = r"(?<!\\)\\"
_STRING_GRAMMAR = Grammar(
    (
        re.compile(rf"(?:{_ESC}r)?{_ESC}n(?:[ \t]|{_ESC}t)*(?:(?:{_ESC}r)?{_ESC}n)+(?:\s|{_ESC}[nrt])*"),
        re.compile(rf"(?:(?<=[.!?;])|(?<=[.!?;]\\\")|(?<=[.!?;][')\]]))(?:\s|{_ESC}[nrt])+(?=\S)"),
        re.compile(rf"(?:\s|{_ESC}[nrt])*(?:{_ESC}r)?{_ESC}n(?:\s|{_ESC}[nrt])*"),
    ),
    # A word: escapes other than \n \r \t stay inside it (\" \\ \u00e9 ...).
    re.compile(r"(?:\\[^nrt]|[^\s\\])+"),
)


@dataclass
class _Node:
    kind: str  # "object", "array" or "scalar" (strings included)
    start: int
    end: int = -1
    members: list[_Member] = field(default_factory=list)


@dataclass
class _Member:
    name: str  # the key, or the index in an array
    start: int  # where the member's text starts: its key, or its value in an array
    value: _Node


def chunk_json(text: str, count_tokens: CountTokens, budget: int, *, title: str) -> TextPage:
    """Chunk a JSON document; raises ``UnparseableFile`` when it is not valid JSON."""
    if budget < 1:
        raise ValueError(f"budget must be positive, got {budget}")
    # The indexer strips a UTF-8 BOM already; a stray one would be read as an error by json.
    source = Source(text.removeprefix("\ufeff"))
    src = source.src
    if not src.strip():
        return TextPage(title, summarize(title, ""), [])
    try:
        json.loads(src)
    except json.JSONDecodeError as exc:
        raise UnparseableFile(f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise UnparseableFile("invalid JSON: nested too deeply") from exc
    root = _scan(src)
    walker = _Walker(source, count_tokens, budget)
    try:
        walker.node(root, [title] if title else [])
    except RecursionError as exc:  # only a pathological nesting of oversize values gets here
        raise UnparseableFile("JSON nested too deeply to chunk") from exc
    first = re.sub(r"\s+", " ", src[root.start : root.start + 1024]).strip()
    return TextPage(title, summarize(title, first), walker.chunks)


class _Walker:
    def __init__(self, source: Source, count_tokens: CountTokens, budget: int) -> None:
        self.source = source
        self.count_tokens = count_tokens
        self.budget = budget
        self.chunks: list[TextChunk] = []

    def node(self, node: _Node, path: list[str], *, too_big: bool = False) -> None:
        """Chunk ``node``; ``too_big`` when its member did not fit, so it is not measured whole again."""
        packer = Packer(self.source.src, self.count_tokens, self.budget, path)
        if not too_big and packer.fits_within(node.start, node.end):
            self.emit(packer, path, [(node.start, node.end)])
        elif node.members:
            self.members(node, path, packer)
        elif node.kind == "scalar" and self.source.src[node.start] == '"':
            self.emit(packer, path, packer.text_spans(node.start + 1, node.end - 1, _STRING_GRAMMAR))
        else:  # a giant number, or an empty container under an absurd budget
            self.emit(packer, path, packer.text_spans(node.start, node.end))

    def members(self, node: _Node, path: list[str], packer: Packer) -> None:
        run: list[Atom] = []
        for member in node.members:
            cost = packer.cost_within(member.start, member.value.end, packer.room)
            if cost <= packer.room:
                run.append(Atom(member.start, member.value.end, cost))
                continue
            # Too big on its own: flush the run before it (keeps document order), then go one level down.
            self.emit(packer, path, packer.pack(run, None))
            run = []
            self.node(member.value, [*path, member.name], too_big=True)
        self.emit(packer, path, packer.pack(run, None))

    def emit(self, packer: Packer, path: list[str], spans: list[tuple[int, int]]) -> None:
        self.chunks.extend(self.source.chunks(packer, path, spans))


def _skip(src: str, pos: int) -> int:
    match = _WS.match(src, pos)
    return match.end() if match else pos


def _scan(src: str) -> _Node:
    """Spans of every value and member of an already validated document (iterative: no recursion limit)."""
    pos = _skip(src, 0)
    open_: list[_Node] = []
    root: _Node | None = None
    expect_value = True
    while True:
        if expect_value:
            parent = open_[-1] if open_ else None
            member_start = pos
            name = ""
            if parent is not None and parent.kind == "object":
                key = _STRING.match(src, pos)
                assert key is not None
                name = json.loads(key.group())
                pos = _skip(src, key.end())
                pos = _skip(src, pos + 1)  # past the ':'
            elif parent is not None:
                name = str(len(parent.members))
            char = src[pos]
            if char in "{[":
                node = _Node("object" if char == "{" else "array", pos)
            else:
                match = (_STRING if char == '"' else _SCALAR).match(src, pos)
                assert match is not None
                node = _Node("scalar", pos, match.end())
            if parent is None:
                root = node
            else:
                parent.members.append(_Member(name, member_start, node))
            if node.end < 0:
                open_.append(node)
                pos = _skip(src, pos + 1)
                expect_value = src[pos] not in "}]"
                continue
            pos = _skip(src, node.end)
            expect_value = False
        else:
            if not open_:
                break
            if src[pos] == ",":
                pos = _skip(src, pos + 1)
                expect_value = True
            else:  # the closing bracket of the innermost open container
                closed = open_.pop()
                closed.end = pos + 1
                pos = _skip(src, pos + 1)
    assert root is not None
    return root
