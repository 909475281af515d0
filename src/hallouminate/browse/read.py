"""``read_markdown``: the verbatim UTF-8 contents of one corpus file, through the sandbox."""

from __future__ import annotations

from hallouminate.config import CorpusSpec
from hallouminate.errors import BadEncoding, TooLarge, UnsafePath
from hallouminate.indexing.pdf_text import UnparseableFile, page_texts
from hallouminate.indexing.walker import walk_corpus, why_not_listed
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import ReadMarkdownResult
from hallouminate.sandbox import (
    PathMissing,
    check_relative_path,
    file_format,
    not_found,
    open_for_read,
    resolve_inside,
)

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

    A PDF is not text: its ``content`` is the text the indexer extracts, one ``## Page N`` section per
    page (line numbers then count from 1 in each page, as ``ground``'s do), with ``format: "pdf"`` and
    ``pages``. A directory is refused (``problem: "directory"``) unless a later root holds the file.
    """
    check_relative_path(path)
    refusal: str | None = None
    directory: UnsafePath | None = None
    for root in spec.roots:
        try:
            absolute = resolve_inside(root, path, must_exist=True, leaf_file=True)
        except PathMissing:
            continue
        except UnsafePath as exc:
            if exc.data.get("problem") != "directory":
                raise
            directory = directory or exc  # a later root may hold a file of that name
            continue
        reason = why_not_listed(spec, root, path)
        if reason is not None:
            refusal = refusal or reason
            continue
        try:
            data = open_for_read(root, path, max_bytes=max_bytes)
        except PathMissing:  # deleted between the check and the open
            continue
        result: ReadMarkdownResult = {
            "corpus": spec.name,
            "path": path,
            "absolute_path": str(absolute),
            "content": "",
            "bytes": len(data),
        }
        if file_format(path) == "pdf":
            result["content"], result["pages"] = pdf_markdown(data, path, line_numbers)
            size = len(result["content"].encode("utf-8"))
            if size > max_bytes:
                raise TooLarge(
                    f"the text extracted from {path!r} is {size} bytes, more than the {max_bytes}-byte read "
                    "limit; use `ground` (with group_by page) to find the pages you need",
                    {"path": path, "limit": max_bytes},
                )
            result["format"] = "pdf"
        else:
            text = decode_utf8(data, path)
            result["content"] = _numbered(text) if line_numbers else text
        return result
    if directory is not None:
        raise directory
    if refusal is not None:
        raise UnsafePath(
            f"{path!r} exists but is not a file of corpus {spec.name!r}: {refusal}",
            {"corpus": spec.name, "path": path, "reason": refusal},
        )
    raise not_found(spec.name, path, (rel for rel, _ in walk_corpus(spec)))


def decode_utf8(data: bytes, path: str) -> str:
    """``data`` as UTF-8 text; ``BadEncoding`` naming the first invalid byte otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start})",
            {"path": path, "offset": exc.start},
        ) from None
    return text


def _numbered(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start a new one
    return "".join(f"{n}: {line}\n" for n, line in enumerate(lines, 1))


def pdf_markdown(data: bytes, path: str, line_numbers: bool = False) -> tuple[str, int]:
    """The PDF's extracted text as Markdown, one ``## Page N`` section per page, and its page count.

    The text is pypdf's, as indexed (so ``ground`` hits can be found in it), not a faithful layout.
    """
    try:
        texts = page_texts(data)
    except UnparseableFile as exc:
        raise BadEncoding(
            f"{path!r} is a PDF whose text cannot be extracted: {exc}",
            {"path": path, "problem": "unreadable-pdf"},
        ) from None
    sections: list[str] = []
    for number, text in enumerate(texts, 1):
        if text is None or not text.strip():
            body = "_(no text could be extracted from this page)_\n"
        else:
            body = _numbered(text) if line_numbers else text.rstrip("\n") + "\n"
        sections.append(f"## Page {number}\n\n{body}")
    return "\n".join(sections), len(texts)
