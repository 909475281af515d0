"""Fixtures of the indexer tests: a small wiki and an indexer over a real store and the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.config import CorpusSpec, Settings
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.storage import Store


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki"
    (root / "sub").mkdir(parents=True)
    (root / "index.md").write_text("# Index\n\nThe entry page.\n")
    (root / "alpha.md").write_text("# Alpha\n\nAbout alpha.\n\n## Details\n\nAlpha details here.\n")
    (root / "sub" / "beta.md").write_text("# Beta\n\nAbout beta.\n")
    return root


@pytest.fixture
def setup(tmp_path: Path, wiki: Path, embedder: Embedder) -> tuple[Indexer, Store, CorpusSpec]:
    store = Store(tmp_path / "db", embedder.dim)
    settings = Settings(
        model_name="unused",
        model_cache_dir=tmp_path / "unused",
        store_dir=tmp_path / "db",
        idle_exit_secs=900,
        top_files=10,
        chunks_per_file=3,
        limit=50,
        snippet_chars=240,
        chunk_tokens=256,
        max_file_bytes=10_000,
    )
    spec = CorpusSpec("repo:t:wiki", "wiki", (wiki,), ("**/*.md",), (), "t")
    return Indexer(store, embedder, settings), store, spec
