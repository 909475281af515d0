"""Configuration: the XDG baseline plus the repository layer, validated and merged.

This package imports nothing heavy (no lancedb, fastembed or numpy): the CLI's light commands use it.
"""

from __future__ import annotations

from hallouminate.config.init_repo import INDEX_END, INDEX_START, init_repo
from hallouminate.config.merge import wiki_corpus_name
from hallouminate.config.resolve import corpus_for, find_repo_root, load_baseline, resolve
from hallouminate.config.types import CorpusKind, CorpusSpec, Resolved, Settings

__all__ = [
    "INDEX_END",
    "INDEX_START",
    "CorpusKind",
    "CorpusSpec",
    "Resolved",
    "Settings",
    "corpus_for",
    "find_repo_root",
    "init_repo",
    "load_baseline",
    "resolve",
    "wiki_corpus_name",
]
