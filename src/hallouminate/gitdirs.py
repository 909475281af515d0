"""Where a checkout's git directories are, read from the filesystem (no git process, no dependency).

A leaf module: ``config`` (worktree handling, discovery) and ``ignore`` (``info/exclude``) both use it.
"""

from __future__ import annotations

import os
from pathlib import Path


def checkout_root(path: Path) -> Path | None:
    """The nearest directory at or above ``path`` holding ``.git`` (a directory, or a worktree's file)."""
    for directory in (path, *path.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def git_dir(checkout: Path) -> Path | None:
    """The checkout's own git dir: ``.git`` itself, or where a linked worktree's ``.git`` file points."""
    dot_git = checkout / ".git"
    try:
        if dot_git.is_dir():
            return dot_git
        # A linked worktree (or a submodule) has a `.git` file: "gitdir: /main/.git/worktrees/NAME".
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else checkout / target


def git_common_dir(checkout: Path) -> Path | None:
    """The git dir shared by every worktree of the checkout's repository (canonical), or None."""
    own = git_dir(checkout)
    if own is None:
        return None
    try:
        common = (own / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return Path(os.path.realpath(own))
    return Path(os.path.realpath(common if os.path.isabs(common) else own / common))
