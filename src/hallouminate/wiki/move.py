"""``move_markdown``: rename a page, rewrite the links to it, keep the ``index.md`` lists, crash-safe.

The page at ``from`` (in the corpus' first root, like every write) moves to ``to``, which must not exist
in any root. Every Markdown page of the first root whose ``[[wikilinks]]`` or relative Markdown links
reached ``from`` is rewritten to reach ``to`` (wiki/relink.py says how); the moved page's own relative
links are re-aimed from its new directory. In a repository wiki the ``index.md`` lists of the old and
the new ancestor directories are spliced as a delete and an add would (a missing one on the new side is
scaffolded). Everything is planned in memory first, then written as one redo log (wiki/redo.py): the
new page, the rewritten pages and lists, and last the removal of the old page, each file atomic; a crash
at any moment leaves every file old or new, the page at one path or both, and the next daemon finishes
the plan at start-up. The daemon re-indexes every path the move changed.

A page in a later root that links to ``from`` cannot be rewritten (writes change the first root only):
a warning names it. So does a page too large or not UTF-8, and a bare ``[[stem]]`` naming several pages.
"""

from __future__ import annotations

import logging
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from hallouminate import testing_hooks
from hallouminate.config import INDEX_END, INDEX_START, CorpusSpec
from hallouminate.errors import (
    BadEncoding,
    CallerError,
    Conflict,
    FilesystemFault,
    InvalidArgument,
    NotFound,
    TooLarge,
    UnsafePath,
)
from hallouminate.ignore import path_ignored
from hallouminate.indexing.walker import corpus_files, listed_in, matches
from hallouminate.protocol.arguments import MoveMarkdownArgs
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import (
    IndexAction,
    IndexFileAction,
    MoveMarkdownResult,
    RewrittenFile,
    WriteWarning,
)
from hallouminate.sandbox import PathMissing, is_markdown, not_found, read_file
from hallouminate.wiki import redo
from hallouminate.wiki.atomic import AlreadyExists
from hallouminate.wiki.index_lists import (
    INDEX_NAME,
    Entry,
    ancestors,
    children,
    directory_title,
    index_path,
    page_entry,
    splice,
    subdir_entry,
)
from hallouminate.wiki.index_lists import scaffold as scaffold_index
from hallouminate.wiki.journal import Journal
from hallouminate.wiki.markdown import first_h1
from hallouminate.wiki.paths import check_write_path, write_root
from hallouminate.wiki.relink import Move, relink

log = logging.getLogger("hallouminate.wiki")

WRITE_MAX_BYTES = PAGE_MAX_BYTES


@dataclass
class MoveOutcome:
    """The tool's result (re-index part empty: the daemon fills it) and the paths to re-index."""

    result: MoveMarkdownResult
    reindex: list[str]


@dataclass
class _Planned:
    step: redo.Step
    links: int = 0  # links rewritten in it


def move_markdown(spec: CorpusSpec, args: MoveMarkdownArgs, journal: Journal) -> MoveOutcome:
    source, target = args["from"], args["to"]
    try:
        return _move(spec, source, target, journal)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise FilesystemFault(
            f"could not move {source!r} to {target!r} in corpus {spec.name!r}: {exc.strerror or exc}{where}; "
            "check the permissions and free space of the corpus directory (files already written are whole; "
            "the daemon finishes the move when it next starts)",
            {"corpus": spec.name, "from": source, "to": target, "errno": exc.errno},
        ) from None


def _move(spec: CorpusSpec, source: str, target: str, journal: Journal) -> MoveOutcome:
    root = write_root(spec)
    check_write_path(spec, root, source)
    check_write_path(spec, root, target)
    for name, path in (("from", source), ("to", target)):
        if not is_markdown(path):
            raise UnsafePath(
                f"{name} {path!r} is not a Markdown page: move_markdown moves Markdown pages (.md) only",
                {"corpus": spec.name, "path": path, "param": name, "problem": "not-markdown"},
            )
    if source == target:
        raise InvalidArgument(
            f"from and to are the same path {source!r}: nothing to move; give the new path in to",
            {"corpus": spec.name, "path": source, "problem": "same-path"},
        )
    testing_hooks.write_fault_point("after-check")
    listed = corpus_files(spec)
    old_bytes, old_info = _read_source(spec, root, source, listed)
    _refuse_existing(spec, root, target)
    try:
        old_text = old_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"{source!r} is not UTF-8 text (invalid byte at offset {exc.start}): its links cannot be "
            "rewritten, so it is not moved",
            {"corpus": spec.name, "path": source, "offset": exc.start, "problem": "not-utf8"},
        ) from None

    files = {rel for rel, _ in listed}
    move = Move.of(source, target, files)
    warnings: list[WriteWarning] = []
    planned: dict[str, _Planned] = {}

    moved = relink(old_text, source, move)
    _note_ambiguous(warnings, target, moved)
    create = redo.Step("create", target, data=moved.text.encode("utf-8"))
    planned[target] = _Planned(create, moved.links)

    for rel, holder in listed:
        if rel == source or not is_markdown(rel):
            continue
        if holder != root:
            if _links_to(spec, holder, rel, move):
                warnings.append(
                    {
                        "code": "link-not-rewritten",
                        "message": f"{rel} (in a later root, {holder}) links to {source!r}; writes change the "
                        "first root only, so it still does",
                        "path": rel,
                    }
                )
            continue
        page = _relinked(root, rel, move, warnings, wiki=spec.kind == "wiki")
        if page is not None:
            planned[rel] = page

    files_after = (files - {source}) | {target}
    index_files = _plan_indexes(spec, root, source, target, files_after, planned, warnings)

    # The new page first and the old one last: a crash between leaves both, never neither.
    steps = [planned[target].step]
    steps += [p.step for rel, p in planned.items() if rel != target]
    steps.append(redo.Step("remove", source, old=redo.digest(old_bytes), expected=old_info))
    record = redo.RedoLog(journal, root, "move", steps)
    testing_hooks.write_fault_point("after-plan")
    done = _run(spec, root, steps, journal, record, warnings)

    rewritten: list[RewrittenFile] = [
        {"path": rel, "links": p.links} for rel, p in sorted(planned.items()) if p.links and rel in done
    ]
    result: MoveMarkdownResult = {
        "corpus": spec.name,
        "from": source,
        "to": target,
        "absolute_path": str(root / target),
        "rewritten": rewritten,
        "links_rewritten": sum(f["links"] for f in rewritten),
        "index_files": [f for f in index_files if f["path"] in done or f["action"] == "left-alone"],
        "warnings": warnings,
        "reindexed": [],
        "chunks_written": 0,
    }
    reindex = [source, target, *sorted(rel for rel in done if rel not in (source, target))]
    return MoveOutcome(result, reindex)


def _run(
    spec: CorpusSpec,
    root: Path,
    steps: list[redo.Step],
    journal: Journal,
    record: redo.RedoLog,
    warnings: list[WriteWarning],
) -> set[str]:
    """Run the plan; the paths written. A page changed by someone else meanwhile is left as it is."""
    done: set[str] = set()
    for step in steps:
        try:
            redo.run_step(root, step, journal)
        except AlreadyExists:
            if step.op == "create" and not done:
                record.done()  # nothing written yet: the move simply does not happen
                raise _exists(spec, step.path) from None
            warnings.append(_changed_warning(step))
            continue
        except CallerError:
            if step.op == "create" and not done:
                record.done()
                raise
            warnings.append(_changed_warning(step))
            continue
        done.add(step.path)
    record.done()
    return done


def _changed_warning(step: redo.Step) -> WriteWarning:
    if step.op == "remove":
        return {
            "code": "source-kept",
            "message": f"{step.path} changed during the move, so it was not removed: the page is at both "
            "paths now; compare them and delete the one you do not want",
            "path": step.path,
        }
    return {
        "code": "link-not-rewritten",
        "message": f"{step.path} changed during the move and was left as it is: check its links",
        "path": step.path,
    }


# -- reading -----------------------------------------------------------------------------------------------
def _read_source(
    spec: CorpusSpec, root: Path, source: str, listed: list[tuple[str, Path]]
) -> tuple[bytes, os.stat_result]:
    try:
        data, info = read_file(root, source, max_bytes=WRITE_MAX_BYTES)
    except PathMissing:
        later = next((holder for rel, holder in listed if rel == source and holder != root), None)
        if later is not None:
            raise NotFound(
                f"{source!r} is only in a later root of corpus {spec.name!r} ({later}), and writes change "
                f"the first root only ({root}): nothing was moved",
                {
                    "corpus": spec.name,
                    "path": source,
                    "later_copy": str(later / source),
                    "problem": "not-in-first-root",
                },
            ) from None
        miss = not_found(spec.name, source, (rel for rel, holder in listed if holder == root))
        raise NotFound(f"{miss.message} (nothing was moved)", {**miss.data, "problem": "missing"}) from None
    except TooLarge:
        raise TooLarge(
            f"{source!r} is larger than {WRITE_MAX_BYTES} bytes: it cannot be moved by move_markdown",
            {"corpus": spec.name, "path": source, "limit": WRITE_MAX_BYTES, "problem": "too-large"},
        ) from None
    return data, info


def _refuse_existing(spec: CorpusSpec, root: Path, target: str) -> None:
    if (root / target).exists() or (root / target).is_symlink():
        raise _exists(spec, target)
    for later in spec.roots[1:]:
        if listed_in(spec, later, target):
            raise Conflict(
                f"{target!r} already exists in corpus {spec.name!r}, as {later / target} in a later root: "
                "moving onto it would hide that page; pick another path",
                {"corpus": spec.name, "path": target, "later_copy": str(later / target), "problem": "exists"},
            )


def _exists(spec: CorpusSpec, target: str) -> Conflict:
    return Conflict(
        f"{target!r} already exists in corpus {spec.name!r}: move_markdown never replaces a page; pick another "
        "path, or delete that page first (delete_markdown) if it is meant to go",
        {"corpus": spec.name, "path": target, "problem": "exists"},
    )


def _without_list(text: str) -> str:
    start = text.find(INDEX_START)
    end = text.find(INDEX_END, start + 1) if start >= 0 else -1
    return text if end < 0 else text[:start] + text[end:]


def _relinked(
    root: Path, rel: str, move: Move, warnings: list[WriteWarning], *, wiki: bool
) -> _Planned | None:
    try:
        data, info = read_file(root, rel, max_bytes=WRITE_MAX_BYTES)
    except (CallerError, OSError):
        _unscanned(rel, move, warnings)
        return None
    if b"[" not in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _unscanned(rel, move, warnings)
        return None
    out = relink(text, rel, move)
    _note_ambiguous(warnings, rel, out)
    if out.links and wiki and posixpath.basename(rel) == INDEX_NAME:
        # The list between an index.md's markers is rebuilt from the files (_plan_indexes): only the
        # author's links outside it count as rewritten.
        out.links = relink(_without_list(text), rel, move).links
    if not out.links:
        return None
    step = redo.Step("replace", rel, old=redo.digest(data), data=out.text.encode("utf-8"), expected=info)
    return _Planned(step, out.links)


def _unscanned(rel: str, move: Move, warnings: list[WriteWarning]) -> None:
    warnings.append(
        {
            "code": "link-not-rewritten",
            "message": f"{rel} could not be scanned for links (too large, not UTF-8 or unreadable): check "
            f"whether it links to {move.source!r}",
            "path": rel,
        }
    )


def _links_to(spec: CorpusSpec, holder: Path, rel: str, move: Move) -> bool:
    try:
        data, _ = read_file(holder, rel, max_bytes=WRITE_MAX_BYTES)
        return relink(data.decode("utf-8"), rel, move).links > 0
    except (CallerError, OSError, UnicodeDecodeError):
        return False


def _note_ambiguous(warnings: list[WriteWarning], path: str, out: object) -> None:
    for line, link in getattr(out, "ambiguous", []):
        warnings.append(
            {
                "code": "ambiguous-link",
                "message": f"{link} names several pages, one of them the moved one: left as written; "
                "write the path of the page you mean",
                "path": path,
                "line": line,
            }
        )


# -- index.md lists --------------------------------------------------------------------------------------------
def _plan_indexes(
    spec: CorpusSpec,
    root: Path,
    source: str,
    target: str,
    files: set[str],
    planned: dict[str, _Planned],
    warnings: list[WriteWarning],
) -> list[IndexFileAction]:
    """Splice the lists of the old and the new ancestors' ``index.md`` (repository wikis), deepest first;
    scaffold a missing one on the new side (as add_markdown does), leave a missing one on the old side."""
    if spec.kind != "wiki":
        return []
    new_side = set(ancestors(target))
    directories = sorted(set(ancestors(source)) | new_side, key=lambda d: (-(d.count("/") + bool(d)), d))
    touched: list[IndexFileAction] = []

    def title(rel: str) -> str | None:
        data = planned[rel].step.data if rel in planned else None
        if data is not None:
            return first_h1(data.decode("utf-8", errors="replace"))
        try:
            data, _ = read_file(root, rel, max_bytes=WRITE_MAX_BYTES)
        except (CallerError, OSError):
            return None
        return first_h1(data.decode("utf-8", errors="replace"))

    for directory in directories:
        rel = index_path(directory)
        subdirs, pages = children(files, directory)
        entries: list[Entry] = [
            subdir_entry(s, index_path(s) in files, title(index_path(s)) if index_path(s) in files else None)
            for s in subdirs
        ]
        entries += [page_entry(p, title(p)) for p in pages]
        try:
            action = _plan_one(spec, root, directory, rel, entries, planned, scaffold=directory in new_side)
        except (CallerError, OSError) as exc:
            reason = exc.message if isinstance(exc, CallerError) else (exc.strerror or str(exc))
            warnings.append(
                {"code": "index-skipped", "message": f"{rel} was not updated: {reason}", "path": rel}
            )
            continue
        if action is None:
            continue
        touched.append({"path": rel, "action": action})
        if action == "scaffolded":
            files.add(rel)
    return touched


def _plan_one(
    spec: CorpusSpec,
    root: Path,
    directory: str,
    rel: str,
    entries: list[Entry],
    planned: dict[str, _Planned],
    *,
    scaffold: bool,
) -> IndexAction | None:
    if rel in planned:
        current = planned[rel]
        assert current.step.data is not None
        text = current.step.data.decode("utf-8")
    else:
        try:
            data, info = read_file(root, rel, max_bytes=WRITE_MAX_BYTES)
        except PathMissing:
            if not scaffold or not matches(spec, rel) or path_ignored(root, rel):
                return None
            body = scaffold_index(directory_title(directory, spec.repository), entries)
            planned[rel] = _Planned(redo.Step("create", rel, data=body.encode("utf-8")))
            return "scaffolded"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadEncoding(f"it is not UTF-8 (invalid byte at offset {exc.start})") from None
        current = _Planned(redo.Step("replace", rel, old=redo.digest(data), data=data, expected=info))
    new = splice(text, entries)
    if new is None:
        return "left-alone"  # no markers: the page is the author's alone
    if new == text:
        return None
    current.step.data = new.encode("utf-8")
    planned[rel] = current
    return "updated"
