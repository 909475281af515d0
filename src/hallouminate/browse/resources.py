"""The ``kb://`` resources of a corpus: its topic groups, a group's listing, a document's text.

Pure functions over what the index records (path -> file size): which documents are on offer is
``sandbox.formats.offered`` alone, the predicate ``ground`` uses for its hits' ``uri``, so the listing,
a read and the hits always agree. Reading a document goes through ``get_document`` (browse/document.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from hallouminate.errors import NotFound
from hallouminate.protocol import kb_uri
from hallouminate.protocol.results import GetDocumentResult, ReadResourceResult, ResourceGroup
from hallouminate.sandbox import file_format, offered

TRUNCATED_MARKER = "\n\n[truncated: get_document returns the first {limit} bytes of the extracted text]\n"


def offered_paths(sizes: Mapping[str, int | None]) -> list[str]:
    """The indexed paths on offer, sorted."""
    return sorted(path for path, size in sizes.items() if offered(path, size))


def groups(sizes: Mapping[str, int | None]) -> list[ResourceGroup]:
    """One entry per topic group holding a document on offer, by prefix (the root, "", first)."""
    counts: dict[str, int] = {}
    for path in offered_paths(sizes):
        prefix = kb_uri.topic_group(path)
        counts[prefix] = counts.get(prefix, 0) + 1
    return [
        {
            "prefix": prefix,
            "name": kb_uri.group_name(prefix),
            "uri": kb_uri.topic_uri(prefix),
            "description": f"{count} indexed document(s) under {kb_uri.group_name(prefix)}",
            "documents": count,
        }
        for prefix, count in sorted(counts.items())
    ]


def topic_listing(uri: str, prefix: str, sizes: Mapping[str, int | None]) -> ReadResourceResult:
    """A group's documents as Markdown lines ``- `path` — uri``; ``NotFound`` for a group with none."""
    paths = [path for path in offered_paths(sizes) if kb_uri.topic_group(path) == prefix]
    if not paths:
        raise resource_not_found(uri, "no topic group has that prefix")
    text = "".join(f"- {_code(path)} — {kb_uri.doc_uri(path)}\n" for path in paths)
    return {"uri": uri, "mime_type": "text/markdown", "text": text, "truncated": False}


def document_contents(uri: str, document: GetDocumentResult, limit: int) -> ReadResourceResult:
    """A document as a resource: Markdown as ``text/markdown``, anything else (text, JSON, a PDF's
    extracted text) as ``text/plain``; cut text ends with a marker saying so."""
    text = document["content"]
    if document["truncated"]:
        text += TRUNCATED_MARKER.format(limit=limit)
    markdown = file_format(document["path"]) == "markdown"
    return {
        "uri": uri,
        "mime_type": "text/markdown" if markdown else "text/plain",
        "text": text,
        "truncated": document["truncated"],
    }


def resource_not_found(uri: str, reason: str) -> NotFound:
    """MCP's ``resource_not_found``: the one answer for a URI that is not on offer, whatever the reason."""
    return NotFound(
        f"resource not found: {uri!r} ({reason}); resources/list names the topic groups, and a document's "
        "URI is the `uri` of its `ground` hit",
        {"uri": uri, "problem": "resource_not_found", "reason": reason},
    )


def _code(path: str) -> str:
    """``path`` as inline code, with a fence longer than any run of backticks inside it."""
    longest = 0
    count = 0
    for char in path:
        count = count + 1 if char == "`" else 0
        longest = max(longest, count)
    fence = "`" * (longest + 1)
    pad = " " if "`" in path else ""
    return f"{fence}{pad}{path}{pad}{fence}"
