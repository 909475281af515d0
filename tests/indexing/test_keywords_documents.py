"""Keywords of documents with readers (pure): a Word document's and an HTML page's headings are weighted as
Markdown's are; other formats' breadcrumbs (slide, sheet or page labels, symbol names) are not, and a file
name standing in for a title is never a keyword. The pages are built in the shape the readers give
(indexing/documents.py: breadcrumb rooted at the title, else the file name)."""

from __future__ import annotations

from hallouminate.indexing.indexer import file_keywords
from hallouminate.indexing.text_chunker import TextChunk, TextPage

# The heading word ("eviction") appears only in the breadcrumb; "cache" leads the body by count.
BODY = "The cache keeps hot rows. A cache miss reads the store; the cache is warmed at start."


def _page(root: str) -> TextPage:
    chunks = [
        TextChunk([root, "Eviction policy"], 1, 3, BODY),
        TextChunk([root, "Eviction policy", "Eviction under load"], 5, 6, "Rows go oldest first."),
    ]
    return TextPage(root, "", chunks)


def test_word_and_html_headings_are_weighted_and_the_file_name_is_not_a_keyword() -> None:
    for path in ("design/notes.docx", "site/notes.html"):
        keywords = file_keywords(path, b"", _page("notes." + path.rsplit(".", 1)[1]))
        assert keywords[0] == "eviction" and "cache" in keywords[:3], (path, keywords)
        assert not {"notes", "docx", "html"} & set(keywords), keywords
    # A title the document states is the author's words: weighted like any heading.
    assert "handbook" in file_keywords("design/notes.docx", b"", _page("Storage Handbook"))


def test_other_formats_count_their_texts_only() -> None:
    for path in ("deck.pptx", "sheet.xlsx", "report.pdf", "src/cache.py"):
        keywords = file_keywords(path, b"", _page(path.rsplit("/", 1)[-1]))
        assert keywords[0] == "cache", (path, keywords)
        assert "eviction" not in keywords[:2]
