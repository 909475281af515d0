"""The resolved configuration: plain frozen values, no I/O, no heavy imports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

CorpusKind = Literal["wiki", "corpus", "custom"]


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
    max_file_bytes: int


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
