"""The read tools' engine: pure functions over the configuration, the filesystem and plain index data.

The daemon calls these from worker threads (they block on the filesystem). Every path a caller passes goes
through ``hallouminate.sandbox`` first; every listing comes from ``walk_corpus``, so ``list_files``,
``list_tree``, ``read_markdown``, ``backlinks`` and the indexer agree on what a corpus holds. Results are
plain dicts (JSON-ready); caller mistakes raise a ``CallerError`` (``NotFound``, ``UnsafePath``, ...).
"""

from __future__ import annotations

from hallouminate.browse.corpora import list_corpora
from hallouminate.browse.files import list_files, list_tree
from hallouminate.browse.links import page_links
from hallouminate.browse.read import READ_MAX_BYTES, read_markdown
from hallouminate.browse.stats import corpus_stats
from hallouminate.browse.wikilinks import WikiLink, backlinks, link_target, parse_wikilinks

__all__ = [
    "READ_MAX_BYTES",
    "WikiLink",
    "backlinks",
    "corpus_stats",
    "link_target",
    "list_corpora",
    "list_files",
    "list_tree",
    "page_links",
    "parse_wikilinks",
    "read_markdown",
]
