"""Find the config files that apply to a request and resolve them; look corpora up by name."""

from __future__ import annotations

import difflib
from pathlib import Path

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.layer import Layer, read_layer
from hallouminate.config.merge import merge
from hallouminate.config.types import CorpusSpec, Resolved
from hallouminate.errors import InvalidParams


def load_baseline() -> Resolved:
    """The baseline config alone: daemon-wide settings and the corpora every request sees."""
    return merge(_baseline_layers(), None)


def resolve(cwd: Path) -> Resolved:
    """The effective config for a request made from ``cwd`` (absolute and canonical)."""
    if not cwd.is_absolute():
        raise InvalidParams(f"cwd must be an absolute path, got {str(cwd)!r}", {"cwd": str(cwd)})
    layers = _baseline_layers()
    root = find_repo_root(cwd)
    if root is not None:
        layers.append(read_layer(root / defaults.REPO_CONFIG, root))
    return merge(layers, cwd)


def find_repo_root(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.hallouminate/config.toml``."""
    for directory in (cwd, *cwd.parents):
        if _exists(directory / defaults.REPO_CONFIG):
            return directory
    return None


def _baseline_layers() -> list[Layer]:
    file = xdg.baseline_config_file()
    return [read_layer(file, None)] if _exists(file) else []


def _exists(file: Path) -> bool:
    try:
        return file.is_file()
    except OSError as exc:  # e.g. EACCES: a config we cannot see must not be silently skipped
        raise InvalidParams(
            f"{file}: cannot check config: {exc.strerror or exc}", {"file": str(file)}
        ) from exc


def corpus_for(resolved: Resolved, name: str | None) -> CorpusSpec:
    """The corpus called ``name``, or the cwd's repository wiki when ``name`` is None."""
    names = list(resolved.corpora)
    if name is None:
        if resolved.default_corpus is not None and resolved.default_corpus in resolved.corpora:
            return resolved.corpora[resolved.default_corpus]
        listing = ", ".join(names) if names else "none are configured"
        raise InvalidParams(
            f"the cwd is not inside a configured repository, so there is no default corpus: pass `corpus` "
            f"(configured corpora: {listing})",
            {"corpora": names, "closest": None},
        )
    spec = resolved.corpora.get(name)
    if spec is not None:
        return spec
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    closest = close[0] if close else None
    hint = f"; did you mean {closest!r}?" if closest else ""
    listing = ", ".join(names) if names else "none are configured"
    raise InvalidParams(
        f"unknown corpus {name!r}{hint} (configured corpora: {listing})",
        {"corpora": names, "closest": closest},
    )
