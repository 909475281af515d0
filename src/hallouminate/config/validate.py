"""``config validate``, ``config init`` and ``config show``: check files, write the template, describe."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import NamedTuple, TypedDict

from hallouminate import xdg
from hallouminate.config import defaults
from hallouminate.config.layer import check_layer
from hallouminate.config.merge import SETTING_FIELDS, merge
from hallouminate.config.resolve import find_repo_root, resolve
from hallouminate.config.types import CorpusKind, HttpSettings, Resolved
from hallouminate.errors import CallerError, ConfigError
from hallouminate.protocol import limits


def layer_root(file: Path) -> Path | None:
    """The repo root when ``file`` is a repository layer (``<root>/.hallouminate/config.toml``), else None."""
    if file.name == "config.toml" and file.parent.name == ".hallouminate":
        return file.parent.parent
    return None


def validate_file(path: Path) -> list[str]:
    """Every problem of one config file, each naming the file and the key; empty when it is clean.

    A file at ``<root>/.hallouminate/config.toml`` is checked as a repository layer (relative paths allowed,
    daemon-wide tables refused); any other file as a baseline. Unknown tables and keys, wrong types,
    malformed TOML and duplicate names within the file are reported; paths need not exist.
    """
    file = Path(path).absolute()
    root = layer_root(file)
    if not file.is_file():
        return [f"{file}: no such file"]
    layer, problems = check_layer(file, root)
    messages = [p.message for p in problems]
    if layer is not None and not problems:
        try:
            merge([layer], None)
        except ConfigError as exc:
            messages.append(exc.message)
    return messages


def files_for(cwd: Path) -> list[Path]:
    """The config files a request from ``cwd`` reads: the baseline and the repo layer, those that exist."""
    files = []
    baseline = xdg.baseline_config_file()
    if baseline.is_file():
        files.append(baseline)
    root = find_repo_root(cwd)
    if root is not None:
        files.append(root / defaults.REPO_CONFIG)
    return files


class Validation(NamedTuple):
    """What ``config validate`` reports: the files checked, every problem, and the files at fault."""

    files: list[Path]
    problems: list[str]
    at_fault: list[Path]


def validate_for(cwd: Path) -> Validation:
    """The files a request from ``cwd`` reads, checked alone and together (``Validation``)."""
    files = files_for(cwd)
    problems: list[str] = []
    at_fault: list[Path] = []
    for file in files:
        found = validate_file(file)
        problems += found
        at_fault += [file] if found else []
    if not problems:
        try:
            resolve(cwd)  # what the files cannot show alone: a scalar set differently in both
        except CallerError as exc:
            problems.append(exc.message)
            named = exc.data.get("files") or ([exc.data["file"]] if "file" in exc.data else [])
            at_fault = [Path(f) for f in named] if named else list(files)
    return Validation(files, problems, at_fault)


class ShownCorpus(TypedDict):
    name: str
    kind: CorpusKind
    paths: list[str]
    globs: list[str]
    exclude: list[str]
    repository: str | None
    # The file defining it; None for a corpus no file names.
    source: str | None


class ShownRepository(TypedDict):
    name: str
    path: str


class ShownListValue(TypedDict):
    value: str
    source: str


class EffectiveConfig(TypedDict):
    """What ``config show`` prints (``--format json``): see ``describe_effective``."""

    sources: list[str]
    repository: str | None
    default_corpus: str | None
    settings: dict[str, dict[str, str | int | float | list[str]]]
    setting_sources: dict[str, str]
    # A list setting merged from several files ([best_practice] path_templates): each value's file.
    list_sources: dict[str, list[ShownListValue]]
    corpora: list[ShownCorpus]
    repositories: list[ShownRepository]
    discovered: list[str]
    warnings: list[str]


def describe_effective(resolved: Resolved) -> EffectiveConfig:
    """The merged configuration as JSON-ready data, with where each part came from (``config show``).

    ``settings`` is ``{table: {key: value}}`` with every setting (defaults included); ``setting_sources``
    maps ``"table.key"`` to the file that set it (a key absent there has its default). Each corpus names
    the file defining it (``source``).
    """
    settings: dict[str, dict[str, str | int | float | list[str]]] = {}
    http = {f"http.{f.name}": f.name for f in fields(HttpSettings)}
    for key, field in [*SETTING_FIELDS.items(), *http.items()]:
        table, name = key.split(".", 1)
        value = getattr(resolved.settings.http if table == "http" else resolved.settings, field)
        if value is None or value == ():  # an optional setting left unset: TOML has no null
            continue
        if key == "store.path" and resolved.settings.store_uri is not None:
            continue  # the store is the object store: the local default directory is not it
        if isinstance(value, tuple):
            settings.setdefault(table, {})[name] = list(value)
        else:
            settings.setdefault(table, {})[name] = str(value) if isinstance(value, Path) else value
    return {
        "sources": [str(f) for f in resolved.sources],
        "repository": resolved.repository_name,
        "default_corpus": resolved.default_corpus,
        "settings": settings,
        "setting_sources": {key: str(file) for key, file in sorted(resolved.setting_sources.items())},
        "list_sources": {
            key: [{"value": value, "source": str(file)} for value, file in given]
            for key, given in sorted(resolved.list_sources.items())
        },
        "corpora": [
            {
                "name": spec.name,
                "kind": spec.kind,
                "paths": [str(r) for r in spec.roots],
                "globs": list(spec.globs),
                "exclude": list(spec.exclude),
                "repository": spec.repository,
                "source": str(resolved.corpus_sources[spec.name])
                if spec.name in resolved.corpus_sources
                else None,
            }
            for spec in resolved.corpora.values()
        ],
        "repositories": [{"name": n, "path": str(p)} for n, p in resolved.repositories.items()],
        "discovered": [str(p) for p in resolved.discovered],
        "warnings": list(resolved.warnings),
    }


def _span(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:g} to {bounds[1]:g}"


def baseline_template() -> str:
    """A commented baseline config (what ``config init`` writes); it validates clean as written.

    Settings are commented out, not written with their defaults: a baseline value would have to agree with
    every repository layer that sets the same key (see "Merging" in docs/configuration.md). Lines starting
    with ``#`` and no space are settings to uncomment; the file validates clean with all of them uncommented.
    """
    return f"""# hallouminate baseline configuration: the settings and corpora of every request.
# Each repository may add its own layer, <repo>/.hallouminate/config.toml (`hallouminate init-repo NAME`).
# Remove the leading '#' of a setting to change it; check the result with `hallouminate config validate`.
# A setting must not be given different values here and in a repository layer: that is an error.
# Paths here must be absolute (or start with ~). See docs/configuration.md.

# The embedding model and where it is cached ([embeddings], [store] and [daemon] are daemon-wide:
# only this file may set them; restart the daemon after a change).
#[embeddings]
#model = "{defaults.MODEL_NAME}"
#cache_dir = "~/.cache/hallouminate/models"
# A cross-encoder re-scoring each search's best candidates (off unless set; docs/search.md, "Rerank"):
# a name fastembed knows (downloaded once from the model hub) or a directory holding one.
#reranker = "Xenova/ms-marco-MiniLM-L-6-v2"
# Or embed with an OpenAI-compatible endpoint instead of a local model (docs/model.md): model is then the
# endpoint's model; the key is read from the environment variable api_key_env names, never from here.
# Changing model or provider later needs `hallouminate index --rebuild` (the store never mixes vectors).
#provider = "openai-compatible"
#base_url = "http://127.0.0.1:8080/v1"
#dimensions = 384
#api_key_env = "OPENAI_API_KEY"
#batch_size = {defaults.ENDPOINT_BATCH_SIZE}
#timeout_secs = {defaults.ENDPOINT_TIMEOUT_SECS:g}
#max_input_tokens = {defaults.ENDPOINT_MAX_INPUT_TOKENS}
#max_retries = {defaults.ENDPOINT_MAX_RETRIES}
#send_dimensions = false

# Where the index lives: a local directory (path; [storage] path is its old name), or, for a team, an
# object store that one daemon writes and any number of read-only daemons serve (docs/configuration.md).
#[store]
#path = "~/.local/share/hallouminate/lancedb"
# Instead of path, a bucket and optional prefix on S3 or an S3-compatible server (only s3:// for now):
#   uri = "s3://team-wiki/hallouminate"
# with credentials, region and endpoint from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
# AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL) or from an AWS-style credentials file and its section
# (the environment wins); never write the secrets here:
#   credentials_file = "~/.aws/credentials"
#   profile = "{defaults.STORE_PROFILE}"
# "read-only": serve what the writer commits, checking its table version every poll_interval_secs.
#mode = "{defaults.STORE_MODE}"
#poll_interval_secs = {defaults.STORE_POLL_INTERVAL_SECS:g}  # {_span(defaults.STORE_POLL_INTERVAL_BOUNDS)}
# The writer's lease on the store: another writer is refused until it expires (renewed at a third of it).
#lease_secs = {defaults.STORE_LEASE_SECS:g}  # {_span(defaults.STORE_LEASE_BOUNDS)}

# Seconds with no connection before the daemon exits (the next client starts it again).
#[daemon]
#idle_exit_secs = {defaults.IDLE_EXIT_SECS:g}

# Defaults of `ground`; a request may override each. Each must lie in the range of its parameter.
#[search]
#top_files = {limits.TOP_FILES.default}  # {limits.TOP_FILES.span}
#chunks_per_file = {limits.CHUNKS_PER_FILE.default}  # {limits.CHUNKS_PER_FILE.span}
#limit = {limits.LIMIT.default}  # {limits.LIMIT.span}
#snippet_chars = {limits.SNIPPET_CHARS.default}  # {limits.SNIPPET_CHARS.span}
# With a reranker: its time per query before the unreranked order is returned (milliseconds).
#rerank_budget_ms = {limits.RERANK_BUDGET_MS.default}  # {limits.RERANK_BUDGET_MS.span}

# Index runs use these (a repository layer's [indexing] is not applied). Files over their kind's size cap
# are skipped and reported: text (Markdown, text, JSON, CSV, HTML, code) and binary documents (PDF,
# Office, OpenDocument). max_text_file_size was called max_file_bytes; the old name is still accepted.
#[indexing]
#chunk_tokens = {defaults.CHUNK_TOKENS}
#max_text_file_size = {defaults.MAX_TEXT_FILE_SIZE}
#max_binary_file_size = {defaults.MAX_BINARY_FILE_SIZE}
# The most a zip-based document (docx, pptx, xlsx, ods) may unpack to; a larger one is skipped.
#max_decompressed_size = {defaults.MAX_DECOMPRESSED_SIZE}
# true: an index run that finds frontmatter it cannot parse reports an error (the files are still indexed).
#fail_on_frontmatter_error = {str(defaults.FAIL_ON_FRONTMATTER_ERROR).lower()}

# From a directory above every repository (e.g. ~/work), repositories up to this many levels below are
# found and their corpora offered; 0 turns that off.
#[discovery]
#max_depth = {defaults.DISCOVERY_MAX_DEPTH}

# get_best_practice's pages: paths relative to the corpus root, {{target}} replaced by the request's target;
# the first that exists is read. A repository layer's templates are tried before these.
#[best_practice]
#path_templates = ["best-practices/{{target}}.md"]

# What a knowledge base served by `serve --kb-path DIR` holds (GrooveSeek's [parsers] enabled, as globs):
# Markdown by default; add e.g. "**/*.pdf", "**/*.docx", "**/*.py" for the other formats.
#[knowledge_base]
#globs = ["**/*.md", "**/*.markdown"]

# The daemon's HTTP listener: MCP over Streamable HTTP at /mcp, the REST search, the operator page
# (docs/http.md). Off until enabled; `hallouminate http enable|disable` and `hallouminate port set N|clear`
# edit these keys and apply them to a running daemon. Only this file may set [http].
#[http]
#enabled = true
# An IP address or "localhost"; any address other than a loopback one needs token_file.
#host = "127.0.0.1"
# {limits.HTTP_PORT.span}; without it, a random free port at each start.
#port = 8080
# Browser origins (scheme://host[:port]) allowed to call the listener, beside its own.
#allowed_origins = ["http://localhost:3000"]
# A file holding the bearer token each request must carry (Authorization: Bearer ...).
#token_file = "~/.config/hallouminate/http-token"
#max_body_bytes = 4194304
#max_sessions = 256
#session_idle_secs = 600
# The directory whose corpora the faces that take no cwd serve (KuraDB's, /api/search, /ui); default: ~.
#root = "~/work"
# A knowledge base GrooveSeek's face serves at /grooveseek/mcp (that face is mounted only when set).
#kb_path = "~/kb"

# Any set of Markdown files. globs and exclude use gitignore syntax, relative to each path;
# .gitignore, .ignore and .git/info/exclude are honoured too.
#[[corpus]]
#name = "notes"
#paths = ["~/notes"]
#globs = ["**/*.md"]
#exclude = ["drafts/"]

# A repository registered here is visible from everywhere (its own layer only from inside it).
# It derives the corpus repo:NAME:wiki, and repo:NAME:corpus when corpus_paths is set.
#[[repository]]
#name = "acme"
#path = "~/src/acme"
#wiki = ".hallouminate/wiki"
#corpus_paths = ["docs"]
#corpus_globs = ["**/*.md"]
#corpus_exclude = []
"""
