"""The plain-text chunker (pure: a whitespace word counter stands in for the tokenizer)."""

from __future__ import annotations

import itertools
import math

import pytest

from hallouminate.indexing.chunker import Chunk
from hallouminate.indexing.text_chunker import OVERLAP_SHARE, TextChunk, chunk_text


def words(text: str) -> int:
    return len(text.split())


def flat(text: str) -> str:
    return " ".join(text.split())


def prose(paragraphs: int, sentences: int, length: int, tag: str = "w") -> str:
    """Distinct words (so a phrase has one place), ``length`` words a sentence."""
    n = 0
    out = []
    for _ in range(paragraphs):
        sents = []
        for _ in range(sentences):
            sents.append(" ".join(f"{tag}{n + i}" for i in range(length)) + ".")
            n += length
        out.append(" ".join(sents))
    return "\n\n".join(out)


def assert_phrases_across_splits(chunks: list[TextChunk], source: str) -> None:
    """A phrase of 5-8 words placed across each split point is whole in at least one chunk."""
    source_words = source.split()
    index = {w: i for i, w in enumerate(source_words)}
    assert len(index) == len(source_words), "the test text must have distinct words"
    bodies = [f" {flat(c.text)} " for c in chunks]
    for chunk in chunks[:-1]:
        split = index[chunk.text.split()[-1]] + 1  # the next chunk's new text starts at this word
        for n in range(5, 9):
            for before in range(1, n):
                lo = split - before
                phrase = source_words[max(lo, 0) : lo + n]
                needle = f" {' '.join(phrase)} "
                assert any(needle in body for body in bodies), f"{phrase} is cut at every split"


def assert_true_lines(text: str, chunk: Chunk) -> None:
    """``chunk.text`` starts on line ``line_start`` and ends on line ``line_end`` of ``text``."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    block = "\n".join(lines[chunk.line_start - 1 : chunk.line_end])
    at = block.find(chunk.text)
    assert at >= 0, (chunk.line_start, chunk.line_end, chunk.text)
    assert at <= len(lines[chunk.line_start - 1]), "text starts after line_start"
    assert at + len(chunk.text) >= len(block) - len(lines[chunk.line_end - 1]), "text ends before line_end"


def test_a_short_text_is_one_chunk_with_its_breadcrumb() -> None:
    text = "Hello world.\n\nSecond paragraph here.\n"
    page = chunk_text(text, words, 100, title="notes.txt")
    assert page.title == "notes.txt"
    assert page.summary == "notes.txt - Hello world."
    assert page.chunks == [TextChunk(["notes.txt"], 1, 3, "Hello world.\n\nSecond paragraph here.")]
    chunk = page.chunks[0]
    assert chunk.embed_text == "notes.txt\n\nHello world.\n\nSecond paragraph here."
    assert chunk.page is None
    assert isinstance(chunk, Chunk)  # the indexer's rows() works on it unchanged


def test_a_phrase_across_every_split_is_whole_in_some_chunk() -> None:
    text = prose(paragraphs=6, sentences=5, length=9)
    page = chunk_text(text, words, 60, title="notes.txt")
    assert len(page.chunks) > 5
    assert_phrases_across_splits(page.chunks, text)


def test_chunks_repeat_about_twelve_percent_of_the_budget() -> None:
    budget = 100
    text = prose(paragraphs=1, sentences=1, length=2000)  # one run of words: every cut is a word cut
    page = chunk_text(text, words, budget, title="notes.txt")
    overlap = round(OVERLAP_SHARE * budget)
    for prev, nxt in itertools.pairwise(page.chunks):
        prev_words, next_words = prev.text.split(), nxt.text.split()
        shared = next(k for k in range(len(next_words), 0, -1) if prev_words[-k:] == next_words[:k])
        assert shared == overlap


def test_cuts_prefer_paragraphs_then_sentences_then_words() -> None:
    text = prose(paragraphs=8, sentences=2, length=10)  # 20-word paragraphs
    page = chunk_text(text, words, 70, title="notes.txt")
    # Each chunk ends where a paragraph ends (only the repeated overlap may start mid-paragraph).
    ends = {p.split()[-1] for p in text.split("\n\n")}
    assert all(c.text.split()[-1] in ends for c in page.chunks)

    long_paragraph = prose(paragraphs=1, sentences=30, length=7)
    page = chunk_text(long_paragraph, words, 40, title="notes.txt")
    assert len(page.chunks) > 3 and all(c.text.endswith(".") for c in page.chunks)

    no_sentences = " ".join(f"w{i}" for i in range(500))
    page = chunk_text(no_sentences, words, 40, title="notes.txt")
    assert len(page.chunks) > 10
    assert {w for c in page.chunks for w in c.text.split()} == set(no_sentences.split())


@pytest.mark.parametrize("budget", [3, 7, 16, 41, 250])
def test_every_chunk_fits_and_all_text_is_covered(budget: int) -> None:
    text = prose(paragraphs=5, sentences=4, length=11)
    page = chunk_text(text, words, budget, title="notes.txt")
    assert all(words(c.embed_text) <= budget for c in page.chunks)
    assert {w for c in page.chunks for w in c.text.split()} == set(text.split())


def test_a_token_less_blob_is_cut_at_characters() -> None:
    def pieces(text: str) -> int:  # ~1 token per 8 characters of each word
        return sum(math.ceil(len(w) / 8) for w in text.split())

    blob = "".join(f"{i % 10}" for i in range(2000))
    page = chunk_text(blob, pieces, 20, title="b")
    assert len(page.chunks) > 10
    assert all(pieces(c.embed_text) <= 20 for c in page.chunks)
    assert "".join(c.text for c in page.chunks) == blob  # no words, so no overlap to repeat


def test_a_tokenizer_whose_counts_do_not_add_up_still_fits() -> None:
    def chars(text: str) -> int:  # whole-text count, not a sum over words
        return math.ceil(len(text) / 4)

    text = prose(paragraphs=4, sentences=5, length=8)
    page = chunk_text(text, chars, 30, title="notes.txt")
    assert all(chars(c.embed_text) <= 30 for c in page.chunks)
    assert {w for c in page.chunks for w in c.text.split()} == set(text.split())


def test_line_numbers_are_true_to_the_file() -> None:
    text = "\n\n" + "\n".join(f"line{i} has some words in it." for i in range(1, 80)) + "\n\n\nEnd.\n"
    page = chunk_text(text, words, 30, title="notes.txt")
    assert page.chunks[0].line_start == 3
    assert page.chunks[-1].line_end == len(text.split("\n")) - 1
    for chunk in page.chunks:
        assert_true_lines(text, chunk)


def test_crlf_text_gives_the_same_chunks_as_lf() -> None:
    lf = "\n".join(f"Line {i} of the file, with a few words." for i in range(60))
    crlf = lf.replace("\n", "\r\n")
    a = chunk_text(lf, words, 40, title="t")
    b = chunk_text(crlf, words, 40, title="t")
    assert a == b and len(a.chunks) > 3
    assert not any("\r" in c.text for c in b.chunks)
    for chunk in b.chunks:
        assert_true_lines(crlf, chunk)


def test_non_ascii_text() -> None:
    lines = [
        f"Grüße{i} aus{i} Köln{i}, ça{i} va{i}? 日本語{i} テキスト{i} 🎉{i} naïve{i}." for i in range(40)
    ]
    text = "\n".join(lines)
    page = chunk_text(text, words, 64, title="ünïcode.txt")
    assert page.summary.startswith("ünïcode.txt - Grüße0 aus0 Köln0")
    assert all(c.heading_path == ["ünïcode.txt"] for c in page.chunks)
    for chunk in page.chunks:
        assert_true_lines(text, chunk)
    assert_phrases_across_splits(page.chunks, text)


def test_blank_text_has_no_chunks() -> None:
    page = chunk_text(" \n\n\t\n", words, 50, title="empty.txt")
    assert page.chunks == [] and page.summary == "empty.txt"


def test_summary_is_capped() -> None:
    page = chunk_text(" ".join(["word"] * 400), words, 50, title="t.txt")
    assert len(page.summary) <= 280 and page.summary.startswith("t.txt - word word")


def test_budget_must_be_positive() -> None:
    with pytest.raises(ValueError):
        chunk_text("x", words, 0, title="t")
