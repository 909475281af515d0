"""Each post-retrieval stage of ``ground`` (mmr, parent; match_spans always runs) against the plain ranking.

Quality: for each labelled set (bench/eval_ranking.py's: eval, heldout, sample), indexes its wiki with the
real model (eval_ranking.indexed), runs every query once per stage of ``STAGES`` (a stage is the ground
parameters it adds; the plain row adds none), the stages interleaved query by query so machine load
weighs on each alike, and prints file Recall@5, MRR (eval_ranking.measure) and the p50 latency of the
``ground`` call (the embedding included, as the daemon serves it; parent counts tokens with the model's
tokenizer as the daemon does).

Scale (``--scale 10000,100000``): a store of that many generated chunks (10 a page, random unit vectors,
words from a fixed vocabulary so that BM25 finds every query's words), queried with random vectors and
three vocabulary words; the p50 of each stage's ``ground`` and its ratio to the plain one, measured in the
same run, interleaved.

Usage: .venv/bin/python bench/eval_stages.py [--set eval|heldout|sample|all] [--scale N,N] [--rounds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import CORPUS, indexed, load_set, measure
from hallouminate import xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.search import ground
from hallouminate.search.spans import SpanFinder
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

# Stage name -> the ground parameters it adds (the lead adds the other stages' rows here).
STAGES: dict[str, dict[str, Any]] = {
    "plain": {},
    "mmr": {"mmr": True},
    "mmr+penalty": {"mmr": True, "mmr_same_doc_penalty": 0.3},
    "parent": {"parent": True},
}
TOP_FILES = 10
# match_spans has no parameter (always computed in ranked mode): this row is the plain one with the span
# finder stubbed out, to price spans within the default latency.
NO_SPANS = "plain-nospans"


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def _quality(
    store: Store, embedder: Embedder, spec: CorpusSpec, queries: list[dict[str, Any]], limit: int
) -> dict[str, tuple[dict[str, float], float, int]]:
    reader = AsyncReader(store)
    embed_query = partial(asyncio.to_thread, embedder.embed_query)
    rows = {**STAGES, NO_SPANS: {}}
    ranked: dict[str, dict[str, list[tuple[str, list[str]]]]] = {name: {} for name in rows}
    took: dict[str, list[float]] = {name: [] for name in rows}
    real_spans = SpanFinder.spans
    for q in queries:
        for name, params in rows.items():
            SpanFinder.spans = (lambda self, text: None) if name == NO_SPANS else real_spans  # type: ignore[method-assign]
            started = time.perf_counter()
            result = await ground(
                reader,
                embed_query,
                [spec],
                q["query"],
                priority_corpus=CORPUS,
                top_files=TOP_FILES,
                chunks_per_file=1,
                limit=limit,
                snippet_chars=80,
                count_tokens=embedder.count_tokens,
                **params,
            )
            took[name].append(time.perf_counter() - started)
            ranked[name][q["query"]] = [(d["path"], d["chunks"][0]["heading_path"]) for d in result["docs"]]

    SpanFinder.spans = real_spans  # type: ignore[method-assign]
    out = {}
    for name in rows:

        async def cached(query: str, name: str = name) -> list[tuple[str, list[str]]]:
            return ranked[name][query]

        # Queries whose top five files differ from the plain ranking's (in order): what the stage moved.
        moved = sum(ranked[name][q["query"]][:5] != ranked["plain"][q["query"]][:5] for q in queries)
        out[name] = (await measure(cached, queries), p50(took[name]), moved)
    return out


def quality(names: tuple[str, ...]) -> None:
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    print(f"model {embedder.model_name}, top_files {TOP_FILES}, limit {settings.limit}")
    print(
        f"{'set':8s} {'stage':12s} {'queries':8s} {'R@5':>6s} {'MRR':>6s} {'p50 ms':>7s} {'top-5 moved':>11s}"
    )
    for name in names:
        wiki, queries = load_set(name)
        with indexed(wiki, embedder, settings) as (store, spec):
            results = asyncio.run(_quality(store, embedder, spec, queries, settings.limit))
        for stage, (m, latency, moved) in results.items():
            print(
                f"{name:8s} {stage:12s} {m['n']:<8d} {m['recall@5']:6.3f} {m['mrr']:6.3f} {latency:7.1f} "
                f"{moved:11d}"
            )


# -- scale -------------------------------------------------------------------------------------------------

VOCABULARY = [f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "pe", "ra", "so", "tu") for b in range(400)]
CHUNKS_PER_PAGE = 10
DIM = 384


def fill(store: Store, corpus: str, root: Path, chunks: int, rng: random.Random) -> None:
    gen = np.random.default_rng(7)
    pages = chunks // CHUNKS_PER_PAGE
    batch: dict[str, list[Any]] = {}
    for page in range(pages):
        vectors = gen.standard_normal((CHUNKS_PER_PAGE, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = []
        for k in range(CHUNKS_PER_PAGE):
            section = k // 3  # three or four chunks a section: parent has siblings to grow to
            words = " ".join(rng.choices(VOCABULARY, k=60 if k % 4 else 20))  # some short chunks
            rows.append(
                {
                    "abs_path": str(root / f"p{page}.md"),
                    "heading_path": [f"Page {page}", f"Section {section}"],
                    "line_start": 1 + 4 * k,
                    "line_end": 3 + 4 * k,
                    "text": words,
                    "summary": "",
                    "content_hash": f"{page}",
                    "file_size": 1,
                    "file_mtime_ns": 1,
                    "vector": vectors[k],
                }
            )
        batch[f"p{page}.md"] = rows
        if len(batch) == 1000:
            store.replace_files(corpus, batch)
            batch = {}
    if batch:
        store.replace_files(corpus, batch)


async def _scale(store: Store, spec: CorpusSpec, rounds: int, count: Any) -> dict[str, list[float]]:
    reader = AsyncReader(store)
    gen = np.random.default_rng(11)
    rng = random.Random(5)

    async def embed(_query: str) -> Any:
        vector = gen.standard_normal(DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)

    took: dict[str, list[float]] = {name: [] for name in STAGES}
    for round_ in range(rounds + 3):
        query = " ".join(rng.choices(VOCABULARY, k=3))
        for name, params in STAGES.items():
            started = time.perf_counter()
            await ground(
                reader,
                embed,
                [spec],
                query,
                priority_corpus=CORPUS,
                top_files=TOP_FILES,
                chunks_per_file=3,
                limit=50,
                snippet_chars=240,
                count_tokens=count,
                **params,
            )
            if round_ >= 3:  # the first rounds load the corpus into memory
                took[name].append(time.perf_counter() - started)
    return took


def scale(sizes: list[int], rounds: int) -> None:
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    print(f"{'chunks':>8s} {'stage':12s} {'p50 ms':>7s} {'ratio':>6s}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "wiki"
            spec = CorpusSpec(CORPUS, "custom", (root,), ("**/*.md",), (), None)
            store = Store(Path(tmp) / "db", DIM)
            fill(store, spec.store_key, root, size, random.Random(3))
            store.optimize()
            took = asyncio.run(_scale(store, spec, rounds, embedder.count_tokens))
        base = p50(took["plain"])
        for name in STAGES:
            print(f"{size:8d} {name:12s} {p50(took[name]):7.2f} {p50(took[name]) / base:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=("eval", "heldout", "sample", "all"), default="all")
    parser.add_argument(
        "--scale", default=None, help="comma-separated chunk counts: time the stages at scale"
    )
    parser.add_argument("--rounds", type=int, default=40)
    opts = parser.parse_args()
    if opts.scale:
        scale([int(n) for n in opts.scale.split(",")], opts.rounds)
        return
    quality(("eval", "heldout", "sample") if opts.set == "all" else (opts.set,))


if __name__ == "__main__":
    main()
