"""Query terms for keyword search and snippet placement (domain; pure).

Stop words are dropped before BM25 so that "how do I ..." questions are ranked by their content words,
and a query of stop words and punctuation alone is recognised (it goes vector-only).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can cannot could did do does doing don down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other ought our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def query_terms(query: str) -> list[str]:
    """Lower-cased content words of ``query``, in order, without duplicates or stop words."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word not in STOPWORDS and word.strip("_"):
            seen.setdefault(word, None)
    return list(seen)


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


def stem(term: str) -> str:
    """A crude prefix stem ("configuring" -> "configur") for locating a term in text, not for ranking."""
    if not term.endswith(_SUFFIXES):  # most words: one C call instead of ten
        return term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term
