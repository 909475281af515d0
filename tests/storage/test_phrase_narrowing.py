"""A phrase scan past the in-memory bound reads only the rows holding the phrase's sure tokens (ADR 0057):
the same rows, order, cap and ``more`` flag as a scan of every row, whatever the phrase."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hallouminate.analysis import analyze, phrase_runs
from hallouminate.config import CorpusSpec
from hallouminate.search import ground
from hallouminate.search.phrase import Phrase
from hallouminate.storage import Store
from hallouminate.storage.reader import NARROW_SHARE, AsyncReader
from support.store_rows import chunk_rows

FILLER = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
# Each line a chunk's own words (in some of the chunks): cases, partial words, stems, stop words,
# punctuation, other whitespace, CJK, and the letters whose case variants lie outside ASCII.
SPECIAL = [
    "Rolling Back the migration",
    "UNROLLING BACK THE MIGRATIONS quickly",
    "rolling\u00a0back\nthe\tmigration",
    "how to run the jobs: (running jobs) nightly",
    "foo-bar-baz qux, and the of a",
    "the migration's rollback (see: foo-bar-baz/qux)",
    "数据库备份策略 与 恢复",
    "日志 数据库备份 完成",
    "\u017ftop the \u212aelvin server now",
    "stop the kelvin server now",
]
PHRASES = [
    "rolling back the migration",  # whole words
    "olling back the migratio",  # first and last words partial
    "back the",  # nothing inner: the stream
    "the of a",  # stop words
    "run the jobs",  # a stem's other forms
    "(running jobs)",  # punctuation around the words
    "foo-bar-baz qux",  # words split inside a whitespace word
    "bar-baz",
    "back\u00a0the   migration",  # whitespace of any kind
    "数据库备份策略 与 恢复",  # CJK
    "日志 数据库备份 完成",
    "据库备份",
    "stop the kelvin server",  # matches ſ and K (the Kelvin sign) too
    "migration's rollback (see:",
]


def _store(tmp_path: Path, names: tuple[str, str] = ("c", "d")) -> Store:
    store = Store(tmp_path / "db", 8)
    for corpus, pages in zip(names, (30, 12), strict=True):
        store.replace_files(
            corpus,
            {
                f"p{i:02d}.md": chunk_rows(
                    f"p{i:02d}.md",
                    [
                        " ".join(FILLER[(i + j + k) % 10] for k in range(40))
                        + (" " + SPECIAL[(i + j) % len(SPECIAL)] + " echo" if (i * 5 + j) % 7 == 0 else "")
                        for j in range(5)
                    ],
                    seed=100 * i,
                )
                for i in range(pages)
            },
        )
    return store


async def _scan(reader: AsyncReader, corpora: list[str], query: str, max_rows: int, narrow: bool) -> object:
    phrase = Phrase.parse(query)
    found = await reader.phrase_rows(corpora, phrase.re2, max_rows, None, phrase.runs if narrow else ())
    rows = [(r["corpus"], r["path"], r["ordinal"], r["occurrences"]) for r in found.rows]
    return rows, found.texts(list(range(len(rows)))), found.more


async def test_the_narrowed_scan_finds_what_the_streamed_scan_finds(tmp_path: Path) -> None:
    store = _store(tmp_path)
    held = AsyncReader(store)
    past = AsyncReader(store, in_memory_rows=0, scan_batch=5)  # id batches of 5: matches split across them
    narrowed = 0
    for query in PHRASES:
        runs = Phrase.parse(query).runs
        for corpora, max_rows in ((["c", "d"], 1000), (["d", "c"], 3), (["c"], 1), (["c"], 0)):
            expected = await _scan(held, corpora, query, max_rows, narrow=False)
            assert await _scan(past, corpora, query, max_rows, narrow=False) == expected, (query, max_rows)
            assert await _scan(past, corpora, query, max_rows, narrow=True) == expected, (query, max_rows)
        every = await _scan(held, ["c", "d"], query, 1000, narrow=False)
        assert every[0], query  # each phrase is somewhere: equality is not of two empty answers
        if (
            runs
            and store.lexical.holding(runs, ["c"], await past.count_rows("c") // NARROW_SHARE) is not None
        ):
            narrowed += 1  # the scan really read only the rows BM25's index named
    assert narrowed >= 9, narrowed


async def test_a_narrowing_that_dropped_a_match_is_seen(tmp_path: Path) -> None:
    """The check above can fail: tokens of a partial last word ("migratio") leave out every match."""
    store = _store(tmp_path)
    past = AsyncReader(store, in_memory_rows=0)
    phrase = Phrase.parse("olling back the migratio")
    wrong = await past.phrase_rows(["c"], phrase.re2, 100, None, [("back", "the", "migratio")])
    right = await past.phrase_rows(["c"], phrase.re2, 100, None, phrase.runs)
    streamed = await past.phrase_rows(["c"], phrase.re2, 100)
    assert [r["path"] for r in right.rows] == [r["path"] for r in streamed.rows] != []
    assert wrong.rows == []


def test_the_ascii_letters_case_variants_outside_ascii_are_the_kelvin_sign_and_the_long_s() -> None:
    """phrase_runs rests on this: RE2's case-insensitive match of an ASCII letter or digit is itself, its
    other case, or (k, s) one of these two, which the analyser reads as k and s."""
    every = pa.array([chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000])
    # One pass for all of them, then each of the few characters found is asked which one it matches.
    found = pa.array(
        every.filter(pc.match_substring_regex(every, pattern="[a-z0-9]", ignore_case=True)).to_pylist()
    )
    assert 62 <= len(found) < 80
    others = {}
    for letter in string.ascii_lowercase + string.digits:
        hits = found.filter(pc.match_substring_regex(found, pattern=letter, ignore_case=True)).to_pylist()
        variants = [c for c in hits if c not in (letter, letter.upper())]
        if variants:
            others[letter] = variants
    assert others == {"k": ["\u212a"], "s": ["\u017f"]}
    assert analyze("zz\u212azz \u017ftop") == analyze("zzkzz stop")


_WORDS = ["run", "running", "jobs", "the", "of", "Back", "数据库", "备份", "ſtop", "\u212aelvin", "x" * 38]
_GLUE = [" ", "  ", "\n", "\u00a0", "-", "(", ")", ", ", "'", "/", ""]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_GLUE)), min_size=1, max_size=12),
    start=st.integers(0, 200),
    length=st.integers(1, 80),
    upper=st.booleans(),
)
@example(parts=[("rolling", " "), ("back", " ")], start=1, length=10, upper=False)
def test_every_text_holding_a_phrase_holds_its_runs_of_tokens(
    parts: list[tuple[str, str]], start: int, length: int, upper: bool
) -> None:
    """Any piece of any text, as a phrase: each run phrase_runs names is a run of the text's tokens."""
    text = "".join(word + glue for word, glue in parts)
    query = text[start % len(text) :][:length]
    if not query.strip():
        return
    if upper:
        query = query.upper()
    phrase = Phrase.parse(query)
    assert pc.match_substring_regex(pa.array([text]), pattern=phrase.re2, ignore_case=True)[0].as_py()
    held = analyze(text)
    for run in phrase_runs(query.split()):
        assert any(tuple(held[i : i + len(run)]) == run for i in range(len(held))), (text, query, run)


@pytest.mark.parametrize(
    ("query", "runs"),
    [
        ("rolling back the deploy", (("back", "the"),)),
        ("olling", ()),
        ("foo-bar-baz", (("bar",),)),
        ("数据库 备份策略 策略", (("备份", "份策", "策略"),)),
        ("(run jobs)", (("run", "job"),)),
        ("a the café of the b", (("the",), ("of", "the"))),  # a word outside ASCII ends a run
        ("a " + "k" * 20 + " b", ()),  # its Kelvin-sign form would be too long a token to be indexed
    ],
)
def test_a_phrase_names_the_runs_of_tokens_of_its_inner_whole_words(
    query: str, runs: tuple[tuple[str, ...], ...]
) -> None:
    assert Phrase.parse(query).runs == runs


async def _no_embedding(text: str) -> Any:
    raise AssertionError("phrase mode embeds nothing")


def _timeless(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "took_ms"}


async def test_ground_in_phrase_mode_answers_the_same_past_the_bound(tmp_path: Path) -> None:
    """Through ``ground`` (search/phrase.py hands the reader the phrase's runs): the whole answer, files,
    chunks, counts and warnings, is the held corpus's."""
    specs = [CorpusSpec(name, "wiki", (tmp_path / name,), ("**/*.md",), (), None) for name in ("c", "d")]
    store = _store(tmp_path, (specs[0].store_key, specs[1].store_key))
    held, past = AsyncReader(store), AsyncReader(store, in_memory_rows=0)
    filtered = 0
    for query in PHRASES:
        cases = (
            (50, 10, None, None),
            (2, 1, None, None),
            (50, 10, "counts", None),
            (50, 10, None, ["p1*.md"]),
        )
        for limit, top_files, output, globs in cases:
            filters = {"path_globs": globs} if globs else {}  # the filter's mask applied in the scan
            params = {
                **filters,
                **({"output": output} if output else {}),
                "limit": limit,
                "top_files": top_files,
                "chunks_per_file": 3,
                "snippet_chars": 120,
                "priority_corpus": None,
            }
            expected = await ground(held, _no_embedding, specs, query, match="phrase", **params)
            if globs:
                filtered += bool(expected["docs"])
            else:
                assert expected["docs"], query  # equality is not of two empty answers
            found = await ground(past, _no_embedding, specs, query, match="phrase", **params)
            assert _timeless(found) == _timeless(expected), (query, params)
    assert filtered >= 5, filtered  # the filtered answers are not all empty either
