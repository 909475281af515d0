"""Find the config files that apply to a request and resolve them; look corpora up by name."""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.discover import ScanObserver, discover_repositories
from hallouminate.config.layer import Layer, read_layer, scalar
from hallouminate.config.merge import merge
from hallouminate.config.types import CorpusSpec, Resolved, Where
from hallouminate.errors import ConfigError, InvalidArgument, NotFound
from hallouminate.gitdirs import checkout_root, git_common_dir


def load_baseline() -> Resolved:
    """The baseline config alone: daemon-wide settings and the corpora every request sees."""
    return merge(_baseline_layers(), None)


def resolve(cwd: Path, observer: ScanObserver | None = None) -> Resolved:
    """The effective config for a request made from ``cwd`` (absolute and canonical).

    Inside a repository: the baseline plus that repository's layer. Inside a git checkout without a repo
    layer: the baseline alone. Above every repository (no ``.git`` and no repo layer walking up): the
    baseline plus the corpora of the repositories discovered below ``cwd`` (``observer`` is told what
    that discovery reads).
    """
    if not cwd.is_absolute():
        raise InvalidArgument(f"cwd must be an absolute path, got {str(cwd)!r}", {"cwd": str(cwd)})
    layers = _baseline_layers()
    root, checkout = _walk_up(cwd)
    if root is not None:
        repo_layer = read_layer(root / defaults.REPO_CONFIG, root)
        if layers:
            layers[0] = _without_other_checkouts(layers[0], repo_layer, root)
        layers.append(repo_layer)
        return merge(layers, cwd)
    if checkout is not None:
        return merge(layers, cwd)
    return _resolve_above_repositories(cwd, layers, observer)


# A knowledge base served by `serve --kb-path DIR`: DIR is one corpus of its own, named so (the store keys
# it by its root too, so two knowledge bases never share rows), holding its Markdown files, and the other
# formats [knowledge_base] globs names.
KB_CORPUS = "kb"


def as_knowledge_base(resolved: Resolved, where: Where) -> Resolved:
    """``resolved`` (the configuration for ``where.cwd``) serving ``where.cwd`` alone, as corpus ``kb``.

    No ``init-repo`` is needed: the directory is the corpus. The settings stay those of its configuration
    (baseline, and the repository layer above it if any); no other corpus is searched or listed.
    """
    spec = CorpusSpec(KB_CORPUS, "custom", (where.cwd,), resolved.settings.kb_globs, (), None)
    return replace(
        resolved,
        corpora={KB_CORPUS: spec},
        default_corpus=KB_CORPUS,
        repository_name=None,
        corpus_sources={},
        discovered=(),
    )


def find_repo_root(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.hallouminate/config.toml``.

    The search stops at the checkout root (the first directory holding ``.git``, a directory or a linked
    worktree's file): a nested checkout, a submodule or a worktree placed inside another checkout never
    inherits the enclosing checkout's repo layer.
    """
    return _walk_up(cwd)[0]


def _walk_up(cwd: Path) -> tuple[Path | None, Path | None]:
    """(repo root, checkout root): the first directory with a repo layer, the first with ``.git``.

    Walking stops at whichever comes first (a directory holding both is the repo root).
    """
    for directory in (cwd, *cwd.parents):
        if _exists(directory / defaults.REPO_CONFIG):
            return directory, checkout_root(directory)
        if os.path.lexists(directory / ".git"):
            return None, directory
    return None, None


def _without_other_checkouts(baseline: Layer, repo_layer: Layer, root: Path) -> Layer:
    """The baseline minus its ``[[repository]]`` entries that are this repository's other checkouts.

    The baseline may register a repository by its main checkout; the same repository's linked worktree
    has the same committed repo layer (same name, path "."). From inside the worktree, that worktree is
    the repository: the baseline's entry for the main checkout gives way instead of clashing with it.
    """
    names = {repo.name: repo.path for repo in repo_layer.repositories}
    clashing = [r for r in baseline.repositories if r.name in names and r.path != names[r.name]]
    if not clashing:
        return baseline
    here = _common_dir(root)
    if here is None:
        return baseline
    drop = [r for r in clashing if _common_dir(r.path) == here]
    if not drop:
        return baseline
    return replace(baseline, repositories=[r for r in baseline.repositories if r not in drop])


def _common_dir(path: Path) -> Path | None:
    checkout = checkout_root(path)
    return git_common_dir(checkout) if checkout is not None else None


def _resolve_above_repositories(cwd: Path, layers: list[Layer], observer: ScanObserver | None) -> Resolved:
    depth = defaults.DISCOVERY_MAX_DEPTH
    if layers:
        depth = scalar(layers[0].scalars, "discovery.max_depth", depth)
    roots, truncated = discover_repositories(cwd, depth, observer=observer)
    discovered: list[Layer] = []
    warnings: list[str] = []
    for root in roots:
        try:
            discovered.append(read_layer(root / defaults.REPO_CONFIG, root))
        except ConfigError as exc:
            # One broken repository must not make every request from the parent directory fail.
            warnings.append(f"skipped the discovered repository at {root}: {exc.message}")
    if truncated:
        warnings.append(
            f"repository discovery below {cwd} stopped after {defaults.DISCOVERY_MAX_DIRS} directories; "
            "run from inside a repository, or register repositories in the baseline config"
        )
    return merge(layers, cwd, discovered, warnings)


def _baseline_layers() -> list[Layer]:
    file = xdg.baseline_config_file()
    return [read_layer(file, None)] if _exists(file) else []


def _exists(file: Path) -> bool:
    try:
        return file.is_file()
    except OSError as exc:  # e.g. EACCES: a config we cannot see must not be silently skipped
        raise ConfigError(f"{file}: cannot check config: {exc.strerror or exc}", {"file": str(file)}) from exc


def closest_corpus(name: str, names: list[str], default: str | None = None) -> str | None:
    """The configured corpus ``name`` most likely meant: one whose last part (after the last ':') is
    ``name`` ("wiki" for "repo:acme:wiki"; the default corpus first when several are), else the closest
    by spelling, on the whole name or on its last part."""
    tail = name.rsplit(":", 1)[-1]
    same_tail = [n for n in names if n.rsplit(":", 1)[-1] == tail]
    if same_tail:
        return default if default in same_tail else same_tail[0]
    best: tuple[float, str] | None = None
    for candidate in names:
        whole = difflib.SequenceMatcher(None, name, candidate).ratio()
        part = difflib.SequenceMatcher(None, tail, candidate.rsplit(":", 1)[-1]).ratio()
        score = max(whole if whole >= 0.5 else 0.0, part if part >= 0.6 else 0.0)
        if score > 0 and (best is None or score > best[0]):
            best = (score, candidate)
    return best[1] if best else None


def corpus_for(resolved: Resolved, name: str | None) -> CorpusSpec:
    """The corpus called ``name``, or the cwd's repository wiki when ``name`` is None."""
    names = list(resolved.corpora)
    if name is None:
        if resolved.default_corpus is not None and resolved.default_corpus in resolved.corpora:
            return resolved.corpora[resolved.default_corpus]
        listing = ", ".join(names) if names else "none are configured"
        raise NotFound(
            f"the cwd is not inside a configured repository, so there is no default corpus: pass `corpus` "
            f"(configured corpora: {listing})",
            {"corpora": names, "closest": None},
        )
    spec = resolved.corpora.get(name)
    if spec is not None:
        return spec
    closest = closest_corpus(name, names, resolved.default_corpus)
    hint = f"; did you mean {closest!r}?" if closest else ""
    listing = ", ".join(names) if names else "none are configured"
    raise NotFound(
        f"unknown corpus {name!r}{hint} (configured corpora: {listing})",
        {"corpora": names, "closest": closest},
    )
