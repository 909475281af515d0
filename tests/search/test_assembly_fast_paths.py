"""The assembly's fast paths, pinned to the plain versions they replaced (pure; property tests).

``ground.assemble`` runs on the daemon's loop for every query, so its helpers avoid per-row Python steps:
no regex compiled per query, ``in`` instead of a walk over matches, one flat pass instead of groups. Each
must answer exactly what the plain version did (same snippets, same gate, same ranks), on any input: the
plain versions live here as the reference. Where words are found (the gate, snippets), the reference is
the analyser itself run over the whole text (``analysis.py``; ADR 0019).
"""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hallouminate.analysis import analyze, analyzer, query_terms
from hallouminate.search.fusion import TIE_TOLERANCE, tied_ranks
from hallouminate.search.literal import TermMatcher
from hallouminate.search.snippet import (
    TermFinder,
    _best_start,
    _flatten,
    make_snippet,
    window,
    without_leading_headings,
)

# Text drawn from a small alphabet so that stems, word boundaries, headings and odd whitespace meet often:
# "İ" lower-cases to two characters, "Σ" depends on its neighbours, "\xa0", "\u2028" and "\x1c" are
# whitespace to str.split, "_" and digits are word characters.
_CHARS = "abcgo _-#\n\t\r.`/İΣσ9\xa0\u2028\x1c"
words = st.text(alphabet="abcgoİσ9_", min_size=1, max_size=6)
# Texts are pieces of the query's own words among other characters, so that words are found at word
# starts, inside other words, at ends and beside odd characters.
WORDLIKE = ["go", "gob", "ago", "cab", "abc", "abcs", "config", "configuring", "b_b", "_go", "9go", "İgo"]
texts = st.lists(st.one_of(st.sampled_from(WORDLIKE), st.text(alphabet=_CHARS, max_size=3)), max_size=30).map(
    "".join
)
# Query tokens as ground gets them (the analysed words of a query), and now and then raw words no analysis
# gives (a token is looked for as it is).
terms_lists = st.one_of(
    st.lists(st.one_of(st.sampled_from(WORDLIKE), words), min_size=1, max_size=5).map(
        lambda ws: query_terms(" ".join(ws))
    ),
    st.lists(st.one_of(st.sampled_from(WORDLIKE), words), min_size=1, max_size=5),
)
EXAMPLES = settings(max_examples=300, deadline=None)


# -- the plain versions ------------------------------------------------------------------------------
def _term_of(terms: list[str]) -> dict[str, int]:
    """Each token's term (terms deduplicated, as the finder keeps them): the first that has it."""
    index: dict[str, int] = {}
    for j, term in enumerate(dict.fromkeys(t for t in terms if t)):
        for token in term.split():
            index.setdefault(token, j)
    return index


def _plain_positions(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """Where each token the analyser gives ``text`` starts, if it is a query term's (and whose)."""
    index = _term_of(terms)
    return [
        (t.char_offset_from, index[t.text]) for t in analyzer().pre_tokenize(text).tokens if t.text in index
    ]


def _plain_best_start(hits: list[tuple[int, int]], width: int) -> int:
    lead = width // 5
    best_key: tuple[int, int, int] | None = None
    best_start = 0
    for offset, _ in hits:
        start = max(0, offset - lead)
        inside = [t for o, t in hits if start <= o < start + width - 2]
        key = (len(set(inside)), len(inside), -start)
        if best_key is None or key > best_key:
            best_key, best_start = key, start
    return best_start


def _plain_fit(flat: str, hits: list[tuple[int, int]], start: int, width: int) -> int:
    """``start`` moved right as little as needed for the first matched words (as the analyser cuts words)
    to show whole between the ellipses; a word longer than that room starts the window."""
    ends = {t.char_offset_from: t.char_offset_to for t in analyzer().pre_tokenize(flat).tokens}
    span = width - 2
    inside = [offset for offset, _ in hits if offset >= start]
    if not inside:
        return start
    first = inside[0]
    need = start
    for offset in inside:
        if ends[offset] - first > span:
            break
        need = max(need, ends[offset] - span)
    if need == start and ends[first] - first > span:
        need = first
    return max(start, min(need, first))


def _plain_without_leading_headings(text: str) -> str:
    heading = re.compile(r"^\s{0,3}#{1,6}(?:\s.*)?$")
    lines = text.split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or heading.match(lines[i])):
        i += 1
    rest = "\n".join(lines[i:])
    return rest if rest.strip() else text


def _plain_found_in_rows(terms: list[str], rows: list[dict[str, Any]]) -> list[tuple[bool, ...]]:
    """Each row's text, breadcrumb and path analysed whole: which terms it holds a token of."""
    index = _term_of(terms)
    found = []
    for r in rows:
        haystack = "\n".join((r.get("text") or "", " ".join(r.get("heading_path") or []), r["path"]))
        held = {index.get(token) for token in analyze(haystack)}
        found.append(tuple(j in held for j in range(len(terms))))
    return found


def _plain_tied_ranks(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    if not all("score" in row for row in rows):
        return [(row["id"], rank) for rank, row in enumerate(rows, start=1)]
    rows = sorted(rows, key=lambda row: -float(row["score"]))
    groups: list[list[dict[str, Any]]] = []
    for row in rows:
        better, score = (float(groups[-1][-1]["score"]), float(row["score"])) if groups else (0.0, 0.0)
        if groups and better - score <= TIE_TOLERANCE * max(1.0, abs(better), abs(score)):
            groups[-1].append(row)
        else:
            groups.append([row])
    out: list[tuple[str, int]] = []
    for group in groups:
        rank = len(out) + 1
        out.extend((row["id"], rank) for row in sorted(group, key=lambda row: str(row["id"])))
    return out


# -- the fast paths agree ----------------------------------------------------------------------------
@EXAMPLES
@given(texts, terms_lists)
def test_term_finder_finds_what_the_analyser_finds(text: str, terms: list[str]) -> None:
    assert TermFinder(terms).positions(text) == _plain_positions(text, terms)


def test_term_finder_on_inflections_repeats_and_odd_words() -> None:
    text = "Configs configuring config-b b_b gob go go- a-b a-bc ab-c dying DIES die"
    for terms in (
        ["configs", "configuring", "config"],  # raw words: only "config" is a token ("configs" -> config)
        query_terms("configs configuring config"),
        query_terms("tests tested test"),  # three words, one token
        query_terms("go gob b"),
        query_terms("a-b b-c a-bc"),
        query_terms("died"),  # "dying" starts with "dy", not with "di"
    ):
        assert TermFinder(terms).positions(text) == _plain_positions(text, terms)
    dying = text.index("dying")
    assert TermFinder(query_terms("died")).positions(text) == [(dying, 0), (dying + 6, 0), (dying + 11, 0)]


@EXAMPLES
@given(
    # Offsets dense against the width, so that hits fall on window edges often.
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 2)), max_size=10),
    st.integers(1, 20),
)
def test_best_start_picks_the_window_the_scan_of_all_windows_picked(
    raw: list[tuple[int, int]], width: int
) -> None:
    hits = sorted(dict(raw).items())  # offset order, one hit per offset, as positions gives them
    if hits:
        assert _best_start(hits, width) == _plain_best_start(hits, width)


def test_best_start_when_the_last_hit_is_just_past_the_first_window() -> None:
    # width 10: windows start 2 before a hit and hold 8 characters. The first window holds the two "t0"
    # hits; the one from the second hit holds "t0" and the "t1" at the first window's edge: more terms.
    hits = [(0, 0), (5, 0), (8, 1)]
    assert _best_start(hits, 10) == _plain_best_start(hits, 10) == 3


@EXAMPLES
@given(texts)
def test_flatten_and_heading_drop_match_split_and_join(text: str) -> None:
    assert _flatten(text) == " ".join(text.split())
    assert without_leading_headings(text) == _plain_without_leading_headings(text)


@EXAMPLES
@given(texts, st.one_of(st.just([]), terms_lists), st.integers(16, 80))
# "_" joins no words for the analyser: the matched word is "gob", and the window need not move for it.
@example("go99_gob_gogogogo", ["gob"], 16)
def test_snippets_match_the_regex_placed_ones(text: str, terms: list[str], width: int) -> None:
    flat = " ".join(_plain_without_leading_headings(text).split())
    expected = flat
    if len(flat) > width:
        hits = _plain_positions(flat, terms) if terms else []
        start = _plain_fit(flat, hits, _plain_best_start(hits, width), width) if hits else 0
        expected = window(flat, start, width)
    assert make_snippet(text, terms, width) == expected
    assert make_snippet(text, terms, width, TermFinder(terms)) == expected


@EXAMPLES
@given(
    st.lists(
        st.fixed_dictionaries(
            {"text": st.one_of(st.none(), texts), "heading_path": st.lists(words, max_size=2), "path": words}
        ),
        max_size=8,
    ),
    terms_lists,
)
def test_gate_holds_what_the_analyser_gives(rows: list[dict[str, Any]], terms: list[str]) -> None:
    matcher = TermMatcher(terms)
    found = matcher.found_in_rows(rows)
    assert found == _plain_found_in_rows(matcher.terms, rows)
    _, counts = matcher.masks(rows)
    assert counts == [sum(1 for row in found if row[j]) for j in range(len(matcher.terms))]
    assert found == [matcher.found([r["text"] or "", " ".join(r["heading_path"]), r["path"]]) for r in rows]


def _scored(scores: list[float]) -> list[dict[str, Any]]:
    return [{"id": f"c{i % 7}-{i}", "score": s} for i, s in enumerate(scores)]


_STEP = 2.0**-23
scores = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 0.5 + _STEP, 0.5 - _STEP, 0.5 + 8 * _STEP, 12.0, 12.0 + 40 * _STEP]),
    st.floats(-20, 20, allow_nan=False),
    st.just(math.nan),
    st.just(math.inf),
)


@EXAMPLES
@given(st.lists(scores, max_size=12))
def test_tied_ranks_match_the_grouping_pass(values: list[float]) -> None:
    rows = _scored(values)
    assert tied_ranks(rows) == _plain_tied_ranks(rows)


def test_tied_ranks_keep_the_order_of_rows_without_scores_and_chain_near_ties() -> None:
    rows = [{"id": "b"}, {"id": "a", "score": 1.0}]
    assert tied_ranks(rows) == [("b", 1), ("a", 2)]
    # Each within tolerance of the one before it: one group, listed by id.
    chain = _scored([1.0, 1.0 - 3 * _STEP, 1.0 - 6 * _STEP, 1.0 - 9 * _STEP, 0.5])
    assert tied_ranks(chain) == _plain_tied_ranks(chain)
    assert [rank for _, rank in tied_ranks(chain)] == [1, 1, 1, 1, 5]
    assert tied_ranks([]) == []
