"""Validate corpus-relative paths, resolve them under a root without symlinks, and read race-free.

Three layers, cheapest first, each refusing with ``InvalidParams`` (-32602) and a message that names the
problem and the fix, never file contents:

1. ``check_relative_path`` looks at the string only (absolute, empty, ``.``/``..``/empty segments, NUL,
   backslash, control characters, length);
2. ``resolve_inside`` walks the segments from the root with ``lstat`` and refuses any symlink on the way,
   before anything is opened;
3. ``open_for_read`` opens every directory with ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's
   descriptor (openat) and the file with ``O_NOFOLLOW``, so a symlink swapped in after the check is still
   refused.

The root itself is trusted: it comes from the configuration, already made canonical.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from pathlib import Path

from hallouminate.errors import InvalidParams

MAX_SEGMENT_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_BYTES = 4096  # PATH_MAX on Linux

_EXAMPLE = "pass a path relative to the corpus root with '/' separators, e.g. 'guides/setup.md'"
_SYMLINK_FIX = "hallouminate does not follow symlinks inside a corpus (one could lead outside it)"


class PathMissing(InvalidParams):
    """The path is safe but does not exist; ``existing`` leading segments do (as directories)."""

    def __init__(self, root: Path, rel: str, existing: int) -> None:
        super().__init__(f"{rel!r} does not exist", {"path": rel})
        self.root = root
        self.rel = rel
        self.existing = existing


def _refuse(path: str, problem: str, code: str) -> InvalidParams:
    # A path of thousands of characters is quoted by its start and length: the message stays readable.
    shown = repr(path) if len(path) <= 200 else f"{path[:200]!r}... ({len(path)} characters)"
    return InvalidParams(f"unsafe path {shown}: {problem}", {"path": path, "problem": code})


def check_relative_path(path: str) -> list[str]:
    """The segments of a safe corpus-relative path; ``InvalidParams`` naming the problem otherwise."""
    if not isinstance(path, str):
        raise InvalidParams(f"path must be a string, got {type(path).__name__}; {_EXAMPLE}", {"path": None})
    if path == "":
        raise _refuse(path, f"it is empty; {_EXAMPLE}", "empty")
    if "\0" in path:
        raise _refuse(path, f"it contains a NUL character; {_EXAMPLE}", "nul")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise _refuse(path, "it is not valid UTF-8 (it holds a lone surrogate)", "encoding") from None
    if path.startswith("/"):
        raise _refuse(path, f"it is absolute; {_EXAMPLE} (list_files shows them)", "absolute")
    if "\\" in path:
        raise _refuse(path, "it contains a backslash; separate directories with '/'", "backslash")
    if any(unicodedata.category(c) == "Cc" for c in path):
        raise _refuse(path, "it contains a control character (tab, newline, escape, ...)", "control")
    if size > MAX_PATH_BYTES:
        raise _refuse(path, f"it is {size} bytes long, more than the {MAX_PATH_BYTES}-byte limit", "too-long")
    segments = path.split("/")
    for segment in segments:
        if segment == "":
            raise _refuse(
                path, f"it has an empty segment ('//' or a trailing '/'); {_EXAMPLE}", "empty-segment"
            )
        if segment == ".":
            raise _refuse(path, f"it has a '.' segment; drop it and {_EXAMPLE}", "dot-segment")
        if segment == "..":
            raise _refuse(path, "it has a '..' segment; paths may not leave the corpus root", "dot-dot")
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise _refuse(
                path, f"a segment is longer than the {MAX_SEGMENT_BYTES}-byte file name limit", "too-long"
            )
    return segments


def resolve_inside(root: Path, rel: str, *, must_exist: bool) -> Path:
    """``root/rel``, refusing a symlink anywhere on the way (intermediate or leaf) and any escape.

    With ``must_exist`` a missing segment raises ``PathMissing``; without, the rest of the path may be
    missing (a file about to be written). An existing non-directory in the middle is refused.
    """
    segments = check_relative_path(rel)
    current = root
    for index, segment in enumerate(segments):
        current = current / segment
        shown = "/".join(segments[: index + 1])
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if must_exist:
                raise PathMissing(root, rel, index) from None
            break
        except NotADirectoryError:
            raise _refuse(rel, f"{segments[index - 1]!r} is not a directory", "not-a-directory") from None
        except OSError as exc:
            raise InvalidParams(
                f"cannot check {rel!r}: {exc.strerror or exc}", {"path": rel, "problem": "unreadable"}
            ) from None
        if stat.S_ISLNK(info.st_mode):
            raise _refuse(rel, f"{shown!r} is a symbolic link; {_SYMLINK_FIX}", "symlink")
        if index < len(segments) - 1 and not stat.S_ISDIR(info.st_mode):
            raise _refuse(rel, f"{shown!r} is not a directory", "not-a-directory")
    target = root.joinpath(*segments)
    # Belt and braces: with no '..' and no symlink the target cannot escape, but say so explicitly.
    if os.path.commonpath([str(root), str(target)]) != str(root):
        raise _refuse(rel, "it leads outside the corpus root", "escape")
    return target


def open_for_read(root: Path, rel: str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file ``root/rel``, opened component by component without following links.

    Raises ``PathMissing`` when a segment is gone, ``InvalidParams`` for a symlink, a non-directory on the
    way, a leaf that is not a regular file, or a file larger than ``max_bytes``.
    """
    segments = check_relative_path(rel)
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, segment in enumerate(segments[:-1]):
            try:
                child = os.open(segment, dir_flags, dir_fd=fd)
            except OSError as exc:
                raise _classify(root, rel, segments, index, fd, exc) from None
            os.close(fd)
            fd = child
        leaf = len(segments) - 1
        # Look before opening: opening a FIFO or a device can block or have side effects.
        try:
            info = os.stat(segments[leaf], dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            raise _classify(root, rel, segments, leaf, fd, exc) from None
        _check_leaf(rel, info.st_mode)
        try:
            file_fd = os.open(
                segments[leaf], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd
            )
        except OSError as exc:
            raise _classify(root, rel, segments, leaf, fd, exc) from None
        try:
            _check_leaf(rel, os.fstat(file_fd).st_mode)  # the file might have been swapped since the stat
            return _read_all(file_fd, rel, max_bytes)
        finally:
            os.close(file_fd)
    finally:
        os.close(fd)


def check_leaf(rel: str, mode: int) -> None:
    """Refuse a leaf (given its ``st_mode``) that is a symlink, a directory or not a regular file."""
    _check_leaf(rel, mode)


def _check_leaf(rel: str, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise _refuse(rel, f"it is a symbolic link; {_SYMLINK_FIX}", "symlink")
    if stat.S_ISDIR(mode):
        raise _refuse(rel, "it is a directory; list_tree shows what it holds", "directory")
    if not stat.S_ISREG(mode):
        raise _refuse(rel, "it is not a regular file", "not-a-file")


def _read_all(fd: int, rel: str, max_bytes: int | None) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        # Checked while reading, not from fstat alone: the file may grow between the two.
        if max_bytes is not None and total > max_bytes:
            raise InvalidParams(
                f"{rel!r} is larger than the {max_bytes}-byte read limit", {"path": rel, "limit": max_bytes}
            )
        chunks.append(chunk)


def _classify(
    root: Path, rel: str, segments: list[str], index: int, dir_fd: int, exc: OSError
) -> InvalidParams:
    """Turn a failed open of ``segments[index]`` (relative to ``dir_fd``) into the caller's error."""
    shown = "/".join(segments[: index + 1])
    if exc.errno == errno.ENOENT:
        return PathMissing(root, rel, index)
    try:
        info = os.stat(segments[index], dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        info = None
    if exc.errno == errno.ELOOP or (info is not None and stat.S_ISLNK(info.st_mode)):
        return _refuse(rel, f"{shown!r} is a symbolic link; {_SYMLINK_FIX}", "symlink")
    if exc.errno == errno.ENOTDIR:
        return _refuse(rel, f"{shown!r} is not a directory", "not-a-directory")
    return InvalidParams(
        f"cannot open {rel!r}: {exc.strerror or exc}", {"path": rel, "problem": "unreadable"}
    )
