"""Configuration: the XDG baseline plus the repository layer, validated and merged.

This package imports nothing heavy (no lancedb, fastembed or numpy): the CLI's light commands use it.
"""

from __future__ import annotations

from hallouminate.config.discover import discover_repositories
from hallouminate.config.init_repo import INDEX_END, INDEX_START, init_repo
from hallouminate.config.merge import SETTING_FIELDS, wiki_corpus_name
from hallouminate.config.resolve import (
    KB_CORPUS,
    as_knowledge_base,
    corpus_for,
    find_repo_root,
    load_baseline,
    resolve,
)
from hallouminate.config.types import CorpusKind, CorpusSpec, Resolved, Settings, Where
from hallouminate.config.validate import (
    baseline_template,
    describe_effective,
    files_for,
    validate_file,
    validate_for,
)

__all__ = [
    "INDEX_END",
    "INDEX_START",
    "KB_CORPUS",
    "SETTING_FIELDS",
    "CorpusKind",
    "CorpusSpec",
    "Resolved",
    "Settings",
    "Where",
    "as_knowledge_base",
    "baseline_template",
    "corpus_for",
    "describe_effective",
    "discover_repositories",
    "files_for",
    "find_repo_root",
    "init_repo",
    "load_baseline",
    "resolve",
    "validate_file",
    "validate_for",
    "wiki_corpus_name",
]
