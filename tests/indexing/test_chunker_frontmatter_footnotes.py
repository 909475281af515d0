"""The Markdown chunker's frontmatter fields, footnote attachment and non-ASCII/CRLF headings (pure: a
word counter stands in for the tokenizer)."""

from __future__ import annotations

from hallouminate.indexing import Chunk, chunk_markdown
from hallouminate.indexing.frontmatter import parse_frontmatter


def words(text: str) -> int:
    return len(text.split())


def lines_of(text: str, chunk: Chunk) -> str:
    return "\n".join(text.replace("\r\n", "\n").split("\n")[chunk.line_start - 1 : chunk.line_end])


FRONT = """\
---
title: From frontmatter
tags: [alpha, beta]
date: 2026-01-31
topic: indexing
status: draft
owner: {name: Ann, teams: [core]}
reviewed: 2026-02-01 10:30:00
---
Intro without a heading.

## Part

Body of the part.
"""


def test_frontmatter_fields_are_parsed_and_stripped() -> None:
    page = chunk_markdown(FRONT, words, 100)
    assert page.frontmatter_error is None
    assert page.fields == {
        "title": "From frontmatter",
        "tags": ["alpha", "beta"],
        "date": "2026-01-31",
        "topic": "indexing",
        "status": "draft",
        "owner": {"name": "Ann", "teams": ["core"]},
        "reviewed": "2026-02-01T10:30:00",
    }
    for chunk in page.chunks:
        assert "tags:" not in chunk.embed_text and "status:" not in chunk.text
        assert chunk.text == lines_of(FRONT, chunk)
    assert [(c.line_start, c.line_end) for c in page.chunks] == [(10, 10), (12, 14)]


def test_frontmatter_title_stands_in_for_a_missing_h1() -> None:
    page = chunk_markdown(FRONT, words, 100)
    assert page.title == "From frontmatter"
    assert [c.heading_path for c in page.chunks] == [["From frontmatter"], ["From frontmatter", "Part"]]
    assert page.chunks[1].embed_text.startswith("From frontmatter > Part\n\n## Part")
    assert page.summary == "From frontmatter - Intro without a heading."
    # The H1 the reader sees wins over the frontmatter title.
    with_h1 = chunk_markdown("---\ntitle: Meta\n---\n# Real\n\nText.\n", words, 100)
    assert with_h1.title == "Real" and with_h1.fields == {"title": "Meta"}
    assert with_h1.chunks[0].heading_path == ["Real"]


def test_malformed_frontmatter_is_indexed_as_text_and_reported() -> None:
    text = "---\ntitle: Broken\ntags: [a, b\nstatus: x\n---\n# T\n\nBody.\n"
    page = chunk_markdown(text, words, 100)
    assert page.fields == {}
    assert page.frontmatter_error is not None
    assert page.frontmatter_error.startswith("frontmatter is not valid YAML: line ")
    assert "\n" not in page.frontmatter_error
    assert page.title == "T"
    first = page.chunks[0]
    assert "tags: [a, b" in first.text and "tags: [a, b" in first.embed_text
    assert first.line_start == 1 and first.text == lines_of(text, first)
    body = page.chunks[-1]
    assert body.text == lines_of(text, body) and body.line_start == 6


def test_non_mapping_frontmatter_is_malformed() -> None:
    text = "---\n- one\n- two\n---\nBody.\n"
    page = chunk_markdown(text, words, 100)
    assert page.fields == {}
    assert page.frontmatter_error == "frontmatter is not a mapping (got a list)"
    assert "- one" in page.chunks[0].text and page.chunks[0].line_start == 1


def test_parse_frontmatter_edge_cases() -> None:
    assert parse_frontmatter("") == ({}, None)
    fields, error = parse_frontmatter("1: x\nok: .nan\nwhen: 2026-01-31\n")
    assert error is None and fields == {"1": "x", "ok": "nan", "when": "2026-01-31"}
    _, error = parse_frontmatter("a: [1\n", first_line=2)
    assert error is not None and error.startswith("frontmatter is not valid YAML: line ")
    # Alias bombs and cycles are reported, not expanded.
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6)
    )
    fields, error = parse_frontmatter(bomb)
    assert fields == {} and error is not None and "too large" in error
    fields, error = parse_frontmatter("a: &a [*a]\n")
    assert fields == {} and error is not None


NOTES = """\
# Notes page

## One

Plain section.

## Two

A claim that needs a source[^src] and a second one[^long].

## Three

Mentions `[^src]` in code, which is not a reference.

## Four

Closing words.

[^src]: The source is the 2019 survey.
[^long]: A longer note
    continued on an indented line.
[^orphan]: Never cited anywhere.
"""


def _by_section(page_chunks: list[Chunk], name: str) -> Chunk:
    return next(c for c in page_chunks if c.heading_path[-1] == name)


def test_footnote_definitions_attach_to_the_citing_chunk() -> None:
    page = chunk_markdown(NOTES, words, 200)
    two = _by_section(page.chunks, "Two")
    four = _by_section(page.chunks, "Four")
    for field in (two.text, two.embed_text):
        assert "[^src]: The source is the 2019 survey." in field
        assert "[^long]: A longer note\n    continued on an indented line." in field
    assert "2019 survey" not in four.text and "continued on" not in four.embed_text
    # The chunk's own lines are unchanged; the appended definitions are outside its range.
    assert (two.line_start, two.line_end) == (7, 9)
    assert two.text.startswith(lines_of(NOTES, two) + "\n\n")
    assert four.text == "## Four\n\nClosing words."
    # A never cited definition stays where it is written (a chunk never spans the moved ones).
    orphan = [c for c in page.chunks if "[^orphan]: Never cited anywhere." in c.text]
    assert [(c.heading_path[-1], c.text, c.line_start) for c in orphan] == [
        ("Four", "[^orphan]: Never cited anywhere.", 22)
    ]
    # No chunk holds a moved definition at its own place.
    assert sum("[^src]: The source" in c.text for c in page.chunks) == 1


def test_a_reference_in_a_code_span_is_not_a_reference() -> None:
    text = "# P\n\n## A\n\nCode `[^n]` only.\n\n## B\n\nReal cite[^n].\n\n[^n]: The note.\n"
    page = chunk_markdown(text, words, 100)
    a, b = _by_section(page.chunks, "A"), _by_section(page.chunks, "B")
    assert "The note." not in a.text
    assert b.text.endswith("Real cite[^n].\n\n[^n]: The note.")
    assert b.embed_text == "P > B\n\n## B\n\nReal cite[^n].\n\n[^n]: The note."
    # In a fence neither: the definition is then uncited and stays put, as text.
    fenced = chunk_markdown("# P\n\n```\nx[^n]\n```\n\n[^n]: The note.\n", words, 100)
    assert fenced.chunks[0].text == "# P\n\n```\nx[^n]\n```\n\n[^n]: The note."


def test_footnotes_respect_the_budget() -> None:
    sentences = " ".join(f"Sentence {i} of the section body." for i in range(30))
    note = " ".join(f"note{i}" for i in range(25))
    text = f"# P\n\n## S\n\n{sentences} Cited[^a].\n\n## End\n\nFin.\n\n[^a]: {note}\n"
    budget = 40
    page = chunk_markdown(text, words, budget)
    assert all(words(c.embed_text) <= budget for c in page.chunks)
    citing = [c for c in page.chunks if "Cited[^a]." in c.text]
    assert len(citing) == 1
    # Room was kept in the section for the note, so it attaches whole.
    assert citing[0].text.endswith(f"[^a]: {note}")
    assert all("note0" not in c.text for c in page.chunks if c is not citing[0])

    # A note larger than the room it could get is cut at a word, marked with an ellipsis.
    huge = " ".join(f"w{i}" for i in range(200))
    big = chunk_markdown(f"# P\n\nCited[^a].\n\n[^a]: {huge}\n", words, budget)
    assert all(words(c.embed_text) <= budget for c in big.chunks)
    assert len(big.chunks) == 1
    assert big.chunks[0].text.endswith(" …") and "[^a]: w0 w1" in big.chunks[0].text


def test_footnote_cited_from_a_heading_only_section_goes_to_the_next_chunk() -> None:
    text = "# P\n\n## Group[^g]\n\n### Child\n\nBody.\n\n[^g]: Group note.\n"
    page = chunk_markdown(text, words, 100)
    assert [c.heading_path for c in page.chunks] == [["P", "Group", "Child"]]
    assert page.chunks[0].text.endswith("Body.\n\n[^g]: Group note.")


def test_non_ascii_headings_and_crlf() -> None:
    text = "# Handbuch\n\n## Überblick – 概要\n\nInhalt[^1] hier.\n\n[^1]: Fußnote – 脚注.\n"
    page = chunk_markdown(text, words, 100)
    assert [c.heading_path for c in page.chunks] == [["Handbuch", "Überblick – 概要"]]
    assert page.chunks[0].embed_text.startswith("Handbuch > Überblick – 概要\n\n## Überblick – 概要")
    assert page.chunks[0].text.endswith("[^1]: Fußnote – 脚注.")
    crlf = chunk_markdown(text.replace("\n", "\r\n"), words, 100)
    assert crlf == page
    assert all("\r" not in c.text for c in crlf.chunks)
    front = chunk_markdown(FRONT.replace("\n", "\r\n"), words, 100)
    assert front == chunk_markdown(FRONT, words, 100)
    assert front.fields["date"] == "2026-01-31"
