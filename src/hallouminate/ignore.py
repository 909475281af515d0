"""Ignore files (``.gitignore``, ``.ignore``, ``.git/info/exclude``) applied while walking a directory tree.

A leaf module (of ours it imports only ``gitdirs``) because both the corpus walker (``indexing``) and
repository discovery (``config``) need it, and ``config`` may not import ``indexing``.

Semantics, following git and ripgrep:

- a ``.gitignore`` or ``.ignore`` applies to the directory holding it and everything below, with paths
  relative to that directory; a deeper file overrides a shallower one, ``.ignore`` overrides ``.gitignore``
  in the same directory, and both override ``.git/info/exclude`` (read from the checkout's common git dir,
  so a linked worktree uses the main repository's file);
- ignore files of the directories *above* the walked root count too, up to the checkout root (the first
  directory holding ``.git``); without a checkout only the root and what is below it count;
- the walked root itself was configured explicitly, so it is never ignored: a pattern from an ancestor
  ignore file that matches the root or a directory between the checkout root and the walked root (think
  ``.hallouminate/`` in a repository's ``.gitignore``) is dropped rather than hiding the whole root;
- a nested checkout (a directory holding ``.git``) starts afresh: its parents' rules do not apply inside it.

Callers prune ignored directories as they walk, so ``ignored`` only judges one entry at a time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec
import pathspec.util

from hallouminate.gitdirs import checkout_root, git_common_dir

# Lowest precedence first: within one directory `.ignore` wins over `.gitignore` (ripgrep's order).
IGNORE_FILES = (".gitignore", ".ignore")
# Ignore files larger than this are skipped: a real one is a few KiB, and we read them on every walk.
_MAX_IGNORE_BYTES = 1024 * 1024


# What pathspec's ``normalize_file`` changes in a path before matching it: one leading "/" or "./", and,
# where the system's separator is not "/" (Windows), that separator anywhere. A path with none of these is
# matched as it is given.
_NORMALISED_PREFIXES = ("/", "./")
_OTHER_SEPARATORS = bool(pathspec.util.NORMALIZE_PATH_SEPS)


class PathMatcher:
    """A compiled gitignore spec's verdict on one path, without pathspec's per-call overhead (~7 us).

    A walk asks every file of the tree (130k of them: ~1 s in ``match_file``), and most specs hold only
    positive patterns (``**/*.md``; ``build/``, ``*.log``). pathspec's gitignore backends give no verdict
    (None) unless some pattern's regex matches the path, and among the patterns that match the one of
    highest priority decides: so a path no regex matches has no verdict, and when every live pattern is
    positive a path one matches is included (ignored). Only a path a spec holding negations matches goes
    to the spec itself, for the priority rules. The regexes are pathspec's own (``pattern.regex``): no
    gitignore pattern is parsed here, and the verdicts are the spec's, path for path (see
    tests/indexing/test_walker_matching.py).
    """

    __slots__ = ("_positive", "_searches", "spec")

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self.spec = spec
        # The backends skip a pattern whose include is None (a comment, a blank line); one without a
        # regex never matches.
        live = [(p.include, p.regex) for p in spec.patterns if p.include is not None]
        self._searches = tuple(regex.search for _, regex in live if regex is not None)
        self._positive = all(include for include, regex in live if regex is not None)

    def verdict(self, path: str) -> bool | None:
        """``spec.check_file(path).include``: True (included, or ignored), False (re-included by a
        negation) or None (no pattern matches)."""
        if _OTHER_SEPARATORS or path.startswith(_NORMALISED_PREFIXES):
            return self.spec.check_file(path).include
        for search in self._searches:
            if search(path) is not None:
                return True if self._positive else self.spec.check_file(path).include
        return None

    def match(self, path: str) -> bool:
        """``spec.match_file(path)``: whether the spec's verdict on ``path`` is True."""
        return self.verdict(path) is True


@dataclass(frozen=True)
class _Frame:
    """The rules of one ignore file: ``local = (prefix + rel)[cut:]`` maps a root-relative path to its own."""

    prefix: str
    cut: int
    matcher: PathMatcher

    def verdict(self, rel: str) -> bool | None:
        return self.matcher.verdict((self.prefix + rel)[self.cut :])


@dataclass(frozen=True)
class IgnoreRules:
    """The ignore rules in force in one directory of a walk (immutable: children extend a copy)."""

    frames: tuple[_Frame, ...] = ()

    @classmethod
    def for_root(cls, root: Path) -> IgnoreRules:
        """Rules for walking ``root``: those of its checkout's ancestors, ``info/exclude``, then its own."""
        checkout = checkout_root(root)
        frames: list[_Frame] = []
        if checkout is not None and checkout != root:
            prefix = os.path.relpath(root, checkout).replace(os.sep, "/") + "/"
            between = _intermediate_dirs(prefix)
            exclude = _info_exclude(checkout)
            if exclude is not None:
                frames.extend(_frames_from(exclude, prefix, between))
            parts = prefix.rstrip("/").split("/")
            # Every directory from the checkout root down to (not including) the root itself.
            for depth in range(len(parts)):
                directory = checkout.joinpath(*parts[:depth])
                sub_prefix = "/".join(parts[depth:]) + "/"
                for name in IGNORE_FILES:
                    frames.extend(_frames_from(directory / name, sub_prefix, _intermediate_dirs(sub_prefix)))
        elif checkout == root:
            exclude = _info_exclude(root)
            if exclude is not None:
                frames.extend(_frames_from(exclude, "", ()))
        # The root's own ignore files are added by the walk as it enters the root (`enter("", root)`).
        return cls(tuple(frames))

    def enter(self, rel_dir: str, directory: Path, names: set[str] | None = None) -> IgnoreRules:
        """The rules inside ``directory`` (root-relative ``rel_dir``, "" or ending in "/").

        ``names`` (the directory's entries, when the caller has listed it) saves a stat per ignore file.
        """
        frames = self.frames
        has_git = (".git" in names) if names is not None else os.path.lexists(directory / ".git")
        if has_git and rel_dir:
            # A nested checkout is its own world: its parents' ignore files do not reach into it.
            frames = ()
            exclude = _info_exclude(directory)
            if exclude is not None:
                frames = (*frames, *_frames_from(exclude, "", (), cut=len(rel_dir)))
        added: list[_Frame] = []
        for name in IGNORE_FILES:
            if names is not None and name not in names:
                continue
            added.extend(_frames_from(directory / name, "", (), cut=len(rel_dir)))
        if not added and frames is self.frames:
            return self
        return IgnoreRules((*frames, *added))

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether the root-relative ``rel`` (no trailing slash) is ignored, judged on its own."""
        if not self.frames:
            return False
        path = rel + "/" if is_dir else rel
        for frame in reversed(self.frames):
            verdict = frame.verdict(path)
            if verdict is not None:
                return verdict
        return False


def path_ignored(root: Path, rel: str) -> bool:
    """Whether the root-relative file ``rel`` or a directory on its way is ignored (a walk would skip it)."""
    rules = IgnoreRules.for_root(root).enter("", root)
    parts = rel.split("/")
    current = root
    for depth, part in enumerate(parts[:-1]):
        rel_dir = "/".join(parts[: depth + 1])
        if rules.ignored(rel_dir, is_dir=True):
            return True
        current = current / part
        rules = rules.enter(rel_dir + "/", current)
    return rules.ignored(rel, is_dir=False)


def compile_gitignore(lines: list[str] | tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Gitignore-syntax patterns; a line pathspec cannot compile is dropped rather than failing the walk."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec raises re.error and its own errors for malformed patterns
        # Each line is a pattern of its own: the lines that compile alone make the same spec.
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _compiles(line)])


def _compiles(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:
        return False
    return True


def _intermediate_dirs(prefix: str) -> tuple[str, ...]:
    """For "a/b/": ("a/", "a/b/"), the directories an ancestor's patterns must not hide."""
    parts = prefix.rstrip("/").split("/")
    return tuple("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))


def _frames_from(file: Path, prefix: str, protected: tuple[str, ...], *, cut: int = 0) -> list[_Frame]:
    lines = _read_lines(file)
    if not lines:
        return []
    spec = compile_gitignore(lines)
    if protected:
        # Drop the ignoring patterns that would hide the explicitly configured root or its parents.
        kept = [
            p
            for p in spec.patterns
            if p.include is not True or not any(p.match_file(d) is not None for d in protected)
        ]
        spec = pathspec.GitIgnoreSpec(kept)
    if all(p.include is None for p in spec.patterns):
        # Comments and blank lines only (git's default info/exclude): a frame that never gives a verdict
        # would still be asked about every file of the walk.
        return []
    return [_Frame(prefix, cut, PathMatcher(spec))]


def _read_lines(file: Path) -> list[str]:
    try:
        with open(file, "rb") as f:
            data = f.read(_MAX_IGNORE_BYTES + 1)
    except OSError:  # absent (the common case), unreadable, or a directory
        return []
    if len(data) > _MAX_IGNORE_BYTES:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _info_exclude(checkout: Path) -> Path | None:
    """``info/exclude`` of the checkout's common git dir (a linked worktree shares the main one's)."""
    common = git_common_dir(checkout)
    return common / "info" / "exclude" if common is not None else None
