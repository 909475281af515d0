"""Merge validated layers into one ``Resolved``.

Lists append across layers; a scalar set in two layers must agree (a silent override would hide which file
wins, so a conflict is an error naming both values and both files).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.layer import Layer, RawCorpus, RawRepository, Scalar, scalar
from hallouminate.config.types import CorpusSpec, HttpSettings, Resolved, Settings, StoreMode
from hallouminate.errors import ConfigError
from hallouminate.protocol import limits

# Setting key (table.key, as written in a file) -> the `Settings` field it sets.
SETTING_FIELDS: dict[str, str] = {
    "embeddings.model": "model_name",
    "embeddings.cache_dir": "model_cache_dir",
    "embeddings.reranker": "reranker",
    "embeddings.provider": "embedding_provider",
    "embeddings.base_url": "endpoint_base_url",
    "embeddings.dimensions": "endpoint_dimensions",
    "embeddings.api_key_env": "endpoint_api_key_env",
    "embeddings.batch_size": "endpoint_batch_size",
    "embeddings.timeout_secs": "endpoint_timeout_secs",
    "embeddings.max_input_tokens": "endpoint_max_input_tokens",
    "embeddings.max_retries": "endpoint_max_retries",
    "embeddings.send_dimensions": "endpoint_send_dimensions",
    "store.path": "store_dir",
    "store.uri": "store_uri",
    "store.mode": "store_mode",
    "store.credentials_file": "store_credentials_file",
    "store.profile": "store_profile",
    "store.poll_interval_secs": "store_poll_interval_secs",
    "store.lease_secs": "store_lease_secs",
    "daemon.idle_exit_secs": "idle_exit_secs",
    "search.top_files": "top_files",
    "search.chunks_per_file": "chunks_per_file",
    "search.limit": "limit",
    "search.snippet_chars": "snippet_chars",
    "search.rerank_budget_ms": "rerank_budget_ms",
    "indexing.chunk_tokens": "chunk_tokens",
    "indexing.max_text_file_size": "max_file_bytes",
    "indexing.max_binary_file_size": "max_binary_file_size",
    "indexing.max_decompressed_size": "max_decompressed_size",
    "indexing.fail_on_frontmatter_error": "fail_on_frontmatter_error",
    "discovery.max_depth": "discovery_max_depth",
    "best_practice.path_templates": "best_practice_templates",
    "knowledge_base.globs": "kb_globs",
}
# List settings: merged, not required to agree. The more specific layer's (the repository's) come first,
# each value once: a repository adds its own pages' templates to the baseline's.
LIST_SETTINGS = frozenset({"best_practice.path_templates"})


def merge(
    layers: list[Layer],
    cwd: Path | None,
    discovered: Sequence[Layer] = (),
    warnings: Sequence[str] = (),
) -> Resolved:
    """Merge ``layers`` (baseline, then the repo layer) strictly; ``discovered`` layers leniently.

    A discovered layer (a repository found below a cwd that is above every repository) contributes its
    ``[[corpus]]`` and ``[[repository]]`` entries only: its settings are for requests made inside it. One
    that clashes with what is already known (two clones of one project under the same name) is skipped
    with a warning rather than making the whole directory unusable.
    """
    notes = list(warnings)
    scalars = _merge_scalars([_without_repo_indexing(layer, notes) for layer in layers])
    list_sources = _merge_lists(layers, scalars)
    lists = _Lists()
    for layer in layers:
        lists.add(layer)
    for layer in discovered:
        try:
            lists.try_add(layer)
        except ConfigError as exc:
            notes.append(f"skipped the discovered repository config {layer.file}: {exc.message}")
    repositories = {name: repo for name, (repo, _) in lists.repositories.items()}
    repo_name = _repository_for(cwd, repositories) if cwd is not None else None
    used = [layer for layer in discovered if layer.file in lists.files]
    return Resolved(
        settings=_settings({key: value for key, (value, _) in scalars.items()}),
        corpora={name: origin.spec for name, origin in lists.corpora.items()},
        repository_name=repo_name,
        default_corpus=wiki_corpus_name(repo_name) if repo_name else None,
        sources=tuple(layer.file for layer in [*layers, *used]),
        repositories={name: r.path for name, r in repositories.items()},
        setting_sources={key: file for key, (_, file) in scalars.items()},
        list_sources=list_sources,
        corpus_sources={name: origin.file for name, origin in lists.corpora.items()},
        discovered=tuple(layer.root for layer in used if layer.root is not None),
        warnings=tuple(notes),
    )


def _without_repo_indexing(layer: Layer, notes: list[str]) -> Layer:
    """A repo layer's ``[indexing]`` is not applied (the index of a corpus is shared by every request
    that sees it, and by the watcher, which has none): drop it from the merge, so that `config show`
    reports the values index runs use, and say so instead of ignoring it silently."""
    ignored = sorted(key for key in layer.scalars if key.startswith("indexing."))
    if layer.root is None or not ignored:
        return layer
    names = ", ".join(layer.spelled.get(key, key).split(".", 1)[1] for key in ignored)
    notes.append(
        f"[indexing] {names} in {layer.file} is not applied: index runs use the baseline config's values; "
        "set it there instead"
    )
    kept = {key: value for key, value in layer.scalars.items() if key not in ignored}
    return Layer(layer.file, layer.root, kept, layer.corpora, layer.repositories, layer.spelled)


def wiki_corpus_name(repository: str) -> str:
    return f"repo:{repository}:wiki"


def _merge_scalars(layers: list[Layer]) -> dict[str, tuple[Scalar, Path]]:
    seen: dict[str, tuple[Scalar, Path]] = {}
    for layer in layers:
        for key, value in layer.scalars.items():
            if key in LIST_SETTINGS:
                continue  # _merge_lists
            if key in seen and seen[key][0] != value:
                old_value, old_file = seen[key]
                section, name = key.split(".", 1)
                # The later file is the more specific one (the repository layer after the baseline):
                # changing it fixes this repository without changing what every other one gets.
                raise ConfigError(
                    f"[{section}] {name} is set to {_show(old_value)} in {old_file} and to {_show(value)} in "
                    f"{layer.file}; a setting takes one value: remove {name} from {layer.file} (which then "
                    f"gets {_show(old_value)}), or remove it from {old_file} if each repository should "
                    "set its own",
                    {
                        "key": key,
                        "values": [_show(old_value), _show(value)],
                        "files": [str(old_file), str(layer.file)],
                        "fix_file": str(layer.file),
                    },
                )
            seen.setdefault(key, (value, layer.file))
    return seen


def _merge_lists(
    layers: list[Layer], scalars: dict[str, tuple[Scalar, Path]]
) -> dict[str, tuple[tuple[str, Path], ...]]:
    """Each list setting into ``scalars`` (its file: the most specific layer setting it), and each of its
    values with the file that gave it, for `config show`."""
    sources: dict[str, tuple[tuple[str, Path], ...]] = {}
    for key in sorted(LIST_SETTINGS):
        given: dict[str, Path] = {}
        for layer in reversed(layers):  # the repo layer first
            value = layer.scalars.get(key)
            if isinstance(value, tuple):
                for item in value:
                    given.setdefault(item, layer.file)
        if given:
            scalars[key] = (tuple(given), next(iter(given.values())))
            sources[key] = tuple(given.items())
    return sources


def _show(value: Scalar) -> str:
    return repr(str(value)) if isinstance(value, Path) else repr(value)


# CorpusSpec fields under the name a [[corpus]] table gives them.
_KEYS = {"roots": "paths"}


def _differences(first: CorpusSpec | RawRepository, second: CorpusSpec | RawRepository) -> tuple[str, str]:
    """``("paths ['/a'], globs [...]", "paths ['/b'], ...")``: the fields two definitions disagree on."""
    names = [f.name for f in fields(first) if getattr(first, f.name) != getattr(second, f.name)]

    def described(definition: CorpusSpec | RawRepository) -> str:
        return ", ".join(f"{_KEYS.get(n, n)} {_shown(getattr(definition, n))}" for n in names)

    return described(first), described(second)


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return repr([str(v) if isinstance(v, Path) else v for v in value])
    return repr(str(value)) if isinstance(value, Path) else repr(value)


@dataclass(frozen=True)
class _Origin:
    spec: CorpusSpec
    file: Path


class _Lists:
    """The ``[[corpus]]`` and ``[[repository]]`` entries of the layers merged so far."""

    def __init__(self) -> None:
        self.corpora: dict[str, _Origin] = {}
        self.repositories: dict[str, tuple[RawRepository, Path]] = {}
        self.files: set[Path] = set()

    def try_add(self, layer: Layer) -> None:
        """``add``, all or nothing: on a clash the state is as before and the error propagates."""
        corpora, repositories, files = dict(self.corpora), dict(self.repositories), set(self.files)
        try:
            self.add(layer)
        except ConfigError:
            self.corpora, self.repositories, self.files = corpora, repositories, files
            raise

    def add(self, layer: Layer) -> None:
        self.files.add(layer.file)
        for raw in layer.corpora:
            self._add_corpus(_custom(raw), layer.file)
        for repo in layer.repositories:
            prior_repo = self.repositories.get(repo.name)
            if prior_repo is not None and prior_repo[0] != repo:
                before, after = _differences(prior_repo[0], repo)
                raise ConfigError(
                    f"repository {repo.name!r} is defined twice, differently: in {prior_repo[1]} with "
                    f"{before}; in {layer.file} with {after}; make the [[repository]] in {layer.file} the "
                    "same, or remove it there",
                    {
                        "repository": repo.name,
                        "files": [str(prior_repo[1]), str(layer.file)],
                        "fix_file": str(layer.file),
                    },
                )
            self.repositories.setdefault(repo.name, (repo, layer.file))
            for spec in _derived(repo):
                self._add_corpus(spec, layer.file)

    def _add_corpus(self, spec: CorpusSpec, file: Path) -> None:
        prior = self.corpora.get(spec.name)
        if prior is None:
            self.corpora[spec.name] = _Origin(spec, file)
        elif prior.spec != spec:
            # An identical repeat (a repo registered in the baseline and in its own layer) is harmless.
            before, after = _differences(prior.spec, spec)
            raise ConfigError(
                f"corpus {spec.name!r} is defined twice, differently: in {prior.file} with {before}; in "
                f"{file} with {after}; make the definition in {file} the same, or give it another name",
                {"corpus": spec.name, "files": [str(prior.file), str(file)], "fix_file": str(file)},
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


def _search(s: dict[str, Scalar], bound: limits.Range) -> int:
    """A [search] setting: the file's value, else its default from the limits table."""
    value = s.get(f"search.{bound.name}", bound.default)
    assert isinstance(value, int)  # the layer checked it; every [search] setting has a default
    return value


def _settings(s: dict[str, Scalar]) -> Settings:
    return Settings(
        discovery_max_depth=scalar(s, "discovery.max_depth", defaults.DISCOVERY_MAX_DEPTH),
        model_name=scalar(s, "embeddings.model", defaults.MODEL_NAME),
        model_cache_dir=scalar(s, "embeddings.cache_dir", xdg.default_model_cache()),
        store_dir=scalar(s, "store.path", xdg.default_store_dir()),
        idle_exit_secs=scalar(s, "daemon.idle_exit_secs", defaults.IDLE_EXIT_SECS),
        top_files=_search(s, limits.TOP_FILES),
        chunks_per_file=_search(s, limits.CHUNKS_PER_FILE),
        limit=_search(s, limits.LIMIT),
        snippet_chars=_search(s, limits.SNIPPET_CHARS),
        chunk_tokens=scalar(s, "indexing.chunk_tokens", defaults.CHUNK_TOKENS),
        max_file_bytes=scalar(s, "indexing.max_text_file_size", defaults.MAX_TEXT_FILE_SIZE),
        max_binary_file_size=scalar(s, "indexing.max_binary_file_size", defaults.MAX_BINARY_FILE_SIZE),
        max_decompressed_size=scalar(s, "indexing.max_decompressed_size", defaults.MAX_DECOMPRESSED_SIZE),
        fail_on_frontmatter_error=bool(
            scalar(s, "indexing.fail_on_frontmatter_error", defaults.FAIL_ON_FRONTMATTER_ERROR)
        ),
        reranker=scalar(s, "embeddings.reranker", "") or None,
        embedding_provider=scalar(s, "embeddings.provider", defaults.EMBEDDING_PROVIDER),
        endpoint_base_url=scalar(s, "embeddings.base_url", "") or None,
        endpoint_dimensions=scalar(s, "embeddings.dimensions", 0) or None,
        endpoint_api_key_env=scalar(s, "embeddings.api_key_env", "") or None,
        endpoint_batch_size=scalar(s, "embeddings.batch_size", defaults.ENDPOINT_BATCH_SIZE),
        endpoint_timeout_secs=scalar(s, "embeddings.timeout_secs", defaults.ENDPOINT_TIMEOUT_SECS),
        endpoint_max_input_tokens=scalar(
            s, "embeddings.max_input_tokens", defaults.ENDPOINT_MAX_INPUT_TOKENS
        ),
        endpoint_max_retries=scalar(s, "embeddings.max_retries", defaults.ENDPOINT_MAX_RETRIES),
        endpoint_send_dimensions=bool(scalar(s, "embeddings.send_dimensions", False)),
        rerank_budget_ms=_search(s, limits.RERANK_BUDGET_MS),
        best_practice_templates=scalar(s, "best_practice.path_templates", ()),
        kb_globs=scalar(s, "knowledge_base.globs", defaults.KB_GLOBS),
        store_uri=scalar(s, "store.uri", "") or None,
        store_mode=_store_mode(s),
        store_credentials_file=_optional_path(s, "store.credentials_file"),
        store_profile=scalar(s, "store.profile", defaults.STORE_PROFILE),
        store_poll_interval_secs=scalar(s, "store.poll_interval_secs", defaults.STORE_POLL_INTERVAL_SECS),
        store_lease_secs=scalar(s, "store.lease_secs", defaults.STORE_LEASE_SECS),
        http=_http(s),
    )


def _store_mode(s: dict[str, Scalar]) -> StoreMode:
    # The layer checked the value against defaults.STORE_MODES.
    return "read-only" if scalar(s, "store.mode", defaults.STORE_MODE) == "read-only" else "read-write"


def _http(s: dict[str, Scalar]) -> HttpSettings:
    base = HttpSettings()
    return HttpSettings(
        enabled=bool(scalar(s, "http.enabled", base.enabled)),
        host=scalar(s, "http.host", base.host),
        port=scalar(s, "http.port", 0) or None,
        allowed_origins=scalar(s, "http.allowed_origins", base.allowed_origins),
        token_file=_optional_path(s, "http.token_file"),
        max_body_bytes=scalar(s, "http.max_body_bytes", base.max_body_bytes),
        max_sessions=scalar(s, "http.max_sessions", base.max_sessions),
        session_idle_secs=scalar(s, "http.session_idle_secs", base.session_idle_secs),
        root=_optional_path(s, "http.root"),
        kb_path=_optional_path(s, "http.kb_path"),
    )


def _optional_path(s: dict[str, Scalar], key: str) -> Path | None:
    value = s.get(key)
    return value if isinstance(value, Path) else None
