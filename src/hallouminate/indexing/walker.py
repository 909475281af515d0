"""List the files of a corpus: under each root, matching its globs, not excluded, not ignored.

Patterns use gitignore semantics (``**/*.md``, ``guides/**/*.md``, ``drafts/``) relative to each root,
never to the process cwd or ``/``. ``.gitignore``, ``.ignore`` and ``.git/info/exclude`` are honoured (see
``hallouminate.ignore``). Symlinks are not followed and not listed (a link could lead out of the corpus or
into a loop, and the sandbox refuses to read through one anyway); ``.git`` directories are skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from hallouminate.config import CorpusSpec
from hallouminate.ignore import IgnoreRules, compile_gitignore, path_ignored

SKIP_DIRS = frozenset({".git"})


def compile_patterns(patterns: tuple[str, ...] | list[str]) -> pathspec.PathSpec:
    return compile_gitignore(list(patterns))


def walk_corpus(spec: CorpusSpec) -> list[tuple[str, Path]]:
    """Sorted ``(corpus-relative '/' path, absolute path)`` pairs; the first root wins a duplicate path."""
    include = compile_patterns(spec.globs)
    exclude = compile_patterns(spec.exclude)
    found: dict[str, Path] = {}
    for root in spec.roots:
        for rel, path in walk_root(root, include, exclude):
            found.setdefault(rel, path)
    return sorted(found.items())


def matches(spec: CorpusSpec, rel: str) -> bool:
    """Whether the corpus-relative path ``rel`` is one of the corpus' files by its patterns."""
    return compile_patterns(spec.globs).match_file(rel) and not compile_patterns(spec.exclude).match_file(rel)


def why_not_listed(spec: CorpusSpec, root: Path, rel: str) -> str | None:
    """None when the existing file ``root/rel`` is one of the corpus' files, else the reason it is not.

    Checks the patterns and the ignore files (symlinks are the sandbox's business). ``.git`` counts as
    ignored, as in a walk.
    """
    if not compile_patterns(spec.globs).match_file(rel):
        return f"it does not match the corpus globs {list(spec.globs)}"
    exclude = compile_patterns(spec.exclude)
    if exclude.match_file(rel):
        return f"it is excluded by the corpus exclude patterns {list(spec.exclude)}"
    parts = rel.split("/")
    if any(part in SKIP_DIRS for part in parts[:-1]):
        return "it is inside a .git directory"
    if path_ignored(root, rel):
        return "it is ignored by a .gitignore, .ignore or .git/info/exclude rule"
    return None


def walk_root(root: Path, include: pathspec.PathSpec, exclude: pathspec.PathSpec) -> list[tuple[str, Path]]:
    """The files of one root, unsorted."""
    out: list[tuple[str, Path]] = []
    if not root.is_dir():
        return out
    base = IgnoreRules.for_root(root)
    # Depth-first with an explicit stack: no recursion limit, and each directory is listed exactly once.
    stack: list[tuple[str, str, IgnoreRules]] = [("", str(root), base)]
    while stack:
        rel_dir, abs_dir, rules = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except OSError:
            # An unreadable directory is skipped, not fatal: the rest of the corpus still indexes.
            continue
        rules = rules.enter(rel_dir, Path(abs_dir), {e.name for e in entries})
        for entry in entries:
            name = entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if name in SKIP_DIRS:
                        continue
                    rel = rel_dir + name
                    # Prune: excluded and ignored directories are never descended into.
                    if exclude.match_file(rel + "/") or rules.ignored(rel, is_dir=True):
                        continue
                    stack.append((rel + "/", entry.path, rules))
                elif entry.is_file(follow_symlinks=False):
                    rel = rel_dir + name
                    # Cheapest test first: most files of a source tree fail the include globs.
                    if (
                        include.match_file(rel)
                        and not exclude.match_file(rel)
                        and not rules.ignored(rel, is_dir=False)
                    ):
                        out.append((rel, Path(entry.path)))
            except OSError:
                continue
    return out
