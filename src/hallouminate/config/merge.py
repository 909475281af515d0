"""Merge validated layers into one ``Resolved``.

Lists append across layers; a scalar set in two layers must agree (a silent override would hide which file
wins, so a conflict is an error naming both values and both files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.layer import Layer, RawCorpus, RawRepository, Scalar
from hallouminate.config.types import CorpusSpec, Resolved, Settings
from hallouminate.errors import InvalidParams


def merge(layers: list[Layer], cwd: Path | None) -> Resolved:
    scalars = _merge_scalars(layers)
    corpora, repositories = _merge_lists(layers)
    repo_name = _repository_for(cwd, repositories) if cwd is not None else None
    return Resolved(
        settings=_settings(scalars),
        corpora=corpora,
        repository_name=repo_name,
        default_corpus=wiki_corpus_name(repo_name) if repo_name else None,
        sources=tuple(layer.file for layer in layers),
        repositories={name: r.path for name, r in repositories.items()},
    )


def wiki_corpus_name(repository: str) -> str:
    return f"repo:{repository}:wiki"


def _merge_scalars(layers: list[Layer]) -> dict[str, Scalar]:
    seen: dict[str, tuple[Scalar, Path]] = {}
    for layer in layers:
        for key, value in layer.scalars.items():
            if key in seen and seen[key][0] != value:
                old_value, old_file = seen[key]
                section, name = key.split(".", 1)
                raise InvalidParams(
                    f"[{section}] {name} is set to {_show(old_value)} in {old_file} and to {_show(value)} in "
                    f"{layer.file}; set it in one file only",
                    {
                        "key": key,
                        "values": [_show(old_value), _show(value)],
                        "files": [str(old_file), str(layer.file)],
                    },
                )
            seen.setdefault(key, (value, layer.file))
    return {key: value for key, (value, _) in seen.items()}


def _show(value: Scalar) -> str:
    return repr(str(value)) if isinstance(value, Path) else repr(value)


@dataclass(frozen=True)
class _Origin:
    spec: CorpusSpec
    file: Path


def _merge_lists(layers: list[Layer]) -> tuple[dict[str, CorpusSpec], dict[str, RawRepository]]:
    corpora: dict[str, _Origin] = {}
    repositories: dict[str, tuple[RawRepository, Path]] = {}

    def add(spec: CorpusSpec, file: Path) -> None:
        prior = corpora.get(spec.name)
        if prior is None:
            corpora[spec.name] = _Origin(spec, file)
        elif prior.spec != spec:
            # An identical repeat (a repo registered in the baseline and in its own layer) is harmless.
            raise InvalidParams(
                f"corpus {spec.name!r} is defined twice, differently: in {prior.file} and in {file}",
                {"corpus": spec.name, "files": [str(prior.file), str(file)]},
            )

    for layer in layers:
        for raw in layer.corpora:
            add(_custom(raw), layer.file)
        for repo in layer.repositories:
            prior_repo = repositories.get(repo.name)
            if prior_repo is not None and prior_repo[0] != repo:
                raise InvalidParams(
                    f"repository {repo.name!r} is defined twice, differently: in {prior_repo[1]} and in "
                    f"{layer.file}",
                    {"repository": repo.name, "files": [str(prior_repo[1]), str(layer.file)]},
                )
            repositories.setdefault(repo.name, (repo, layer.file))
            for spec in _derived(repo):
                add(spec, layer.file)
    return (
        {name: origin.spec for name, origin in corpora.items()},
        {name: repo for name, (repo, _) in repositories.items()},
    )


def _custom(raw: RawCorpus) -> CorpusSpec:
    return CorpusSpec(raw.name, "custom", raw.roots, raw.globs, raw.exclude, None)


def _derived(repo: RawRepository) -> list[CorpusSpec]:
    specs = [
        CorpusSpec(wiki_corpus_name(repo.name), "wiki", (repo.wiki,), defaults.CORPUS_GLOBS, (), repo.name)
    ]
    if repo.corpus_paths:
        specs.append(
            CorpusSpec(
                f"repo:{repo.name}:corpus",
                "corpus",
                repo.corpus_paths,
                repo.corpus_globs,
                repo.corpus_exclude,
                repo.name,
            )
        )
    return specs


def _repository_for(cwd: Path, repositories: dict[str, RawRepository]) -> str | None:
    """The deepest repository whose path is ``cwd`` or one of its ancestors."""
    best: RawRepository | None = None
    for repo in repositories.values():
        inside = cwd == repo.path or repo.path in cwd.parents
        if inside and (best is None or len(repo.path.parts) > len(best.path.parts)):
            best = repo
    return best.name if best else None


def _settings(s: dict[str, Scalar]) -> Settings:
    def get(key: str, default: Scalar) -> Scalar:
        return s.get(key, default)

    return Settings(
        model_name=str(get("embeddings.model", defaults.MODEL_NAME)),
        model_cache_dir=Path(get("embeddings.cache_dir", xdg.default_model_cache())),
        store_dir=Path(get("storage.path", xdg.default_store_dir())),
        idle_exit_secs=float(get("daemon.idle_exit_secs", defaults.IDLE_EXIT_SECS)),
        top_files=int(get("search.top_files", defaults.TOP_FILES)),
        chunks_per_file=int(get("search.chunks_per_file", defaults.CHUNKS_PER_FILE)),
        limit=int(get("search.limit", defaults.LIMIT)),
        snippet_chars=int(get("search.snippet_chars", defaults.SNIPPET_CHARS)),
        chunk_tokens=int(get("indexing.chunk_tokens", defaults.CHUNK_TOKENS)),
        max_file_bytes=int(get("indexing.max_file_bytes", defaults.MAX_FILE_BYTES)),
    )
