"""List the files of a corpus: under each root, matching its globs, not excluded.

Patterns use gitignore semantics (``**/*.md``, ``guides/**/*.md``, ``drafts/``) relative to each root,
never to the process cwd or ``/``. Symlinks are not followed (a link could lead out of the corpus or
into a loop) and ``.git`` directories are skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from hallouminate.config import CorpusSpec

SKIP_DIRS = frozenset({".git"})


def compile_patterns(patterns: tuple[str, ...] | list[str]) -> pathspec.PathSpec:
    try:
        return pathspec.PathSpec.from_lines("gitignore", patterns)
    except (KeyError, LookupError):  # pathspec < 1.0 only knows the older name
        return pathspec.PathSpec.from_lines("gitwildmatch", patterns)


def walk_corpus(spec: CorpusSpec) -> list[tuple[str, Path]]:
    """Sorted ``(corpus-relative '/' path, absolute path)`` pairs; the first root wins a duplicate path."""
    include = compile_patterns(spec.globs)
    exclude = compile_patterns(spec.exclude)
    found: dict[str, Path] = {}
    for root in spec.roots:
        for rel, path in _walk_root(root, include, exclude):
            found.setdefault(rel, path)
    return sorted(found.items())


def matches(spec: CorpusSpec, rel: str) -> bool:
    """Whether the corpus-relative path ``rel`` is one of the corpus' files by its patterns."""
    return compile_patterns(spec.globs).match_file(rel) and not compile_patterns(spec.exclude).match_file(rel)


def _walk_root(root: Path, include: pathspec.PathSpec, exclude: pathspec.PathSpec) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    if not root.is_dir():
        return out

    def on_error(_: OSError) -> None:
        # An unreadable directory is skipped, not fatal: the rest of the corpus still indexes.
        return None

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        # Prune in place: skipped and excluded directories are never descended into.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not os.path.islink(os.path.join(dirpath, d))
            and not exclude.match_file(f"{rel_dir}{d}/")
        )
        for name in filenames:
            full = os.path.join(dirpath, name)
            rel = rel_dir + name
            if os.path.islink(full) or not include.match_file(rel) or exclude.match_file(rel):
                continue
            out.append((rel, Path(full)))
    return out
