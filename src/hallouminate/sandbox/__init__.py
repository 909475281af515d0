"""The path sandbox: corpus-relative paths that cannot escape their root, opened without following a link.

One primitive for every caller that turns a corpus-relative path into a file: the read tools
(``browse``), the write tools (``wiki``) and the indexer. Domain code with no dependency beyond
``errors`` and the limits table (``protocol.limits``). See docs/adr/0009-path-sandbox.md.

- ``paths``: the string rules (``check_relative_path``) and the ``lstat`` walk (``resolve_inside``);
- ``descriptors``: the ``O_NOFOLLOW`` openat walk down to one file (``DirChain``) and the reads built on
  it (``read_file``, ``open_for_read``); the write tools publish through the same chain; ``walk_tree``
  lists a whole tree the same way (the corpus walk);
- ``refusals``: the one set of refusals (``data.problem``; ``UnsafePath``, or ``Conflict`` for a path
  changed under a write), and ``not_found`` (a miss with the nearest directory's entries and the
  closest names);
- ``formats``: what kind of file a path names (``is_markdown``), and which indexed documents are offered
  as documents (``offered``: get_document's extensions and size caps, the kb:// resources, hits' ``uri``).
"""

from __future__ import annotations

from hallouminate.errors import UnsafePath
from hallouminate.sandbox.descriptors import DirChain, Listing, open_for_read, read_file, walk_tree
from hallouminate.sandbox.formats import (
    document_cap,
    file_format,
    has_document_extension,
    is_markdown,
    is_wiki_page,
    offered,
)
from hallouminate.sandbox.paths import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    check_relative_path,
    is_safe_relative_path,
    resolve_inside,
)
from hallouminate.sandbox.refusals import (
    SYMLINK_FIX,
    PathMissing,
    changed,
    check_leaf,
    not_found,
    refuse,
    unreadable,
)

__all__ = [
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "SYMLINK_FIX",
    "DirChain",
    "Listing",
    "PathMissing",
    "UnsafePath",
    "changed",
    "check_leaf",
    "check_relative_path",
    "document_cap",
    "file_format",
    "has_document_extension",
    "is_markdown",
    "is_safe_relative_path",
    "is_wiki_page",
    "not_found",
    "offered",
    "open_for_read",
    "read_file",
    "refuse",
    "resolve_inside",
    "unreadable",
    "walk_tree",
]
