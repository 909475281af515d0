"""The hand-built BERT graph against a plain numpy implementation of BERT, on a tiny random model."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from model_tiny_bert import TinyModel, build_tiny_model

from hallouminate.model.onnx_graph import (
    INPUT_NAMES,
    OPSET,
    OUTPUT_NAME,
    build_bert_graph,
    build_onnx_from_safetensors,
)

_erf = np.vectorize(math.erf)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def reference_bert(
    cfg: dict[str, Any], w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray, types: np.ndarray
) -> np.ndarray:
    """BertModel's last_hidden_state, written out in float64 numpy."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    eps = cfg["layer_norm_eps"]
    batch, seq = ids.shape
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    dim = hidden // heads

    def linear(x: np.ndarray, name: str) -> np.ndarray:
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def ln(x: np.ndarray, name: str) -> np.ndarray:
        return _layer_norm(x, w[f"{name}.weight"], w[f"{name}.bias"], eps)

    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.token_type_embeddings.weight"][types]
        + w["embeddings.position_embeddings.weight"][:seq]
    )
    x = ln(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    for n in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{n}."

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)

        q, k, v = (split(linear(x, f"{p}attention.self.{part}")) for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        x = ln(linear(context, f"{p}attention.output.dense") + x, f"{p}attention.output.LayerNorm")
        inner = linear(x, f"{p}intermediate.dense")
        gelu = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
        x = ln(linear(gelu, f"{p}output.dense") + x, f"{p}output.LayerNorm")
    return x


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
