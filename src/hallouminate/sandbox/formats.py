"""What kind of file a corpus path names, from its extension: the one table behind "is this Markdown?".

The indexer picks its chunker with it, the keywords their weighting, and the write tools decide with it
whether a page is linted. Markdown is the default: every extension not listed below (``.md``,
``.markdown``, none at all) is parsed as Markdown, so "is this Markdown?" means exactly "will the indexer
parse it as Markdown?". A repository wiki is stricter about its page names (``WIKI_PAGE_SUFFIX``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from hallouminate.protocol.limits import DOCUMENT_BINARY_MAX_BYTES, DOCUMENT_TEXT_MAX_BYTES

Format = Literal[
    "markdown", "text", "json", "pdf", "docx", "pptx", "xlsx", "ods", "csv", "tsv", "html", "code"
]

TEXT_SUFFIXES = (".txt", ".text", ".log", ".rst")
# Source code the indexer parses with tree-sitter (indexing/code.py picks the grammar by extension).
CODE_SUFFIXES = (
    ".py", ".pyi",
    ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx",
    ".go", ".rs", ".java",
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx",
    ".sh", ".bash",
)  # fmt: skip
_FORMATS: dict[str, Format] = {
    **dict.fromkeys(TEXT_SUFFIXES, "text"),
    ".json": "json",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".ods": "ods",
    ".csv": "csv",
    ".tsv": "tsv",
    ".html": "html",
    ".htm": "html",
    **dict.fromkeys(CODE_SUFFIXES, "code"),
}
# Formats whose files are binary (zip containers, PDF): not decoded as UTF-8, capped as binary files.
BINARY_FORMATS: frozenset[Format] = frozenset(("pdf", "docx", "pptx", "xlsx", "ods"))
# A page of a repository wiki: Markdown named exactly so (lower case), which the default globs list.
WIKI_PAGE_SUFFIX = ".md"


def file_format(path: str) -> Format:
    """The format of the file at the corpus-relative ``path`` (extension, case-insensitive)."""
    return _FORMATS.get(PurePosixPath(path).suffix.lower(), "markdown")


def is_binary_format(path: str) -> bool:
    """Whether ``path``'s format is a binary container (PDF, Office, OpenDocument), not UTF-8 text."""
    return file_format(path) in BINARY_FORMATS


def is_markdown(path: str) -> bool:
    """Whether the indexer parses ``path`` as Markdown (headings, frontmatter, wikilinks)."""
    return file_format(path) == "markdown"


def is_wiki_page(path: str) -> bool:
    """Whether ``path`` may name a page of a repository wiki: Markdown ending in ``.md``."""
    return path.endswith(WIKI_PAGE_SUFFIX)


# The extensions get_document and the kb:// resources serve: those the indexer parses by name. A corpus
# whose globs take in other files (``**/*``) still indexes them as Markdown, but a file named neither as
# Markdown nor as one of the formats above is not served as a document (docs/adr/0037-kb-resources.md).
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdwn", ".mdx")
DOCUMENT_SUFFIXES = frozenset((*MARKDOWN_SUFFIXES, *_FORMATS))


def has_document_extension(path: str) -> bool:
    """Whether ``path`` ends in an extension served as a document (case-insensitive)."""
    return PurePosixPath(path).suffix.lower() in DOCUMENT_SUFFIXES


def document_cap(path: str) -> int:
    """The largest size on disk of a document ``path`` that a read returns: 1 MiB of Markdown or text,
    50 MiB of a binary format (a PDF, an Office document, whose extracted text is then cut to 1 MiB)."""
    if is_binary_format(path):
        return DOCUMENT_BINARY_MAX_BYTES
    return DOCUMENT_TEXT_MAX_BYTES


def offered(path: str, size: int | None) -> bool:
    """Whether an indexed document is offered as a ``kb://doc/`` resource (and its hits carry a ``uri``).

    The one predicate behind ``resources/list``, ``resources/read`` and the ``uri`` of ``ground``'s hits,
    so they always agree: a served extension and a size a read returns (``size`` as recorded when it was
    indexed; None, not recorded, counts as on offer). A document off offer stays indexed and searchable.
    """
    if not has_document_extension(path):
        return False
    return size is None or size <= document_cap(path)
