"""Crash-safe, race-checked file operations inside a corpus root, through directory descriptors.

The sandbox's ``DirChain`` opens the root and every directory down to the target's parent with
``O_DIRECTORY | O_NOFOLLOW`` relative to its parent (creating missing ones when asked), so a symlink
planted on the way is refused rather than followed; it also looks at and reads the target. Then:

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

from hallouminate import testing_hooks
from hallouminate.errors import Conflict
from hallouminate.sandbox import DirChain, changed, check_leaf
from hallouminate.wiki.journal import Journal, new_temp_name, sweep_dir_fd

# link(2) is not supported on every filesystem; these errnos mean "no hard links here".
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS, errno.EXDEV}


class AlreadyExists(Conflict):
    """The target exists as a regular file (the caller words the read-first advice)."""


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
            raise changed(path, "it was deleted by someone else during the call") from None
        moved = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
        if not _same(moved, expected):
            os.rename(
                temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd
            )  # not the file we checked: put it back
            check_leaf(path, moved.st_mode)
            raise changed(path, "it was replaced by another file during the call; nothing was deleted")
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


def _occupied(chain: DirChain, depth: int, name: str, path: str) -> Conflict:
    try:
        info = os.stat(name, dir_fd=chain.fd(depth), follow_symlinks=False)
    except OSError:
        return changed(path, "it appeared and vanished during the call; retry")
    check_leaf(path, info.st_mode)
    return AlreadyExists(f"{path!r} already exists", {"path": path, "problem": "exists"})


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
        raise changed(path, "it was deleted by someone else during the write; nothing was written") from None
    check_leaf(path, info.st_mode)
    if not _same(info, expected):
        raise changed(
            path,
            "it changed on disk during the write (another program saved it); nothing was written: read it "
            "again and retry",
        )
