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
  input): recorded, not used (bench/confidence.py measures it).
"""

from __future__ import annotations

from collections.abc import Sequence

from hallouminate.ports import ChunkRow
from hallouminate.protocol.results import GroundConfidence, GroundWarning
from hallouminate.search.literal import LiteralEvidence

# The catalog's models (model/catalog.py), by name: search/ may not import model/ (docs/architecture.md),
# and the floors are facts of this rule, measured through it.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"

# The cosine below which the best chunk is only loosely related to the query, per model: the largest
# floor that fires on no answerable query of the set it was fitted on (bench/confidence.py --sweep;
# docs/adr/0025-low-confidence.md). A model not listed has no floor known to us: ``low_confidence``
# then rests on the query's words alone.
COSINE_FLOOR: dict[str, float] = {MINILM: 0.25, MPNET: 0.25}
# The floor when no content word of the query occurs in any candidate: meaning is then the only evidence,
# so it must be as strong as a typical answer's (the median best cosine of the fitted set's answerable
# queries, rounded down).
WORDLESS_FLOOR: dict[str, float] = {MINILM: 0.44, MPNET: 0.44}

WEAK_MATCH = "weak-match"


def signals(
    vector_rows: Sequence[ChunkRow], evidence: LiteralEvidence | None, model: str | None
) -> GroundConfidence:
    """The raw signals of a ranked result, from its candidates."""
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
    return out


def is_low(confidence: GroundConfidence, model: str | None) -> bool:
    """The rule (docs/search.md, "Low confidence"): no candidate; or the best cosine under the model's
    floor; or no content word of the query in any candidate and the best cosine under the higher floor
    (for a model with no known floor: no content word found at all)."""
    name = model or MINILM
    best = confidence["best_cosine"]
    if best is None:  # nothing was found by meaning: no candidate at all
        return True
    floor = COSINE_FLOOR.get(name)
    if floor is not None and best < floor:
        return True
    if confidence["terms"] == 0 or confidence["terms_found"] > 0:
        return False
    wordless = WORDLESS_FLOOR.get(name)
    return wordless is None or best < wordless


def warning(confidence: GroundConfidence) -> GroundWarning:
    best = confidence["best_cosine"]
    closest = "nothing was found" if best is None else f"the closest chunk has cosine {best:.2f}"
    terms = confidence["terms"]
    words = f"{confidence['terms_found']} of its {terms} words found" if terms else "no content words"
    return {
        "code": WEAK_MATCH,
        "message": f"no page is a strong match for the query ({closest}, {words}): the knowledge base "
        "may not cover it; say so rather than answer from these hits",
    }
