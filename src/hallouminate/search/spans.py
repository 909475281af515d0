"""``match_spans``: where the query's words are in a chunk's text, as UTF-8 byte offsets (domain; pure).

A span is a word whose token (by the one analyser, analysis.py) is one of the query's: the words BM25
matched and the snippet shows, stemmed forms included ("running" for "run"). Offsets are bytes of the
text's UTF-8 encoding, ``[start, end)``, so ``text.encode()[start:end]`` is the word; at most
``SPANS_MAX`` per chunk (the first ones), and none computed for a text over ``SPANS_MAX_TEXT_BYTES``.
Which text: the chunk's stored text (docs/search.md, "Match spans").
"""

from __future__ import annotations

from collections.abc import Sequence

from hallouminate.analysis import TokenFinder
from hallouminate.protocol.limits import SPANS_MAX, SPANS_MAX_TEXT_BYTES
from hallouminate.protocol.results import MatchSpan


class SpanFinder:
    """Built once per query from its ``query_terms``."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.finder = TokenFinder(terms)

    def spans(self, text: str) -> list[MatchSpan] | None:
        """The spans of the query's tokens in ``text``; None when not computed (a query without searchable
        words, or a text over the size bound)."""
        if not self.finder.terms:
            return None
        encoded = text.encode("utf-8")
        if len(encoded) > SPANS_MAX_TEXT_BYTES:
            return None
        found = self.finder.spans(text)[:SPANS_MAX]
        if len(encoded) == len(text):  # ASCII: characters are bytes
            return [{"start": start, "end": end} for start, end in found]
        spans: list[MatchSpan] = []
        at = 0  # characters counted so far, and their bytes: one pass over the text, in order
        byte = 0
        for start, end in found:
            byte += len(text[at:start].encode("utf-8"))
            width = len(text[start:end].encode("utf-8"))
            spans.append({"start": byte, "end": byte + width})
            byte += width
            at = end
        return spans
