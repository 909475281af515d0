"""The hand-built MPNet graph against a plain numpy implementation of MPNet, on a tiny random model."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from safetensors.numpy import save_file

from hallouminate.model.mpnet_graph import (
    INPUT_NAMES,
    build_mpnet_graph,
    build_mpnet_onnx_from_safetensors,
)
from hallouminate.model.onnx_graph import OPSET, OUTPUT_NAME
from support.model_numpy_reference import Reference, padding_bias
from support.model_tiny_mpnet import tiny_mpnet_weights

TINY_CONFIG: dict[str, Any] = {
    "hidden_size": 32,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "intermediate_size": 64,
    "vocab_size": 120,
    "layer_norm_eps": 1e-5,
    "max_position_embeddings": 80,
    "relative_attention_num_buckets": 32,
    "pad_token_id": 1,
    "hidden_act": "gelu",
}
PAD = TINY_CONFIG["pad_token_id"]


def reference_bucket(relative_position: np.ndarray, num_buckets: int, max_distance: int = 128) -> np.ndarray:
    """transformers' MPNetEncoder.relative_position_bucket, transcribed independently of the module."""
    ret = np.zeros_like(relative_position)
    n = -relative_position
    num_buckets //= 2
    ret += (n < 0).astype(np.int64) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):  # n == 0 takes the is_small branch
        log_ratio = np.log(n / max_exact) / math.log(max_distance / max_exact)
    val_if_large = max_exact + np.trunc(np.where(is_small, 0.0, log_ratio) * (num_buckets - max_exact))
    val_if_large = np.minimum(val_if_large.astype(np.int64), num_buckets - 1)
    return ret + np.where(is_small, n, val_if_large)


def reference_mpnet(
    cfg: dict[str, Any], w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """MPNetModel's last_hidden_state, written out in float64 numpy."""
    ref = Reference(cfg, w)
    seq = ids.shape[1]
    positions = np.cumsum(mask, axis=1) * mask + cfg["pad_token_id"]
    x = (
        ref.w["embeddings.word_embeddings.weight"][ids]
        + ref.w["embeddings.position_embeddings.weight"][positions]
    )
    x = ref.norm(x, "embeddings.LayerNorm")
    relative = np.arange(seq)[None, :] - np.arange(seq)[:, None]  # [query, key] = key - query
    buckets = reference_bucket(relative, cfg["relative_attention_num_buckets"])
    position_bias = ref.w["encoder.relative_attention_bias.weight"][buckets].transpose(2, 0, 1)[None]
    names = (
        "attention.attn.q",
        "attention.attn.k",
        "attention.attn.v",
        "attention.attn.o",
        "attention.LayerNorm",
    )
    return ref.layers(x, position_bias + padding_bias(mask), names)


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    # Large weights, so that a wrong bucket or position shows up well above the tolerance.
    return tiny_mpnet_weights(TINY_CONFIG, seed=7, scale=0.2)


@pytest.fixture(scope="module")
def session(weights: dict[str, np.ndarray]) -> ort.InferenceSession:
    model = build_mpnet_graph(TINY_CONFIG, weights)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _run(session: ort.InferenceSession, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return session.run([OUTPUT_NAME], {"input_ids": ids, "attention_mask": mask})[0]


def _random_ids(length: int, seed: int) -> np.ndarray:
    # Ids from 3 up keep the pad id (1) out of real tokens.
    return np.random.default_rng(seed).integers(3, TINY_CONFIG["vocab_size"], size=length, dtype=np.int64)


def test_bucket_reference_matches_known_values() -> None:
    """Anchors the test's bucket transcription: exact buckets near zero, log buckets far out, capped."""
    rel = np.array([0, -1, -7, -8, -15, -16, -127, -128, -1000, 1, 7, 8, 16, 1000])
    assert reference_bucket(rel, 32).tolist() == [0, 1, 7, 8, 9, 10, 15, 15, 15, 17, 23, 24, 26, 31]


def test_single_sequence_matches_numpy_mpnet(
    session: ort.InferenceSession, weights: dict[str, np.ndarray]
) -> None:
    """One unpadded sequence of 20 tokens gives MPNetModel's last_hidden_state."""
    ids = _random_ids(20, seed=1)[None]
    mask = np.ones_like(ids)
    out = _run(session, ids, mask)
    assert out.dtype == np.float32
    assert out.shape == (1, 20, TINY_CONFIG["hidden_size"])
    np.testing.assert_allclose(out, reference_mpnet(TINY_CONFIG, weights, ids, mask), atol=1e-4)


def test_padded_batch_matches_numpy_mpnet_on_real_tokens(
    session: ort.InferenceSession, weights: dict[str, np.ndarray]
) -> None:
    """In a right-padded batch every real token matches the reference, and matches its unpadded run."""
    ids = np.stack([_random_ids(12, seed=2), _random_ids(12, seed=3)])
    ids[1, 7:] = PAD
    mask = (ids != PAD).astype(np.int64)
    out = _run(session, ids, mask)
    expected = reference_mpnet(TINY_CONFIG, weights, ids, mask)
    real = mask.astype(bool)
    np.testing.assert_allclose(out[real], expected[real], atol=1e-4)
    alone = _run(session, ids[1:, :7], mask[1:, :7])
    np.testing.assert_allclose(out[1, :7], alone[0], atol=1e-5)


def test_long_sequence_exercises_log_buckets(
    session: ort.InferenceSession, weights: dict[str, np.ndarray]
) -> None:
    """At 70 tokens most offsets fall in the logarithmic buckets, which must match transformers' rule."""
    ids = _random_ids(70, seed=4)[None]
    mask = np.ones_like(ids)
    np.testing.assert_allclose(
        _run(session, ids, mask), reference_mpnet(TINY_CONFIG, weights, ids, mask), atol=1e-4
    )


def test_graph_interface(weights: dict[str, np.ndarray]) -> None:
    """Two int64 inputs (no token_type_ids), one float output, opset as the BERT builder, no pooler."""
    model = build_mpnet_graph(TINY_CONFIG, weights)
    assert INPUT_NAMES == ("input_ids", "attention_mask")
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
        TINY_CONFIG["hidden_size"],
    ]
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    assert not any(t.name.startswith("pooler") for t in model.graph.initializer)


def test_prefixed_checkpoint_names_are_accepted(weights: dict[str, np.ndarray]) -> None:
    """Checkpoints saved from MPNetForX prefix every weight with "mpnet."; the builder strips it."""
    prefixed = {f"mpnet.{k}": v for k, v in weights.items()}
    assert len(build_mpnet_graph(TINY_CONFIG, prefixed).graph.node) > 0


def test_missing_weight_is_named(weights: dict[str, np.ndarray]) -> None:
    """A weight the config calls for but the checkpoint lacks is reported by name."""
    name = "encoder.layer.1.attention.attn.k.bias"
    with pytest.raises(ValueError, match=f"weight {name} is missing"):
        build_mpnet_graph(TINY_CONFIG, {k: v for k, v in weights.items() if k != name})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_size": 16}, "shape"),
        ({"relative_attention_num_buckets": 16}, "relative_attention_bias.weight has shape"),
        ({"hidden_act": "relu"}, "hidden_act"),
        ({"num_attention_heads": 5}, "multiple"),
        ({"num_hidden_layers": 3}, "missing"),
    ],
)
def test_config_and_weights_must_agree(
    weights: dict[str, np.ndarray], change: dict[str, Any], message: str
) -> None:
    """Mis-shaped or absent weights and unsupported settings are ValueErrors, not broken graphs."""
    with pytest.raises(ValueError, match=message):
        build_mpnet_graph({**TINY_CONFIG, **change}, weights)


def test_build_from_files_returns_hash_of_written_graph(
    weights: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """The file builder writes a loadable graph and returns the sha256 of exactly those bytes."""
    save_file(weights, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(TINY_CONFIG))
    out = tmp_path / "model.onnx"
    digest = build_mpnet_onnx_from_safetensors(tmp_path / "model.safetensors", tmp_path / "config.json", out)
    assert digest == hashlib.sha256(out.read_bytes()).hexdigest()
    ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
