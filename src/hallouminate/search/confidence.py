"""``low_confidence``: whether a ranked result answers its query at all (domain; pure). ADR 0025.

Ranked scores are fused ranks scaled so that the best hit is 1.0: they say which page is best, never
whether any is good. So ``low_confidence`` rests on absolute signals, kept in the result
(``confidence``) so that a client can apply its own threshold:

- ``best_cosine``: the highest cosine similarity between the query and any candidate chunk. A model's
  cosines have a scale of their own (unrelated English texts sit near 0.0-0.2 for all-MiniLM-L6-v2), so
  the floor is per model (``COSINE_FLOOR``).
- ``terms`` / ``terms_found``: the query's content words, and how many of them any candidate chunk holds
  (its text, heading breadcrumb or path, as the literal gate reads them: search/literal.py).
- ``best_share``: the largest rarity-weighted share of the query's words one candidate chunk holds (the
  literal gate's measure; 1.0 = every word).
- ``cosine_ratio``: the best candidate cosine over their mean (GrooveSeek's ``min_confidence_ratio``
  input). Not part of the default rule (it fires the wrong way on the labelled sets, ADR 0025); a caller
  who sets ``min_confidence_ratio`` adds GrooveSeek's clause to it (``ratio_is_low``; docs/adr/0040).
- ``missing_words``: the query's words that are rare in general English (Zipf frequency under
  ``ZIPF_FLOOR``: a name or a term of art, "Elasticsearch", "Istio", "KYC") and that no chunk of the
  searched corpora holds: a specific thing the knowledge base never mentions. A common word no page holds
  ("fortnight", "shop") is usually a paraphrase of one it does, so it is not counted. ADR 0030.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from hallouminate.analysis import english_loaded, english_zipf, start_loading_english, term_words
from hallouminate.errors import InvalidArgument
from hallouminate.ports import ChunkRow
from hallouminate.protocol import limits
from hallouminate.protocol.results import GroundConfidence, GroundWarning, MissingWord
from hallouminate.search.literal import LiteralEvidence

# The catalog's models (model/catalog.py), by name: search/ may not import model/ (docs/architecture.md),
# and the floors are facts of this rule, measured through it.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
# Their int8 variants (ADR 0052) keep their floors: their vectors are within ~0.01 of cosine of the fp32
# graph's (mean 0.99 on the evaluation wiki's text), far under the floors' step.
MINILM_INT8 = MINILM + "-int8"
MPNET_INT8 = MPNET + "-int8"
# Its cosines crowd high (answerable and unanswerable alike lie within 0.79-0.90), and a cross-language
# question shares no word with its page: both floors are the largest firing on no answerable query of the
# English sets nor of the multilingual set (bench/confidence.py --set multilingual; ADR 0053), so the
# wordless floor sits just above the plain one instead of at the median answer.
E5_SMALL_Q4 = "intfloat/multilingual-e5-small-q4"

# The cosine below which the best chunk is only loosely related to the query, per model: the largest
# floor that fires on no answerable query of the set it was fitted on (bench/confidence.py --sweep;
# docs/adr/0025-low-confidence.md). A model not listed has no floor known to us: ``low_confidence``
# then rests on the query's words alone.
COSINE_FLOOR: dict[str, float] = {
    MINILM: 0.25,
    MPNET: 0.25,
    MINILM_INT8: 0.25,
    MPNET_INT8: 0.25,
    E5_SMALL_Q4: 0.79,
}
# The floor when no content word of the query occurs in any candidate: meaning is then the only evidence,
# so it must be as strong as a typical answer's (the median best cosine of the fitted set's answerable
# queries, rounded down).
WORDLESS_FLOOR: dict[str, float] = {
    MINILM: 0.44,
    MPNET: 0.44,
    MINILM_INT8: 0.44,
    MPNET_INT8: 0.44,
    E5_SMALL_Q4: 0.80,
}

# A query word rarer than this in general English (Zipf scale: log10 of occurrences per billion words)
# names something specific: when no chunk holds it, the knowledge base does not describe what the query
# asks about. The largest floor (in steps of 0.1) firing on no answerable query of any labelled set
# (bench/confidence.py --zipf-sweep; eval alone gives 2.8, which fires on 3 of heldout's 43: ADR 0030).
# Model-independent: it reads words, not cosines.
ZIPF_FLOOR = 2.5


class RareWord(NamedTuple):
    """A query word rarer than ``ZIPF_FLOOR`` in general English, with its term (analysis.query_terms)."""

    term: str
    word: str
    zipf: float


WEAK_MATCH = "weak-match"


def rare_words(query: str, terms: Sequence[str]) -> list[RareWord] | None:
    """The query's words (letters only: numbers and identifiers are not English words) rarer than
    ``ZIPF_FLOOR`` in general English, with their terms. Cheap (a cached table look-up per word): whether
    the corpus holds them is asked of the BM25 index only for these.

    None while the word list is still loading (~1 s after the daemon starts, which starts it): a query
    is never kept waiting for it; its result then has no ``missing_words`` nor ``zipf_floor``."""
    if not english_loaded():
        start_loading_english()
        return None
    written = term_words(query)
    out = []
    for term in terms:
        word = written.get(term.split(" ")[0], "")
        if word.isalpha() and word.isascii():
            zipf = english_zipf(word)
            if zipf < ZIPF_FLOOR:
                out.append(RareWord(term, word, round(zipf, 2)))
    return out


def signals(
    vector_rows: Sequence[ChunkRow],
    evidence: LiteralEvidence | None,
    model: str | None,
    unindexed: Sequence[RareWord] | None = None,
) -> GroundConfidence:
    """The raw signals of a ranked result, from its candidates; ``unindexed``: the query's rare words
    the BM25 index holds nowhere in the searched corpora (``rare_words``, then one look-up each; None:
    not looked for, the word list was still loading)."""
    cosines = [float(row["score"]) for row in vector_rows if "score" in row]
    best = max(cosines) if cosines else None
    mean = sum(cosines) / len(cosines) if cosines else 0.0
    found = evidence.found if evidence is not None else 0
    terms = len(evidence.matcher.terms) if evidence is not None else 0
    out: GroundConfidence = {
        "best_cosine": None if best is None else round(best, 4),
        "cosine_ratio": round(best / mean, 4) if best is not None and mean > 0 else None,
        "terms": terms,
        "terms_found": bin(found).count("1"),
        "best_share": round(max(evidence.shares.values(), default=0.0), 4) if evidence else 0.0,
    }
    floor = COSINE_FLOOR.get(model or MINILM)
    if floor is not None:
        out["cosine_floor"] = floor
    if unindexed is None:
        return out
    out["zipf_floor"] = ZIPF_FLOOR
    # BM25 indexes chunk text only; the gate also reads breadcrumbs and paths ("pgbackrest.md"): a word
    # a candidate holds there is not missing.
    out["missing_words"] = [
        MissingWord(word=rare.word, zipf=rare.zipf)
        for rare in unindexed
        if not _candidate_holds(evidence, rare.term)
    ]
    return out


def _candidate_holds(evidence: LiteralEvidence | None, term: str) -> bool:
    if evidence is None:
        return False
    terms = evidence.matcher.terms
    return term in terms and bool(evidence.found >> terms.index(term) & 1)


def ratio_setting(value: object) -> float | None:
    """A caller's ``min_confidence_ratio`` as the rule applies it: None (not sent) keeps our rule alone;
    a non-finite number is GrooveSeek's server default; 0 or less disables the clause (GrooveSeek's
    formula never fires below 1 anyway: max/mean >= 1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(
            f"min_confidence_ratio must be a number, got {value!r}", {"param": "min_confidence_ratio"}
        )
    if not math.isfinite(value):
        return limits.MIN_CONFIDENCE_RATIO_DEFAULT
    return float(value)


def ratio_is_low(vector_rows: Sequence[ChunkRow], min_ratio: float | None) -> bool:
    """GrooveSeek's clause: at least two candidates, a positive mean cosine, and the best under
    ``min_ratio`` times the mean (no candidate stands out from the others). Off when ``min_ratio`` is
    None or not positive."""
    if min_ratio is None or min_ratio <= 0:
        return False
    cosines = [float(row["score"]) for row in vector_rows if "score" in row]
    if len(cosines) < 2:
        return False
    mean = sum(cosines) / len(cosines)
    return mean > 0 and max(cosines) / mean < min_ratio


def is_low(confidence: GroundConfidence, model: str | None) -> bool:
    """The rule (docs/search.md, "Low confidence"): no candidate; or a word rare in English that no chunk
    holds; or the best cosine under the model's floor; or no content word of the query in any candidate
    and the best cosine under the higher floor (for a model with no known floor: no content word found
    at all)."""
    name = model or MINILM
    best = confidence["best_cosine"]
    if best is None or confidence.get("missing_words"):
        return True
    floor = COSINE_FLOOR.get(name)
    if floor is not None and best < floor:
        return True
    if confidence["terms"] == 0 or confidence["terms_found"] > 0:
        return False
    wordless = WORDLESS_FLOOR.get(name)
    return wordless is None or best < wordless


def warning(confidence: GroundConfidence, *, ratio_only: bool = False) -> GroundWarning:
    """The weak-match warning; ``ratio_only``: only GrooveSeek's ratio clause fired (say which)."""
    best = confidence["best_cosine"]
    ratio = confidence.get("min_confidence_ratio")
    if ratio_only and ratio is not None:
        return {
            "code": WEAK_MATCH,
            "message": f"no page stands out for the query: the best chunk's cosine is "
            f"{confidence['cosine_ratio']} times the candidates' mean, under min_confidence_ratio "
            f"{ratio:g}; the knowledge base may not cover it: say so rather than answer from these hits",
        }
    closest = "nothing was found" if best is None else f"the closest chunk has cosine {best:.2f}"
    terms = confidence["terms"]
    words = f"{confidence['terms_found']} of its {terms} words found" if terms else "no content words"
    missing = [m["word"] for m in confidence.get("missing_words", [])]
    if missing:
        words += f"; no page mentions {', '.join(repr(w) for w in missing)}"
    return {
        "code": WEAK_MATCH,
        "message": f"no page is a strong match for the query ({closest}, {words}): the knowledge base "
        "may not cover it; say so rather than answer from these hits",
    }
