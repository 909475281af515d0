"""Ranking quality on our labelled evaluation sets, for each signal alone and for the fusion.

For each set, indexes its wiki in a temp store with the real model, runs every labelled query, and prints
Recall@1/5, MRR (by file) and the exact-top-chunk rate (right file and right heading path) for: dense only,
BM25 only, and the fused ranking `ground` returns. Every search goes through the path the daemon serves
(`ground` and the store's `AsyncReader`). Queries are also reported by kind.

Sets (tests/fixtures/):
- eval: eval_wiki + eval_queries.json (35 pages with distractor pairs; keyword and paraphrase queries).
  The set the ranking was tuned on.
- heldout: eval_heldout_wiki + eval_heldout_queries.json (14 pages of another company, written before
  any tuning and not looked at while tuning). Evidence against overfitting the first set.
- sample: the repository's own sample wiki (.hallouminate/wiki) + sample_questions.json (file labels
  only, so no exact-top-chunk figure).
- multilingual: eval_multilingual_wiki + eval_multilingual_queries.json (15 pages in English, Japanese and
  Chinese; 52 queries, same- and cross-language, written before any measurement; ADR 0053). Reported
  also by query language ("ja->*"), page language ("*->zh") and same/cross language. Not in `all`.

Multilingual (install the model first with `hallouminate model install --model
intfloat/multilingual-e5-small-q4`; --speed adds the query-embedding p50 and indexing chunks/s):
       .venv/bin/python bench/eval_ranking.py --set multilingual --speed --model intfloat/multilingual-e5-small-q4

Usage: .venv/bin/python bench/eval_ranking.py [--set eval|heldout|sample|all] [--chunk-tokens N]
       [--no-literal-gate] [--plain-gate] [--bm25-weight W] [--model NAME]

With the opt-in quality model (ADR 0018; install it first with `hallouminate model install --model
sentence-transformers/all-mpnet-base-v2`):
       .venv/bin/python bench/eval_ranking.py --set all --model sentence-transformers/all-mpnet-base-v2

The ranking before ADR 0012 (256-token chunks, every BM25 hit voting, BM25 weight 0.5):
       .venv/bin/python bench/eval_ranking.py --set all --chunk-tokens 256 --no-literal-gate --bm25-weight 0.5
The ranking before ADR 0016 (every query word weighs the same in the gate, BM25 weight 0.5; files tied on
score were not ordered by the query words they hold):
       .venv/bin/python bench/eval_ranking.py --set all --plain-gate --bm25-weight 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from hallouminate import analysis, xdg
from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec, Settings, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search import ground, literal
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = "eval"
KINDS = ("keyword", "paraphrase")

# query -> [(file, heading_path of its best chunk)]
Ranker = Callable[[str], Awaitable[list[tuple[str, list[str]]]]]


def load_set(name: str) -> tuple[Path, list[dict[str, Any]]]:
    if name == "sample":
        raw = json.loads((FIXTURES / "sample_questions.json").read_text())
        queries = [
            {
                "query": q["query"],
                "expected_file": q["expected_path"],
                "expected_heading": None,
                "kind": "sample",
            }
            for q in raw
        ]
        return ROOT / ".hallouminate" / "wiki", queries
    if name == "multilingual":  # English, Japanese and Chinese pages; each query names its language
        return FIXTURES / "eval_multilingual_wiki", json.loads(
            (FIXTURES / "eval_multilingual_queries.json").read_text(encoding="utf-8")
        )
    prefix = "eval" if name == "eval" else "eval_heldout"
    return FIXTURES / f"{prefix}_wiki", json.loads((FIXTURES / f"{prefix}_queries.json").read_text())


def language_groups(queries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """For a set whose queries name their language and their page's (``--set multilingual``): same- and
    cross-language queries, and the queries of each language ("ja->*": Japanese queries, any page)."""
    if not queries or "lang" not in queries[0]:
        return {}
    groups = {
        "same-lang": [q for q in queries if q["lang"] == q["page_lang"]],
        "cross-lang": [q for q in queries if q["lang"] != q["page_lang"]],
    }
    for lang in sorted({q["lang"] for q in queries}):
        groups[f"{lang}->*"] = [q for q in queries if q["lang"] == lang]
    for lang in sorted({q["page_lang"] for q in queries}):
        groups[f"*->{lang}"] = [q for q in queries if q["page_lang"] == lang]
    return {name: subset for name, subset in groups.items() if subset}


def files_in_order(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    seen: dict[str, list[str]] = {}
    for row in rows:
        seen.setdefault(row["path"], list(row["heading_path"] or []))
    return list(seen.items())


async def measure(ranker: Ranker, queries: list[dict[str, Any]]) -> dict[str, float]:
    recall1 = recall5 = mrr = exact = 0.0
    for q in queries:
        ranked = await ranker(q["query"])
        files = [path for path, _ in ranked]
        rank = files.index(q["expected_file"]) + 1 if q["expected_file"] in files else None
        recall1 += rank == 1
        recall5 += rank is not None and rank <= 5
        mrr += 1.0 / rank if rank else 0.0
        heading = q["expected_heading"]
        exact += rank == 1 and (heading is None or ranked[0][1] == heading)
    n = len(queries)
    return {
        "recall@1": recall1 / n,
        "recall@5": recall5 / n,
        "mrr": mrr / n,
        "exact_top_chunk": exact / n,
        "n": n,
    }


@contextlib.contextmanager
def indexed(wiki: Path, embedder: Embedder, settings: Settings) -> Iterator[tuple[Store, CorpusSpec]]:
    """``wiki`` indexed as corpus ``eval`` in a temp store with the real model (removed afterwards)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db", embedder.dim)
        spec = CorpusSpec(CORPUS, "custom", (wiki,), ("**/*.md",), (), None)
        Indexer(store, embedder, settings).index_corpus(spec)
        store.optimize()
        yield store, spec


def speed(name: str, embedder: Embedder, settings: Settings) -> str:
    """The model's cost on this set: the median time to embed one of its queries (each embedded 5 times,
    after a warm-up), and the chunks per second of indexing its wiki (embedding included)."""
    import statistics
    import time

    wiki, queries = load_set(name)
    texts = [q["query"] for q in queries]
    embedder.embed_queries(texts[:4])  # warm-up: the first calls allocate
    times = []
    for _ in range(5):
        for text in texts:
            started = time.perf_counter()
            embedder.embed_query(text)
            times.append(time.perf_counter() - started)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db", embedder.dim)
        spec = CorpusSpec(CORPUS, "custom", (wiki,), ("**/*.md",), (), None)
        started = time.perf_counter()
        Indexer(store, embedder, settings).index_corpus(spec)
        elapsed = time.perf_counter() - started
        chunks = store.count_rows()
    return (
        f"query embedding p50 {statistics.median(times) * 1000:.2f} ms; indexing {chunks / elapsed:.1f} "
        f"chunks/s ({chunks} chunks in {elapsed:.1f} s)"
    )


def evaluate(name: str, embedder: Embedder, settings: Settings) -> list[tuple[str, str, dict[str, float]]]:
    wiki, queries = load_set(name)
    with indexed(wiki, embedder, settings) as (store, spec):
        return asyncio.run(_rankings(store, embedder, spec, settings.limit, queries))


async def _rankings(
    store: Store, embedder: Embedder, spec: CorpusSpec, limit: int, queries: list[dict[str, Any]]
) -> list[tuple[str, str, dict[str, float]]]:
    """Every ranking of ``queries`` through the daemon's reader, on one event loop."""
    out: list[tuple[str, str, dict[str, float]]] = []
    reader = AsyncReader(store)
    embed_query = partial(asyncio.to_thread, embedder.embed_query)

    async def dense(query: str) -> list[tuple[str, list[str]]]:
        return files_in_order(await reader.vector_search(await embed_query(query), [spec.store_key], limit))

    async def bm25(query: str) -> list[tuple[str, list[str]]]:
        terms = query_terms(query)
        return files_in_order(await reader.fts_search(terms, [spec.store_key], limit)) if terms else []

    async def fused(query: str) -> list[tuple[str, list[str]]]:
        result = await ground(
            reader,
            embed_query,
            [spec],
            query,
            priority_corpus=CORPUS,
            top_files=10,
            chunks_per_file=1,
            limit=limit,
            snippet_chars=80,
        )
        return [(doc["path"], doc["chunks"][0]["heading_path"]) for doc in result["docs"]]

    groups = {"all": queries}
    for kind in KINDS:
        subset = [q for q in queries if q["kind"] == kind]
        if subset and len(subset) < len(queries):
            groups[kind] = subset
    groups.update(language_groups(queries))
    rankers: list[tuple[str, Ranker]] = [("dense", dense), ("bm25", bm25), ("fused", fused)]
    for ranking, ranker in rankers:
        for group, subset in groups.items():
            out.append((ranking, group, await measure(ranker, subset)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=("eval", "heldout", "sample", "multilingual", "all"), default="eval")
    parser.add_argument(
        "--speed",
        action="store_true",
        help="also time the model: query-embedding p50 and indexing chunks/s of each set's wiki",
    )
    parser.add_argument(
        "--chunk-tokens", type=int, default=None, help="override indexing.chunk_tokens (default: config)"
    )
    parser.add_argument(
        "--no-literal-gate",
        action="store_true",
        help="let every BM25 hit vote in the fusion, as before ADR 0012 (for comparison)",
    )
    parser.add_argument(
        "--plain-gate",
        action="store_true",
        help="every query word weighs the same in the literal gate, as before ADR 0016 (for comparison)",
    )
    parser.add_argument(
        "--bm25-weight", type=float, default=None, help="override the BM25 weight of the fusion"
    )
    parser.add_argument(
        "--model", default=None, help="embedding model (default: [embeddings] model of the config)"
    )
    parser.add_argument(
        "--no-cjk-bigrams",
        action="store_true",
        help="analyse Chinese and Japanese runs as one token each, as before ADR 0053 (for comparison)",
    )
    parser.add_argument("--by-kind", action="store_true", help="accepted for compatibility; always on")
    opts = parser.parse_args()
    # The package re-exports the ground function under the module's name: patch the module itself.
    ground_module = sys.modules["hallouminate.search.ground"]
    if opts.no_literal_gate:
        literal.LiteralEvidence.votes = lambda self, rows: rows
    if opts.plain_gate:
        literal.WEIGHT_BY_RARITY = False
    if opts.no_cjk_bigrams:  # cjk_spaced (index and queries) and the offsets all ask has_cjk first
        analysis.has_cjk = lambda text: False
    if opts.bm25_weight is not None:
        ground_module.BM25_WEIGHT = opts.bm25_weight
    settings = load_baseline().settings
    if opts.chunk_tokens is not None:
        settings = dataclasses.replace(settings, chunk_tokens=opts.chunk_tokens)
    embedder = Embedder(xdg.default_model_cache(), opts.model or settings.model_name)
    names = ("eval", "heldout", "sample") if opts.set == "all" else (opts.set,)
    gate = "off" if opts.no_literal_gate else "plain" if opts.plain_gate else "rarity-weighted"
    print(
        f"model {embedder.model_name}, chunk_tokens = {settings.chunk_tokens}, literal gate {gate}, BM25 weight {ground_module.BM25_WEIGHT}"
        + (", CJK bigrams off" if opts.no_cjk_bigrams else "")
    )
    print(f"{'set':8s} {'ranking':8s} {'queries':17s} {'R@1':>6s} {'R@5':>6s} {'MRR':>6s} {'exact':>6s}")
    for name in names:
        if opts.speed:
            print(f"{name:8s} speed: {speed(name, embedder, settings)}")
        for ranking, group, m in evaluate(name, embedder, settings):
            label = f"{group} ({m['n']})"
            print(
                f"{name:8s} {ranking:8s} {label:17s} {m['recall@1']:6.3f} {m['recall@5']:6.3f} "
                f"{m['mrr']:6.3f} {m['exact_top_chunk']:6.3f}"
            )


if __name__ == "__main__":
    main()
