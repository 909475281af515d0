"""Build an MPNet encoder ONNX graph from safetensors weights with the `onnx` package alone (no torch).

The graph computes what Hugging Face's `MPNetModel` returns as `last_hidden_state` (the architecture of
sentence-transformers/all-mpnet-base-v2): embeddings (word + position, LayerNorm), then
`num_hidden_layers` post-norm encoder layers whose attention scores carry a learned relative-position
bias shared by all layers. fastembed does the mean pooling and L2 normalisation, so the pooler is left
out. The building blocks and conventions are those of the BERT builder in `onnx_graph`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hallouminate.model.onnx_graph import (
    EncoderConfig,
    EncoderShape,
    GraphBuilder,
    LayerNames,
    checked_float_weights,
    encoder_layers,
    finish_model,
    write_checked,
)

if TYPE_CHECKING:
    import numpy as np
    import onnx

# No token_type_ids: MPNet has no segment embeddings, and fastembed only feeds the inputs a graph declares.
INPUT_NAMES: tuple[str, ...] = ("input_ids", "attention_mask")
MPNET_LAYER = LayerNames(
    "attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "attention.LayerNorm"
)
# Hard-coded in transformers' MPNetEncoder.compute_position_bias, not read from config.json.
RELATIVE_MAX_DISTANCE = 128


class MPNetConfig(EncoderConfig):
    """MPNet's: relative-position buckets, and positions counted from the padding index."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self.buckets = int(raw.get("relative_attention_num_buckets", 32))
        self.pad_id = int(raw.get("pad_token_id", 1))
        # The bucket function halves num_buckets twice; fewer than 4 leaves no exact buckets at all.
        if self.buckets < 4:
            raise ValueError(f"relative_attention_num_buckets is {self.buckets}; at least 4 are needed")
        # Positions start at pad_token_id + 1, so the table must hold more than the padding offset.
        if not 0 <= self.pad_id < self.max_positions - 1:
            raise ValueError(f"pad_token_id {self.pad_id} leaves no room in {self.max_positions} positions")


def _expected_shapes(cfg: MPNetConfig) -> dict[str, tuple[int, ...]]:
    h = cfg.hidden
    return {
        "embeddings.word_embeddings.weight": (cfg.vocab, h),
        "embeddings.position_embeddings.weight": (cfg.max_positions, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
        "encoder.relative_attention_bias.weight": (cfg.buckets, cfg.heads),
        **MPNET_LAYER.shapes(cfg.layers, h, cfg.intermediate),
    }


def relative_position_bucket(
    relative_position: np.ndarray, num_buckets: int, max_distance: int = RELATIVE_MAX_DISTANCE
) -> np.ndarray:
    """transformers' MPNetEncoder.relative_position_bucket in numpy: bucket of each offset `key - query`."""
    import numpy as np

    n = -np.asarray(relative_position, dtype=np.int64)
    half = num_buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    max_exact = half // 2
    # np.maximum keeps log() away from 0; those entries take the exact branch anyway. The float math
    # (float32, like torch) is truncated toward zero, as torch's .to(long) does.
    scaled = np.log(np.maximum(n, 1).astype(np.float32) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (scaled * (half - max_exact)).astype(np.int64)
    large = np.minimum(large, half - 1)
    return ret + np.where(n < max_exact, n, large)


def build_mpnet_graph(raw_config: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """Return the encoder as an ONNX model; raises ValueError if config and weights disagree."""
    import numpy as np

    cfg = MPNetConfig(raw_config)
    # Checkpoints saved from MPNetForX carry an "mpnet." prefix.
    g = GraphBuilder(checked_float_weights(weights, _expected_shapes(cfg), "mpnet."), cfg.eps)
    f32 = g.weights
    one = g.scalar("const.one", 1.0)
    axis0 = g.ints("const.axis0", [0])
    axis1 = g.ints("const.axis1", [1])
    padding_idx = g.tensor("const.padding_idx", np.array(cfg.pad_id, dtype=np.int64))
    # CumSum's spec asks for a 0-D axis, Unsqueeze's for a 1-D list: hence a separate scalar.
    seq_axis = g.tensor("const.seq_axis", np.array(1, dtype=np.int64))

    # Embeddings. transformers numbers real tokens padding_idx+1, padding_idx+2, ... and gives pads
    # padding_idx itself: cumsum(mask) * mask + padding_idx, two cheap ops on (batch, seq) integers.
    word_table = g.tensor("embeddings.word", f32["embeddings.word_embeddings.weight"])
    position_table = g.tensor("embeddings.position", f32["embeddings.position_embeddings.weight"])
    counted = g.op("Mul", [g.op("CumSum", ["attention_mask", seq_axis]), "attention_mask"])
    positions = g.op("Add", [counted, padding_idx])
    words = g.op("Gather", [word_table, "input_ids"])
    x = g.norm(g.op("Add", [words, g.op("Gather", [position_table, positions])]), "embeddings.LayerNorm")

    # Relative-position bias, shared by all layers. It depends only on the offset key - query, so the
    # bias of every offset in [-(P-1), P-1] is tabulated at build time (bucket lookup included), and the
    # graph only gathers it with offset + P - 1 for the current length.
    span = cfg.max_positions
    offsets = np.arange(-(span - 1), span, dtype=np.int64)
    offset_bias = f32["encoder.relative_attention_bias.weight"][
        relative_position_bucket(offsets, cfg.buckets)
    ]
    offset_table = g.tensor("encoder.relative_attention_bias.by_offset", offset_bias)
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    # Key positions come pre-shifted by P - 1 so that key - query is already a row of the offset table.
    shifted = g.tensor("const.key_positions", np.arange(span - 1, 2 * span - 1, dtype=np.int64))
    unshifted = g.tensor("const.query_positions", np.arange(span, dtype=np.int64))
    keys = g.op("Slice", [shifted, axis0, seq_len, axis0])
    queries = g.op("Slice", [unshifted, axis0, seq_len, axis0])
    offset_index = g.op("Sub", [g.op("Unsqueeze", [keys, axis0]), g.op("Unsqueeze", [queries, axis1])])
    # (seq, seq, heads) -> (1, heads, seq, seq)
    position_bias = g.op(
        "Unsqueeze",
        [g.op("Transpose", [g.op("Gather", [offset_table, offset_index])], perm=[2, 0, 1]), axis0],
    )

    # Added to the padding bias once here rather than in every layer; for real keys the sum is the
    # position bias exactly.
    attention_bias = g.op("Add", [position_bias, g.padding_bias(one)])

    shape = EncoderShape(cfg.layers, cfg.heads, cfg.head_dim, cfg.hidden)
    encoder_layers(g, x, attention_bias, shape, MPNET_LAYER)
    doc = "MPNet encoder built from safetensors weights; output is last_hidden_state."
    return finish_model(g, "mpnet_encoder", doc, INPUT_NAMES, cfg.hidden)


def build_mpnet_onnx_from_safetensors(safetensors_path: Path, config_path: Path, out_path: Path) -> str:
    """Read config.json and the weights, build the graph, check it, write it; return its sha256."""
    from safetensors.numpy import load_file

    config = json.loads(config_path.read_text(encoding="utf-8"))
    return write_checked(build_mpnet_graph(config, load_file(str(safetensors_path))), out_path)
