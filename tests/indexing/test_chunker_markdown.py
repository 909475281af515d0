"""The Markdown chunker (pure: a word counter stands in for the tokenizer; the real one is tested with
the model in tests/embedding)."""

from __future__ import annotations

import pytest

from hallouminate.indexing import Chunk, chunk_markdown


def words(text: str) -> int:
    return len(text.split())


def lines_of(text: str, chunk: Chunk) -> str:
    return "\n".join(text.replace("\r\n", "\n").split("\n")[chunk.line_start - 1 : chunk.line_end])


PAGE = """\
---
title: Sample
tags: [a, b]
---
# Sample *page*

Intro paragraph with `code` and a [link](https://example.com).

```python
# not a heading
## nor this
x = 1
```

## First section

Body of the first section.

### Deeper

Deep body.

## Second section

Second body.
"""


def test_headings_in_code_fences_are_not_sections() -> None:
    page = chunk_markdown(PAGE, words, 200)
    paths = [c.heading_path for c in page.chunks]
    assert paths == [
        ["Sample page"],
        ["Sample page", "First section"],
        ["Sample page", "First section", "Deeper"],
        ["Sample page", "Second section"],
    ]
    assert "# not a heading" in page.chunks[0].text


def test_line_numbers_are_true_to_the_file_including_frontmatter() -> None:
    page = chunk_markdown(PAGE, words, 200)
    spans = [(c.line_start, c.line_end) for c in page.chunks]
    assert spans == [(5, 13), (15, 17), (19, 21), (23, 25)]
    for chunk in page.chunks:
        assert chunk.text == lines_of(PAGE, chunk)
    assert "title: Sample" not in page.chunks[0].text


def test_title_summary_and_embed_text_breadcrumb() -> None:
    page = chunk_markdown(PAGE, words, 200)
    assert page.title == "Sample page"
    assert page.summary == "Sample page - Intro paragraph with code and a link."
    deeper = page.chunks[2]
    assert deeper.embed_text == "Sample page > First section > Deeper\n\n### Deeper\n\nDeep body."
    assert deeper.text == "### Deeper\n\nDeep body."


def test_text_before_the_first_heading() -> None:
    text = "Badges and preamble.\n\n# Title\n\nBody.\n"
    page = chunk_markdown(text, words, 100)
    assert [(c.heading_path, c.line_start, c.line_end) for c in page.chunks] == [
        (["Title"], 1, 1),
        (["Title"], 3, 5),
    ]
    assert page.summary == "Title - Body."
    no_heading = chunk_markdown("Just a note.\nTwo lines.\n", words, 100)
    assert [(c.heading_path, c.text) for c in no_heading.chunks] == [([], "Just a note.\nTwo lines.")]
    assert no_heading.title is None and no_heading.summary == "Just a note. Two lines."


def test_h1_is_the_root_of_every_breadcrumb() -> None:
    text = "## Before title\n\nx\n\n# Title\n\n### Skipped level\n\ny\n\n#### Not a section\n\nz\n"
    page = chunk_markdown(text, words, 100)
    assert [c.heading_path for c in page.chunks] == [["Title", "Before title"], ["Title", "Skipped level"]]
    assert "#### Not a section" in page.chunks[1].text


def test_long_section_splits_under_budget_with_true_lines() -> None:
    paragraphs = [
        " ".join(f"Paragraph {p} sentence {s} has several words." for s in range(6)) for p in range(8)
    ]
    text = "# Long\n\n## Part\n\n" + "\n\n".join(paragraphs) + "\n"
    budget = 60
    page = chunk_markdown(text, words, budget)
    assert len(page.chunks) > 4
    for chunk in page.chunks:
        assert words(chunk.embed_text) <= budget
        assert chunk.heading_path == ["Long", "Part"]
        assert chunk.text in lines_of(text, chunk)
    # Every sentence survives, in order, in exactly one chunk.
    body = " ".join(" ".join(c.text.split()) for c in page.chunks)
    for p in range(8):
        assert f"Paragraph {p} sentence 5 has several words." in body
    starts = [c.line_start for c in page.chunks]
    assert starts == sorted(starts)


def test_paragraph_split_at_sentences_and_giant_words() -> None:
    sentence_text = "# T\n\n" + " ".join(f"Sentence {i} ends here." for i in range(30)) + "\n"
    page = chunk_markdown(sentence_text, words, 20)
    assert all(words(c.embed_text) <= 20 for c in page.chunks)
    assert page.chunks[0].line_start == 1  # the heading line opens the section's first chunk
    assert all(c.line_end == 3 for c in page.chunks)
    assert all(c.line_start == 3 for c in page.chunks[1:])
    assert all(c.text.endswith(".") for c in page.chunks)

    blob = "# T\n\n" + "x" * 5000 + "\n"
    chars = chunk_markdown(blob, lambda t: len(t) // 100 + 1, 10)
    pieces = [c.text.removeprefix("# T").lstrip("\n") for c in chars.chunks]
    assert "".join(pieces) == "x" * 5000
    assert len(pieces) > 5
    assert all(len(c.embed_text) // 100 + 1 <= 10 for c in chars.chunks)


def test_big_fence_splits_at_lines_and_lists_at_items() -> None:
    fence = "```\n" + "\n".join(f"line {i} of code" for i in range(40)) + "\n```"
    items = "\n".join(f"- item {i} with some words" for i in range(40))
    text = f"# T\n\n{fence}\n\n{items}\n"
    page = chunk_markdown(text, words, 40)
    for chunk in page.chunks:
        assert words(chunk.embed_text) <= 40
        assert chunk.text == lines_of(text, chunk).strip()
    assert any(c.text.startswith("- item") for c in page.chunks)


def test_crlf_gives_the_same_chunks() -> None:
    lf = chunk_markdown(PAGE, words, 200)
    crlf = chunk_markdown(PAGE.replace("\n", "\r\n"), words, 200)
    assert crlf == lf
    assert all("\r" not in c.text for c in crlf.chunks)


def test_heading_only_page_still_has_a_chunk_and_blank_page_none() -> None:
    page = chunk_markdown("# Only a title\n", words, 50)
    assert [(c.heading_path, c.text) for c in page.chunks] == [(["Only a title"], "# Only a title")]
    assert chunk_markdown("", words, 50).chunks == []
    assert chunk_markdown("---\na: 1\n---\n\n", words, 50).chunks == []


def test_empty_parent_sections_are_folded_into_breadcrumbs() -> None:
    page = chunk_markdown("# A\n## B\n### C\ntext\n", words, 50)
    assert [(c.heading_path, c.line_start) for c in page.chunks] == [(["A", "B", "C"], 3)]


def test_summary_is_capped() -> None:
    text = "# Title\n\n" + "word " * 200 + "\n"
    summary = chunk_markdown(text, words, 500).summary
    assert len(summary) <= 280 and summary.endswith("…") and summary.startswith("Title - word")


def test_setext_headings_tables_and_blockquotes() -> None:
    text = "Title\n=====\n\nIntro.\n\nPart\n----\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n"
    page = chunk_markdown(text, words, 100)
    assert page.title == "Title"
    assert [c.heading_path for c in page.chunks] == [["Title"], ["Title", "Part"]]
    assert page.chunks[1].line_start == 6 and page.chunks[1].line_end == 13


def test_budget_must_be_positive() -> None:
    with pytest.raises(ValueError):
        chunk_markdown("# x", words, 0)
