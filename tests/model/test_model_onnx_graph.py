"""The hand-built BERT graph against a plain numpy implementation of BERT, on a tiny random model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from hallouminate.model.onnx_graph import (
    INPUT_NAMES,
    OPSET,
    OUTPUT_NAME,
    build_bert_graph,
    build_onnx_from_safetensors,
)
from support.model_numpy_reference import Reference, padding_bias
from support.model_tiny_bert import TinyModel, build_tiny_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def reference_bert(
    cfg: dict[str, Any], w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray, types: np.ndarray
) -> np.ndarray:
    """BertModel's last_hidden_state, written out in float64 numpy."""
    ref = Reference(cfg, w)
    x = (
        ref.w["embeddings.word_embeddings.weight"][ids]
        + ref.w["embeddings.token_type_embeddings.weight"][types]
        + ref.w["embeddings.position_embeddings.weight"][: ids.shape[1]]
    )
    x = ref.norm(x, "embeddings.LayerNorm")
    names = (
        "attention.self.query",
        "attention.self.key",
        "attention.self.value",
        "attention.output.dense",
        "attention.output.LayerNorm",
    )
    return ref.layers(x, padding_bias(mask), names)


def _session(cfg: dict[str, Any], weights: dict[str, np.ndarray]) -> ort.InferenceSession:
    model = build_bert_graph(cfg, weights)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _run(session: ort.InferenceSession, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
    return session.run([OUTPUT_NAME], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]


def test_graph_matches_numpy_bert(tiny_model: TinyModel) -> None:
    cfg, weights = tiny_model.config, tiny_model.weights
    ids = np.array([[2, 5, 6, 7, 8, 9, 3], [2, 12, 13, 3, 0, 0, 0]], dtype=np.int64)
    mask = (ids != 0).astype(np.int64)
    types = np.array([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0]], dtype=np.int64)
    out = _run(_session(cfg, weights), ids, mask, types)
    assert out.dtype == np.float32
    assert out.shape == (2, 7, cfg["hidden_size"])
    np.testing.assert_allclose(out, reference_bert(cfg, weights, ids, mask, types), atol=2e-5)


def test_padding_leaves_real_tokens_alone(tiny_model: TinyModel) -> None:
    session = _session(tiny_model.config, tiny_model.weights)
    short = np.array([[2, 14, 15, 3]], dtype=np.int64)
    alone = _run(session, short, np.ones_like(short), np.zeros_like(short))
    batch = np.array([[2, 14, 15, 3, 0, 0], [2, 5, 6, 7, 8, 3]], dtype=np.int64)
    padded = _run(session, batch, (batch != 0).astype(np.int64), np.zeros_like(batch))
    np.testing.assert_allclose(padded[0, :4], alone[0], atol=1e-5)


def test_graph_interface(tiny_model: TinyModel) -> None:
    model = build_bert_graph(tiny_model.config, tiny_model.weights)
    assert [i.name for i in model.graph.input] == list(INPUT_NAMES)
    for value in model.graph.input:
        assert value.type.tensor_type.elem_type == 7  # INT64
        assert [d.dim_param for d in value.type.tensor_type.shape.dim] == ["batch_size", "sequence_length"]
    (output,) = model.graph.output
    assert output.name == OUTPUT_NAME
    dims = output.type.tensor_type.shape.dim
    assert [dims[0].dim_param, dims[1].dim_param, dims[2].dim_value] == [
        "batch_size",
        "sequence_length",
        tiny_model.config["hidden_size"],
    ]
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    # The pooler and position_ids of the checkpoint are not part of the encoder.
    assert not any(t.name.startswith("pooler") for t in model.graph.initializer)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_size": 32}, "shape"),
        ({"hidden_act": "relu"}, "hidden_act"),
        ({"num_attention_heads": 5}, "multiple"),
        ({"num_hidden_layers": 3}, "missing"),
    ],
)
def test_config_and_weights_must_agree(tiny_model: TinyModel, change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_bert_graph({**tiny_model.config, **change}, tiny_model.weights)


def test_build_from_files_returns_hash_of_written_graph(tiny_model: TinyModel, tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(tiny_model.files["model.safetensors"])
    (tmp_path / "config.json").write_text(json.dumps(tiny_model.config))
    out = tmp_path / "model.onnx"
    digest = build_onnx_from_safetensors(tmp_path / "model.safetensors", tmp_path / "config.json", out)
    assert digest == hashlib.sha256(out.read_bytes()).hexdigest()
    ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
