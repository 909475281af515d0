"""The ``kb://`` URIs of the MCP resources: ``kb://doc/<path>`` (one document) and ``kb://topic/<prefix>``
(a topic group), written and read back in one place (docs/adr/0037-kb-resources.md).

A path keeps ``A-Z a-z 0-9 - . _ ~ /`` and every other byte of its UTF-8 is percent-encoded in uppercase
hex, so a path with spaces or non-ASCII characters gives a valid ASCII URI. Reading one back decodes any
valid percent-encoding (lowercase hex too); what the decoded path may name is the reader's business
(get_document's rules), not the URI's.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote, unquote

SCHEME = "kb://"
DOC_PREFIX = "kb://doc/"
TOPIC_PREFIX = "kb://topic/"
DOC_TEMPLATE = "kb://doc/{path}"
ROOT_GROUP_NAME = "(root)"

UriKind = Literal["doc", "topic"]


def encode_path(path: str) -> str:
    """``path`` with everything but unreserved characters and ``/`` percent-encoded (uppercase hex)."""
    # quote() keeps letters, digits and "_.-~" always, "/" as asked; it writes uppercase hex from UTF-8.
    return quote(path, safe="/", encoding="utf-8", errors="strict")


def doc_uri(path: str) -> str:
    return DOC_PREFIX + encode_path(path)


def topic_uri(prefix: str) -> str:
    return TOPIC_PREFIX + encode_path(prefix)


def topic_group(path: str) -> str:
    """The topic group of a corpus path: its first one or two directories, as category and topic are
    derived from a path (a path of 2 segments: its first; of 3 or more: its first two; else the root, "")."""
    parts = path.split("/")
    if len(parts) <= 1:
        return ""
    return parts[0] if len(parts) == 2 else f"{parts[0]}/{parts[1]}"


def group_name(prefix: str) -> str:
    """How a group is shown: its prefix, the root as ``(root)``."""
    return prefix or ROOT_GROUP_NAME


def parse(uri: str) -> tuple[UriKind, str] | None:
    """``("doc", path)`` or ``("topic", prefix)`` for a ``kb://`` URI, decoded; None for anything else
    (another scheme or kind, a percent-encoding that is not UTF-8)."""
    for kind, prefix in (("doc", DOC_PREFIX), ("topic", TOPIC_PREFIX)):
        if uri.startswith(prefix):
            try:
                decoded = unquote(uri[len(prefix) :], encoding="utf-8", errors="strict")
            except UnicodeDecodeError:
                return None
            return ("doc" if kind == "doc" else "topic"), decoded
    return None
