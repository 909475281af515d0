"""``get_document``: one indexed document, whole, with its metadata, by its one spelling.

The rules, cheapest first, so that nothing about the disk can be learnt from a refusal:

1. ``check_document_name`` looks at the string only: a name no index could hold (absolute, empty, a
   ``.``/``..``/empty segment, a backslash, a control character or NUL, too long; the sandbox's
   ``check_relative_path``) or an extension that is not served (``sandbox.formats``) is refused before
   anything on disk is looked at, with the same answer whether or not something is there;
2. the path must be an indexed path of the corpus, spelled exactly as the index holds it (as ``ground``
   returns it). The daemon asks the index, not the disk: another spelling (another case, a symlinked
   directory, which the walk never follows) is ``not_indexed``, the same answer whether or not a file
   answers to it;
3. ``read_document`` then reads it through the sandbox's descriptor walk (``O_NOFOLLOW`` at every level,
   so a symlink swapped in since is refused), refuses a hard-linked file, a file the corpus no longer
   lists (its globs or ignore files changed), and sizes past ``document_cap``: a Markdown or text document
   over 1 MiB is refused; a document format with a reader (a PDF, an Office document, ...) is served as
   its extracted text (``browse.read.document_view``, what ``read_markdown`` shows), cut to 1 MiB
   (``truncated``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from hallouminate.browse.read import decode_utf8, document_view
from hallouminate.config import CorpusSpec
from hallouminate.errors import NotFound, TooLarge
from hallouminate.indexing.documents import FormatLimits
from hallouminate.indexing.walker import why_not_listed
from hallouminate.protocol.limits import DOCUMENT_TEXT_MAX_BYTES
from hallouminate.protocol.results import GetDocumentResult
from hallouminate.sandbox import (
    PathMissing,
    check_relative_path,
    document_cap,
    file_format,
    has_document_extension,
    read_file,
    refuse,
)
from hallouminate.sandbox.formats import DOCUMENT_SUFFIXES
from hallouminate.search.filters import category_topic

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^(```|~~~)")


def check_document_name(path: str) -> None:
    """Refuse a name no indexed document can have, from the string alone (``UnsafePath``)."""
    check_relative_path(path)
    if not has_document_extension(path):
        raise refuse(
            path,
            f"get_document serves only the extensions the indexer parses ({', '.join(sorted(DOCUMENT_SUFFIXES))})",
            "extension",
        )


def not_indexed(corpus: str, path: str, *, indexing: bool = False) -> NotFound:
    """The one answer for a well-formed name that is not an indexed document of ``corpus``: the same
    whether or not a file answers to that name on disk, so a refusal says nothing about the disk.
    ``indexing``: a whole-corpus run is going (the corpus's first catch-up, say), which is said."""
    running = f"; corpus {corpus!r} is being indexed now: try again when it is done" if indexing else ""
    data: dict[str, object] = {"corpus": corpus, "path": path, "problem": "not-indexed"}
    if indexing:
        data["indexing"] = True
    return NotFound(
        f"{path!r} is not an indexed document of corpus {corpus!r}: pass the path exactly as `ground` "
        "returns it (relative to the corpus root, '/'-separated, same case); a file added moments ago is "
        f"served once it is indexed{running}",
        data,
    )


def read_document(
    spec: CorpusSpec, path: str, fields: str | None, limits: FormatLimits | None = None
) -> GetDocumentResult:
    """The document ``path`` of ``spec`` (already checked by ``check_document_name`` and found in the
    index, whose frontmatter ``fields`` JSON gives its metadata), read through the sandbox; ``limits``
    are its reader's (the ``[indexing]`` settings)."""
    fmt = file_format(path)
    cap = document_cap(path)
    for root in spec.roots:
        try:
            data, info = read_file(root, path, max_bytes=cap)
        except PathMissing:
            continue  # a later root may hold it; none does: the index is behind the disk
        except TooLarge:
            raise _too_large(path, cap) from None
        if info.st_nlink > 1:
            raise refuse(
                path,
                "it is a hard link (the file has other names, possibly outside the corpus); "
                "copy it into the corpus instead",
                "hard-link",
            )
        if why_not_listed(spec, root, path) is not None:
            break  # indexed before the corpus' globs or ignore files changed: no longer one of its files
        truncated = False
        own_title = ""
        view = document_view(data, path, limits=limits)
        if view is not None:
            content, truncated = _cut(view.content, DOCUMENT_TEXT_MAX_BYTES)
            own_title = view.title  # the document's own (a PDF's /Title, a Word document's title)
        else:
            content = decode_utf8(data, path)
        front = _fields(fields)
        category, topic = category_topic(path, front)
        result: GetDocumentResult = {
            "path": path,
            "title": own_title or _title(path, front, content if fmt == "markdown" else ""),
            "date": _scalar(front.get("date")),
            "topic": topic,
            "tags": _tags(front.get("tags")),
            "content": content,
            "truncated": truncated,
            "corpus": spec.name,
            "category": category,
            "format": fmt,
            "bytes": info.st_size,
        }
        if view is not None and view.cut is not None:
            result["cut"] = view.cut
        return result
    raise not_indexed(spec.name, path)


def _too_large(path: str, cap: int) -> TooLarge:
    if cap == DOCUMENT_TEXT_MAX_BYTES:
        hint = "read it with read_markdown (up to 3 MiB), or find its sections with `ground`"
    else:
        hint = "find its pages with `ground` (group_by page)"
    return TooLarge(
        f"{path!r} is larger than the {cap}-byte limit of get_document; {hint}",
        {"path": path, "limit": cap, "problem": "too-large"},
    )


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes, on a character boundary, and whether it was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def _fields(fields: str | None) -> dict[str, Any]:
    if not fields:
        return {}
    try:
        data = json.loads(fields)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _title(path: str, front: Mapping[str, Any], markdown: str) -> str:
    """The frontmatter ``title``; else the first level-1 ATX heading outside code fences; else the file
    name without its extension."""
    own = front.get("title")
    if isinstance(own, str) and own.strip():
        return own.strip()
    fenced = False
    for line in _body(markdown).splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and (heading := _H1.match(line)):
            return heading.group(1)
    return PurePosixPath(path).stem


def _body(markdown: str) -> str:
    """The Markdown after its frontmatter block, if it opens with one."""
    text = markdown.removeprefix("\ufeff")
    if not text.startswith("---"):
        return text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines[1:], 1):
        if line.rstrip("\r\n") in ("---", "..."):
            return "".join(lines[index + 1 :])
    return text


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _tags(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(item) for item in items if isinstance(item, str | int | float) and not isinstance(item, bool)]
