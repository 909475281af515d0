"""Split a Markdown page into heading-scoped chunks that fit the embedding model (domain; pure).

A chunk is a run of the file's own lines: its ``text`` is the verbatim slice between ``line_start`` and
``line_end`` (1-based, YAML frontmatter counted), used for snippets and BM25. What gets embedded is
``embed_text``: the heading breadcrumb ("Title > Section") then the body, so headings steer retrieval of
every chunk beneath them. The token budget applies to ``embed_text``.

Splitting: at H1/H2/H3 first; a section over budget splits at block boundaries (paragraphs, list items,
table rows, fences), an oversize block at sentence ends (prose) or lines, then words, then characters.

A valid YAML frontmatter becomes ``MarkdownPage.fields`` and is left out of the chunks; a malformed one is
chunked as text and reported in ``frontmatter_error``. A footnote definition is appended to the chunk that
first cites it, wherever in the file it is written.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hallouminate.indexing.frontmatter import parse_frontmatter
from hallouminate.indexing.markdown_tree import Block, parse_blocks

SUMMARY_CHARS = 280
BREADCRUMB_SEP = " > "
_SECTION_LEVELS = (1, 2, 3)
# Leaf blocks whose text is prose and may be split at sentence ends.
_PROSE = frozenset({"paragraph", "heading"})
# Whitespace after sentence-ending punctuation (optionally closed by a quote or bracket).
_SENTENCE_END = re.compile(r"(?:(?<=[.!?;])|(?<=[.!?;][\"')\]]))\s+(?=\S)")
_LINE_END = re.compile(r"\n+")
_WORD = re.compile(r"\S+")
_LEADING_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")
NOTE_SEP = "\n\n"
TRUNCATED = " …"

Span = tuple[int, int]  # [start, end) character offsets into the normalised source


@dataclass(frozen=True)
class Chunk:
    heading_path: list[str]
    line_start: int
    line_end: int
    text: str
    # What the embedder sees; built from the breadcrumb and ``text`` when not given.
    embed_text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.embed_text:
            object.__setattr__(self, "embed_text", compose_embed_text(self.heading_path, self.text))


@dataclass(frozen=True)
class MarkdownPage:
    title: str | None
    summary: str
    chunks: list[Chunk]
    # The frontmatter mapping, JSON-safe (dates as ISO strings); {} when absent or malformed.
    fields: dict[str, Any] = field(default_factory=dict)
    # One line saying why the frontmatter block was not read (it is then chunked as text).
    frontmatter_error: str | None = None


# How ``compose_embed_text`` builds the text a chunk's vector is made of. Recorded with the vectors
# (``Embedder.text_prep``): change it whenever what is embedded changes, so a store embedded otherwise is
# never mixed with new vectors.
EMBED_TEXT_FORM = "breadcrumb-blank-body/1"


def compose_embed_text(heading_path: list[str], body: str) -> str:
    crumb = BREADCRUMB_SEP.join(heading_path)
    return f"{crumb}\n\n{body}" if crumb else body


def chunk_markdown(text: str, count_tokens: Callable[[str], int], budget: int) -> MarkdownPage:
    """Chunk ``text``; ``count_tokens(chunk.embed_text) <= budget`` holds for every chunk."""
    if budget < 1:
        raise ValueError(f"budget must be positive, got {budget}")
    return _Chunker(text, count_tokens, budget).page()


@dataclass(frozen=True)
class _Atom:
    """A piece of text that fits the budget on its own, with its token count."""

    start: int
    end: int
    cost: int


@dataclass
class _Section:
    path: list[str]
    blocks: list[Block]

    @property
    def heading_only(self) -> bool:
        return len(self.blocks) == 1 and self.blocks[0].heading_level is not None


class _Chunker:
    def __init__(self, text: str, count_tokens: Callable[[str], int], budget: int) -> None:
        # markdown-it normalises CRLF/CR the same way, so its line numbers match these lines.
        self.src = text.replace("\r\n", "\n").replace("\r", "\n")
        self.count_tokens = count_tokens
        self.budget = budget
        self.line_offsets = [0]
        for line in self.src.split("\n"):
            self.line_offsets.append(self.line_offsets[-1] + len(line) + 1)
        self.fields: dict[str, Any] = {}
        self.frontmatter_error: str | None = None
        blocks: list[Block] = []
        for block in parse_blocks(self.src):
            if block.kind == "front_matter":
                fields, error = parse_frontmatter(block.content, first_line=block.start + 2)
                if error is None:
                    self.fields = fields
                    continue  # read: its keys are fields, not text to embed
                self.frontmatter_error = error  # kept as a block: indexed as the text it is
            blocks.append(block)
        self.notes, self.cites = self.find_footnotes(blocks)
        cited = {id(self.note_blocks[label]) for label in self.cites}
        self.blocks = [b for b in blocks if id(b) not in cited]
        # A chunk is a contiguous run of lines, so none may span a definition moved to its citer.
        self.moved_at = sorted(self.block_span(self.note_blocks[label])[0] for label in self.cites)
        self.prefix = ""
        self.room = budget
        self.limit = budget  # the exact cap of prefix + body: the budget less the room kept for notes

    # -- page ----------------------------------------------------------------------------------------
    def page(self) -> MarkdownPage:
        title = next((b.plain_text() for b in self.blocks if b.heading_level == 1), None)
        if not title:
            # The reader's H1 wins; a frontmatter title stands in for a page without one.
            fm_title = self.fields.get("title")
            title = " ".join(fm_title.split()) if isinstance(fm_title, str) else None
        sections = list(self.sections(title))
        entries: list[tuple[Chunk, Span]] = []
        for section in sections:
            if not section.heading_only:
                entries.extend(self.chunk_section(section))
        if not entries and sections:
            # A page that is only headings still deserves to be found by its title.
            entries.extend(self.chunk_section(sections[0]))
        chunks = self.attach_notes(entries)
        return MarkdownPage(title or None, self.summary(title), chunks, self.fields, self.frontmatter_error)

    # -- footnotes -----------------------------------------------------------------------------------
    def find_footnotes(self, blocks: list[Block]) -> tuple[dict[str, str], dict[str, Block]]:
        """``(notes, cites)``: the text of each top-level definition that is cited, and the top-level
        block holding its first reference (document order). Uncited definitions are not in either."""
        self.note_blocks: dict[str, Block] = {}
        for block in blocks:
            if block.kind == "footnote_reference" and block.label is not None:
                self.note_blocks.setdefault(block.label, block)  # a duplicate stays where it is
        cites: dict[str, Block] = {}
        for block in blocks:
            if block.kind == "footnote_reference" or block.kind == "front_matter":
                continue
            for label in block.footnote_refs():
                if label in self.note_blocks:
                    cites.setdefault(label, block)
        notes: dict[str, str] = {}
        for label in cites:
            start, end = self.block_span(self.note_blocks[label])
            notes[label] = self.src[start:end].strip()
        return notes, cites

    def attach_notes(self, entries: list[tuple[Chunk, Span]]) -> list[Chunk]:
        if not entries:
            return []
        by_chunk: dict[int, list[str]] = defaultdict(list)
        for label, block in self.cites.items():
            b_start, b_end = self.block_span(block)
            marker = f"[^{label}]"
            overlapping = [i for i, (_, (s, e)) in enumerate(entries) if s < b_end and e > b_start]
            # Of the chunks holding the citing block (it may have been split), the one with the marker;
            # a heading-only section has no chunk, so its citation goes to the next chunk.
            target = next(
                (i for i in overlapping if marker in self.src[entries[i][1][0] : entries[i][1][1]]),
                next((i for i, (_, (_, e)) in enumerate(entries) if e > b_start), len(entries) - 1),
            )
            by_chunk[target].append(label)
        chunks = [chunk for chunk, _ in entries]
        for i, labels in by_chunk.items():
            chunks[i] = self.with_notes(chunks[i], labels)
        return chunks

    def with_notes(self, chunk: Chunk, labels: list[str]) -> Chunk:
        text, embed = chunk.text, chunk.embed_text
        for label in labels:
            note = self.notes[label]
            if self.count_tokens(embed + NOTE_SEP + note) > self.budget:
                note = self.truncate_note(embed, note)
                if not note:
                    continue
            text += NOTE_SEP + note
            embed += NOTE_SEP + note
        return Chunk(chunk.heading_path, chunk.line_start, chunk.line_end, text, embed)

    def truncate_note(self, embed: str, note: str) -> str:
        """The longest run of the note's leading words, marked as cut, that still fits the budget."""
        ends = [m.end() for m in _WORD.finditer(note)]
        lo, hi = 0, len(ends) - 1  # words kept: ends[:k]; find the largest fitting k
        best = ""
        while lo <= hi:
            mid = (lo + hi) // 2
            candidate = note[: ends[mid]] + TRUNCATED
            if self.count_tokens(embed + NOTE_SEP + candidate) <= self.budget:
                best, lo = candidate, mid + 1
            else:
                hi = mid - 1
        return best

    def sections(self, title: str | None) -> Iterator[_Section]:
        stack: list[tuple[int, str]] = []
        current = _Section([title] if title else [], [])
        for block in self.blocks:
            level = block.heading_level
            if level in _SECTION_LEVELS:
                if current.blocks:
                    yield current
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, block.plain_text()))
                path = [text for _, text in stack]
                if title and stack[0][0] != 1:
                    path.insert(0, title)  # sections above the H1 still hang under the page title
                current = _Section(path, [])
            current.blocks.append(block)
        if current.blocks:
            yield current

    def summary(self, title: str | None) -> str:
        paragraphs = [b for b in self.blocks if b.kind == "paragraph"]
        h1 = next((b for b in self.blocks if b.heading_level == 1), None)
        if h1 is not None:
            paragraphs = [b for b in paragraphs if b.start > h1.start] or paragraphs
        first = paragraphs[0].plain_text() if paragraphs else ""
        text = f"{title} - {first}" if title and first else (first or title or "")
        if len(text) <= SUMMARY_CHARS:
            return text
        cut = text[: SUMMARY_CHARS - 1]
        if " " in cut[SUMMARY_CHARS // 2 :]:
            cut = cut.rsplit(" ", 1)[0]
        return cut.rstrip() + "…"

    # -- sections ------------------------------------------------------------------------------------
    def chunk_section(self, section: _Section) -> list[tuple[Chunk, Span]]:
        self.prefix = self.fit_prefix(section.path)
        self.room = self.budget - (self.count_tokens(self.prefix) if self.prefix else 0)
        # Keep room for the footnotes this section cites (at most half of it), so they attach whole to
        # a packed chunk; what still does not fit is truncated when attached.
        notes = [self.notes[label] for label, block in self.cites.items() if _holds(section, block)]
        reserve = min(self.count_tokens(NOTE_SEP.join(notes)) + 1, self.room // 2) if notes else 0
        self.room -= reserve
        self.limit = self.budget - reserve
        atoms = [atom for block in section.blocks for atom in self.block_atoms(block)]
        return [entry for span in self.pack(atoms) if (entry := self.make_chunk(section.path, span))]

    def fit_prefix(self, path: list[str]) -> str:
        # A breadcrumb may take at most half the budget; absurdly long headings are dropped from the
        # embedding (they still appear in heading_path), deepest kept last.
        for crumbs in (path, path[-1:], []):
            prefix = BREADCRUMB_SEP.join(crumbs)
            if not prefix or self.count_tokens(prefix) <= self.budget // 2:
                return prefix
        return ""

    # Token costs are counted once per piece and summed: with a whitespace-splitting tokenizer (BERT's
    # WordPiece) count(a + " " + b) == count(a) + count(b), which keeps chunking linear. Each packed chunk
    # is then checked exactly, so a tokenizer without that property still never exceeds the budget.
    def cost(self, start: int, end: int) -> int:
        return self.count_tokens(self.src[start:end])

    def fits_exact(self, start: int, end: int) -> bool:
        body = self.src[start:end]
        return self.count_tokens(f"{self.prefix}\n\n{body}" if self.prefix else body) <= self.limit

    def block_span(self, block: Block) -> Span:
        # End at the end of the block's last line, without its newline.
        return self.line_offsets[block.start], self.line_offsets[block.end] - 1

    def block_atoms(self, block: Block) -> list[_Atom]:
        start, end = self.block_span(block)
        if end <= start:
            return []
        cost = self.cost(start, end)
        if cost <= self.room:
            return [_Atom(start, end, cost)]
        if block.children:
            return [atom for child in block.children for atom in self.block_atoms(child)]
        first = _SENTENCE_END if block.kind in _PROSE else _LINE_END
        return self.split(start, end, cost, [first, _LINE_END, _WORD])

    def split(self, start: int, end: int, cost: int, splitters: list[re.Pattern[str]]) -> list[_Atom]:
        """Cut ``[start, end)`` into atoms that each fit, trying each splitter in turn."""
        if cost <= self.room:
            return [_Atom(start, end, cost)]
        if not splitters:
            return self.split_chars(start, end)
        pattern, rest = splitters[0], splitters[1:]
        pieces = list(_pieces(self.src, (start, end), pattern))
        if len(pieces) <= 1:
            return self.split(start, end, cost, rest)
        return [atom for s, e in pieces for atom in self.split(s, e, self.cost(s, e), rest)]

    def split_chars(self, start: int, end: int) -> list[_Atom]:
        # Last resort (a giant URL or base64 blob): the longest prefix that fits, found by bisection.
        out: list[_Atom] = []
        while start < end:
            lo, hi = start + 1, end
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.fits_exact(start, mid):
                    lo = mid
                else:
                    hi = mid - 1
            out.append(_Atom(start, lo, self.cost(start, lo)))
            start = lo
        return out

    def pack(self, atoms: list[_Atom]) -> list[Span]:
        """Greedily merge consecutive atoms while the summed cost fits, then check each chunk exactly."""
        groups: list[list[_Atom]] = []
        current: list[_Atom] = []
        total = 0
        for atom in atoms:
            if current and self.crosses_moved(current[-1].end, atom.start):
                groups.append(current)
                current, total = [atom], atom.cost
                continue
            if current:
                gap = self.src[current[-1].end : atom.start]
                add = atom.cost + (self.count_tokens(gap) if gap.strip() else 0)
                if total + add <= self.room:
                    current.append(atom)
                    total += add
                    continue
                groups.append(current)
            current, total = [atom], atom.cost
        if current:
            groups.append(current)
        spans: list[Span] = []
        for group in groups:
            if self.fits_exact(group[0].start, group[-1].end):
                spans.append((group[0].start, group[-1].end))
            else:
                spans.extend(self.pack_exact(group))
        return spans

    def pack_exact(self, atoms: list[_Atom]) -> list[Span]:
        """Slow path for tokenizers whose counts do not add up: grow each chunk by exact counts."""
        spans: list[Span] = []
        current: Span | None = None
        for atom in atoms:
            pieces = [(atom.start, atom.end)]
            if not self.fits_exact(atom.start, atom.end):
                pieces = [(a.start, a.end) for a in self.split_chars(atom.start, atom.end)]
            for piece in pieces:
                if (
                    current is not None
                    and not self.crosses_moved(current[1], piece[0])
                    and self.fits_exact(current[0], piece[1])
                ):
                    current = (current[0], piece[1])
                    continue
                if current is not None:
                    spans.append(current)
                current = piece
        if current is not None:
            spans.append(current)
        return spans

    def crosses_moved(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.moved_at, start)
        return i < len(self.moved_at) and self.moved_at[i] < end

    def make_chunk(self, path: list[str], span: Span) -> tuple[Chunk, Span] | None:
        start, end = span
        body = self.src[start:end]
        lead = _LEADING_BLANK_LINES.match(body)
        if lead:
            start += lead.end()
        body = self.src[start:end].rstrip()
        if not body.strip():
            return None
        end = start + len(body)
        embed = f"{self.prefix}\n\n{body}" if self.prefix else body
        chunk = Chunk(list(path), self.line_of(start), self.line_of(end - 1), body, embed)
        return chunk, (start, end)

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return bisect.bisect_right(self.line_offsets, offset)


def _holds(section: _Section, block: Block) -> bool:
    return any(b is block for b in section.blocks)


def _pieces(src: str, span: Span, pattern: re.Pattern[str]) -> Iterator[Span]:
    """The parts of ``span`` between matches of ``pattern`` (the separators themselves dropped)."""
    start, end = span
    cursor = start
    for match in pattern.finditer(src, start, end):
        if pattern is _WORD:
            yield match.start(), match.end()
            continue
        if match.start() > cursor:
            yield cursor, match.start()
        cursor = match.end()
    if pattern is not _WORD and cursor < end:
        yield cursor, end
