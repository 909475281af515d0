"""``add_markdown`` and ``delete_markdown``: check the path, write or unlink atomically, keep the
``index.md`` link lists current, lint. Runs in a worker thread; the daemon serialises writes and then
re-indexes the paths returned in ``WriteOutcome.reindex``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallouminate.browse.read import _miss as read_miss  # the read tools' "nearest directory" message
from hallouminate.config import CorpusSpec
from hallouminate.errors import Internal, InvalidParams
from hallouminate.ignore import path_ignored
from hallouminate.indexing.walker import matches, walk_corpus
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.sandbox import PathMissing, open_for_read
from hallouminate.wiki import atomic
from hallouminate.wiki.edits import Edit, apply_edit, parse_edit
from hallouminate.wiki.faults import fault_point
from hallouminate.wiki.index_lists import (
    INDEX_NAME,
    Entry,
    children,
    directory_title,
    index_path,
    page_entry,
    splice,
    subdir_entry,
)
from hallouminate.wiki.index_lists import scaffold as scaffold_index
from hallouminate.wiki.journal import Journal
from hallouminate.wiki.lint import lint_page
from hallouminate.wiki.markdown import first_h1
from hallouminate.wiki.paths import check_write_path, is_markdown, write_root

log = logging.getLogger("hallouminate.wiki")

# A page must stay readable in one read_markdown answer: the read limit is the same bound.
WRITE_MAX_BYTES = PAGE_MAX_BYTES


@dataclass
class WriteOutcome:
    """The tool's result (without the re-index part) and the corpus-relative paths to re-index."""

    result: dict[str, Any]
    reindex: list[str] = field(default_factory=list)


def add_markdown(spec: CorpusSpec, args: dict[str, Any], journal: Journal) -> WriteOutcome:
    with _filesystem_faults(spec, args["path"], "write"):
        return _add(spec, args, journal)


def delete_markdown(spec: CorpusSpec, path: str, journal: Journal) -> WriteOutcome:
    with _filesystem_faults(spec, path, "delete"):
        return _delete(spec, path, journal)


def _add(spec: CorpusSpec, args: dict[str, Any], journal: Journal) -> WriteOutcome:
    path: str = args["path"]
    content: str = args["content"]
    overwrite = bool(args.get("overwrite", False))
    edit = parse_edit(args)
    root = write_root(spec, "add_markdown")
    segments = check_write_path(spec, root, path)
    data = _encode(content, path) if edit is None else b""
    fault_point("after-check")
    name, depth = segments[-1], len(segments) - 1
    try:
        chain = atomic.DirChain(root, path, segments[:-1], create=edit is None)
    except PathMissing:
        raise _missing_for_edit(spec, path) from None
    with chain:
        existing = atomic.look(chain, depth, name, path)
        changed_lines: tuple[int, int] | None = None
        if existing is None:
            if edit is not None:
                raise _missing_for_edit(spec, path)
            try:
                atomic.create(chain, depth, name, data, journal, path)
            except atomic.AlreadyExists:
                raise _exists(spec, path) from None
            action = "created"
        else:
            if edit is None and not overwrite:
                raise _exists(spec, path)
            old, info = atomic.read(chain, depth, name, path, WRITE_MAX_BYTES)
            if edit is not None:
                data, changed_lines = _edited(old, edit, content, path)
            if old == data:
                action = "unchanged"  # nothing to write; the mtime stays
            else:
                atomic.replace(chain, depth, name, data, info, journal, path)
                action = "edited" if edit is not None else "overwritten"
        files = _corpus_files(spec, path, present=True)
        index_files, reindex, warnings = _refresh_indexes(
            spec, root, chain, segments, files, journal, scaffold=True
        )
        if is_markdown(path):
            warnings = _lint(path, data, files) + warnings
    result = {
        "corpus": spec.name,
        "path": path,
        "absolute_path": str(root.joinpath(*segments)),
        "action": action,
        "edit": edit.mode if edit is not None else None,
        "changed_lines": {"start": changed_lines[0], "end": changed_lines[1]} if changed_lines else None,
        "bytes": len(data),
        "index_files": index_files,
        "warnings": warnings,
    }
    return WriteOutcome(result, [path, *reindex])


def _delete(spec: CorpusSpec, path: str, journal: Journal) -> WriteOutcome:
    root = write_root(spec, "delete_markdown")
    segments = check_write_path(spec, root, path)
    fault_point("after-check")
    name, depth = segments[-1], len(segments) - 1
    try:
        chain = atomic.DirChain(root, path, segments[:-1], create=False)
    except PathMissing:
        raise _missing(spec, path, "nothing was deleted") from None
    with chain:
        existing = atomic.look(chain, depth, name, path)
        if existing is None:
            raise _missing(spec, path, "nothing was deleted")
        atomic.remove(chain, depth, name, existing, journal, path)
        files = _corpus_files(spec, path, present=False)
        index_files, reindex, warnings = _refresh_indexes(
            spec, root, chain, segments, files, journal, scaffold=False
        )
    result = {
        "corpus": spec.name,
        "path": path,
        "absolute_path": str(root.joinpath(*segments)),
        "deleted": True,
        "index_files": index_files,
        "warnings": warnings,
    }
    return WriteOutcome(result, [path, *reindex])


# -- index.md link lists -----------------------------------------------------------------------------------
def _refresh_indexes(
    spec: CorpusSpec,
    root: Path,
    chain: atomic.DirChain,
    segments: list[str],
    files: set[str],
    journal: Journal,
    *,
    scaffold: bool,
) -> tuple[list[dict[str, str]], list[str], list[dict[str, Any]]]:
    """Rewrite the lists of every ancestor ``index.md`` (repository wikis only), deepest first, so a
    scaffolded ``index.md`` already glosses its directory in its parent's list.

    Returns the index files touched (``{path, action}``), those to re-index, and warnings. A problem with
    one ``index.md`` is a warning: the page itself is written by then.
    """
    if spec.kind != "wiki":
        return [], [], []
    titles: dict[str, str | None] = {}

    def title(rel: str) -> str | None:
        if rel not in titles:
            titles[rel] = _title_of(root, rel)
        return titles[rel]

    touched: list[dict[str, str]] = []
    changed: list[str] = []
    warnings: list[dict[str, Any]] = []
    for depth in range(len(segments) - 1, -1, -1):
        directory = "/".join(segments[:depth])
        rel = index_path(directory)
        subdirs, pages = children(files, directory)
        entries: list[Entry] = [
            subdir_entry(s, index_path(s) in files, title(index_path(s)) if index_path(s) in files else None)
            for s in subdirs
        ]
        entries += [page_entry(p, title(p)) for p in pages]
        try:
            action = _refresh_one(spec, root, chain, depth, directory, entries, journal, scaffold=scaffold)
        except (InvalidParams, OSError) as exc:
            reason = exc.message if isinstance(exc, InvalidParams) else (exc.strerror or str(exc))
            warnings.append(
                {"code": "index-skipped", "message": f"{rel} was not updated: {reason}", "path": rel}
            )
            continue
        if action is None:
            continue
        touched.append({"path": rel, "action": action})
        if action != "left-alone":
            changed.append(rel)
            files.add(rel)
            titles.pop(rel, None)
    return touched, changed, warnings


def _refresh_one(
    spec: CorpusSpec,
    root: Path,
    chain: atomic.DirChain,
    depth: int,
    directory: str,
    entries: list[Entry],
    journal: Journal,
    *,
    scaffold: bool,
) -> str | None:
    rel = index_path(directory)
    info = atomic.look(chain, depth, INDEX_NAME, rel)
    if info is None:
        if not scaffold or not matches(spec, rel) or path_ignored(root, rel):
            return None
        text = scaffold_index(directory_title(directory, spec.repository), entries)
        atomic.create(chain, depth, INDEX_NAME, text.encode("utf-8"), journal, rel)
        return "scaffolded"
    old, info = atomic.read(chain, depth, INDEX_NAME, rel, WRITE_MAX_BYTES)
    if old is None:
        raise InvalidParams(f"it is larger than {WRITE_MAX_BYTES} bytes")
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(f"it is not UTF-8 (invalid byte at offset {exc.start})") from None
    new = splice(text, entries)
    if new is None:
        return "left-alone"  # no markers: the page is the author's alone
    if new == text:
        return None
    atomic.replace(chain, depth, INDEX_NAME, new.encode("utf-8"), info, journal, rel)
    return "updated"


def _lint(path: str, data: bytes, files: set[str]) -> list[dict[str, Any]]:
    try:
        return lint_page(path, data.decode("utf-8"), files)
    except Exception as exc:  # advisory: a lint bug must not turn a done write into an error
        log.exception("linting %s failed", path)
        return [
            {"code": "lint-failed", "message": f"the page was written but not linted: {type(exc).__name__}"}
        ]


def _title_of(root: Path, rel: str) -> str | None:
    try:
        data = open_for_read(root, rel, max_bytes=WRITE_MAX_BYTES)
    except (InvalidParams, OSError):
        return None
    return first_h1(data.decode("utf-8", errors="replace"))


# -- helpers -----------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _filesystem_faults(spec: CorpusSpec, path: str, verb: str) -> Iterator[None]:
    """An OS error (permissions, a full disk) is a fault of the environment, not of the caller: -32603."""
    try:
        yield
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise Internal(
            f"could not {verb} {path!r} in corpus {spec.name!r}: {exc.strerror or exc}{where}; check the "
            "permissions and free space of the corpus directory",
            {"corpus": spec.name, "path": path, "errno": exc.errno},
        ) from None


def _corpus_files(spec: CorpusSpec, path: str, *, present: bool) -> set[str]:
    """The corpus' files after the write (the walk is skipped when neither lists nor lint need it)."""
    if spec.kind != "wiki" and not is_markdown(path):
        return set()
    files = {rel for rel, _ in walk_corpus(spec)}
    if present:
        files.add(path)
    else:
        files.discard(path)
    return files


def _encode(text: str, path: str) -> bytes:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidParams(
            f"content for {path!r} is not valid Unicode (a lone surrogate at character {exc.start})",
            {"path": path, "problem": "encoding"},
        ) from None
    if len(data) > WRITE_MAX_BYTES:
        raise InvalidParams(
            f"content for {path!r} is {len(data)} bytes, more than the {WRITE_MAX_BYTES}-byte page limit (a "
            "page must fit in one read_markdown answer): split it into several pages",
            {"path": path, "limit": WRITE_MAX_BYTES, "problem": "too-large"},
        )
    return data


def _edited(old: bytes | None, edit: Edit, content: str, path: str) -> tuple[bytes, tuple[int, int] | None]:
    if old is None:
        raise InvalidParams(
            f"{path!r} is larger than {WRITE_MAX_BYTES} bytes: it cannot be edited by section",
            {"path": path, "limit": WRITE_MAX_BYTES, "problem": "too-large"},
        )
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start}): it cannot be edited by "
            "section; overwrite it whole instead",
            {"path": path, "offset": exc.start, "problem": "not-utf8"},
        ) from None
    edited = apply_edit(text, edit, content, path)
    return _encode(edited.text, path), edited.lines


def _exists(spec: CorpusSpec, path: str) -> InvalidParams:
    return InvalidParams(
        f"{path!r} already exists in corpus {spec.name!r}: read it with read_markdown first, then call "
        "add_markdown again with overwrite: true to replace it (or change one part with under_heading, "
        "replace_lines or replace_match)",
        {"corpus": spec.name, "path": path, "problem": "exists"},
    )


def _missing(spec: CorpusSpec, path: str, consequence: str) -> InvalidParams:
    miss = read_miss(spec, path)
    return InvalidParams(f"{miss.message} ({consequence})", {**miss.data, "problem": "missing"})


def _missing_for_edit(spec: CorpusSpec, path: str) -> InvalidParams:
    return _missing(
        spec,
        path,
        "a section edit needs an existing page: create it first without under_heading, replace_lines or "
        "replace_match",
    )
