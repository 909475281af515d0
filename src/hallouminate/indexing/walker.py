"""List the files of a corpus: under each root, matching its globs, not excluded, not ignored.

Patterns use gitignore semantics (``**/*.md``, ``guides/**/*.md``, ``drafts/``) relative to each root,
never to the process cwd or ``/``. ``.gitignore``, ``.ignore`` and ``.git/info/exclude`` are honoured (see
``hallouminate.ignore``). Symlinks are not followed and not listed (a link could lead out of the corpus or
into a loop, and the sandbox refuses to read through one anyway); ``.git`` directories are skipped, and so
are names the sandbox would refuse (a backslash or a control character in them): a listed file can always
be read, and ``locate`` agrees with the walk on every path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from hallouminate.config import CorpusSpec
from hallouminate.errors import CallerError
from hallouminate.ignore import IgnoreRules, PathMatcher, compile_gitignore, path_ignored
from hallouminate.sandbox import (
    check_leaf,
    check_relative_path,
    is_safe_relative_path,
    resolve_inside,
    walk_tree,
)

SKIP_DIRS = frozenset({".git"})


def compile_patterns(patterns: tuple[str, ...] | list[str]) -> pathspec.GitIgnoreSpec:
    return compile_gitignore(list(patterns))


def walk_corpus(spec: CorpusSpec) -> list[tuple[str, Path]]:
    """Sorted ``(corpus-relative '/' path, absolute path)`` pairs; the first root wins a duplicate path."""
    return [(rel, root / rel) for rel, root in corpus_files(spec)]


def corpus_files(spec: CorpusSpec) -> list[tuple[str, Path]]:
    """Sorted ``(corpus-relative '/' path, the root holding it)`` pairs; the first root wins a duplicate."""
    include = PathMatcher(compile_patterns(spec.globs))
    exclude = PathMatcher(compile_patterns(spec.exclude))
    found: dict[str, Path] = {}
    for root in spec.roots:
        for rel in walk_root(root, include, exclude):
            found.setdefault(rel, root)
    return sorted(found.items())


def locate(spec: CorpusSpec, rel: str) -> Path | None:
    """The root whose file ``rel`` the corpus shows (the first listing it, as in a walk), or None.

    ``UnsafePath`` if ``rel`` is no safe corpus-relative path.
    """
    check_relative_path(rel)
    return next((root for root in spec.roots if listed_in(spec, root, rel)), None)


def listed_in(spec: CorpusSpec, root: Path, rel: str) -> bool:
    """Whether a walk of ``root`` lists ``rel``: a regular file reached without a symlink (the sandbox's
    ``lstat`` walk), matching the patterns, not ignored. Nothing is opened."""
    try:
        check_leaf(rel, os.lstat(resolve_inside(root, rel, must_exist=True)).st_mode)
    except (CallerError, OSError):
        return False
    return why_not_listed(spec, root, rel) is None


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


def walk_root(root: Path, include: PathMatcher, exclude: PathMatcher) -> list[str]:
    """The corpus-relative paths of the files of one root, unsorted."""
    out: list[str] = []
    if not root.is_dir():
        return out
    # The walk's paths are already in the form pathspec matches (no leading "/" or "./", "/"-separated),
    # so the matchers answer without pathspec's per-call work (see PathMatcher).
    included, excluded = include.match, exclude.match
    excludes = bool(exclude.spec.patterns)
    # The rules in force in each directory still to be listed, by its rel_dir.
    pending: dict[str, IgnoreRules] = {"": IgnoreRules.for_root(root)}
    # Through directory descriptors, never following a link (the sandbox's walk): each directory is
    # listed exactly once, and one swapped for a symlink meanwhile is not entered.
    for listing in walk_tree(root):
        rel_dir = listing.rel_dir
        rules = pending.pop(rel_dir).enter(rel_dir, listing.path, {e.name for e in listing.entries})
        for entry in listing.entries:
            try:
                # Files first (most entries are). Neither test follows a link, so a symlink is neither: it
                # is not listed, not entered.
                if entry.is_file(follow_symlinks=False):
                    rel = rel_dir + entry.name
                    # Cheapest test first: most files of a source tree fail the include globs.
                    if (
                        included(rel)
                        and not (excludes and excluded(rel))
                        and not rules.ignored(rel, is_dir=False)
                        and is_safe_relative_path(rel)
                    ):
                        out.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    name = entry.name
                    if name in SKIP_DIRS:
                        continue
                    rel = rel_dir + name
                    # Prune: excluded and ignored directories are never descended into.
                    if excluded(rel + "/") or rules.ignored(rel, is_dir=True):
                        continue
                    pending[rel + "/"] = rules
                    listing.descend.append(name)
            except OSError:
                continue
    return out
