"""What kind of file a corpus path names, from its extension: the one table behind "is this Markdown?".

The indexer picks its chunker with it, the keywords their weighting, and the write tools decide with it
whether a page is linted. Markdown is the default: every extension not listed below (``.md``,
``.markdown``, none at all) is parsed as Markdown, so "is this Markdown?" means exactly "will the indexer
parse it as Markdown?". A repository wiki is stricter about its page names (``WIKI_PAGE_SUFFIX``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

Format = Literal["markdown", "text", "json", "pdf"]

TEXT_SUFFIXES = (".txt", ".text", ".log", ".rst")
_FORMATS: dict[str, Format] = {
    **dict.fromkeys(TEXT_SUFFIXES, "text"),
    ".json": "json",
    ".pdf": "pdf",
}
# A page of a repository wiki: Markdown named exactly so (lower case), which the default globs list.
WIKI_PAGE_SUFFIX = ".md"


def file_format(path: str) -> Format:
    """The format of the file at the corpus-relative ``path`` (extension, case-insensitive)."""
    return _FORMATS.get(PurePosixPath(path).suffix.lower(), "markdown")


def is_markdown(path: str) -> bool:
    """Whether the indexer parses ``path`` as Markdown (headings, frontmatter, wikilinks)."""
    return file_format(path) == "markdown"


def is_wiki_page(path: str) -> bool:
    """Whether ``path`` may name a page of a repository wiki: Markdown ending in ``.md``."""
    return path.endswith(WIKI_PAGE_SUFFIX)
