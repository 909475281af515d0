"""Cut text into chunks under a token budget, each repeating the tail of the one before (domain; pure).

Shared by the plain-text, JSON and PDF chunkers. A run of text is first cut into *atoms* that each fit
(paragraphs, then sentences, then lines, then words, then characters), atoms are packed greedily into
chunks, and every chunk after the first starts with the last whole words of its predecessor worth at most
``OVERLAP_SHARE`` of the budget: a short phrase that straddles a cut is whole in the next chunk.

The budget applies to the embedded text: the breadcrumb prefix, a blank line, then the chunk's body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from hallouminate.indexing.chunker import BREADCRUMB_SEP

# Share of the token budget repeated from the previous chunk.
OVERLAP_SHARE = 0.12

Span = tuple[int, int]  # [start, end) character offsets into the normalised source
CountTokens = Callable[[str], int]

# Plain text: a blank line ends a paragraph; sentence ends as in the Markdown chunker.
PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n\s*")
SENTENCE_END = re.compile(r"(?:(?<=[.!?;])|(?<=[.!?;][\"')\]]))\s+(?=\S)")
LINE_END = re.compile(r"\s*\n\s*")
WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s")
# A span longer than this many characters per token of the limit is first judged by its head (English
# runs at ~4-5 characters per token, code and JSON at fewer).
_QUICK_CHARS_PER_TOKEN = 6


@dataclass(frozen=True)
class Grammar:
    """Where a text may be cut, coarsest first, and what a word is (the unit of the last cut and the overlap)."""

    breaks: tuple[re.Pattern[str], ...]
    word: re.Pattern[str]


PLAIN = Grammar((PARAGRAPH_BREAK, SENTENCE_END, LINE_END), WORD)


@dataclass(frozen=True)
class Atom:
    """A piece of text that fits on its own, with its token count."""

    start: int
    end: int
    cost: int


def fit_prefix(path: Sequence[str], count_tokens: CountTokens, budget: int) -> str:
    """The breadcrumb put before the body when embedding: at most half the budget (as for Markdown)."""
    for crumbs in (path, path[-1:], []):
        prefix = BREADCRUMB_SEP.join(crumbs)
        if not prefix or count_tokens(prefix) <= budget // 2:
            return prefix
    return ""


class Packer:
    """Packs runs of ``src`` that share one breadcrumb into overlapping chunks under ``budget``."""

    def __init__(self, src: str, count_tokens: CountTokens, budget: int, path: Sequence[str]) -> None:
        if budget < 1:
            raise ValueError(f"budget must be positive, got {budget}")
        self.src = src
        self.count_tokens = count_tokens
        self.budget = budget
        self.prefix = fit_prefix(path, count_tokens, budget)
        self.room = budget - (count_tokens(self.prefix) if self.prefix else 0)
        # At most a third of the room, so that every chunk still brings mostly new text.
        self.overlap = max(0, min(round(OVERLAP_SHARE * budget), self.room // 3))
        self._gap_costs: dict[str, int] = {}

    # -- measuring -----------------------------------------------------------------------------------
    def cost(self, start: int, end: int) -> int:
        return self.count_tokens(self.src[start:end])

    def cost_within(self, start: int, end: int, limit: int) -> int:
        """The exact cost if it is at most ``limit``, else some number above ``limit``.

        A long span is first judged by a prefix cut at whitespace: if that alone is over the limit, so is
        the whole, and a huge subtree or paragraph is not tokenized in full at every level it is tried.
        Were a tokenizer to break that rule, a span that fits would only be cut one level finer.
        """
        window = _QUICK_CHARS_PER_TOKEN * (limit + 1)
        if end - start > window:
            space = _SPACE.search(self.src, start + window, end)
            if space is not None:
                head = self.cost(start, space.start())
                if head > limit:
                    return head
        return self.cost(start, end)

    def embed_text(self, start: int, end: int) -> str:
        body = self.src[start:end]
        return f"{self.prefix}\n\n{body}" if self.prefix else body

    def fits(self, start: int, end: int) -> bool:
        """Exact check of the text that will be embedded."""
        return self.count_tokens(self.embed_text(start, end)) <= self.budget

    def fits_within(self, start: int, end: int) -> bool:
        """``fits``, after a cheap rejection of spans far over the budget."""
        return self.cost_within(start, end, self.room) <= self.room and self.fits(start, end)

    def gap_cost(self, start: int, end: int) -> int:
        gap = self.src[start:end]
        if not gap.strip():
            return 0
        # Gaps repeat (", " between JSON members): count each distinct one once.
        cost = self._gap_costs.get(gap)
        if cost is None:
            cost = self._gap_costs[gap] = self.count_tokens(gap)
        return cost

    # -- text ----------------------------------------------------------------------------------------
    def text_spans(self, start: int, end: int, grammar: Grammar = PLAIN) -> list[Span]:
        """Overlapping chunks of the text ``src[start:end]``."""
        # Atoms leave room for the overlap, so a tail always fits in front of the next atom.
        limit = max(1, self.room - self.overlap)
        atoms = list(self.atoms(start, end, grammar, 0, limit))
        return self.pack(atoms, grammar.word)

    def atoms(self, start: int, end: int, grammar: Grammar, level: int, limit: int) -> Iterator[Atom]:
        """Cut ``[start, end)`` at the coarsest boundaries that give pieces under ``limit`` tokens."""
        start, end = _trim(self.src, start, end)
        if start >= end:
            return
        cost = self.cost_within(start, end, limit)
        if cost <= limit:
            yield Atom(start, end, cost)
            return
        while level < len(grammar.breaks):
            pieces = list(_between(self.src, start, end, grammar.breaks[level]))
            level += 1
            if len(pieces) > 1:
                for s, e in pieces:
                    yield from self.atoms(s, e, grammar, level, limit)
                return
        if level == len(grammar.breaks):
            words = [m.span() for m in grammar.word.finditer(self.src, start, end)]
            if len(words) > 1:
                for s, e in words:
                    yield from self.atoms(s, e, grammar, level + 1, limit)
                return
        yield from self.chars(start, end, lambda s, e: self.cost(s, e) <= limit)

    def chars(self, start: int, end: int, fits: Callable[[int, int], bool]) -> Iterator[Atom]:
        # Last resort (a giant URL or base64 blob): the longest prefix that fits, found by bisection.
        while start < end:
            lo, hi = start + 1, end
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if fits(start, mid):
                    lo = mid
                else:
                    hi = mid - 1
            yield Atom(start, lo, self.cost(start, lo))
            start = lo

    # -- packing -------------------------------------------------------------------------------------
    def pack(self, atoms: list[Atom], word: re.Pattern[str] | None) -> list[Span]:
        """Greedy packing with overlap. The tail repeated is made of whole ``word`` matches, or of whole
        atoms when ``word`` is None (JSON members)."""
        atoms = list(atoms)
        spans: list[Span] = []
        tail: tuple[int, int] | None = None  # (start offset, token count) of the repeated tail
        i = 0
        while i < len(atoms):
            first = atoms[i]
            start, used = first.start, first.cost
            if tail is not None:
                with_tail = tail[1] + self.gap_cost(atoms[i - 1].end, first.start) + first.cost
                if with_tail <= self.room:
                    start, used = tail[0], with_tail
            j = i + 1
            while j < len(atoms):
                add = self.gap_cost(atoms[j - 1].end, atoms[j].start) + atoms[j].cost
                if used + add > self.room:
                    break
                used += add
                j += 1
            # Costs are counted per atom and summed (exact for WordPiece, which splits at whitespace); one
            # exact count per chunk keeps any other tokenizer under the budget too.
            while not self.fits(start, atoms[j - 1].end):
                if j - 1 > i:
                    j -= 1
                elif start != first.start:
                    start = first.start
                elif first.end - first.start <= 1:
                    break  # one character over budget: nothing smaller to cut, keep it
                else:
                    atoms[i : i + 1] = list(self.chars(first.start, first.end, self.fits))
                    first = atoms[i]
                    start = first.start
            spans.append((start, atoms[j - 1].end))
            if word is None:
                candidates = [a.start for a in atoms[i:j] if a.start > start]
            else:
                candidates = [m.start() for m in word.finditer(self.src, start, atoms[j - 1].end)][1:]
            tail = self.tail(candidates, atoms[j - 1].end)
            i = j
        return spans

    def tail(self, candidates: list[int], end: int) -> tuple[int, int] | None:
        """The longest ``src[c:end]`` (c among ``candidates``, ascending) worth at most ``overlap`` tokens."""
        if self.overlap < 1 or not candidates:
            return None
        # A word or member costs at least a token with any usual tokenizer, so a tail that fits starts
        # among the last ``overlap`` candidates: the counts below stay short.
        candidates = candidates[-self.overlap :]
        lo, hi = 0, len(candidates)  # first index whose suffix fits; len() when none does
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cost(candidates[mid], end) <= self.overlap:
                hi = mid
            else:
                lo = mid + 1
        if lo == len(candidates):
            return None
        return candidates[lo], self.cost(candidates[lo], end)


def _trim(src: str, start: int, end: int) -> Span:
    while start < end and src[start].isspace():
        start += 1
    while end > start and src[end - 1].isspace():
        end -= 1
    return start, end


def _between(src: str, start: int, end: int, pattern: re.Pattern[str]) -> Iterator[Span]:
    """The parts of ``[start, end)`` between matches of ``pattern`` (separators dropped)."""
    cursor = start
    for match in pattern.finditer(src, start, end):
        if match.start() > cursor:
            yield cursor, match.start()
        cursor = match.end()
    if cursor < end:
        yield cursor, end
