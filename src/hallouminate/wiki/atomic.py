"""Crash-safe, race-checked file operations inside a corpus root, through directory descriptors.

A ``DirChain`` opens the root and every directory down to the target's parent with
``O_DIRECTORY | O_NOFOLLOW`` relative to its parent (creating missing ones when asked), so a symlink
planted on the way is refused rather than followed. Then:

- ``create``: bytes go to a temp file in the same directory, synced, then hard-linked to the target name,
  which fails if anything (a file, a symlink) is there already: an exclusive create that never shows a
  partial file;
- ``replace``: temp file, sync, the old file's mode, then ``rename`` over the target, then the directory
  is synced;
- ``remove``: the target is renamed to a temp name, checked to be the file that was looked at, unlinked.

Right before publishing, the chain and the target are checked again: each directory must still be the
one opened (same device and inode, not a symlink), and the target the very file read (same inode, size,
mtime). A swap made after the path was checked is refused. Only a swap landing in the microseconds
between that last check and the publish is not: even then ``rename``, ``link`` and ``unlink`` act on
directory entries and never follow a link, and the chain holds the checked directories themselves, so the
write lands in the very directory that was checked (wherever someone moved it), never through a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from hallouminate import testing_hooks
from hallouminate.errors import InvalidParams
from hallouminate.sandbox import PathMissing
from hallouminate.wiki.journal import Journal, new_temp_name, sweep_dir_fd
from hallouminate.wiki.paths import refuse

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SYMLINK_FIX = "hallouminate does not follow symlinks inside a corpus (one could lead outside it)"
# link(2) is not supported on every filesystem; these errnos mean "no hard links here".
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS, errno.EXDEV}


class AlreadyExists(InvalidParams):
    """The target exists as a regular file (the caller words the read-first advice)."""


class DirChain:
    """Descriptors of ``root`` and of each of ``dirs`` below it; ``fd(depth)`` is ``root/dirs[:depth]``."""

    def __init__(self, root: Path, path: str, dirs: list[str], *, create: bool) -> None:
        self.root = root
        self.path = path  # the caller's path, for messages
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
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._push(fd)
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

    def _refusal(self, index: int, parent: int, exc: OSError) -> InvalidParams:
        shown = "/".join(self.dirs[: index + 1])
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.stat(self.dirs[index], dir_fd=parent, follow_symlinks=False).st_mode):
                return refuse(self.path, f"{shown!r} is a symbolic link; {_SYMLINK_FIX}", "symlink")
        if exc.errno == errno.ELOOP:
            return refuse(self.path, f"{shown!r} is a symbolic link; {_SYMLINK_FIX}", "symlink")
        if exc.errno == errno.ENOTDIR:
            return refuse(self.path, f"{shown!r} is not a directory", "not-a-directory")
        return InvalidParams(
            f"cannot open {shown!r} in the corpus: {exc.strerror or exc}",
            {"path": self.path, "problem": "unreadable"},
        )

    def fd(self, depth: int) -> int:
        return self.fds[depth]

    def dir_path(self, depth: int) -> str:
        return str(self.root.joinpath(*self.dirs[:depth]))

    def verify(self, depth: int) -> None:
        """Refuse if the root or a directory down to ``depth`` is no longer the one opened."""
        try:
            info = os.stat(self.root)
        except OSError:
            info = None
        if info is None or (info.st_dev, info.st_ino) != self.ids[0]:
            raise refuse(self.path, "the corpus root was moved or replaced during the write", "changed")
        for index in range(depth):
            shown = "/".join(self.dirs[: index + 1])
            try:
                info = os.stat(self.dirs[index], dir_fd=self.fds[index], follow_symlinks=False)
            except OSError:
                raise refuse(self.path, f"{shown!r} disappeared during the write", "changed") from None
            if stat.S_ISLNK(info.st_mode):
                raise refuse(
                    self.path, f"{shown!r} became a symbolic link during the write; {_SYMLINK_FIX}", "symlink"
                )
            if (info.st_dev, info.st_ino) != self.ids[index + 1]:
                raise refuse(self.path, f"{shown!r} was replaced during the write", "changed")

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


def look(chain: DirChain, depth: int, name: str, path: str) -> os.stat_result | None:
    """The target's ``lstat`` if it is a regular file, None if absent; a refusal for anything else."""
    try:
        info = os.stat(name, dir_fd=chain.fd(depth), follow_symlinks=False)
    except FileNotFoundError:
        return None
    _check_leaf(info, path)
    return info


def read(
    chain: DirChain, depth: int, name: str, path: str, max_bytes: int
) -> tuple[bytes | None, os.stat_result]:
    """The target's bytes (None past ``max_bytes``) and the ``fstat`` they were read under."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=chain.fd(depth))
    try:
        info = os.fstat(fd)
        _check_leaf(info, path)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > max_bytes:
                return None, info
            chunks.append(chunk)
        return b"".join(chunks), info
    finally:
        os.close(fd)


def create(chain: DirChain, depth: int, name: str, data: bytes, journal: Journal, path: str) -> None:
    """Publish ``data`` as the new file ``name``: whole or not at all, never over an existing entry."""
    dir_fd = chain.fd(depth)
    with _staged(chain, depth, data, None, journal) as temp:
        chain.verify(depth)
        try:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            raise _occupied(chain, depth, name, path) from None
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            _reserve(chain, depth, name, path)  # no hard links on this filesystem
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        testing_hooks.write_fault_point("after-publish")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
        os.fsync(dir_fd)


def replace(
    chain: DirChain, depth: int, name: str, data: bytes, expected: os.stat_result, journal: Journal, path: str
) -> None:
    """Replace the file ``expected`` describes with ``data``, keeping its mode; refuse if it changed."""
    dir_fd = chain.fd(depth)
    with _staged(chain, depth, data, stat.S_IMODE(expected.st_mode), journal) as temp:
        chain.verify(depth)
        _check_same(chain, depth, name, expected, path)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        testing_hooks.write_fault_point("after-publish")
        os.fsync(dir_fd)


def remove(
    chain: DirChain, depth: int, name: str, expected: os.stat_result, journal: Journal, path: str
) -> None:
    """Unlink the regular file ``expected`` describes; refuse (and put back) anything else found there."""
    dir_fd = chain.fd(depth)
    chain.verify(depth)
    record = journal.begin(chain.dir_path(depth))
    temp = new_temp_name()
    try:
        try:
            os.rename(name, temp, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except FileNotFoundError:
            raise refuse(path, "it was deleted by someone else during the call", "changed") from None
        moved = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
        if not _same(moved, expected):
            os.rename(
                temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd
            )  # not the file we checked: put it back
            _check_leaf(moved, path)
            raise refuse(
                path, "it was replaced by another file during the call; nothing was deleted", "changed"
            )
        testing_hooks.write_fault_point("after-publish")
        os.unlink(temp, dir_fd=dir_fd)
        os.fsync(dir_fd)
    finally:
        journal.end(record)


# -- helpers -----------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _staged(chain: DirChain, depth: int, data: bytes, mode: int | None, journal: Journal) -> Iterator[str]:
    """A synced temp file holding ``data`` next to the target; removed unless published."""
    dir_fd = chain.fd(depth)
    sweep_dir_fd(dir_fd)
    record = journal.begin(chain.dir_path(depth))
    temp = new_temp_name()
    try:
        fd = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd
        )
        try:
            half = len(data) // 2
            _write_all(fd, data[:half])
            testing_hooks.write_fault_point("temp-half-written")
            _write_all(fd, data[half:])
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        testing_hooks.write_fault_point("after-fsync")
        yield temp
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
        journal.end(record)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _reserve(chain: DirChain, depth: int, name: str, path: str) -> None:
    try:
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o666,
            dir_fd=chain.fd(depth),
        )
    except FileExistsError:
        raise _occupied(chain, depth, name, path) from None
    os.close(fd)


def _occupied(chain: DirChain, depth: int, name: str, path: str) -> InvalidParams:
    try:
        info = os.stat(name, dir_fd=chain.fd(depth), follow_symlinks=False)
    except OSError:
        return refuse(path, "it appeared and vanished during the call; retry", "changed")
    _check_leaf(info, path)
    return AlreadyExists(f"{path!r} already exists", {"path": path, "problem": "exists"})


def _check_leaf(info: os.stat_result, path: str) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise refuse(path, f"it is a symbolic link; {_SYMLINK_FIX}", "symlink")
    if stat.S_ISDIR(info.st_mode):
        raise refuse(path, "it is a directory; name a file inside it", "directory")
    if not stat.S_ISREG(info.st_mode):
        raise refuse(path, "it is not a regular file", "not-a-file")


def _same(info: os.stat_result, expected: os.stat_result) -> bool:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == (
        expected.st_dev,
        expected.st_ino,
        expected.st_size,
        expected.st_mtime_ns,
    )


def _check_same(chain: DirChain, depth: int, name: str, expected: os.stat_result, path: str) -> None:
    try:
        info = os.stat(name, dir_fd=chain.fd(depth), follow_symlinks=False)
    except FileNotFoundError:
        raise refuse(
            path, "it was deleted by someone else during the write; nothing was written", "changed"
        ) from None
    _check_leaf(info, path)
    if not _same(info, expected):
        raise refuse(
            path,
            "it changed on disk during the write (another program saved it); nothing was written: read it "
            "again and retry",
            "changed",
        )
