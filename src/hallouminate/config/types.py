"""The resolved configuration: plain frozen values, no I/O, no heavy imports."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hallouminate.config import defaults
from hallouminate.protocol import limits

CorpusKind = Literal["wiki", "corpus", "custom"]
# [store] mode: a "read-write" daemon indexes and writes; a "read-only" one serves what the writer committed.
StoreMode = Literal["read-write", "read-only"]


@dataclass(frozen=True)
class CorpusSpec:
    """One searchable set of Markdown files.

    ``kind`` is "wiki" for a derived ``repo:NAME:wiki``, "corpus" for a derived ``repo:NAME:corpus``
    (``[[repository]] corpus_paths``) and "custom" for an explicit ``[[corpus]]``.
    """

    name: str
    kind: CorpusKind
    roots: tuple[Path, ...]
    globs: tuple[str, ...]
    exclude: tuple[str, ...]
    repository: str | None
    # The rows' key as another daemon stored them: a read-only daemon serves the writer's corpora, whose
    # roots are on the writer's machine (daemon/read_only.py); None: derived from ``roots``.
    stored_as: str | None = None

    @property
    def store_key(self) -> str:
        """An identity for this corpus' rows: its name plus a digest of its roots.

        Two checkouts of one repository (a linked worktree) derive the same name, ``repo:proj:wiki``, over
        different roots; rows keyed by the name alone would show one checkout's pages to the other.
        """
        if self.stored_as is not None:
            return self.stored_as
        digest = hashlib.sha256("\0".join(str(r) for r in self.roots).encode()).hexdigest()[:12]
        return f"{self.name}@{digest}"


@dataclass(frozen=True)
class Where:
    """Where a request comes from: its canonical ``cwd``, and whether that directory is itself a knowledge
    base (``serve --kb-path DIR``, the GrooveSeek face). A knowledge base has one corpus, ``kb``, rooted at
    ``cwd``; the configuration that applies to ``cwd`` still gives the settings."""

    cwd: Path
    kb: bool = False


@dataclass(frozen=True)
class HttpSettings:
    """``[http]`` (baseline config only; docs/http.md): the daemon's HTTP listener, off until enabled."""

    enabled: bool = False
    host: str = "127.0.0.1"
    # None: a random free port at each start (``hallouminate port clear``).
    port: int | None = None
    # Origins a browser page may call from, beside the listener's own (DNS-rebinding defence).
    allowed_origins: tuple[str, ...] = ()
    # A file holding the bearer token every request must carry; required to bind a non-loopback host.
    token_file: Path | None = None
    max_body_bytes: int = 4 * 1024 * 1024
    max_sessions: int = 256
    session_idle_secs: float = 600.0
    # The directory whose corpora the faces that take no cwd serve (KuraDB's, /api/search, /ui);
    # None: the home directory (repositories found below it, as a cwd above every repository finds them).
    root: Path | None = None
    # The knowledge base GrooveSeek's face serves at /grooveseek/mcp; None: that face is not mounted.
    kb_path: Path | None = None


@dataclass(frozen=True)
class Settings:
    model_name: str
    model_cache_dir: Path
    store_dir: Path
    idle_exit_secs: float
    top_files: int
    chunks_per_file: int
    limit: int
    snippet_chars: int
    chunk_tokens: int
    # [indexing] max_text_file_size (formerly max_file_bytes): the largest text file indexed (Markdown,
    # text, JSON, CSV, HTML, code); larger ones are skipped and reported.
    max_file_bytes: int
    # How deep below a cwd that is above every repository to look for repositories (0 turns it off).
    discovery_max_depth: int = 4
    # A cross-encoder re-scoring ranked results (a fastembed name or a directory), or None: no rerank stage.
    reranker: str | None = None
    # [embeddings] provider: "local" (a model run in the daemon, model_name) or "openai-compatible" (an
    # HTTP embedding endpoint: model_name is the endpoint's model; embedding/endpoint.py, docs/model.md).
    embedding_provider: str = defaults.EMBEDDING_PROVIDER
    # The endpoint's settings (used with provider = "openai-compatible" only; the layer checks them).
    endpoint_base_url: str | None = None
    endpoint_dimensions: int | None = None
    # The NAME of the environment variable holding the key; the key itself is never in a config file.
    endpoint_api_key_env: str | None = None
    endpoint_batch_size: int = defaults.ENDPOINT_BATCH_SIZE
    endpoint_timeout_secs: float = defaults.ENDPOINT_TIMEOUT_SECS
    endpoint_max_input_tokens: int = defaults.ENDPOINT_MAX_INPUT_TOKENS
    endpoint_max_retries: int = defaults.ENDPOINT_MAX_RETRIES
    # Whether requests carry "dimensions" (models with shortenable vectors need it; others refuse it).
    endpoint_send_dimensions: bool = False
    # How long one query's rerank may take before the fused order is returned (protocol/limits.py).
    rerank_budget_ms: int = limits.RERANK_BUDGET_MS.default or 0
    # get_best_practice's page paths, each with {target}: the repo layer's first, then the baseline's.
    best_practice_templates: tuple[str, ...] = ()
    # [indexing] the largest binary document indexed (PDF, Office, OpenDocument: sandbox.formats), and the
    # decompression budget of a zip-based one (the sum of its members' declared sizes).
    max_binary_file_size: int = defaults.MAX_BINARY_FILE_SIZE
    max_decompressed_size: int = defaults.MAX_DECOMPRESSED_SIZE
    # [indexing] fail_on_frontmatter_error: an index run that leaves frontmatter unparsed reports an error.
    fail_on_frontmatter_error: bool = defaults.FAIL_ON_FRONTMATTER_ERROR
    # [knowledge_base] globs: the files of a knowledge base (`serve --kb-path DIR`, corpus `kb`).
    kb_globs: tuple[str, ...] = defaults.KB_GLOBS
    # [store] (baseline only; docs/configuration.md): store_dir above is [store] path, the local directory
    # (formerly [storage] path); it keeps its default when store_uri is set, and is not the store then.
    # store_uri: the team's object store, normalized "s3://bucket" or "s3://bucket/prefix" (no trailing
    # "/"); None: the store is the local store_dir.
    store_uri: str | None = None
    store_mode: StoreMode = "read-write"
    # An AWS-style shared credentials/config INI file and its section (only with store_uri; the config never
    # holds the secrets: config.credentials.store_credentials reads them, the environment first).
    store_credentials_file: Path | None = None
    store_profile: str = defaults.STORE_PROFILE
    # A read-only daemon's check of the writer's table version; the writer's lease expiry (renewed at a
    # third of it). Seconds.
    store_poll_interval_secs: float = defaults.STORE_POLL_INTERVAL_SECS
    store_lease_secs: float = defaults.STORE_LEASE_SECS
    # [http]: the daemon's HTTP listener (http/).
    http: HttpSettings = field(default_factory=HttpSettings)


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    # Insertion-ordered: baseline entries first, then the repo layer's, each in file order.
    corpora: dict[str, CorpusSpec]
    repository_name: str | None
    default_corpus: str | None
    sources: tuple[Path, ...]
    # Every configured repository by name -> its canonical root (for hooks and diagnostics).
    repositories: dict[str, Path] = field(default_factory=dict)
    # Provenance, for `config show`: setting key ("search.top_files") -> the file that set it (absent:
    # default), and corpus name -> the file that defined it.
    setting_sources: dict[str, Path] = field(default_factory=dict)
    # A list setting merged from several files: each value with the file that gave it.
    list_sources: dict[str, tuple[tuple[str, Path], ...]] = field(default_factory=dict)
    corpus_sources: dict[str, Path] = field(default_factory=dict)
    # Repo layers found below a cwd that is above every repository (see `discover_repositories`).
    discovered: tuple[Path, ...] = ()
    # Problems that did not stop resolution: a discovered repository skipped because its config is
    # broken or clashes with another, a discovery walk cut short.
    warnings: tuple[str, ...] = ()
