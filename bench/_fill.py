"""Grow a stopped daemon's store with generated pages, without embedding them (the suite's largest tier).

Run by ``bench/suite.py`` as a subprocess inside the bench world (its environment points the product at
the world's store), so that its peak RSS is that of the writer alone: the model loaded but never run,
the product's ``Indexer`` chunking the new pages and the product's ``Store`` committing their rows and
updating its in-memory BM25 index, as the daemon does. Each new chunk gets the vector of a randomly drawn chunk the
daemon really embedded, plus Gaussian noise, re-normalised: the vector column then has the spread of
real vectors, and vector search scans it exactly as it would scan real ones.

Usage (by the suite): python bench/_fill.py REQUEST.json RESULT.json
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpora
from indexing import CpuMeter, peak_rss_mib

# Per dimension, before re-normalising: a noisy vector keeps a cosine of ~0.9 with the chunk it came from.
NOISE_SIGMA = 0.025


class StandInEmbedder:
    """What the ``Indexer`` needs of an embedder, minus inference: the model's own token counting, and
    for each chunk the vector of a random really-embedded chunk plus noise."""

    def __init__(self, real: Any, counter: Callable[[str], int], vectors: Any, seed: int) -> None:
        import numpy as np

        self.dim = real.dim
        self.max_tokens = real.max_tokens
        self.count_tokens = counter
        self._vectors = vectors
        self._rng = np.random.default_rng(seed)

    def embed_passages(self, texts: list[str]) -> Any:
        import numpy as np

        picked = self._vectors[self._rng.integers(0, len(self._vectors), len(texts))]
        noisy = picked + self._rng.normal(0.0, NOISE_SIGMA, picked.shape).astype(np.float32)
        return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)

    def embed_query(self, text: str) -> Any:
        raise NotImplementedError("the stand-in only fills the store")


def real_vectors(store_dir: Path) -> Any:
    """Every vector in the store (the daemon embedded them all)."""
    import lancedb
    import numpy as np

    from hallouminate.storage.schema import TABLE

    table = lancedb.connect(str(store_dir)).open_table(TABLE)
    column = table.search().select(["vector"]).limit(None).to_arrow().column("vector").combine_chunks()
    return np.asarray(column.values.to_numpy(), dtype=np.float32).reshape(len(column), -1)


def log(message: str) -> None:
    print(f"    [fill] {message}", flush=True)


def fill(request: dict[str, Any]) -> dict[str, Any]:
    from hallouminate.config import corpus_for, resolve
    from hallouminate.embedding import Embedder
    from hallouminate.indexing import Indexer, chunk_markdown
    from hallouminate.indexing.indexer import SPECIAL_TOKENS
    from hallouminate.storage import Store

    repo = Path(request["repo"])
    resolved = resolve(repo)
    settings = resolved.settings
    embedder = Embedder(settings.model_cache_dir, settings.model_name)
    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = min(settings.chunk_tokens, embedder.max_tokens) - SPECIAL_TOKENS
    started = time.perf_counter()
    # Chunked as they are written, to stop at the target; the Indexer chunks them again below.
    generated = _corpora.generate_to_chunks(
        repo / ".hallouminate" / "wiki",
        request["seed"],
        request["chunks"],
        lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks],
        start=request["start"],
    )
    generation_s = time.perf_counter() - started
    log(f"{generated.files} pages, {generated.chunks} chunks generated in {generation_s:.1f} s")
    vectors = real_vectors(settings.store_dir)
    stand_in = StandInEmbedder(embedder, counter, vectors, request["seed"])
    store = Store(settings.store_dir, embedder.dim, model_name=settings.model_name)
    indexer = Indexer(store, stand_in, settings)
    rss_before = peak_rss_mib(os.getpid())["VmRSS"]
    last = [time.perf_counter()]

    def progress(data: dict[str, Any]) -> None:
        if time.perf_counter() - last[0] >= 30:
            last[0] = time.perf_counter()
            log(f"... {data['done']}/{data['total']} files")

    log(f"indexing them with {len(vectors)} real vectors to draw from ...")
    meter = CpuMeter(os.getpid())
    started = time.perf_counter()
    report = indexer.index_corpus(corpus_for(resolved, None), progress)
    fill_s = time.perf_counter() - started
    cpu = meter.stop()
    sample = _corpora.sample_evenly(generated.texts, request["keep"])
    rss = peak_rss_mib(os.getpid())
    return {
        "pages_written": generated.files,
        "bytes_written": generated.bytes,
        "chunks_generated": generated.chunks,
        "generation_s": generation_s,
        "fill_s": fill_s,
        **cpu,
        "report": {k: v for k, v in report.items() if k not in ("skipped", "frontmatter_errors")},
        "rows": store.count_rows(),
        "real_vectors": len(vectors),
        "noise_sigma": NOISE_SIGMA,
        # The chunker counted with the fast counter: checked against the tokenizer on what it chunked.
        "token_counter_mismatches": counter.verify(_corpora.sample_evenly(generated.texts, 100)),
        "rss_mib": {"before_fill": rss_before, "peak": rss["VmHWM"]},
        "kept_texts": sample,
    }


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    Path(sys.argv[2]).write_text(json.dumps(fill(request)))


if __name__ == "__main__":
    main()
