"""Fixtures of the indexer tests: a small wiki and an indexer over a real store and the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.storage import Store
from support.indexer import indexer_for


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
    return indexer_for(tmp_path, embedder, wiki, max_file_bytes=10_000)
