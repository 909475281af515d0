"""An OpenAI-compatible embedding endpoint as the daemon's embedder (``[embeddings] provider =
"openai-compatible"``; docs/model.md, "An OpenAI-compatible endpoint"; docs/adr/0054-embedding-endpoint.md).

Each batch is one ``POST {base_url}/embeddings`` with ``{"model", "input": [...], "encoding_format":
"float"}`` (and ``"dimensions"`` when ``send_dimensions``). A 429, a 5xx, a refused or dropped connection
or a timeout is retried with exponential back-off and full jitter, a Retry-After honoured (capped), at
most ``max_retries`` times. An input the endpoint refuses (400, 413, 422) is isolated by bisecting its batch
and skipped: the other inputs are embedded, and the indexer counts the refused ones per file
(``RefusedInputs``). Every vector is checked for the declared dimension and L2-normalised (the store's
cosine assumes unit vectors).

The key is read once, from the environment variable ``api_key_env`` names; it is sent in the
Authorization header and appears in no log line and no error (any text the endpoint sends back is
redacted before it is quoted).

Tokens are counted without the endpoint's tokenizer, which we cannot know: with the default model's
WordPiece tokenizer when it is installed (so that chunks are cut exactly as with the local model, and rank
alike), else estimated as a third of the UTF-8 bytes (never fewer tokens than a byte-level BPE makes of
English, one per CJK character). The limit the chunker sees keeps a quarter of ``max_input_tokens`` as a
margin between the two tokenizers; an input the endpoint still finds too long is refused and skipped.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from hallouminate.errors import ConfigError, InvalidArgument, ModelUnavailable
from hallouminate.ports import RefusedInputs

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger("hallouminate.embedding")

# HTTP statuses meaning "this input, not the endpoint": isolated and skipped, never retried.
REFUSED_STATUSES = frozenset({400, 413, 422})
# Worth another attempt: the endpoint is busy or failed for a moment.
RETRY_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# The first back-off, and the longest wait between two attempts (a Retry-After beyond it is cut to it).
BACKOFF_BASE_SECS = 0.25
BACKOFF_MAX_SECS = 30.0
# The share of max_input_tokens the chunker may fill: the rest is the margin between our token count and
# the endpoint's tokenizer (module docstring).
TOKEN_MARGIN = 0.75
# Bytes per token of the estimate used when no tokenizer is installed.
BYTES_PER_TOKEN = 3
# The endpoint's own text quoted in an error, at most.
QUOTE_CHARS = 300
# What `index --force` / `index --rebuild` embed before they touch the store (runtime.py).
PROBE_TEXT = "hallouminate probe: is the embedding endpoint answering?"


class _Refused(Exception):
    """The endpoint refused the batch as input (400/413/422)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EndpointEmbedder:
    """``EmbedderPort`` over an OpenAI-compatible ``/embeddings`` endpoint; thread-safe (httpx's client
    is), so a query is not queued behind an indexing batch."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key_env: str | None = None,
        batch_size: int = 64,
        timeout_secs: float = 60.0,
        max_input_tokens: int = 512,
        max_retries: int = 5,
        send_dimensions: bool = False,
        tokenizer_dir: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dim = dimensions
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.send_dimensions = send_dimensions
        self.max_tokens = max(8, int(max_input_tokens * TOKEN_MARGIN))
        self._sleep = sleep
        self._key: str | None = None
        self._key_env = api_key_env
        headers = {"Content-Type": "application/json"}
        if api_key_env is not None:
            key = os.environ.get(api_key_env, "")
            if not key.strip():
                raise ConfigError(
                    f"[embeddings] api_key_env names the environment variable {api_key_env}, which is "
                    f"{'empty' if api_key_env in os.environ else 'not set'} in the daemon's environment: "
                    f"set {api_key_env} to the endpoint's key where the daemon starts (then run "
                    "`hallouminate daemon stop`; the next call starts it with the key), or remove "
                    "api_key_env if the endpoint needs no key",
                    {"key": "[embeddings] api_key_env", "env": api_key_env, "problem": "api-key-unset"},
                )
            self._key = key.strip()
            headers["Authorization"] = f"Bearer {self._key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_secs, connect=min(timeout_secs, 10.0)),
            follow_redirects=False,
        )
        self._tokenizer = _load_tokenizer(tokenizer_dir)

    # -- EmbedderPort ---------------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """Recorded in the store: the provider too, so a local model of the same name is not mixed."""
        return f"openai-compatible:{self.model}"

    @property
    def text_prep(self) -> str:
        # No prefixes: the endpoint is sent the text as the chunker composed it.
        return f"query={''!r} passage={''!r}"

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised; ``RefusedInputs`` when the endpoint refused some
        (their rows zero, the others embedded)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        refused: dict[int, str] = {}
        for start in range(0, len(texts), self.batch_size):
            indices = list(range(start, min(start + self.batch_size, len(texts))))
            self._embed_isolating(texts, indices, out, refused)
        if refused:
            raise RefusedInputs(out, refused)
        return out

    def release_memory(self) -> None:
        """Nothing to give back: the model runs at the endpoint (Embedder.release_memory's twin)."""

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_queries([text])[0]
        return vector

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        try:
            return self.embed_passages(texts)
        except RefusedInputs as exc:
            reason = next(iter(exc.refused.values()))
            raise InvalidArgument(
                f"the embedding endpoint refused the query: {reason}; shorten or rephrase it",
                {"param": "query", "problem": "endpoint-refused"},
            ) from None

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is not None:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)

    # -- the requests ---------------------------------------------------------------------------------
    def _embed_isolating(
        self, texts: list[str], indices: list[int], out: np.ndarray, refused: dict[int, str]
    ) -> None:
        """Embed ``texts[indices]`` into ``out``; an input the endpoint refuses is found by bisection."""
        try:
            out[indices] = self._post([texts[i] for i in indices])
        except _Refused as exc:
            if len(indices) == 1:
                refused[indices[0]] = exc.reason
                log.warning(
                    "the embedding endpoint refused an input (%d chars): %s",
                    len(texts[indices[0]]),
                    exc.reason,
                )
                return
            middle = len(indices) // 2
            self._embed_isolating(texts, indices[:middle], out, refused)
            self._embed_isolating(texts, indices[middle:], out, refused)

    def _post(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.send_dimensions:
            body["dimensions"] = self.dim
        url = f"{self.base_url}/embeddings"
        attempt = 0
        while True:
            why: str
            wait: float | None = None
            try:
                response = self._client.post(url, json=body)
            except httpx.TransportError as exc:  # refused, reset or dropped connection; a timeout
                why = f"{type(exc).__name__}: {self._redact(str(exc)) or 'no detail'}"
            else:
                if response.status_code == 200:
                    return self._vectors(response, len(texts))
                text = self._quote(response)
                if response.status_code in REFUSED_STATUSES:
                    raise _Refused(f"HTTP {response.status_code}: {text}")
                if response.status_code not in RETRY_STATUSES:
                    raise self._failure(f"answered HTTP {response.status_code}: {text}", response.status_code)
                why = f"HTTP {response.status_code}: {text}"
                wait = _retry_after(response.headers.get("retry-after"))
            if attempt >= self.max_retries:
                raise self._failure(f"failed {attempt + 1} time(s) in a row; last: {why}", None)
            delay = wait if wait is not None else BACKOFF_BASE_SECS * 2**attempt * (0.5 + random.random() / 2)
            delay = min(max(delay, 0.0), BACKOFF_MAX_SECS)
            log.warning(
                "embedding endpoint: %s; attempt %d of %d in %.2f s",
                why,
                attempt + 2,
                self.max_retries + 1,
                delay,
            )
            self._sleep(delay)
            attempt += 1

    def _vectors(self, response: httpx.Response, count: int) -> np.ndarray:
        try:
            payload: Any = response.json()
            items = sorted(payload["data"], key=lambda item: int(item.get("index", 0)))
            vectors = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._failure(
                f"answered 200 without an OpenAI-style embeddings list ({type(exc).__name__}: "
                f"{self._redact(str(exc))[:QUOTE_CHARS]})",
                200,
            ) from None
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise self._failure(
                f"returned {vectors.shape[0] if vectors.ndim else 0} vectors for {count} inputs", 200
            )
        if vectors.shape[1] != self.dim:
            raise ModelUnavailable(
                f"the embedding endpoint {self.base_url} returns {vectors.shape[1]}-d vectors for model "
                f"{self.model!r}, and [embeddings] dimensions says {self.dim}: set dimensions = "
                f"{vectors.shape[1]} (or send_dimensions = true if the model shortens its vectors on request)",
                {"problem": "endpoint-dimensions", "returned": int(vectors.shape[1]), "configured": self.dim},
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not np.all(np.isfinite(vectors)) or np.any(norms == 0):
            raise self._failure("returned a vector that is zero or not finite", 200)
        unit: np.ndarray = (vectors / norms).astype(np.float32)
        return unit

    def _failure(self, what: str, status: int | None) -> ModelUnavailable:
        fix = "check that it runs and that [embeddings] base_url and model are right"
        if status in (401, 403):
            fix = (
                f"check the key in ${self._key_env}" if self._key_env else "set [embeddings] api_key_env"
            ) + " (then `hallouminate daemon stop` so the daemon reads it again)"
        return ModelUnavailable(
            f"the embedding endpoint {self.base_url}/embeddings {what}: {fix}",
            {"problem": "endpoint-failed", "base_url": self.base_url, "status": status},
        )

    def _quote(self, response: httpx.Response) -> str:
        try:
            text = response.text
        except Exception:  # a body in an encoding it does not declare: the status says enough
            text = ""
        return self._redact(" ".join(text.split()))[:QUOTE_CHARS] or "(no body)"

    def _redact(self, text: str) -> str:
        # An endpoint (or a proxy) may echo the request's headers: the key must not reach a log or a caller.
        return text.replace(self._key, "[redacted]") if self._key else text

    def close(self) -> None:
        self._client.close()


def _retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return seconds if math.isfinite(seconds) else None


def _load_tokenizer(directory: Path | None) -> Tokenizer | None:
    if directory is None or not (directory / "tokenizer.json").is_file():
        return None
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:  # counted by the estimate instead: chunking must not depend on it
        log.warning("cannot load %s (%s); estimating token counts", directory / "tokenizer.json", exc)
        return None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def default_tokenizer_dir(cache_dir: Path) -> Path | None:
    """The default model's directory when it is installed (its tokenizer counts tokens), else None."""
    from hallouminate.model import MODEL_NAME, PROVISIONED

    try:
        return PROVISIONED[MODEL_NAME].require_installed(cache_dir)
    except ModelUnavailable:
        return None
