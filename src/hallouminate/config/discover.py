"""Find repositories *below* a cwd that is above all of them (``~/work`` holding several checkouts).

A request made from inside a repository reads that repository's layer only (found by walking up). A
request made from above every repository (no ``.git`` and no repo layer walking up) would otherwise see
only the baseline; instead the directories below are searched for ``.hallouminate/config.toml``:

- at most ``max_depth`` levels down (1 = the cwd's children) and at most ``max_dirs`` directories;
- hidden directories are not entered (the marker ``.hallouminate`` is looked up, never walked);
- symlinked directories are not followed;
- ``.gitignore``, ``.ignore`` and ``.git/info/exclude`` are honoured (``node_modules``, build output);
- a repository found is still descended into: it may hold nested repositories of its own.

The answer depends on what was read on the way: the entries of each directory listed, the ignore files in
them, each ``.hallouminate`` directory and the ``info/exclude`` of each nested checkout. An ``observer``
is told of every directory holding one of these before it is read, so a caller can watch them and know
when the answer may have changed (the daemon's resolve cache does, see ``config/cache.py``).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Protocol

from hallouminate.config import defaults
from hallouminate.gitdirs import git_common_dir

# The hidden names that matter: the marker, and what the ignore rules need to see.
_DOT_NAMES = frozenset({".hallouminate", ".git", ".gitignore", ".ignore"})


class ScanObserver(Protocol):
    def entering(self, directory: Path) -> None:
        """``directory`` is about to be listed, or a file in it read."""


def discover_repositories(
    cwd: Path,
    max_depth: int,
    max_dirs: int = defaults.DISCOVERY_MAX_DIRS,
    observer: ScanObserver | None = None,
) -> tuple[list[Path], bool]:
    """Roots of the repositories below ``cwd`` (not ``cwd`` itself), sorted; True when cut short."""
    if max_depth <= 0:
        return [], False
    from hallouminate.ignore import IgnoreRules  # pathspec: only paid for by requests that discover

    found: list[Path] = []
    seen = 0
    # Breadth-first so that the directory cap, when hit, costs the deepest levels first.
    queue: deque[tuple[Path, str, int, IgnoreRules]] = deque([(cwd, "", 0, IgnoreRules())])
    while queue:
        directory, rel_dir, depth, rules = queue.popleft()
        seen += 1
        if seen > max_dirs:
            return sorted(found), True
        if observer is not None:
            observer.entering(directory)
        try:
            with os.scandir(directory) as it:
                entries = [e for e in it if not e.name.startswith(".") or e.name in _DOT_NAMES]
        except OSError:
            continue
        names = {e.name for e in entries}
        if depth > 0 and ".hallouminate" in names:
            if observer is not None:
                observer.entering(directory / ".hallouminate")  # its config.toml is read
            if (directory / defaults.REPO_CONFIG).is_file():
                found.append(directory)
        if depth >= max_depth:
            continue
        if observer is not None and depth > 0 and ".git" in names:
            # A nested checkout: the rules entered next read its info/exclude.
            common = git_common_dir(directory)
            if common is not None:
                observer.entering(common)
                observer.entering(common / "info")
        rules = rules.enter(rel_dir, directory, names)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            rel = rel_dir + entry.name
            if rules.ignored(rel, is_dir=True):
                continue
            queue.append((Path(entry.path), rel + "/", depth + 1, rules))
    return sorted(found), False
