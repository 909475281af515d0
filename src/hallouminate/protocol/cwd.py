"""The one rule every request's ``cwd`` obeys, checked by the shim and again by the daemon."""

from __future__ import annotations

import os
from pathlib import Path

from hallouminate.errors import InvalidArgument
from hallouminate.protocol.limits import PATH_MAX_BYTES

# No longer path can name a directory, and the check must not cost more than a stat.
MAX_CWD_BYTES = PATH_MAX_BYTES


def _shown(cwd: str) -> str:
    # Error messages quote cwd, but never a megabyte of it.
    return repr(cwd) if len(cwd) <= 200 else f"{cwd[:200]!r}... ({len(cwd)} characters)"


def canonical_cwd(cwd: object) -> Path:
    """An absolute, existing directory, with symlinks resolved; otherwise ``InvalidArgument`` saying why."""
    if not isinstance(cwd, str) or not cwd:
        raise InvalidArgument(
            'cwd is required: pass the absolute path of the active checkout, e.g. "/home/me/project"',
            {"field": "cwd"},
        )
    if "\x00" in cwd:
        raise InvalidArgument("cwd must not contain a NUL byte", {"field": "cwd"})
    size = len(cwd.encode("utf-8", "surrogatepass"))
    if size > MAX_CWD_BYTES:
        raise InvalidArgument(
            f"cwd is {size} bytes long, more than the {MAX_CWD_BYTES}-byte path limit; pass the checkout's "
            "full path",
            {"field": "cwd", "limit": MAX_CWD_BYTES},
        )
    if not os.path.isabs(cwd):
        raise InvalidArgument(
            f"cwd must be an absolute path, got {_shown(cwd)}; pass the checkout's full path",
            {"field": "cwd", "cwd": cwd},
        )
    path = Path(cwd)
    try:
        if not path.exists():
            raise InvalidArgument(f"cwd {_shown(cwd)} does not exist", {"field": "cwd", "cwd": cwd})
        if not path.is_dir():
            raise InvalidArgument(
                f"cwd {_shown(cwd)} is not a directory; pass the checkout's root or a directory inside it",
                {"field": "cwd", "cwd": cwd},
            )
        return Path(os.path.realpath(path))
    except OSError as exc:
        # A segment over 255 bytes (ENAMETOOLONG), a symlink loop, no permission: the caller's path is
        # unusable, which is invalid_params, not a fault of ours (it was a raw OSError, -32603).
        raise InvalidArgument(
            f"cwd {_shown(cwd)} cannot be used: {exc.strerror or exc}; pass the checkout's full path",
            {"field": "cwd", "cwd": cwd},
        ) from None
