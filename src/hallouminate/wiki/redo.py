"""A write of several files (``move_markdown``) as a redo log: every file old or new, nothing lost.

Each file is written atomically (wiki/atomic.py), but a move changes several: the page at its new path,
the pages linking to it, ``index.md`` lists, and the page at its old path. Before the first of them, the
whole plan (each step's path, the SHA-256 of the bytes it expects there and of those it writes, and the
new text) is written and synced under the daemon's state directory as ``<16 hex>.redo``; it is removed
once the last step is done. The steps run in an order that never loses a page: the new path is created
first and the old path removed last, so a crash between them leaves both, never neither.

A daemon killed mid-plan leaves the record; the next daemon, at start-up, before any write, runs the
plan's remaining steps (``recover``): a step whose file already holds the new bytes is done, one holding
the expected old bytes is redone, and one whose file someone changed since is left alone (logged): a
recovery never overwrites an edit it did not plan. So a move interrupted at any moment completes, and a
ground after the restart sees the page at its new path only.

Standard library and our own atomic writes only: the start-up recovery must not load the Markdown stack.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hallouminate.errors import CallerError
from hallouminate.sandbox import DirChain, PathMissing, check_relative_path
from hallouminate.wiki import atomic
from hallouminate.wiki.journal import Journal

log = logging.getLogger("hallouminate.wiki")

REDO_SUFFIX = ".redo"
StepOp = Literal["create", "replace", "remove"]


@dataclass
class Step:
    """One file of the plan: ``create`` (must be absent), ``replace`` (must hold ``old``) or ``remove``."""

    op: StepOp
    path: str
    old: str | None = None  # SHA-256 (hex) of the bytes expected there (replace, remove)
    data: bytes | None = None  # the bytes written (create, replace)
    expected: os.stat_result | None = None  # what the live run read: a change since is refused

    def record(self) -> dict[str, str | None]:
        return {
            "op": self.op,
            "path": self.path,
            "old": self.old,
            "new": digest(self.data) if self.data is not None else None,
            "text": self.data.decode("utf-8") if self.data is not None else None,
        }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RedoLog:
    """The durable record of one plan in the journal's directory."""

    def __init__(self, journal: Journal, root: Path, kind: str, steps: list[Step]) -> None:
        self.journal = journal
        directory = journal.directory
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = directory / f"{secrets.token_hex(8)}{REDO_SUFFIX}"
        body = json.dumps({"kind": kind, "root": str(root), "steps": [s.record() for s in steps]})
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(body.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(directory)

    def done(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            _fsync_dir(self.path.parent)


def run_step(root: Path, step: Step, journal: Journal) -> None:
    """Run one step live, refusing (``CallerError``) if its file is not as the plan read it."""
    segments = step.path.split("/")
    name, depth = segments[-1], len(segments) - 1
    with DirChain(root, step.path, segments[:-1], create=step.op == "create") as chain:
        if step.op == "create":
            assert step.data is not None
            atomic.create(chain, depth, name, step.data, journal, step.path)
            return
        assert step.expected is not None
        if step.op == "replace":
            assert step.data is not None
            atomic.replace(chain, depth, name, step.data, step.expected, journal, step.path)
        else:
            atomic.remove(chain, depth, name, step.expected, journal, step.path)


# -- recovery at start-up ------------------------------------------------------------------------------------
def recover(journal: Journal) -> list[str]:
    """Finish every plan a killed daemon left; the files written or removed (absolute paths)."""
    try:
        records = sorted(journal.directory.glob(f"*{REDO_SUFFIX}"))
    except OSError:
        return []
    finished: list[str] = []
    for record in records:
        try:
            plan = json.loads(record.read_text(encoding="utf-8"))
            root = Path(plan["root"])
            steps = plan["steps"]
        except (OSError, ValueError, KeyError, TypeError):
            log.error("unreadable redo record %s left by an interrupted write: removed", record)
            steps, root = [], Path()
        if steps and root.is_absolute():
            for step in steps:
                try:
                    state = _redo(root, step, journal)
                except (CallerError, OSError, KeyError, TypeError, ValueError) as exc:
                    log.error("could not finish step %s of %s: %s", step.get("path"), record.name, exc)
                    state = "skipped"
                if state == "done":
                    finished.append(str(root / str(step["path"])))
                if state == "skipped" and step.get("op") == "create":
                    # The new page is not the plan's: removing the old one would lose it. Stop here.
                    log.error("%s: %s is not the planned page; the rest is left undone", record.name, step)
                    break
        with contextlib.suppress(FileNotFoundError):
            record.unlink()
    if finished:
        log.info("finished %d file(s) of writes a killed daemon left half-done: %s", len(finished), finished)
    return finished


def _redo(root: Path, step: dict[str, str | None], journal: Journal) -> Literal["done", "already", "skipped"]:
    """Bring one file to the plan's new state if it is in the old one: "done" (changed now), "already"
    (done before the kill) or "skipped" (someone else's file there, or its directory gone)."""
    op, path = step["op"], step["path"]
    if not isinstance(path, str) or op not in ("create", "replace", "remove"):
        raise ValueError("malformed step")
    segments = check_relative_path(path)
    name, depth = segments[-1], len(segments) - 1
    text = step.get("text")
    data = text.encode("utf-8") if isinstance(text, str) else None
    try:
        chain = DirChain(root, path, segments[:-1], create=op == "create")
    except PathMissing:
        return "skipped"  # a replace or remove whose directory is gone
    with chain:
        info = chain.look(depth, name, path)
        if info is None:
            if op == "create" and data is not None:
                atomic.create(chain, depth, name, data, journal, path)
                return "done"
            return "already" if op == "remove" else "skipped"
        current, info = chain.read(depth, name, path, None)
        held = digest(current or b"")
        if held == step.get("new"):
            return "already"
        if held != step.get("old"):
            log.warning("%s changed since the interrupted write planned it: left as it is", root / path)
            return "skipped"
        if op == "replace" and data is not None:
            atomic.replace(chain, depth, name, data, info, journal, path)
            return "done"
        if op == "remove":
            atomic.remove(chain, depth, name, info, journal, path)
            return "done"
    return "skipped"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
