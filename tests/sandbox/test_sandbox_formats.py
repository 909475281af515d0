"""One answer to "is this Markdown?": the indexer's chunkers, its keywords and the write tools' lint ask
``hallouminate.sandbox.formats``."""

from __future__ import annotations

import pytest

from hallouminate.indexing.indexer import chunk_file
from hallouminate.sandbox import file_format, is_markdown, is_wiki_page

CASES = [
    ("guides/setup.md", "markdown"),
    ("notes.markdown", "markdown"),
    ("UPPER.MD", "markdown"),
    ("README", "markdown"),
    ("page.mdx", "markdown"),
    (".hidden", "markdown"),
    ("log/today.txt", "text"),
    ("NOTES.TXT", "text"),
    ("x.text", "text"),
    ("server.log", "text"),
    ("doc.rst", "text"),
    ("data.JSON", "json"),
    ("paper.pdf", "pdf"),
    ("archive.md.pdf", "pdf"),
]


@pytest.mark.parametrize(("path", "kind"), CASES)
def test_the_format_follows_the_extension_markdown_by_default(path: str, kind: str) -> None:
    assert file_format(path) == kind
    assert is_markdown(path) == (kind == "markdown")


def test_the_indexer_parses_as_markdown_exactly_what_is_markdown() -> None:
    text = b"# Title\n\nIntro.\n\n## Part\n\nBody.\n"
    for name in ("README", "notes.markdown", "notes.txt", "notes.rst"):
        page = chunk_file(name, text, lambda s: len(s.split()), 200)
        headings = {tuple(chunk.heading_path) for chunk in page.chunks}
        # Markdown chunks carry the headings as breadcrumbs; plain text carries the file name.
        assert (("Title", "Part") in headings) == is_markdown(name), (name, headings)


def test_a_wiki_page_is_named_dot_md_in_lower_case() -> None:
    assert is_wiki_page("guides/setup.md") and is_markdown("guides/setup.md")
    assert not is_wiki_page("x.MD") and not is_wiki_page("x.markdown") and not is_wiki_page("README")


def test_the_document_result_names_every_format_the_table_knows() -> None:
    # protocol/results.py sits below sandbox and repeats the format words: they must stay the same set.
    from typing import get_args, get_type_hints

    from hallouminate.protocol.results import GetDocumentResult
    from hallouminate.sandbox.formats import Format

    assert set(get_args(get_type_hints(GetDocumentResult)["format"])) == set(get_args(Format))
