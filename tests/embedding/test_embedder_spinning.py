"""The query model's ONNX Runtime threads block between runs instead of spinning (ADR 0058), and the
vectors are exactly those of fastembed's own session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from hallouminate.embedding import Embedder
from hallouminate.embedding.embedder import fastembed_name
from hallouminate.model import MODEL_NAME, PROVISIONED

SPINNING = "session.intra_op.allow_spinning"


def _session(embedder: Embedder) -> ort.InferenceSession:
    inner: Any = embedder._model.model
    session = inner.model
    assert isinstance(session, ort.InferenceSession)
    return session


def test_the_model_session_does_not_spin(embedder: Embedder) -> None:
    options = _session(embedder).get_session_options()
    assert options.get_session_config_entry(SPINNING) == "0"
    # fastembed's own options are kept.
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL


def test_vectors_are_bit_identical_to_fastembeds_session(embedder: Embedder, model_cache: Path) -> None:
    from fastembed import TextEmbedding

    directory = PROVISIONED[MODEL_NAME].require_installed(model_cache)
    # fastembed's session as fastembed builds it (spinning on), over the same files.
    plain = TextEmbedding(
        fastembed_name(MODEL_NAME), cache_dir=str(model_cache), specific_model_path=str(directory)
    )
    queries = [
        f"how is setting {i} of the {w} service configured" for i, w in enumerate(["billing", "auth"] * 5)
    ]
    passages = [
        f"# Part {i}\n\nThe {w} service reads its settings from the layered configuration." * (i + 1)
        for i, w in enumerate(["billing", "auth", "search"] * 12)
    ]
    expected_queries = np.asarray(list(plain.query_embed(queries, batch_size=len(queries))), dtype=np.float32)
    expected_passages = np.asarray(list(plain.passage_embed(passages, batch_size=32)), dtype=np.float32)
    assert np.array_equal(embedder.embed_queries(queries), expected_queries)
    assert np.array_equal(embedder.embed_passages(passages), expected_passages)
