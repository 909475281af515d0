"""``read_markdown``: the verbatim UTF-8 contents of one corpus file, through the sandbox."""

from __future__ import annotations

from hallouminate.config import CorpusSpec
from hallouminate.errors import BadEncoding, UnsafePath
from hallouminate.indexing.walker import walk_corpus, why_not_listed
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import ReadMarkdownResult
from hallouminate.sandbox import PathMissing, check_relative_path, not_found, open_for_read, resolve_inside

# The daemon's frames are capped at 4 MiB; a bigger file could not travel in one response anyway.
READ_MAX_BYTES = PAGE_MAX_BYTES


def read_markdown(
    spec: CorpusSpec, path: str, line_numbers: bool = False, *, max_bytes: int = READ_MAX_BYTES
) -> ReadMarkdownResult:
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
        raise UnsafePath(
            f"{path!r} exists but is not a file of corpus {spec.name!r}: {refusal}",
            {"corpus": spec.name, "path": path, "reason": refusal},
        )
    raise not_found(spec.name, path, (rel for rel, _ in walk_corpus(spec)))


def _decode(data: bytes, path: str, line_numbers: bool) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start})",
            {"path": path, "offset": exc.start},
        ) from None
    if not line_numbers:
        return text
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start a new one
    return "".join(f"{n}: {line}\n" for n, line in enumerate(lines, 1))
