"""The Embedder over the real provisioned model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hallouminate.embedding import Embedder
from hallouminate.errors import Internal
from hallouminate.indexing import chunk_markdown
from hallouminate.model import MAX_TOKENS, MODEL_DIM


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


# The texts of minilm_vectors_0.1.npy, embedded as passages by hallouminate 0.1 (main at 86c54ef), which
# loaded fastembed's built-in entry from a fake hub cache. A store built then holds such vectors.
REFERENCE_TEXTS = [
    "How do I reset my password?",
    "Steps to recover a forgotten login password",
    "The recipe needs two cups of flour.",
    "# Release process\n\nTag the commit, run `make dist`, and upload the wheel. Ünïcödé — ✓ 日本語",
    " ".join(["password recovery steps"] * 100) + " apples",
]


def test_vectors_are_those_hallouminate_0_1_stored(embedder: Embedder) -> None:
    reference = np.load(Path(__file__).with_name("minilm_vectors_0.1.npy"))
    for vectors in (embedder.embed_passages(REFERENCE_TEXTS), embedder.embed_queries(REFERENCE_TEXTS)):
        cosines = np.sum(vectors * reference, axis=1)
        # Measured bit-identical on the build machine; another CPU may differ by float noise only.
        assert cosines.min() >= 0.99999, cosines
        assert np.abs(vectors - reference).max() <= 1e-5


_NO_NETWORK = """
import json, os, socket, sys
from pathlib import Path
connects = []
real_connect = socket.socket.connect
def connect(self, address):
    if self.family != socket.AF_UNIX:
        connects.append(repr(address))
    return real_connect(self, address)
socket.socket.connect = connect
from hallouminate.embedding import Embedder
embedder = Embedder(Path(sys.argv[1]))
embedder.embed_passages(["amber walrus"]); embedder.embed_query("amber walrus")
print(json.dumps({
    "connects": connects,
    "hub_offline": os.environ.get("HF_HUB_OFFLINE"),
    "install_only_modules": sorted(m for m in ("onnx", "safetensors", "pip") if m in sys.modules),
}))
"""


def test_loading_needs_no_network_and_switches_nothing_off(model_cache: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "FASTEMBED_"))}
    run = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK, str(model_cache)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["connects"] == []
    # 0.1 set HF_HUB_OFFLINE=1 for the whole process; the local path alone is what keeps the hub out now.
    assert seen["hub_offline"] is None
    # The install-only dependencies (ADR 0020) are not loaded to embed.
    assert seen["install_only_modules"] == []


def test_queries_while_a_batch_embeds_in_another_thread(embedder: Embedder) -> None:
    import threading

    texts = [f"passage {i} about releases and tags " * 8 for i in range(64)]
    expected_batch = embedder.embed_passages(texts)
    expected_query = embedder.embed_query("release tags")
    results: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: results.append(embedder.embed_passages(texts)))
    worker.start()
    queries = []
    during = 0  # queries begun and finished while the batch was embedding
    while worker.is_alive():
        queries.append(embedder.embed_query("release tags"))
        during += worker.is_alive()
    worker.join()
    assert during >= 1, "the batch was done before a query ran beside it"
    assert np.allclose(results[0], expected_batch, atol=1e-4)
    assert all(np.allclose(q, expected_query, atol=1e-4) for q in queries)
