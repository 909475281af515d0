"""The real model, provisioned by the session fixture `model_cache`, loaded offline through fastembed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fastembed import TextEmbedding

from hallouminate.model import MAX_TOKENS, MODEL_DIM, MODEL_NAME, install, require_installed, status
from hallouminate.model import cache_layout as layout
from hallouminate.model.wheels import KNOWN_WHEELS, UPSTREAM_SHA256

QUERY = "How do I reset my password?"
RELATED = "Steps to recover a forgotten login password"
UNRELATED = "The recipe needs two cups of flour."


@pytest.fixture(scope="module")
def embedder(model_cache: Path) -> TextEmbedding:
    return TextEmbedding(MODEL_NAME, cache_dir=str(model_cache), local_files_only=True, threads=2)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_fastembed_still_maps_the_name_to_our_layout() -> None:
    # If fastembed ever moves the model to another repo, our cache would silently stop being found.
    (entry,) = [m for m in TextEmbedding.list_supported_models() if m["model"] == MODEL_NAME]
    assert entry["sources"]["hf"] == layout.HF_REPO
    assert entry["model_file"] == "model.onnx"
    assert entry["dim"] == MODEL_DIM


def test_sanity_pair(embedder: TextEmbedding) -> None:
    query, related, unrelated = embedder.embed([QUERY, RELATED, UNRELATED])
    assert query.shape == (MODEL_DIM,)
    assert query.dtype == np.float32
    assert abs(_cos(query, related) - 0.702) < 0.01
    assert abs(_cos(query, unrelated) - 0.049) < 0.01


def test_batching_and_padding_do_not_change_vectors(embedder: TextEmbedding) -> None:
    alone = next(iter(embedder.embed([QUERY])))
    long_text = " ".join([RELATED] * 20)
    batched = next(iter(embedder.embed([QUERY, long_text], batch_size=2)))
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_long_input_is_truncated_at_max_tokens(embedder: TextEmbedding, model_cache: Path) -> None:
    snap = require_installed(model_cache)
    assert json.loads((snap / "tokenizer_config.json").read_text())["model_max_length"] == MAX_TOKENS
    # Past the limit, extra text is cut off: two inputs that differ only after token 256 embed the same.
    prefix = " ".join(["password recovery steps"] * 100)
    a, b = embedder.embed([prefix + " apples", prefix + " engines"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_status_of_real_install(model_cache: Path) -> None:
    found = status(model_cache)
    assert found.installed, found.problem
    assert found.source in {w.requirement for w in KNOWN_WHEELS}
    assert found.snapshot_dir == layout.snapshot_dir(model_cache)
    assert set(found.files) == set(layout.SNAPSHOT_FILES)
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt"):
        assert found.files[name] == UPSTREAM_SHA256[name]
    assert str(found.snapshot_dir) in found.describe()


def test_second_install_of_real_model_is_a_no_op(model_cache: Path) -> None:
    snap = layout.snapshot_dir(model_cache)
    watched = [snap / layout.MANIFEST_NAME, snap / "model.onnx", layout.refs_main(model_cache)]
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in watched]
    manifest = watched[0].read_bytes()
    assert install(model_cache).installed
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in watched] == before
    assert watched[0].read_bytes() == manifest
