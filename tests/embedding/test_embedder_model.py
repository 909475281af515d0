"""The Embedder over the real provisioned model."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hallouminate.embedding import Embedder
from hallouminate.errors import Internal
from hallouminate.indexing import chunk_markdown
from hallouminate.model import MAX_TOKENS, MODEL_DIM


@pytest.fixture(scope="module")
def embedder(model_cache: Path) -> Embedder:
    """The real model, loaded once per module from the provisioned cache."""
    return Embedder(model_cache)


def test_shapes_types_and_normalisation(embedder: Embedder) -> None:
    assert embedder.dim == MODEL_DIM
    passages = embedder.embed_passages(["Steps to recover a forgotten login password", "Two cups of flour."])
    assert passages.shape == (2, MODEL_DIM) and passages.dtype == np.float32
    query = embedder.embed_query("How do I reset my password?")
    assert query.shape == (MODEL_DIM,) and query.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    similarity = passages @ query
    assert similarity[0] > 0.5 > 0.2 > similarity[1]
    assert embedder.embed_passages([]).shape == (0, MODEL_DIM)


def test_batches_are_consistent(embedder: Embedder) -> None:
    texts = [f"note number {i} about topic {i % 7}" for i in range(70)]  # crosses two batch boundaries
    together = embedder.embed_passages(texts)
    alone = embedder.embed_passages([texts[65]])
    assert np.allclose(together[65], alone[0], atol=1e-4)


def test_count_tokens_uses_the_model_tokenizer_without_specials(embedder: Embedder) -> None:
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello") == 1
    assert embedder.count_tokens("tokenization") == 2  # word pieces: token ##ization
    long = "word " * 1000
    assert embedder.count_tokens(long) == 1000  # never truncated
    assert embedder.max_tokens == MAX_TOKENS


def test_chunks_fit_the_model_with_the_real_tokenizer(embedder: Embedder) -> None:
    body = "\n\n".join(
        " ".join(
            f"Sentence {p}.{s} discusses configuration layering in considerable detail." for s in range(9)
        )
        for p in range(12)
    )
    page = chunk_markdown(f"# Big page\n\n## Part\n\n{body}\n", embedder.count_tokens, MAX_TOKENS - 2)
    assert len(page.chunks) > 3
    assert all(embedder.count_tokens(c.embed_text) <= MAX_TOKENS - 2 for c in page.chunks)


def test_missing_model_fails_fast_without_network(tmp_path: Path) -> None:
    with pytest.raises(Internal) as err:
        Embedder(tmp_path / "empty-cache")
    assert "hallouminate model install" in err.value.message
    # Refused by the installed-model check, before fastembed (and its hub retries) is ever reached.
    assert err.value.data["cache_dir"] == str(tmp_path / "empty-cache")
    assert not (tmp_path / "empty-cache").exists() or not any((tmp_path / "empty-cache").iterdir())


def test_loading_switches_the_hub_client_offline(embedder: Embedder) -> None:
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_queries_while_a_batch_embeds_in_another_thread(embedder: Embedder) -> None:
    import threading

    texts = [f"passage {i} about releases and tags " * 8 for i in range(64)]
    expected_batch = embedder.embed_passages(texts)
    expected_query = embedder.embed_query("release tags")
    results: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: results.append(embedder.embed_passages(texts)))
    worker.start()
    queries = [embedder.embed_query("release tags") for _ in range(10)]
    worker.join()
    assert np.allclose(results[0], expected_batch, atol=1e-4)
    assert all(np.allclose(q, expected_query, atol=1e-4) for q in queries)
