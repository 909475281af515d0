"""The one rule every request's ``cwd`` obeys, checked by the shim and again by the daemon."""

from __future__ import annotations

import os
from pathlib import Path

from hallouminate.errors import InvalidParams


def canonical_cwd(cwd: object) -> Path:
    """An absolute, existing directory, with symlinks resolved; otherwise ``InvalidParams`` saying why."""
    if not isinstance(cwd, str) or not cwd:
        raise InvalidParams(
            'cwd is required: pass the absolute path of the active checkout, e.g. "/home/me/project"',
            {"field": "cwd"},
        )
    if "\x00" in cwd:
        raise InvalidParams("cwd must not contain a NUL byte", {"field": "cwd"})
    if not os.path.isabs(cwd):
        raise InvalidParams(
            f"cwd must be an absolute path, got {cwd!r}; pass the checkout's full path",
            {"field": "cwd", "cwd": cwd},
        )
    path = Path(cwd)
    if not path.exists():
        raise InvalidParams(f"cwd {cwd!r} does not exist", {"field": "cwd", "cwd": cwd})
    if not path.is_dir():
        raise InvalidParams(
            f"cwd {cwd!r} is not a directory; pass the checkout's root or a directory inside it",
            {"field": "cwd", "cwd": cwd},
        )
    return Path(os.path.realpath(path))
