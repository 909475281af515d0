"""The one text analyser (ADR 0019): what its fast finder answers is what analysing the text gives.

``TokenFinder`` looks in a text for the starts of each token's words and analyses only the words found;
it must agree with the analyser run over the whole text on any text and any tokens. That rests on a claim
about the stemmer (every word begins with one of ``starts`` of its token), checked here over every word
of this repository's documents and wikis with English suffixes added, over random words, and over a
dictionary when the machine has one.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hallouminate import analysis
from hallouminate.analysis import (
    SEPARATORS_OUTSIDE_ASCII,
    STOP_WORDS,
    TokenFinder,
    analyze,
    analyzer,
    content_tokens,
    query_terms,
    starts,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = settings(max_examples=400, deadline=None)

# Suffixes Porter2's rules act on, alone and stacked ("-ationally", "-bilities"), and "ying" ("dying").
SUFFIXES = (  # noqa: SIM905 (ninety words)
    "s es ies ied ed ing ings ingly edly ly er ers est ation ations ational ationally ization izations izer "
    "ator ators ity ities ility ilities ability abilities ibility bility bilities ness nesses ful fully "
    "fulness ousness ously iveness ivity ive ives ism isms alism ality ally ically ic ics ical ance ancy "
    "ancies ence ency ment ments ement ent ently ant able ably ible ibly al als ize ized izing ise ised ous "
    "less lessly logy logies ogy ogies y eed eedly ying yings"
).split()


def held(finder: TokenFinder, text: str) -> list[bool]:
    mask = finder.held(text)
    return [bool(mask >> j & 1) for j in range(len(finder.terms))]


def term_of(terms: list[str]) -> dict[str, int]:
    """Each token's term: the first that has it."""
    index: dict[str, int] = {}
    for j, term in enumerate(terms):
        for token in term.split():
            index.setdefault(token, j)
    return index


def reference_held(text: str, terms: list[str]) -> list[bool]:
    given = {term_of(terms).get(token) for token in analyze(text)}
    return [j in given for j in range(len(terms))]


def reference_tokens(text: str) -> list[tuple[int, int, str]]:
    """The analyser over the whole text, with offsets: tantivy's tokens of the text, the runs of Chinese
    and Japanese read as bigrams (``cjk_spaced``), offsets mapped back (each bigram its two characters)."""
    if not analysis.has_cjk(text):
        return [(t.char_offset_from, t.char_offset_to, t.text) for t in analyzer().pre_tokenize(text).tokens]
    return analysis.token_spans(text)


def reference_positions(text: str, terms: list[str]) -> list[tuple[int, int]]:
    index = term_of(terms)
    return [(start, index[token]) for start, _end, token in reference_tokens(text) if token in index]


def reference_spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    index = term_of(terms)
    return [(start, end) for start, end, token in reference_tokens(text) if token in index]


# -- the reported case -----------------------------------------------------------------------------------
def test_running_jobs_is_found_in_how_to_run_the_job() -> None:
    # Issue 13: BM25 matched both words, the gate looked for "runn" and "jobs" and found neither.
    tokens = query_terms("running jobs")
    assert tokens == ["run", "job"]
    finder = TokenFinder(tokens)
    assert held(finder, "how to run the job") == [True, True]
    assert finder.positions("how to run the job") == [(7, 0), (15, 1)]


# -- the analyser ----------------------------------------------------------------------------------------
def test_the_analyser_splits_folds_drops_and_stems() -> None:
    text = "Configuring the Café_au_lait, naïve re-runs!"
    # The text keeps its stop words ("the"): they count in BM25's document lengths, never in a query.
    assert analyze(text) == ["configur", "the", "cafe", "au", "lait", "naiv", "re", "run"]
    assert content_tokens(text) == ["configur", "cafe", "au", "lait", "naiv", "re", "run"]
    # Tokens of 40 bytes or more are dropped (hashes, base64), shorter ones kept.
    assert analyze("a" * 39 + " " + "b" * 40) == ["a" * 39]
    assert analyze("é" * 20) == []  # 40 bytes in UTF-8
    assert analyze("DYING lying skies ugly") == ["die", "lie", "sky", "ugli"]


def test_stop_words_are_ours_and_a_query_of_them_has_no_tokens() -> None:
    assert all(content_tokens(word) == [] and query_terms(word) == [] for word in STOP_WORDS)
    assert query_terms("will") == [] and analyze("will") == ["will"]  # dropped from queries, not from text
    assert query_terms("How do I ... what is it?") == []
    assert query_terms("How do I restart it? Restarting!") == ["restart"]


def test_the_separators_outside_ascii_split_words_in_tantivy_too() -> None:
    # The finder blanks these without asking the analyser: each must split a word there, as "-" does.
    assert len(SEPARATORS_OUTSIDE_ASCII) > 700
    joined = " ".join(f"x{char}z" for char in sorted(SEPARATORS_OUTSIDE_ASCII))
    assert analyze(joined) == ["x", "z"] * len(SEPARATORS_OUTSIDE_ASCII)
    assert analyze("xéz xªz x²z") == ["xez", "xªz", "x2z"]  # letters and digits do not split


def test_the_word_cache_is_bounded() -> None:
    for i in range(analysis.WORD_CACHE_SIZE + 10):
        analysis.word_token(f"w{i}")
    assert 0 < len(analysis._word_tokens) <= analysis.WORD_CACHE_SIZE
    assert analysis.word_token("running") == "run" and analysis.word_token("x" * 40) == ""


def test_a_verb_and_its_particle_also_match_their_compound() -> None:
    # Questions say "set this up", "log in", "roll it back"; pages say "setup", "login", "rollback".
    assert query_terms("What are the first steps to set this up in a fresh project?") == [
        "first",
        "step",
        "set setup",  # not "setin": "in" follows "up", which binds "set"
        "fresh",
        "project",
    ]
    assert query_terms("How do I log in?") == ["log login"]
    assert query_terms("roll the deploy back") == ["roll rollback", "deploy deployback", "back"]
    # The verb as written and as its token: "carryover" needs the first ("carry" is "carri"), "timeout"
    # the second.
    assert query_terms("carry over") == ["carri carryov carriov"]
    assert query_terms("it timed out") == ["time timedout timeout"]
    # A compound the query holds itself stays its own term; particles alone are stop words or words.
    assert query_terms("backup: how do I back up") == ["backup", "back"]
    assert query_terms("up and down") == []
    finder = TokenFinder(query_terms("set this up"))
    assert held(finder, "The first setup takes a minute.") == [True]
    text = "Set it up; the setup is quick."
    assert finder.positions(text) == [(0, 0), (text.index("setup"), 0)]


# -- the claim: a word begins with one of the starts of its token ---------------------------------------
def _screened(words: set[str]) -> list[tuple[str, str]]:
    """The words that begin with none of the starts of their token."""
    misses = []
    for word in words:
        tokens = analyze(word)
        if len(tokens) == 1 and not word.lower().startswith(starts(tokens[0])):
            misses.append((word, tokens[0]))
    return misses


def test_every_word_begins_with_a_start_of_its_token() -> None:
    ours = [p for p in ROOT.glob("**/*.md") if not {".venv", "node_modules"} & set(p.parts)]
    texts = [p.read_text(encoding="utf-8") for p in ours]
    vocabulary = {w for text in texts for w in re.findall(r"[a-z]+", text.lower()) if len(w) < 30}
    assert len(vocabulary) > 3000  # the repository's docs and wikis: a real vocabulary
    words = vocabulary | {w + suffix for w in vocabulary for suffix in SUFFIXES}
    words |= {letter + "ying" for letter in "abcdefghijklmnopqrstuvwxyz"}
    dictionary = Path("/usr/share/dict/words")  # more words where the machine has a list of them
    if dictionary.is_file():
        words |= {
            w for w in dictionary.read_text(errors="replace").lower().split() if w.isascii() and w.isalnum()
        }
    assert _screened(words) == []


@EXAMPLES
@given(
    st.text(alphabet="abcdeilnorstuyz", min_size=1, max_size=8),
    st.lists(st.sampled_from(SUFFIXES), max_size=3),
)
@example("d", ["ying"])  # "dying" -> "die": the one rewrite that reaches a stem's second-last letter
@example("capa", ["bility"])
def test_random_words_begin_with_a_start_of_their_token(stem: str, suffixes: list[str]) -> None:
    assert _screened({stem + "".join(suffixes)}) == []


# -- the finder answers what the analyser gives ----------------------------------------------------------
# Pieces that meet the analyser's edge cases: inflections, stop words, "_" and digits (words split at
# "_"), long words, case, and outside ASCII: folded letters ("é", "ß", "æ"), "İ" (lower-cases to two
# characters), "Σ" (a final sigma in Python's lower()), a combining accent (not alphanumeric: splits a
# word), a Devanagari vowel sign (alphanumeric to tantivy, not to Python), typographic punctuation.
PIECES = [
    "run", "running", "runs", "job", "jobs", "dying", "die", "dies", "happy", "happiness", "relational",
    "capability", "config", "configs", "configuring", "configuration", "the", "how", "I", "a_b", "b_b",
    "x9", "9go", "go", "gone", "RUNNING", "x" * 41, "y" * 39, "café", "cafe", "straße", "strasse",
    "æon", "x" * 35 + "é" + "y" * 5, "İgo", "ΟΔΟΣ", "οδοσ", "e\u0301", "ka\u093e", "\u2019s", "\u2014", "\xa0", "…",
    "数据库", "备份", "再設定", "パスワード", "を", "。", "、", "API文档", "一",
]  # fmt: skip
_SEPARATORS = [" ", " ", "\n", "-", "_", ".", "/", "", "'", "(", "\t"]
unicode_texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.sampled_from(_SEPARATORS), st.text(max_size=3)), max_size=25
).map("".join)
ascii_texts = st.lists(
    st.one_of(
        st.sampled_from([p for p in PIECES if p.isascii()]),
        st.sampled_from(_SEPARATORS),
        st.text(alphabet="abcdegilnorsuy019_-. ", max_size=4),
    ),
    max_size=25,
).map("".join)
queries = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(alphabet="abdegilnorsuy", max_size=6)), max_size=5
)


@EXAMPLES
@given(st.one_of(ascii_texts, unicode_texts), queries)
@example("how to run the job", ["running", "jobs"])
@example("Dying x_dies", ["died"])
@example("ka\u093e kb", ["ka"])
def test_the_finder_holds_what_the_analyser_gives(text: str, query_words: list[str]) -> None:
    terms = query_terms(" ".join(query_words))
    # Now and then the text's own tokens, so that hits are common, and a term of two tokens.
    own = analyze(text)[:3]
    terms = list(dict.fromkeys([*terms, *own[:2], " ".join(own[1:])]))
    finder = TokenFinder(terms)
    assert finder.terms == [t for t in terms if t]
    assert held(finder, text) == reference_held(text, finder.terms)
    assert finder.positions(text) == reference_positions(text, finder.terms)
    # match_spans: where each of those words starts and ends, as the analyser gives them.
    assert finder.spans(text) == reference_spans(text, finder.terms)
