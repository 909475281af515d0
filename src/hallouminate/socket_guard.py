"""Claim a listening socket (the daemon's, the warm shim host's): private directory, singleton lock,
stale-socket replacement, 0600 socket."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
from pathlib import Path

from hallouminate import xdg
from hallouminate.errors import Fault, FilesystemFault


class AlreadyRunning(Fault):
    """Another process holds the lock for this socket."""


def lock_path_for(sock: Path) -> Path:
    return sock.with_name(sock.name + ".lock")


def directory_problem(directory: Path) -> str | None:
    """Why an existing socket directory must not hold our socket (cause and fix), or None when it may.

    A check only: a directory we did not create is never chmod-ed (HALLOUMINATE_SOCKET may point into
    one of the user's own directories). The socket itself is born 0600 and the daemon checks each peer's
    uid, so a directory others may read is harmless; one they may write to is not (they could swap the
    socket), nor one owned by someone else.
    """
    try:
        info = directory.stat()
    except OSError:
        return None  # missing (created 0700 by us), or a problem the caller reports in its own words
    if info.st_uid != os.getuid():
        return (
            f"socket directory {directory} belongs to uid {info.st_uid}, not to us; "
            "set HALLOUMINATE_SOCKET to a path in a directory you own"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o002 or mode & stat.S_ISVTX:
        return (
            f"socket directory {directory} is shared (mode {oct(mode)}); "
            "set HALLOUMINATE_SOCKET to a path in a private directory"
        )
    return None


def _private_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:  # a parent is a file, no permission: say so rather than a traceback
        raise FilesystemFault(
            f"cannot create the socket directory {directory}: {exc.strerror or exc}; "
            "set HALLOUMINATE_SOCKET to a path in a private directory"
        ) from None
    problem = directory_problem(directory)
    if problem is not None:
        raise FilesystemFault(problem)


class SocketGuard:
    """Holds the lock and the listening socket for its owner's lifetime."""

    def __init__(self, path: Path | None = None, role: str = "daemon") -> None:
        self.path = path or xdg.socket_path()
        self.role = role
        self.lock_path = lock_path_for(self.path)
        self._lock_fd: int | None = None
        self.sock: socket.socket | None = None

    def acquire(self) -> socket.socket:
        _private_directory(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise AlreadyRunning(
                f"another {self.role} is already running on {self.path} (lock {self.lock_path} held by "
                f"pid {holder})"
                + ("; stop it with `hallouminate daemon stop`" if self.role == "daemon" else ""),
                {"lock": str(self.lock_path), "pid": holder},
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd
        # We hold the lock, so any socket file left here belongs to a dead daemon. Anything else is not
        # ours to delete (HALLOUMINATE_SOCKET pointed at a user's file).
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
                self.release()
                raise FilesystemFault(
                    f"{self.path} exists and is not a socket, so the {self.role} cannot listen there (it "
                    "replaces only a socket left by a dead daemon); move the file away or set "
                    "HALLOUMINATE_SOCKET to another path",
                    {"socket": str(self.path)},
                )
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the socket is born 0600: no window where others could connect
        try:
            sock.bind(str(self.path))
        except OSError as exc:
            sock.close()
            self.release()
            hint = (
                "; use a shorter HALLOUMINATE_SOCKET path (~107 bytes at most)"
                if "too long" in str(exc)
                else ""
            )
            raise FilesystemFault(f"cannot bind the {self.role} socket {self.path}: {exc}{hint}") from None
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
        self.sock = sock
        return sock

    def forget(self) -> None:
        """In a forked child: close our copies of the socket and the lock without giving them up."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def release(self) -> None:
        if self.sock is not None:
            # Unlinked while we still hold the lock, so no successor can have bound this path yet.
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self.sock.close()
            self.sock = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
