"""The sandbox's refusals: one error per problem, for reads, writes and the indexer alike.

Every refusal is a caller error (-32602), an ``UnsafePath`` but for a miss (``NotFound``) and a path
changed under a write (``Conflict``), whose message names the problem and the fix, never a byte of a
file, and whose ``data.problem`` names it for machines (``symlink``, ``dot-dot``, ``not-a-file``, ...;
the list is in docs/tools/read_markdown.md). The write tools add their own rules (``git-dir``,
``reserved``, ...) with the same ``refuse``.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from hallouminate.errors import Conflict, NotFound, UnsafePath

EXAMPLE = "pass a path relative to the corpus root with '/' separators, e.g. 'guides/setup.md'"
SYMLINK_FIX = "hallouminate does not follow symlinks inside a corpus (one could lead outside it)"
# A miss lists at most this many entries of the nearest directory and this many close file names.
MISS_ENTRIES = 20
MISS_CLOSEST = 3


class PathMissing(NotFound):
    """The path is safe but does not exist; ``existing`` leading segments do (as directories)."""

    def __init__(self, root: Path, rel: str, existing: int) -> None:
        super().__init__(f"{rel!r} does not exist", {"path": rel})
        self.root = root
        self.rel = rel
        self.existing = existing


def refuse(path: str, problem: str, code: str) -> UnsafePath:
    """The refusal of ``path``: ``problem`` says what is wrong and how to fix it, ``code`` names it."""
    return UnsafePath(f"unsafe path {_quoted(path)}: {problem}", {"path": path, "problem": code})


def changed(path: str, problem: str) -> Conflict:
    """``path`` (or a directory on its way) changed under a write, which was therefore not done:
    ``data.problem`` is ``changed``, the message reads as every other refusal's."""
    return Conflict(f"unsafe path {_quoted(path)}: {problem}", {"path": path, "problem": "changed"})


def _quoted(path: str) -> str:
    # A path of thousands of characters is quoted by its start and length: the message stays readable.
    return repr(path) if len(path) <= 200 else f"{path[:200]!r}... ({len(path)} characters)"


def unreadable(path: str, exc: OSError, what: str = "open", *, shown: str | None = None) -> UnsafePath:
    """``path`` (or ``shown``, a leading part of it) cannot be looked at for a reason of the filesystem
    (permissions, I/O): not the path's fault, but nothing to read either."""
    return UnsafePath(
        f"cannot {what} {shown or path!r}: {exc.strerror or exc}", {"path": path, "problem": "unreadable"}
    )


def symlink(path: str, shown: str | None = None) -> UnsafePath:
    """``shown`` (a leading part of ``path``, or the whole of it when None) is a symbolic link."""
    where = "it is" if shown is None else f"{shown!r} is"
    return refuse(path, f"{where} a symbolic link; {SYMLINK_FIX}", "symlink")


def check_leaf(path: str, mode: int) -> None:
    """Refuse a leaf (given its ``st_mode``) that is a symlink, a directory or not a regular file."""
    if stat.S_ISLNK(mode):
        raise symlink(path)
    if stat.S_ISDIR(mode):
        raise refuse(path, "it is a directory; name a file inside it (list_tree shows them)", "directory")
    if not stat.S_ISREG(mode):
        raise refuse(path, "it is not a regular file", "not-a-file")


def open_refusal(path: str, shown: str, dir_fd: int, name: str, exc: OSError) -> UnsafePath | None:
    """The refusal for a failed no-follow open of ``name`` (``shown`` in ``path``) in ``dir_fd``: a
    symlink or a non-directory on the way; None when the failure is the filesystem's, not the path's."""
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link or exc.errno == errno.ELOOP:
        return symlink(path, shown)
    if exc.errno == errno.ENOTDIR:
        return refuse(path, f"{shown!r} is not a directory", "not-a-directory")
    return None


def not_found(corpus: str, path: str, files: Iterable[str]) -> NotFound:
    """``path`` is no file of ``corpus``, whose files are ``files``: name the nearest directory's entries
    and the closest file names, so the caller can fix a typo in one step."""
    listed = list(files)
    parts = path.split("/")
    directories = {str(PurePosixPath(rel).parent) for rel in listed}
    directories = {"" if d == "." else d for d in directories}
    # The deepest existing ancestor, judged on the corpus' own files (what list_tree would show).
    nearest = ""
    for depth in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:depth])
        if any(d == candidate or d.startswith(candidate + "/") for d in directories):
            nearest = candidate
            break
    entries = _entries(listed, nearest)
    closest = _closest(path, listed)
    where = f"directory {nearest!r}" if nearest else "the corpus root"
    shown = ", ".join(entries[:MISS_ENTRIES]) or "nothing"
    more = f" (and {len(entries) - MISS_ENTRIES} more)" if len(entries) > MISS_ENTRIES else ""
    hint = f" Closest file names: {', '.join(closest)}." if closest else ""
    return NotFound(
        f"{path!r} does not exist in corpus {corpus!r}. {where[0].upper()}{where[1:]} holds: "
        f"{shown}{more}.{hint}",
        {
            "corpus": corpus,
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
