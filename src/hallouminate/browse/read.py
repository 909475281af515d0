"""``read_markdown``: the verbatim UTF-8 contents of one corpus file, through the sandbox."""

from __future__ import annotations

import difflib
from pathlib import PurePosixPath
from typing import Any

from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidParams
from hallouminate.indexing.walker import walk_corpus, why_not_listed
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.sandbox import PathMissing, check_relative_path, open_for_read, resolve_inside

# The daemon's frames are capped at 4 MiB; a bigger file could not travel in one response anyway.
READ_MAX_BYTES = PAGE_MAX_BYTES
# A miss lists at most this many entries of the nearest directory and this many close file names.
MISS_ENTRIES = 20
MISS_CLOSEST = 3


def read_markdown(
    spec: CorpusSpec, path: str, line_numbers: bool = False, *, max_bytes: int = READ_MAX_BYTES
) -> dict[str, Any]:
    """``{corpus, path, absolute_path, content, bytes}`` for the corpus file ``path``.

    Only a file ``list_files`` would list can be read (it matches the globs, is not excluded or ignored,
    and no symlink is on its way), so a corpus rooted at a whole repository cannot be used to read
    ``.env``. Roots are tried in order; the first one holding the path as a corpus file wins. ``content``
    is the file's text verbatim (a BOM and CRLFs included); with ``line_numbers`` each line is prefixed
    ``"N: "`` (1-based, lines split at ``\\n`` only, the numbers ``ground`` reports). ``bytes`` is always
    the file's size on disk.
    """
    check_relative_path(path)
    refusal: str | None = None
    for root in spec.roots:
        try:
            absolute = resolve_inside(root, path, must_exist=True)
        except PathMissing:
            continue
        reason = why_not_listed(spec, root, path)
        if reason is not None:
            refusal = refusal or reason
            continue
        try:
            data = open_for_read(root, path, max_bytes=max_bytes)
        except PathMissing:  # deleted between the check and the open
            continue
        return {
            "corpus": spec.name,
            "path": path,
            "absolute_path": str(absolute),
            "content": _decode(data, path, line_numbers),
            "bytes": len(data),
        }
    if refusal is not None:
        raise InvalidParams(
            f"{path!r} exists but is not a file of corpus {spec.name!r}: {refusal}",
            {"corpus": spec.name, "path": path, "reason": refusal},
        )
    raise _miss(spec, path)


def _decode(data: bytes, path: str, line_numbers: bool) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start})",
            {"path": path, "offset": exc.start},
        ) from None
    if not line_numbers:
        return text
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start a new one
    return "".join(f"{n}: {line}\n" for n, line in enumerate(lines, 1))


def _miss(spec: CorpusSpec, path: str) -> InvalidParams:
    """The error for a path that is in no root: the nearest directory's entries, the closest names."""
    files = [rel for rel, _ in walk_corpus(spec)]
    parts = path.split("/")
    directories = {str(PurePosixPath(rel).parent) for rel in files}
    directories = {"" if d == "." else d for d in directories}
    # The deepest existing ancestor, judged on the corpus' own files (what list_tree would show).
    nearest = ""
    for depth in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:depth])
        if any(d == candidate or d.startswith(candidate + "/") for d in directories):
            nearest = candidate
            break
    entries = _entries(files, nearest)
    closest = _closest(path, files)
    where = f"directory {nearest!r}" if nearest else "the corpus root"
    shown = ", ".join(entries[:MISS_ENTRIES]) or "nothing"
    more = f" (and {len(entries) - MISS_ENTRIES} more)" if len(entries) > MISS_ENTRIES else ""
    hint = f" Closest file names: {', '.join(closest)}." if closest else ""
    return InvalidParams(
        f"{path!r} does not exist in corpus {spec.name!r}. {where[0].upper()}{where[1:]} holds: "
        f"{shown}{more}.{hint}",
        {
            "corpus": spec.name,
            "path": path,
            "directory": nearest,
            "entries": entries[:MISS_ENTRIES],
            "closest": closest,
        },
    )


def _entries(files: list[str], directory: str) -> list[str]:
    prefix = directory + "/" if directory else ""
    names: set[str] = set()
    for rel in files:
        if rel.startswith(prefix):
            rest = rel[len(prefix) :]
            head, sep, _ = rest.partition("/")
            names.add(head + "/" if sep else head)
    return sorted(names)


def _closest(path: str, files: list[str]) -> list[str]:
    # Score on the whole path and on the file name: "setup.md" should find "guides/setup.md".
    name = PurePosixPath(path).name
    scored: list[tuple[float, str]] = []
    for rel in files:
        whole = difflib.SequenceMatcher(None, path, rel).ratio()
        base = difflib.SequenceMatcher(None, name, PurePosixPath(rel).name).ratio()
        score = max(whole, base)
        if score >= 0.6:
            scored.append((score, rel))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [rel for _, rel in scored[:MISS_CLOSEST]]
