"""An indexer over a real store and the real model, for the tests that drive the indexer in process."""

from __future__ import annotations

from pathlib import Path

from hallouminate.config import CorpusSpec, Settings
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.storage import Store


def indexer_for(
    tmp_path: Path, embedder: Embedder, root: Path, *, max_file_bytes: int = 100_000
) -> tuple[Indexer, Store, CorpusSpec]:
    """An indexer writing to a fresh store under ``tmp_path``, and the one-root corpus ``repo:t:wiki``."""
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
        max_file_bytes=max_file_bytes,
    )
    spec = CorpusSpec("repo:t:wiki", "wiki", (root,), ("**/*.md",), (), "t")
    return Indexer(store, embedder, settings), store, spec
