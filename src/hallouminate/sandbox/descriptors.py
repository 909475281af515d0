"""Open a corpus path directory by directory, never following a link: the sandbox's third layer.

A ``DirChain`` opens the root and every directory down to a file's parent with
``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's descriptor (openat), creating missing ones when
asked, so a symlink on the way is refused rather than followed, even one swapped in after
``resolve_inside`` checked the path. The leaf is looked at with ``fstatat(AT_SYMLINK_NOFOLLOW)`` before
it is opened (a FIFO or a device is never opened) and opened with ``O_NOFOLLOW``, then ``fstat``ed again.

Reads (``read_file``: ``read_markdown``, ``backlinks``, the indexer) and writes
(``hallouminate.wiki.atomic``) share it; ``verify`` lets a write check, right before it publishes, that
every directory is still the one opened. ``walk_tree`` lists a whole tree the same way (the corpus walk).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hallouminate.errors import TooLarge, UnsafePath
from hallouminate.sandbox.paths import check_relative_path
from hallouminate.sandbox.refusals import (
    SYMLINK_FIX,
    PathMissing,
    changed,
    check_leaf,
    open_refusal,
    refuse,
    symlink,
    unreadable,
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: should the leaf become a FIFO between the look and the open, the open does not hang.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class DirChain:
    """Descriptors of ``root`` and of each of ``dirs`` below it; ``fd(depth)`` is ``root/dirs[:depth]``.

    ``path`` is the caller's corpus-relative path, for messages. Refusals: ``PathMissing`` for a missing
    directory (without ``create``), ``symlink``, ``not-a-directory``, ``unreadable``. A chain that fails
    to open, or is left by an exception, removes the directories it created.
    """

    def __init__(self, root: Path, path: str, dirs: list[str], *, create: bool) -> None:
        self.root = root
        self.path = path
        self.dirs = dirs
        self.fds: list[int] = []
        self.ids: list[tuple[int, int]] = []
        self.created: list[int] = []  # depths (1-based) of the directories this chain made
        try:
            self._open(create)
        except BaseException:
            self.close(remove_created=True)
            raise

    def _open(self, create: bool) -> None:
        self._push(os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        for index, name in enumerate(self.dirs):
            parent = self.fds[-1]
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    raise PathMissing(self.root, self.path, index) from None
                with contextlib.suppress(FileExistsError):  # made meanwhile: the open below judges it
                    os.mkdir(name, 0o777, dir_fd=parent)
                    self.created.append(index + 1)
                    os.fsync(parent)
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
                except OSError as exc:
                    raise self._refusal(index, parent, exc) from None
            except OSError as exc:
                raise self._refusal(index, parent, exc) from None
            self._push(fd)

    def _push(self, fd: int) -> None:
        self.fds.append(fd)
        info = os.fstat(fd)
        self.ids.append((info.st_dev, info.st_ino))

    def _refusal(self, index: int, parent: int, exc: OSError) -> UnsafePath:
        shown = "/".join(self.dirs[: index + 1])
        refusal = open_refusal(self.path, shown, parent, self.dirs[index], exc)
        return refusal if refusal is not None else unreadable(self.path, exc, shown=shown)

    def fd(self, depth: int) -> int:
        return self.fds[depth]

    def dir_path(self, depth: int) -> str:
        return str(self.root.joinpath(*self.dirs[:depth]))

    def look(self, depth: int, name: str, path: str) -> os.stat_result | None:
        """``lstat`` of ``name`` at ``depth`` if it is a regular file, None if absent; refused otherwise.

        ``path`` is the file's corpus-relative path, for messages. Other OS errors propagate.
        """
        try:
            info = os.stat(name, dir_fd=self.fds[depth], follow_symlinks=False)
        except FileNotFoundError:
            return None
        check_leaf(path, info.st_mode)
        return info

    def read(
        self, depth: int, name: str, path: str, max_bytes: int | None
    ) -> tuple[bytes | None, os.stat_result]:
        """The bytes of the regular file ``name`` at ``depth`` (None past ``max_bytes``) and the ``fstat``
        they were read under. ``PathMissing`` if it is gone, refused if it is (now) not a regular file;
        other OS errors propagate. Call ``look`` first: it keeps a FIFO from being opened at all."""
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self.fds[depth])
        except FileNotFoundError:
            raise PathMissing(self.root, path, depth) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link swapped in since the look
                raise symlink(path) from None
            raise
        try:
            info = os.fstat(fd)
            check_leaf(path, info.st_mode)  # the file might have been swapped since the look
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, 1 << 20):
                total += len(chunk)
                # Checked while reading, not from fstat alone: the file may grow between the two.
                if max_bytes is not None and total > max_bytes:
                    return None, info
                chunks.append(chunk)
            return b"".join(chunks), info
        finally:
            os.close(fd)

    def verify(self, depth: int) -> None:
        """Refuse if the root or a directory down to ``depth`` is no longer the one opened."""
        try:
            info = os.stat(self.root)
        except OSError:
            info = None
        if info is None or (info.st_dev, info.st_ino) != self.ids[0]:
            raise changed(self.path, "the corpus root was moved or replaced during the write")
        for index in range(depth):
            shown = "/".join(self.dirs[: index + 1])
            try:
                info = os.stat(self.dirs[index], dir_fd=self.fds[index], follow_symlinks=False)
            except OSError:
                raise changed(self.path, f"{shown!r} disappeared during the write") from None
            if stat.S_ISLNK(info.st_mode):
                raise refuse(
                    self.path,
                    f"{shown!r} became a symbolic link during the write; {SYMLINK_FIX}",
                    "symlink",
                )
            if (info.st_dev, info.st_ino) != self.ids[index + 1]:
                raise changed(self.path, f"{shown!r} was replaced during the write")

    def close(self, *, remove_created: bool = False) -> None:
        if remove_created:
            # Leave no trace of a refused write: the directories it made, deepest first, if still empty.
            for depth in reversed(self.created):
                if depth <= len(self.fds):
                    with contextlib.suppress(OSError):
                        os.rmdir(self.dirs[depth - 1], dir_fd=self.fds[depth - 1])
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []

    def __enter__(self) -> DirChain:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.close(remove_created=exc is not None)


def read_file(root: Path, rel: str, *, max_bytes: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``root/rel`` and its ``fstat``, opened without following a link.

    Raises ``PathMissing`` when a segment is gone, ``UnsafePath`` for a symlink, a non-directory on
    the way, a leaf that is not a regular file, or one the filesystem will not let us read
    (``unreadable``), and ``TooLarge`` for a file larger than ``max_bytes`` (``data.limit``).
    """
    segments = check_relative_path(rel)
    depth, name = len(segments) - 1, segments[-1]
    with DirChain(root, rel, segments[:-1], create=False) as chain:
        try:
            if chain.look(depth, name, rel) is None:
                raise PathMissing(root, rel, depth)
            data, info = chain.read(depth, name, rel, max_bytes)
        except OSError as exc:
            raise unreadable(rel, exc) from None
    if data is None:
        raise TooLarge(
            f"{rel!r} is larger than the {max_bytes}-byte read limit", {"path": rel, "limit": max_bytes}
        )
    return data, info


def open_for_read(root: Path, rel: str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file ``root/rel`` (``read_file`` without the stat)."""
    return read_file(root, rel, max_bytes=max_bytes)[0]


@dataclass
class Listing:
    """One directory of a ``walk_tree``: its entries, and the subdirectories the caller wants walked.

    ``rel_dir`` is "" for the root, else root-relative with a trailing "/"; ``path`` is ``root/rel_dir``
    (for messages and for files read by name, such as ignore files). The caller appends to ``descend``
    the names of the subdirectories to walk into: only those are opened.
    """

    rel_dir: str
    path: Path
    entries: list[os.DirEntry[str]]
    descend: list[str] = field(default_factory=list)


def walk_tree(root: Path) -> Iterator[Listing]:
    """Every directory under ``root`` the caller descends into, depth first, each opened with
    ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent and listed through its descriptor.

    A directory swapped for a symlink after its parent was listed is not followed (its open fails with
    ``ELOOP``) and is skipped, like one that is gone or unreadable. Entries are classified without
    following links (``DirEntry.is_dir(follow_symlinks=False)`` and friends). At most one descriptor per
    level of the current path is open, whatever the width of the tree.
    """
    stack: list[tuple[int, str, list[str]]] = []  # (descriptor, rel_dir, subdirectories left to walk)
    try:
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return
        rel_dir = ""
        while True:
            try:
                with os.scandir(fd) as it:
                    entries = list(it)
            except OSError:
                # An unreadable directory is skipped, not fatal: the rest of the tree is still walked.
                os.close(fd)
            else:
                listing = Listing(rel_dir, root / rel_dir if rel_dir else root, entries)
                stack.append((fd, rel_dir, listing.descend))
                yield listing
            fd = -1
            while fd < 0:
                while stack and not stack[-1][2]:
                    os.close(stack.pop()[0])
                if not stack:
                    return
                parent, parent_rel, names = stack[-1]
                name = names.pop()
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
                except OSError:
                    continue  # gone, unreadable, or a symlink swapped in since the listing
                rel_dir = f"{parent_rel}{name}/"
    finally:
        for held, _, _ in stack:
            with contextlib.suppress(OSError):
                os.close(held)
