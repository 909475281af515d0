"""The rerank stage: does it pay for its cost? (docs/adr/0032-rerank-stage.md)

Two rerankers are measured, both over the pool the product re-scores (the best max(top_files x 5, 50)
fused chunks; top_files 10 here, so 50):

- quality model: re-scoring with the opt-in all-mpnet-base-v2 (ADR 0018) as a bi-encoder, the cosine of
  the query's vector and each candidate's (breadcrumb + text, as indexed), over the default model's
  fused candidates. Ranking quality: file R@5 / MRR on the evaluation sets of bench/eval_ranking.py
  (each set indexed with the default model, every search through ``ground`` with the stage). Passage
  vectors are cached across queries for the quality figures only; the cost is measured uncached.
- cross-encoder: no cross-encoder can be installed here (none on PyPI, no model hub), so its cost is
  measured on a graph of the same architecture and size as Xenova/ms-marco-MiniLM-L-6-v2 (BERT, 6 layers,
  hidden 384: the default model's own encoder graph, with a linear head on [CLS]); its scores mean
  nothing, its time is a real cross-encoder's.

Cost: the stage's own time (model included) per query, p50, and ``ground``'s p50 with and without the
stage in the same run on a generated store of ~10k chunks (bench/_corpora.py pages; vectors drawn at
random: the reranker's cost does not depend on them).

Usage: .venv/bin/python bench/rerank.py [--quality] [--cost] [--mpnet-cache DIR] [--chunks N]
  (the quality model must be installed: `hallouminate model install --model
  sentence-transformers/all-mpnet-base-v2`, into the cache given by --mpnet-cache or the config's.)
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpora
import eval_ranking
from hallouminate import xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.embedding.reranker import CrossEncoder
from hallouminate.indexing import Indexer, chunk_markdown
from hallouminate.indexing.indexer import SPECIAL_TOKENS
from hallouminate.search import ground
from hallouminate.search.rerank import RerankStage
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

MPNET = "sentence-transformers/all-mpnet-base-v2"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
NO_BUDGET_MS = 10_000_000  # measured, never cut


class MpnetScorer:
    """Cosines of the quality model's vectors, with the passages' vectors cached (``cache``) or not."""

    def __init__(self, embedder: Embedder, *, cache: bool) -> None:
        self.embedder = embedder
        self.cache: dict[str, Any] | None = {} if cache else None

    def score(self, query: str, passages: list[str]) -> list[float]:
        q = self.embedder.embed_query(query)
        if self.cache is None:
            vectors = self.embedder.embed_passages(passages)
        else:
            todo = [p for p in dict.fromkeys(passages) if p not in self.cache]
            for p, v in zip(todo, self.embedder.embed_passages(todo), strict=True):
                self.cache[p] = v
            vectors = np.stack([self.cache[p] for p in passages])
        return [float(x) for x in vectors @ q]


def stage_for(name: str, score: Any) -> RerankStage:
    async def run(query: str, passages: list[str]) -> list[float]:
        return await asyncio.to_thread(score, query, passages)

    return RerankStage(name, run, NO_BUDGET_MS)


def cross_encoder_proxy(model_cache: Path, out: Path) -> Path:
    """A MiniLM-L6-H384 cross-encoder's graph: the default model's encoder + a linear head on [CLS]."""
    import onnx
    from onnx import helper, numpy_helper

    source = model_cache / "hallouminate--all-MiniLM-L6-v2"
    out.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, out / name)
    model = onnx.load(str(source / "model.onnx"))
    graph = model.graph
    hidden = graph.output[0].name
    rng = np.random.default_rng(0)
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.array(0, dtype=np.int64), "cls_index"),
            numpy_helper.from_array(rng.normal(0, 0.05, (384, 1)).astype(np.float32), "head_w"),
            numpy_helper.from_array(np.zeros(1, dtype=np.float32), "head_b"),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Gather", [hidden, "cls_index"], ["cls"], axis=1),
            helper.make_node("MatMul", ["cls", "head_w"], ["cls_w"]),
            helper.make_node("Add", ["cls_w", "head_b"], ["logits"]),
        ]
    )
    del graph.output[:]
    graph.output.extend([helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, ["batch", 1])])
    onnx.save(model, str(out / "model.onnx"))
    return out


async def _ground(reader: AsyncReader, embed: Any, spec: CorpusSpec, query: str, **extra: Any) -> Any:
    return await ground(
        reader,
        embed,
        [spec],
        query,
        priority_corpus=spec.name,
        top_files=10,
        chunks_per_file=1,
        limit=50,
        snippet_chars=80,
        **extra,
    )


async def _files(
    reader: AsyncReader, embed: Any, spec: CorpusSpec, query: str, **extra: Any
) -> list[tuple[str, list[str]]]:
    result = await _ground(reader, embed, spec, query, **extra)
    return [(d["path"], d["chunks"][0]["heading_path"]) for d in result["docs"]]


def quality(embedder: Embedder, mpnet: Embedder) -> None:
    settings = load_baseline().settings
    print(f"{'set':8s} {'ranking':22s} {'R@5':>6s} {'MRR':>6s}")
    for name in ("eval", "heldout", "sample"):
        wiki, queries = eval_ranking.load_set(name)
        with eval_ranking.indexed(wiki, embedder, settings) as (store, spec):
            reader = AsyncReader(store)
            embed = partial(asyncio.to_thread, embedder.embed_query)
            stage = stage_for(MPNET, MpnetScorer(mpnet, cache=True).score)

            for label, extra in (("fused", {}), ("fused + mpnet rerank", {"rerank": stage})):
                m = asyncio.run(eval_ranking.measure(partial(_files, reader, embed, spec, **extra), queries))
                print(f"{name:8s} {label:22s} {m['recall@5']:6.3f} {m['mrr']:6.3f}  ({m['n']} queries)")


def _store_of(root: Path, embedder: Embedder, chunks: int) -> tuple[Store, CorpusSpec]:
    """~``chunks`` generated chunks, chunked by the product, with random unit vectors (no inference)."""
    settings = load_baseline().settings
    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = min(settings.chunk_tokens, embedder.max_tokens) - SPECIAL_TOKENS
    wiki = root / "wiki"
    _corpora.generate_to_chunks(
        wiki, 7, chunks, lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks]
    )
    rng = np.random.default_rng(7)

    class RandomVectors:
        dim, max_tokens = embedder.dim, embedder.max_tokens
        count_tokens = staticmethod(counter)

        def embed_passages(self, texts: list[str]) -> Any:
            v = rng.normal(size=(len(texts), self.dim)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        def embed_query(self, text: str) -> Any:
            raise NotImplementedError

    store = Store(root / "db", embedder.dim)
    spec = CorpusSpec("bench", "custom", (wiki,), ("**/*.md",), (), None)
    Indexer(store, RandomVectors(), settings).index_corpus(spec)  # type: ignore[arg-type]
    store.optimize()
    return store, spec


def cost(embedder: Embedder, mpnet: Embedder | None, chunks: int, rounds: int) -> None:
    queries = [q["query"] for q in eval_ranking.load_set("eval")[1]][:rounds]
    with tempfile.TemporaryDirectory() as tmp:
        proxy = CrossEncoder(
            xdg.default_model_cache(), str(cross_encoder_proxy(xdg.default_model_cache(), Path(tmp) / "ce"))
        )
        store, spec = _store_of(Path(tmp), embedder, chunks)
        print(f"store: {store.count_rows()} chunks")
        reader = AsyncReader(store)
        embed = partial(asyncio.to_thread, embedder.embed_query)
        stages = {"cross-encoder (MiniLM-L6 size)": stage_for("proxy", proxy.score)}
        if mpnet is not None:
            stages["mpnet bi-encoder"] = stage_for(MPNET, MpnetScorer(mpnet, cache=False).score)

        async def timed(query: str, **extra: Any) -> tuple[float, float]:
            started = time.perf_counter()
            result = await _ground(reader, embed, spec, query, **extra)
            stage_ms = result["rerank"]["took_ms"] if "rerank" in result else 0.0
            return (time.perf_counter() - started) * 1000, stage_ms

        for query in queries[:2]:  # first calls load sessions and warm caches
            asyncio.run(timed(query))
            for stage in stages.values():
                asyncio.run(timed(query, rerank=stage))
        plain: list[float] = []
        with_stage: dict[str, list[tuple[float, float]]] = {name: [] for name in stages}
        for query in queries:  # interleaved: the machine's load hits both alike
            plain.append(asyncio.run(timed(query))[0])
            for name, stage in stages.items():
                if name.startswith("mpnet") and len(with_stage[name]) >= max(3, rounds // 5):
                    continue  # seconds per query: a few suffice
                with_stage[name].append(asyncio.run(timed(query, rerank=stage)))
        base = statistics.median(plain)
        print(f"ground p50, plain: {base:.1f} ms ({len(plain)} queries)")
        for name, runs in with_stage.items():
            total = statistics.median(r[0] for r in runs)
            stage_ms = statistics.median(r[1] for r in runs)
            print(
                f"ground p50 with {name}: {total:.1f} ms (x{total / base:.1f}); the stage alone "
                f"p50 {stage_ms:.1f} ms over 50 candidates ({len(runs)} queries)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--mpnet-cache", type=Path, default=None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    opts = parser.parse_args()
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    cache = opts.mpnet_cache or settings.model_cache_dir
    mpnet = Embedder(cache, MPNET) if (cache / "hallouminate--all-mpnet-base-v2").is_dir() else None
    if opts.quality or not opts.cost:
        if mpnet is None:
            sys.exit(f"install {MPNET} first (see --help)")
        quality(embedder, mpnet)
    if opts.cost or not opts.quality:
        cost(embedder, mpnet, opts.chunks, opts.rounds)


if __name__ == "__main__":
    main()
