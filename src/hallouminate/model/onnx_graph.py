"""Build a BERT encoder ONNX graph from safetensors weights with the `onnx` package alone (no torch).

The graph computes what Hugging Face's `BertModel` returns as `last_hidden_state`: embeddings (word +
position + token type, LayerNorm), then `num_hidden_layers` post-norm encoder layers with exact (erf)
GELU. fastembed does the mean pooling and L2 normalisation itself, so the pooler is left out.
LayerNorm is the opset-17 op, and the erf GELU is written in the order exporters use, so onnxruntime
fuses it into a single Gelu node when it loads the graph.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import onnx

# LayerNormalization became a standard op in opset 17; IR 8 is what opset 17 shipped with, so older
# onnxruntime builds load the file too.
OPSET = 17
IR_VERSION = 8
INPUT_NAMES: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"


class EncoderConfig:
    """The numbers of config.json every encoder graph depends on, validated."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.hidden = int(raw["hidden_size"])
        self.heads = int(raw["num_attention_heads"])
        self.layers = int(raw["num_hidden_layers"])
        self.intermediate = int(raw["intermediate_size"])
        self.vocab = int(raw["vocab_size"])
        self.eps = float(raw["layer_norm_eps"])
        self.max_positions = int(raw["max_position_embeddings"])
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {raw.get('hidden_act')!r}: only exact 'gelu' is built")
        if self.layers < 1:
            raise ValueError(f"num_hidden_layers is {self.layers}; at least one layer is needed")
        if self.hidden % self.heads:
            raise ValueError(f"hidden_size {self.hidden} is not a multiple of {self.heads} heads")
        self.head_dim = self.hidden // self.heads


class BertConfig(EncoderConfig):
    """BERT's: token types and absolute positions."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self.type_vocab = int(raw["type_vocab_size"])
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"unsupported position_embedding_type {raw.get('position_embedding_type')!r}")


@dataclass(frozen=True)
class LayerNames:
    """Where a checkpoint keeps each part of an encoder layer, below ``encoder.layer.N.``."""

    query: str
    key: str
    value: str
    attention_out: str
    attention_norm: str

    def shapes(self, layers: int, hidden: int, intermediate: int) -> dict[str, tuple[int, ...]]:
        """The weight shapes of ``layers`` such layers and their exact-GELU feed-forward."""
        h, i = hidden, intermediate
        shapes: dict[str, tuple[int, ...]] = {}
        for n in range(layers):
            p = f"encoder.layer.{n}."
            for part in (self.query, self.key, self.value, self.attention_out):
                shapes[f"{p}{part}.weight"], shapes[f"{p}{part}.bias"] = (h, h), (h,)
            for part in (self.attention_norm, "output.LayerNorm"):
                shapes[f"{p}{part}.weight"], shapes[f"{p}{part}.bias"] = (h,), (h,)
            shapes[f"{p}intermediate.dense.weight"], shapes[f"{p}intermediate.dense.bias"] = (i, h), (i,)
            shapes[f"{p}output.dense.weight"], shapes[f"{p}output.dense.bias"] = (h, i), (h,)
        return shapes


BERT_LAYER = LayerNames(
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "attention.output.LayerNorm",
)


def _expected_shapes(cfg: BertConfig) -> dict[str, tuple[int, ...]]:
    h = cfg.hidden
    return {
        "embeddings.word_embeddings.weight": (cfg.vocab, h),
        "embeddings.position_embeddings.weight": (cfg.max_positions, h),
        "embeddings.token_type_embeddings.weight": (cfg.type_vocab, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
        **BERT_LAYER.shapes(cfg.layers, h, cfg.intermediate),
    }


def checked_float_weights(
    weights: Mapping[str, np.ndarray], expected: Mapping[str, tuple[int, ...]], prefix: str
) -> dict[str, np.ndarray]:
    """The float weights as float32, names without ``prefix`` (checkpoints saved from a task model carry
    one; sentence-transformers' do not); ValueError naming a weight that is missing or mis-shaped."""
    import numpy as np

    w = {k.removeprefix(prefix): v for k, v in weights.items()}
    for key, shape in expected.items():
        if key not in w:
            raise ValueError(f"weight {key} is missing")
        if tuple(w[key].shape) != shape:
            raise ValueError(f"weight {key} has shape {tuple(w[key].shape)}, config says {shape}")
    return {k: np.asarray(v, dtype=np.float32) for k, v in w.items() if v.dtype.kind == "f"}


class GraphBuilder:
    """Writes initializers straight into the ModelProto: make_graph/make_model would copy 90 MB twice."""

    def __init__(self, weights: Mapping[str, np.ndarray], eps: float) -> None:
        import numpy as np
        from onnx import ModelProto, NodeProto

        self._np = np
        self.weights = weights
        self.eps = eps
        self.model = ModelProto()
        self.nodes: list[NodeProto] = []
        self.names: set[str] = set()
        self._count = 0

    def tensor(self, name: str, array: np.ndarray) -> str:
        from onnx import helper

        array = self._np.ascontiguousarray(array)
        proto = self.model.graph.initializer.add()
        proto.name = name
        self.names.add(name)
        proto.data_type = helper.np_dtype_to_tensor_dtype(array.dtype)
        proto.dims.extend(array.shape)
        # ONNX raw_data is little-endian whatever the host.
        proto.raw_data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        return name

    def scalar(self, name: str, value: float) -> str:
        return self.tensor(name, self._np.array(value, dtype=self._np.float32))

    def ints(self, name: str, values: list[int]) -> str:
        return self.tensor(name, self._np.array(values, dtype=self._np.int64))

    def op(self, op_type: str, inputs: list[str], name: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        self._count += 1
        out = name or f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._count}", **attrs))
        return out

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, prefix: str) -> str:
        # torch Linear stores (out, in); MatMul wants (in, out).
        w = self.tensor(f"{prefix}.weight_t", weight.T)
        b = self.tensor(f"{prefix}.bias", bias)
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(
        self, x: str, weight: np.ndarray, bias: np.ndarray, prefix: str, eps: float, out: str | None = None
    ) -> str:
        w = self.tensor(f"{prefix}.weight", weight)
        b = self.tensor(f"{prefix}.bias", bias)
        return self.op("LayerNormalization", [x, w, b], name=out, axis=-1, epsilon=eps)

    def dense(self, x: str, name: str) -> str:
        """The checkpoint's Linear layer ``name`` applied to ``x``."""
        return self.linear(x, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"], name)

    def norm(self, x: str, name: str, out: str | None = None) -> str:
        """The checkpoint's LayerNorm ``name`` applied to ``x``."""
        return self.layer_norm(
            x, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"], name, self.eps, out
        )

    def padding_bias(self, one: str) -> str:
        """Additive attention bias (batch, 1, 1, seq): 0 for real tokens, float32 min for padding (as
        transformers does: masked keys get exactly zero weight)."""
        from onnx import TensorProto

        mask_fill = self.scalar("const.mask_fill", float(self._np.finfo(self._np.float32).min))
        mask_axes = self.ints("const.mask_axes", [1, 2])
        mask = self.op("Unsqueeze", [self.op("Cast", ["attention_mask"], to=TensorProto.FLOAT), mask_axes])
        return self.op("Mul", [self.op("Sub", [one, mask]), mask_fill])


@dataclass(frozen=True)
class EncoderShape:
    """What the layer stack needs of a config: its sizes."""

    layers: int
    heads: int
    head_dim: int
    hidden: int


def encoder_layers(
    g: GraphBuilder,
    x: str,
    attention_bias: str,
    shape: EncoderShape,
    names: LayerNames,
) -> str:
    """The post-norm layer stack shared by BERT and MPNet: attention with an additive bias (padding, and
    MPNet's relative positions), then the exact-GELU feed-forward. The last output is ``OUTPUT_NAME``."""
    one = g.scalar("const.one", 1.0) if "const.one" not in g.names else "const.one"
    half = g.scalar("const.half", 0.5)
    sqrt2 = g.scalar("const.sqrt2", math.sqrt(2.0))
    scale = g.scalar("const.attention_scale", 1.0 / math.sqrt(shape.head_dim))
    split_heads = g.ints("const.split_heads_shape", [0, 0, shape.heads, shape.head_dim])
    merge_heads = g.ints("const.merge_heads_shape", [0, 0, shape.hidden])
    for n in range(shape.layers):
        p = f"encoder.layer.{n}."
        # (batch, seq, hidden) -> (batch, heads, seq, head_dim); keys transposed for Q @ K^T.
        q, k, v = (
            g.op("Transpose", [g.op("Reshape", [g.dense(x, f"{p}{part}"), split_heads])], perm=perm)
            for part, perm in (
                (names.query, [0, 2, 1, 3]),
                (names.key, [0, 2, 3, 1]),
                (names.value, [0, 2, 1, 3]),
            )
        )
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), attention_bias])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        attn = g.dense(context, f"{p}{names.attention_out}")
        x = g.norm(g.op("Add", [attn, x]), f"{p}{names.attention_norm}")

        inner = g.dense(x, f"{p}intermediate.dense")
        # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))), in the order onnxruntime's GeluFusion matches.
        erf = g.op("Erf", [g.op("Div", [inner, sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, one])]), half])
        out = g.dense(gelu, f"{p}output.dense")
        last = n == shape.layers - 1
        x = g.norm(g.op("Add", [out, x]), f"{p}output.LayerNorm", OUTPUT_NAME if last else None)
    return x


def finish_model(
    g: GraphBuilder, graph_name: str, doc: str, input_names: tuple[str, ...], hidden: int
) -> onnx.ModelProto:
    """Declare the int64 inputs and the float output, and stamp the opset and IR version."""
    from onnx import TensorProto, helper

    batch_seq = ["batch_size", "sequence_length"]
    model = g.model
    model.ir_version = IR_VERSION
    model.producer_name = "hallouminate"
    model.doc_string = doc
    model.opset_import.append(helper.make_opsetid("", OPSET))
    graph = model.graph
    graph.name = graph_name
    graph.node.extend(g.nodes)
    graph.input.extend(
        helper.make_tensor_value_info(name, TensorProto.INT64, batch_seq) for name in input_names
    )
    graph.output.append(helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [*batch_seq, hidden]))
    return model


def write_checked(model: onnx.ModelProto, out_path: Path) -> str:
    """Check the graph and write it; return the sha256 of the written bytes."""
    import onnx

    # Serialised once and checked as bytes: checking the proto would serialise the weights again.
    data = model.SerializeToString()
    onnx.checker.check_model(data)
    out_path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def build_bert_graph(raw_config: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """Return the encoder as an ONNX model; raises ValueError if config and weights disagree."""

    cfg = BertConfig(raw_config)
    g = GraphBuilder(checked_float_weights(weights, _expected_shapes(cfg), "bert."), cfg.eps)
    f32 = g.weights
    one = g.scalar("const.one", 1.0)
    zero = g.ints("const.zero", [0])

    # Embeddings. Positions are 0..seq-1: a slice of the table, so any length up to the maximum works.
    word_table = g.tensor("embeddings.word", f32["embeddings.word_embeddings.weight"])
    type_table = g.tensor("embeddings.token_type", f32["embeddings.token_type_embeddings.weight"])
    position_table = g.tensor("embeddings.position", f32["embeddings.position_embeddings.weight"])
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    positions = g.op("Slice", [position_table, zero, seq_len, zero])
    words = g.op("Gather", [word_table, "input_ids"])
    types = g.op("Gather", [type_table, "token_type_ids"])
    x = g.norm(g.op("Add", [g.op("Add", [words, types]), positions]), "embeddings.LayerNorm")

    shape = EncoderShape(cfg.layers, cfg.heads, cfg.head_dim, cfg.hidden)
    encoder_layers(g, x, g.padding_bias(one), shape, BERT_LAYER)
    doc = "BERT encoder built from safetensors weights; output is last_hidden_state."
    return finish_model(g, "bert_encoder", doc, INPUT_NAMES, cfg.hidden)


def build_onnx_from_safetensors(safetensors_path: Path, config_path: Path, out_path: Path) -> str:
    """Read config.json and the weights, build the graph, check it, write it; return its sha256."""
    from safetensors.numpy import load_file

    config = json.loads(config_path.read_text(encoding="utf-8"))
    return write_checked(build_bert_graph(config, load_file(str(safetensors_path))), out_path)
