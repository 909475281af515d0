"""``add_markdown`` and ``delete_markdown``: check the path, write or unlink atomically, keep the
``index.md`` link lists current, lint. Runs in a worker thread; the daemon serialises writes and then
re-indexes the paths returned in ``WriteOutcome.reindex``.

Writes go to the corpus' first root, and a path is resolved against that root only. With several roots
the corpus shows the first root's copy of a path (as every read does), so a copy in a later root is
never written or deleted, but it is not ignored either: creating over it needs ``overwrite`` (it is a page
the caller can read), a section edit or a delete of a page only a later root holds is refused, and a
write that starts or stops hiding a later copy says so in ``warnings``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from hallouminate import testing_hooks
from hallouminate.config import CorpusSpec
from hallouminate.errors import BadEncoding, CallerError, Conflict, FilesystemFault, NotFound, TooLarge
from hallouminate.ignore import path_ignored
from hallouminate.indexing.walker import corpus_files, listed_in, matches
from hallouminate.protocol.arguments import AddMarkdownArgs
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import (
    AddMarkdownResult,
    DeleteMarkdownResult,
    IndexAction,
    IndexFileAction,
    WriteAction,
    WriteWarning,
)
from hallouminate.sandbox import DirChain, PathMissing, is_markdown, not_found, open_for_read
from hallouminate.wiki import atomic
from hallouminate.wiki.edits import Edit, apply_edit, parse_edit
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
from hallouminate.wiki.paths import check_write_path, write_root

log = logging.getLogger("hallouminate.wiki")

# A page must stay readable in one read_markdown answer: the read limit is the same bound.
WRITE_MAX_BYTES = PAGE_MAX_BYTES
_NOT_DELETED = "nothing was deleted"

R = TypeVar("R", AddMarkdownResult, DeleteMarkdownResult)


@dataclass
class WriteOutcome(Generic[R]):
    """The tool's result (its re-index part empty: the daemon fills it) and the corpus-relative paths
    to re-index."""

    result: R
    reindex: list[str] = field(default_factory=list)


def add_markdown(
    spec: CorpusSpec, args: AddMarkdownArgs, journal: Journal
) -> WriteOutcome[AddMarkdownResult]:
    with _filesystem_faults(spec, args["path"], "write"):
        return _add(spec, args, journal)


def delete_markdown(spec: CorpusSpec, path: str, journal: Journal) -> WriteOutcome[DeleteMarkdownResult]:
    with _filesystem_faults(spec, path, "delete"):
        return _delete(spec, path, journal)


def _add(spec: CorpusSpec, args: AddMarkdownArgs, journal: Journal) -> WriteOutcome[AddMarkdownResult]:
    path: str = args["path"]
    content: str = args["content"]
    overwrite = bool(args.get("overwrite", False))
    edit = parse_edit(args)
    root = write_root(spec)
    segments = check_write_path(spec, root, path)
    data = _encode(content, path) if edit is None else b""
    later = _later_copy(spec, path)
    testing_hooks.write_fault_point("after-check")
    name, depth = segments[-1], len(segments) - 1
    try:
        chain = DirChain(root, path, segments[:-1], create=edit is None)
    except PathMissing:
        raise _missing_for_edit(spec, root, path, later) from None
    shadow: list[WriteWarning] = []
    with chain:
        existing = chain.look(depth, name, path)
        changed_lines: tuple[int, int] | None = None
        action: WriteAction
        if existing is None:
            if edit is not None:
                raise _missing_for_edit(spec, root, path, later)
            if later is not None and not overwrite:
                raise _exists(spec, path, later)
            try:
                atomic.create(chain, depth, name, data, journal, path)
            except atomic.AlreadyExists:
                raise _exists(spec, path) from None
            action = "created"
            if later is not None:
                shadow = [_shadow_warning(path, later, root, hidden=True)]
        else:
            if edit is None and not overwrite:
                raise _exists(spec, path)
            old, info = chain.read(depth, name, path, WRITE_MAX_BYTES)
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
        warnings = shadow + warnings
    result: AddMarkdownResult = {
        "corpus": spec.name,
        "path": path,
        "absolute_path": str(root.joinpath(*segments)),
        "action": action,
        "edit": edit.mode if edit is not None else None,
        "changed_lines": {"start": changed_lines[0], "end": changed_lines[1]} if changed_lines else None,
        "bytes": len(data),
        "index_files": index_files,
        "warnings": warnings,
        "reindexed": [],
        "chunks_written": 0,
    }
    return WriteOutcome(result, [path, *reindex])


def _delete(spec: CorpusSpec, path: str, journal: Journal) -> WriteOutcome[DeleteMarkdownResult]:
    root = write_root(spec)
    segments = check_write_path(spec, root, path)
    later = _later_copy(spec, path)
    testing_hooks.write_fault_point("after-check")
    name, depth = segments[-1], len(segments) - 1
    try:
        chain = DirChain(root, path, segments[:-1], create=False)
    except PathMissing:
        raise _missing(spec, root, path, later, _NOT_DELETED) from None
    with chain:
        existing = chain.look(depth, name, path)
        if existing is None:
            raise _missing(spec, root, path, later, _NOT_DELETED)
        atomic.remove(chain, depth, name, existing, journal, path)
        # A later root's copy of the path is a corpus file still: the one the corpus shows from now on.
        files = _corpus_files(spec, path, present=later is not None)
        index_files, reindex, warnings = _refresh_indexes(
            spec, root, chain, segments, files, journal, scaffold=False
        )
        if later is not None:
            warnings = [_shadow_warning(path, later, root, hidden=False), *warnings]
    result: DeleteMarkdownResult = {
        "corpus": spec.name,
        "path": path,
        "absolute_path": str(root.joinpath(*segments)),
        "deleted": True,
        "index_files": index_files,
        "warnings": warnings,
        "reindexed": [],
    }
    return WriteOutcome(result, [path, *reindex])


# -- index.md link lists -----------------------------------------------------------------------------------
def _refresh_indexes(
    spec: CorpusSpec,
    root: Path,
    chain: DirChain,
    segments: list[str],
    files: set[str],
    journal: Journal,
    *,
    scaffold: bool,
) -> tuple[list[IndexFileAction], list[str], list[WriteWarning]]:
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

    touched: list[IndexFileAction] = []
    changed: list[str] = []
    warnings: list[WriteWarning] = []
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
        except (CallerError, OSError) as exc:
            reason = exc.message if isinstance(exc, CallerError) else (exc.strerror or str(exc))
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
    chain: DirChain,
    depth: int,
    directory: str,
    entries: list[Entry],
    journal: Journal,
    *,
    scaffold: bool,
) -> IndexAction | None:
    rel = index_path(directory)
    info = chain.look(depth, INDEX_NAME, rel)
    if info is None:
        if not scaffold or not matches(spec, rel) or path_ignored(root, rel):
            return None
        text = scaffold_index(directory_title(directory, spec.repository), entries)
        atomic.create(chain, depth, INDEX_NAME, text.encode("utf-8"), journal, rel)
        return "scaffolded"
    old, info = chain.read(depth, INDEX_NAME, rel, WRITE_MAX_BYTES)
    if old is None:
        raise TooLarge(f"it is larger than {WRITE_MAX_BYTES} bytes")
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEncoding(f"it is not UTF-8 (invalid byte at offset {exc.start})") from None
    new = splice(text, entries)
    if new is None:
        return "left-alone"  # no markers: the page is the author's alone
    if new == text:
        return None
    atomic.replace(chain, depth, INDEX_NAME, new.encode("utf-8"), info, journal, rel)
    return "updated"


def _lint(path: str, data: bytes, files: set[str]) -> list[WriteWarning]:
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
    except (CallerError, OSError):
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
        raise FilesystemFault(
            f"could not {verb} {path!r} in corpus {spec.name!r}: {exc.strerror or exc}{where}; check the "
            "permissions and free space of the corpus directory",
            {"corpus": spec.name, "path": path, "errno": exc.errno},
        ) from None


def _corpus_files(spec: CorpusSpec, path: str, *, present: bool) -> set[str]:
    """The corpus' files after the write (the walk is skipped when neither lists nor lint need it)."""
    if spec.kind != "wiki" and not is_markdown(path):
        return set()
    files = {rel for rel, _ in corpus_files(spec)}
    if present:
        files.add(path)
    else:
        files.discard(path)
    return files


def _encode(text: str, path: str) -> bytes:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadEncoding(
            f"content for {path!r} is not valid Unicode (a lone surrogate at character {exc.start})",
            {"path": path, "problem": "encoding"},
        ) from None
    if len(data) > WRITE_MAX_BYTES:
        raise TooLarge(
            f"content for {path!r} is {len(data)} bytes, more than the {WRITE_MAX_BYTES}-byte page limit (a "
            "page must fit in one read_markdown answer): split it into several pages",
            {"path": path, "limit": WRITE_MAX_BYTES, "problem": "too-large"},
        )
    return data


def _edited(old: bytes | None, edit: Edit, content: str, path: str) -> tuple[bytes, tuple[int, int] | None]:
    if old is None:
        raise TooLarge(
            f"{path!r} is larger than {WRITE_MAX_BYTES} bytes: it cannot be edited by section",
            {"path": path, "limit": WRITE_MAX_BYTES, "problem": "too-large"},
        )
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"{path!r} is not UTF-8 text (invalid byte at offset {exc.start}): it cannot be edited by "
            "section; overwrite it whole instead",
            {"path": path, "offset": exc.start, "problem": "not-utf8"},
        ) from None
    edited = apply_edit(text, edit, content, path)
    return _encode(edited.text, path), edited.lines


def _exists(spec: CorpusSpec, path: str, later: Path | None = None) -> Conflict:
    if later is None:
        return Conflict(
            f"{path!r} already exists in corpus {spec.name!r}: read it with read_markdown first, then call "
            "add_markdown again with overwrite: true to replace it (or change one part with under_heading, "
            "replace_lines or replace_match)",
            {"corpus": spec.name, "path": path, "problem": "exists"},
        )
    return Conflict(
        f"{path!r} already exists in corpus {spec.name!r}, as {later} in a later root (writes go to the "
        f"first root, {spec.roots[0]}): read it with read_markdown first, then call add_markdown again with "
        "overwrite: true to write the first root's copy, which the corpus then shows in its place (the "
        "later copy is left as it is)",
        {"corpus": spec.name, "path": path, "later_copy": str(later), "problem": "exists"},
    )


def _later_copy(spec: CorpusSpec, path: str) -> Path | None:
    """The file a later root holds at ``path`` as a corpus file (the first such), else None."""
    for root in spec.roots[1:]:
        if listed_in(spec, root, path):
            return root.joinpath(path)
    return None


def _shadow_warning(path: str, later: Path, root: Path, *, hidden: bool) -> WriteWarning:
    if hidden:
        return {
            "code": "shadows-later-copy",
            "message": f"a later root of the corpus holds {path!r} too ({later}): it is left as it is, and "
            f"the corpus now shows the first root's copy ({root.joinpath(path)}) in its place",
            "path": path,
        }
    return {
        "code": "later-copy-shown",
        "message": f"a later root of the corpus holds {path!r} too ({later}): it is left as it is, and the "
        "corpus now shows it at this path",
        "path": path,
    }


def _missing(spec: CorpusSpec, root: Path, path: str, later: Path | None, consequence: str) -> NotFound:
    """``path`` is not in the first root: a plain miss, or a page only a later root holds (which writes
    never change)."""
    if later is not None:
        if consequence == _NOT_DELETED:
            consequence += " (remove that file yourself if you mean to)"
        return NotFound(
            f"{path!r} is only in a later root of corpus {spec.name!r} ({later}), and writes change the "
            f"first root only ({root}): {consequence}",
            {"corpus": spec.name, "path": path, "later_copy": str(later), "problem": "not-in-first-root"},
        )
    # The nearest directory and the close names among the first root's files: the only ones a write sees.
    files = (rel for rel, holder in corpus_files(spec) if holder == root)
    miss = not_found(spec.name, path, files)
    return NotFound(f"{miss.message} ({consequence})", {**miss.data, "problem": "missing"})


def _missing_for_edit(spec: CorpusSpec, root: Path, path: str, later: Path | None) -> NotFound:
    if later is not None:
        consequence = (
            "nothing was edited. To change the page, read it with read_markdown and write it whole with "
            "add_markdown and overwrite: true: the first root's copy then takes its place"
        )
    else:
        consequence = (
            "a section edit needs an existing page: create it first without under_heading, replace_lines "
            "or replace_match"
        )
    return _missing(spec, root, path, later, consequence)
