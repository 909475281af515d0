"""The reranker: a cross-encoder run by fastembed's ``TextCrossEncoder`` (``RerankerPort``).

``[embeddings] reranker`` names it (docs/search.md, "Rerank"; docs/adr/0032-rerank-stage.md):

- a directory (an absolute path) holding an ONNX cross-encoder (``model.onnx`` or ``onnx/model.onnx``) and
  its tokenizer files: registered with fastembed as a custom model under a name of our own and loaded from
  there with ``specific_model_path``; nothing is downloaded;
- a name fastembed lists (``TextCrossEncoder.list_supported_models()``, e.g.
  ``Xenova/ms-marco-MiniLM-L-6-v2``): fetched once into the model cache by fastembed's hub download (one
  attempt: an unreachable hub is a prompt error naming the fixes, never fastembed's retry sleeps), then
  loaded from that directory the same way.

No cross-encoder is published on PyPI, so none is provisioned by ``hallouminate model install``.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from hallouminate.embedding.embedder import FASTEMBED_PREFIX, fastembed_download
from hallouminate.errors import HallouminateError, ModelUnavailable

if TYPE_CHECKING:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

# The graph files a cross-encoder directory may hold (the first found is loaded), and the files its
# tokenizer needs (fastembed's load_tokenizer). config/layer.py checks the same lists.
MODEL_FILES = ("model.onnx", "onnx/model.onnx")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
# 50 candidates (the smallest pool) in one model call; bigger pools take two or more.
BATCH_SIZE = 64

_registering = threading.Lock()


class CrossEncoder:
    """``score(query, passages)``: one raw relevance score (a logit) per passage, higher is better."""

    def __init__(self, cache_dir: Path, reranker: str, threads: int | None = None) -> None:
        self.name = reranker
        cache_dir = Path(cache_dir).expanduser()
        if reranker.startswith("/"):
            directory = Path(reranker)
            model_file = _check_directory(directory)
            fastembed_name = _register(directory, model_file)
        else:
            directory = fastembed_download(reranker, cache_dir, reranker=True)
            fastembed_name = reranker
        self._model = _load(fastembed_name, directory, cache_dir, threads, reranker)

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        return [float(s) for s in self._model.rerank(query, passages, batch_size=BATCH_SIZE)]


def _check_directory(directory: Path) -> str:
    model = next((name for name in MODEL_FILES if (directory / name).is_file()), None)
    missing = [name for name in TOKENIZER_FILES if not (directory / name).is_file()]
    if not directory.is_dir() or model is None or missing:
        lacks = (
            "does not exist"
            if not directory.is_dir()
            else "lacks " + ", ".join([*([] if model else [" or ".join(MODEL_FILES)]), *missing])
        )
        raise ModelUnavailable(
            f"The reranker directory {directory} {lacks}: `[embeddings] reranker` must name a directory "
            "holding an ONNX cross-encoder and its tokenizer files, or a cross-encoder fastembed knows by "
            'name; fix it or remove the key (docs/search.md, "Rerank").',
            {"model": str(directory)},
        )
    return model


def _register(directory: Path, model_file: str) -> str:
    """Register the directory's graph with fastembed (once per process) under a name of our own."""
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    digest = hashlib.sha256(f"{directory}\0{model_file}".encode()).hexdigest()[:12]
    name = f"{FASTEMBED_PREFIX}reranker-{digest}"
    with _registering:
        known = {m["model"].lower() for m in TextCrossEncoder.list_supported_models()}
        if name.lower() not in known:
            # Never downloaded (always loaded from specific_model_path); the source is for the record.
            TextCrossEncoder.add_custom_model(model=name, sources=ModelSource(hf=name), model_file=model_file)
    return name


def _load(
    fastembed_name: str, directory: Path, cache_dir: Path, threads: int | None, reranker: str
) -> TextCrossEncoder:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    try:
        # cache_dir only keeps fastembed from creating its default one in /tmp (see embedder._load).
        return TextCrossEncoder(
            fastembed_name, cache_dir=str(cache_dir), specific_model_path=str(directory), threads=threads
        )
    except HallouminateError:
        raise
    except Exception as exc:
        raise ModelUnavailable(
            f"could not load the reranker {reranker!r} from {directory}: {exc}. Fix or remove "
            "`[embeddings] reranker` in the baseline config.",
            {"model": reranker, "directory": str(directory)},
        ) from exc
