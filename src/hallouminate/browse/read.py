"""``read_markdown``: the verbatim UTF-8 contents of one corpus file, through the sandbox.

A document format with a reader (a PDF, an Office document, a spreadsheet, HTML, source code:
``indexing.readers``) is shown as its extracted text (``document_view``), the text its chunks' pages and
lines count in, so a ``ground`` hit's location opens exactly there. ``get_document`` and the ``kb://``
resources serve the same view (browse/document.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from hallouminate.config import CorpusSpec
from hallouminate.errors import BadEncoding, TooLarge, UnsafePath
from hallouminate.indexing.documents import ChunkContext, Extracted, FormatLimits, UnparseableFile
from hallouminate.indexing.walker import walk_corpus, why_not_listed
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import ReadMarkdownResult
from hallouminate.sandbox import (
    PathMissing,
    check_relative_path,
    document_cap,
    file_format,
    not_found,
    open_for_read,
    resolve_inside,
)
from hallouminate.sandbox.formats import Format, is_binary_format

# The daemon's frames are capped at 4 MiB; a bigger file could not travel in one response anyway.
READ_MAX_BYTES = PAGE_MAX_BYTES


def read_markdown(
    spec: CorpusSpec,
    path: str,
    line_numbers: bool = False,
    *,
    max_bytes: int = READ_MAX_BYTES,
    limits: FormatLimits | None = None,
) -> ReadMarkdownResult:
    """``{corpus, path, absolute_path, content, bytes}`` for the corpus file ``path``.

    Only a file ``list_files`` would list can be read (it matches the globs, is not excluded or ignored,
    and no symlink is on its way), so a corpus rooted at a whole repository cannot be used to read
    ``.env``. Roots are tried in order; the first one holding the path as a corpus file wins. ``content``
    is the file's text verbatim (a BOM and CRLFs included); with ``line_numbers`` each line is prefixed
    ``"N: "`` (1-based, lines split at ``\\n`` only, the numbers ``ground`` reports). ``bytes`` is always
    the file's size on disk.

    A document format with a reader is not shown verbatim: its ``content`` is the text the indexer
    extracts (``document_view``: a PDF's ``## Page N`` sections, line numbers counting from 1 in each, as
    ``ground``'s do), with ``format`` and, for a document of labelled parts, ``pages``; ``limits`` are the
    reader's (the ``[indexing]`` settings). A directory is refused (``problem: "directory"``) unless a
    later root holds the file.
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
        # A binary document (a PDF, an Office file) may be as large as get_document reads (images, fonts):
        # what must fit the read limit is its extracted text, checked below.
        cap = max(max_bytes, document_cap(path)) if is_binary_format(path) else max_bytes
        try:
            data = open_for_read(root, path, max_bytes=cap)
        except PathMissing:  # deleted between the check and the open
            continue
        result: ReadMarkdownResult = {
            "corpus": spec.name,
            "path": path,
            "absolute_path": str(absolute),
            "content": "",
            "bytes": len(data),
        }
        view = document_view(data, path, line_numbers, limits)
        if view is not None:
            result["content"] = view.content
            size = len(view.content.encode("utf-8"))
            if size > max_bytes:
                raise TooLarge(
                    f"the text extracted from {path!r} is {size} bytes, more than the {max_bytes}-byte read "
                    "limit; use `ground` (with group_by page) to find the pages you need",
                    {"path": path, "limit": max_bytes},
                )
            result["format"] = view.format
            if view.pages is not None:
                result["pages"] = view.pages
            if view.cut is not None:
                result["cut"] = view.cut
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


@dataclass(frozen=True)
class DocumentView:
    """A document's extracted text as the read tools show it."""

    content: str
    # sandbox.formats.Format (the ReadMarkdownResult/GetDocumentResult literal).
    format: Format
    # The number of labelled parts (a PDF's pages, a deck's slides); None for one unlabelled part.
    pages: int | None
    # The document's own title (PDF /Title, docx core title, <title>); "" when it states none.
    title: str
    # Why the reader stopped early (a limit), None when the text is whole.
    cut: str | None


def document_view(
    data: bytes, path: str, line_numbers: bool = False, limits: FormatLimits | None = None
) -> DocumentView | None:
    """The extracted-text view of the document ``path`` (its bytes ``data``), or None for a file shown
    verbatim (Markdown, text, JSON, and a text format whose reader this build lacks).

    Labelled parts (pages, slides, sheets) become ``## <title>`` sections, their lines numbered from 1 in
    each part; one unlabelled part (a Word document, an HTML page, a CSV file, source code) is shown as
    is, its lines numbered as they are. A reader that cannot read the file (``UnparseableFile``), or a
    binary format without a reader, is ``BadEncoding`` (``problem``: ``unreadable-document``; a PDF's
    ``unreadable-pdf``, as before).
    """
    fmt = file_format(path)
    if fmt in VERBATIM_FORMATS:
        return None
    # Here, not at the top: the readers' libraries (openpyxl loads numpy) stay out of a process that
    # only reads Markdown (tests/browse/test_browse_imports.py).
    from hallouminate.indexing.readers import reader_for

    reader = reader_for(path)
    if reader is None:
        if not is_binary_format(path):
            return None
        raise _unreadable(path, fmt, f"no reader for {fmt} files in this version")
    ctx = ChunkContext(path, PurePosixPath(path).name, _count_words, _VIEW_BUDGET, limits or FormatLimits())
    try:
        extracted = reader.extract(data, ctx)
    except UnparseableFile as exc:
        raise _unreadable(path, fmt, exc.reason) from None
    except UnicodeDecodeError as exc:  # a text format's reader decoding strictly
        raise BadEncoding(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start})",
            {"path": path, "offset": exc.start},
        ) from None
    content, pages = extracted_text(extracted, line_numbers)
    return DocumentView(content, fmt, pages, extracted.title, extracted.cut)


# Read verbatim, never through a reader (indexing/readers.py).
VERBATIM_FORMATS: frozenset[Format] = frozenset(("markdown", "text", "json"))
# Readers extract without chunking: the context's token counter and budget are unused, but required.
_VIEW_BUDGET = 512


def _count_words(text: str) -> int:
    return len(text.split())


def _unreadable(path: str, fmt: Format, reason: str) -> BadEncoding:
    if fmt == "pdf":  # the PDF's wording and problem predate the other formats (kept for stability)
        return BadEncoding(
            f"{path!r} is a PDF whose text cannot be extracted: {reason}",
            {"path": path, "problem": "unreadable-pdf"},
        )
    return BadEncoding(
        f"{path!r} is a {fmt} document whose text cannot be extracted: {reason}",
        {"path": path, "problem": "unreadable-document", "reason": reason},
    )


def extracted_text(extracted: Extracted, line_numbers: bool = False) -> tuple[str, int | None]:
    """The parts as read_markdown's content, and the number of labelled parts (None: one unlabelled)."""
    parts = extracted.parts
    if len(parts) == 1 and not parts[0].label:
        text = parts[0].text or ""
        return (_numbered(text) if line_numbers else text), None
    sections: list[str] = []
    for part in parts:
        if part.text is None or not part.text.strip():
            kind = part.label.partition(":")[0] or "part"
            body = f"_(no text could be extracted from this {kind})_\n"
        else:
            body = _numbered(part.text) if line_numbers else part.text.rstrip("\n") + "\n"
        sections.append(f"## {part.title or part.label}\n\n{body}")
    return "\n".join(sections), sum(1 for part in parts if part.label)
