"""A tiny cross-encoder whose scores a test chooses: an ONNX graph built here, loaded by fastembed's
``TextCrossEncoder`` like a real one (no cross-encoder is on PyPI, and the model hub is unreachable).

It takes what a BERT cross-encoder takes (``input_ids``, ``attention_mask``, ``token_type_ids`` of the
query and passage encoded as a pair) and returns ``logits`` of shape (batch, 1): the sum of the weights of
the passage's tokens (token type 1), each word's weight chosen by the test, every other token 0. So a
passage holding "zebra" (weight 3) outranks one holding "tiger" (weight 2), whatever the query, and
passages holding no weighted word tie at 0. The tokenizer is the real MiniLM's (BERT uncased WordPiece).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import numpy as np

MINILM_DIR = "hallouminate--all-MiniLM-L6-v2"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")


def build_cross_encoder(model_cache: Path, out_dir: Path, weights: Mapping[str, float]) -> Path:
    """Write ``model.onnx`` and the tokenizer files into ``out_dir``; each word of ``weights`` must be one
    WordPiece token."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer

    source = model_cache / MINILM_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, out_dir / name)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    table = np.zeros(tokenizer.get_vocab_size(), dtype=np.float32)
    for word, weight in weights.items():
        ids = tokenizer.encode(word, add_special_tokens=False).ids
        ids = [i for i in ids if i != 0]  # the file's fixed padding
        assert len(ids) == 1, f"{word!r} is {len(ids)} tokens: pick a word that is one"
        table[ids[0]] = weight

    batch_by_len = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, batch_by_len)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    nodes = [
        helper.make_node("Gather", ["weights", "input_ids"], ["token_weights"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["passage"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["token_weights", "mask"], ["real"]),
        helper.make_node("Mul", ["real", "passage"], ["passage_weights"]),
        helper.make_node("ReduceSum", ["passage_weights", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(table, "weights"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(out_dir / "model.onnx"))
    return out_dir
