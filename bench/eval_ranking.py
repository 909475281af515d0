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

The quality model as a reranker of the fused candidates (ADR 0051; `--rerank-fuse W`: its ranking fused with
the fused one at weight W, as the product does; `--rerank-replace`: its order replaces it; `--rerank-pool N`:
candidates scored, default max(top_files x 5, 50)):
       .venv/bin/python bench/eval_ranking.py --set all --rerank sentence-transformers/all-mpnet-base-v2

Query-side levers measured for ADR 0051 (measured here, around `ground`; not in the product unless the ADR
says so): `--lexical-prf PAGES,TERMS` expands the BM25 query with the TERMS best terms of the first
pass's PAGES best pages (add `--prf-gate-expanded` to let the literal gate count the added terms too);
`--multi-vector MIN_WORDS[,ALPHA]` gives a query of MIN_WORDS words or more one vector per clause, each
chunk scored by the best of the whole query's cosine and ALPHA (default 1) x its clauses':
       .venv/bin/python bench/eval_ranking.py --set all --lexical-prf 3,5
       .venv/bin/python bench/eval_ranking.py --set all --multi-vector 12

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
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hallouminate import analysis, xdg
from hallouminate.analysis import content_tokens, query_terms
from hallouminate.config import CorpusSpec, Settings, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.embedding.reranker import load as load_reranker
from hallouminate.indexing import Indexer
from hallouminate.ports import RerankerPort
from hallouminate.search import ground, literal
from hallouminate.search import rerank as rerank_module
from hallouminate.search.rerank import RerankStage
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = "eval"
KINDS = ("keyword", "paraphrase")

# Where a long question is cut into clauses: punctuation, conjunctions and question words (multi-vector).
CLAUSE_CUT = re.compile(
    r"[,;:?!.()]|\b(?:and|or|but|so|because|while|whereas|although|then|if|when|where|which|who|what|"
    r"why|how)\b",
    re.IGNORECASE,
)
CLAUSE_MIN_TOKENS = 2


@dataclasses.dataclass
class Levers:
    """The query-side levers measured around ``ground`` (ADR 0051), by a reader wrapping the real one."""

    prf_pages: int = 0
    prf_terms: int = 0
    prf_gate_expanded: bool = False
    multi_min_words: int = 0
    multi_alpha: float = 1.0

    def active(self) -> bool:
        return bool(self.prf_pages or self.multi_min_words)


def clauses(query: str) -> list[str]:
    """The query's clauses holding at least ``CLAUSE_MIN_TOKENS`` content words."""
    parts = [part.strip() for part in CLAUSE_CUT.split(query)]
    return [part for part in parts if len(content_tokens(part)) >= CLAUSE_MIN_TOKENS]


class LeverReader:
    """The real reader, with the vector search made multi-vector and the BM25 search expanded by
    pseudo-relevance feedback when the levers say so. ``query`` is set before each ``ground`` call."""

    def __init__(self, reader: AsyncReader, embedder: Embedder, levers: Levers) -> None:
        self._reader, self._embedder, self._levers = reader, embedder, levers
        self.query = ""
        self.expanded: list[str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    async def vector_search(self, vector: Any, corpora: Any, limit: int, eligible: Any = None) -> Any:
        levers = self._levers
        parts = clauses(self.query) if levers.multi_min_words else []
        if len(self.query.split()) < levers.multi_min_words or len(parts) < 2:
            return await self._reader.vector_search(vector, corpora, limit, eligible)
        # One model call for every clause (as the daemon's query batcher would make it).
        vectors = await asyncio.to_thread(self._embedder.embed_queries, parts)
        best: dict[str, dict[str, Any]] = {}
        for row in await self._reader.vector_search(vector, corpora, limit, eligible):
            best[row["id"]] = dict(row)
        for clause_vector in vectors:
            for row in await self._reader.vector_search(clause_vector, corpora, limit, eligible):
                score = levers.multi_alpha * float(row["score"])
                if row["id"] not in best or best[row["id"]]["score"] < score:
                    best[row["id"]] = {**row, "score": score}
        return sorted(best.values(), key=lambda row: -row["score"])[:limit]

    async def fts_search(self, terms: Any, corpora: Any, limit: int, eligible: Any = None) -> Any:
        levers = self._levers
        self.expanded = None
        own = query_terms(self.query)
        if not levers.prf_pages or list(terms) != own:  # the rare-word look-ups stay as they are
            return await self._reader.fts_search(terms, corpora, limit, eligible)
        ground_module = sys.modules["hallouminate.search.ground"]
        vector = await asyncio.to_thread(self._embedder.embed_query, self.query)
        first = ground_module.fuse(
            own,
            await self._reader.vector_search(vector, corpora, limit, eligible),
            await self._reader.fts_search(terms, corpora, limit, eligible),
        )
        ranked = sorted(first.scores, key=lambda i: -first.scores[i])
        pages: dict[str, str] = {}  # path -> its best chunk's text (heading path included)
        for chunk_id in ranked:
            row = first.rows[chunk_id]
            if row["path"] not in pages:
                pages[row["path"]] = " ".join([*(row.get("heading_path") or []), row.get("text") or ""])
            if len(pages) == levers.prf_pages:
                break
        # RM1-like: each term's share of each feedback page, summed, times its rarity among the candidates.
        df: dict[str, int] = {}
        for row in first.rows.values():
            for token in set(content_tokens(row.get("text") or "")):
                df[token] = df.get(token, 0) + 1
        n = len(first.rows)
        taken = {token for term in own for token in term.split()}
        weight: dict[str, float] = {}
        for text in pages.values():
            tokens = content_tokens(text)
            for token in tokens:
                if token not in taken and not token.isdigit():
                    idf = math.log(1 + (n - df.get(token, 0) + 0.5) / (df.get(token, 0) + 0.5))
                    weight[token] = weight.get(token, 0.0) + idf / len(tokens)
        extra = sorted(weight, key=lambda t: -weight[t])[: levers.prf_terms]
        self.expanded = [*own, *extra]
        return await self._reader.fts_search(self.expanded, corpora, limit, eligible)


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


@dataclasses.dataclass
class Reranking:
    """The rerank stage the fused ranking runs (``--rerank``), and each query's stage time (ms)."""

    model: RerankerPort
    fuse_weight: float | None
    took_ms: list[float] = dataclasses.field(default_factory=list)
    cost: bool = False

    def stage(self) -> RerankStage:
        async def score(query: str, passages: list[str]) -> list[float]:
            return await asyncio.to_thread(self.model.score, query, passages)

        return RerankStage(self.model.name, score, 10**7, self.fuse_weight)


def evaluate(
    name: str,
    embedder: Embedder,
    settings: Settings,
    reranking: Reranking | None = None,
    levers: Levers | None = None,
    per_query: dict[str, list[str]] | None = None,
) -> list[tuple[str, str, dict[str, float]]]:
    wiki, queries = load_set(name)
    with indexed(wiki, embedder, settings) as (store, spec):
        return asyncio.run(
            _rankings(store, embedder, spec, settings.limit, queries, reranking, levers, per_query)
        )


async def _rankings(
    store: Store,
    embedder: Embedder,
    spec: CorpusSpec,
    limit: int,
    queries: list[dict[str, Any]],
    reranking: Reranking | None = None,
    levers: Levers | None = None,
    per_query: dict[str, list[str]] | None = None,
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

    lever_reader = LeverReader(reader, embedder, levers) if levers is not None and levers.active() else None
    if lever_reader is not None and levers is not None and levers.prf_gate_expanded:
        ground_module = sys.modules["hallouminate.search.ground"]
        plain_fuse = ground_module.fuse
        ground_module.fuse = lambda terms, v, k: plain_fuse(lever_reader.expanded or terms, v, k)

    async def fused(query: str) -> list[tuple[str, list[str]]]:
        if lever_reader is not None:
            lever_reader.query = query
        result = await ground(
            lever_reader or reader,
            embed_query,
            [spec],
            query,
            priority_corpus=CORPUS,
            top_files=10,
            chunks_per_file=1,
            limit=limit,
            snippet_chars=80,
            **({"rerank": reranking.stage()} if reranking is not None else {}),
        )
        if reranking is not None and "rerank" in result:
            reranking.took_ms.append(result["rerank"]["took_ms"])
        if per_query is not None:
            per_query[query] = [doc["path"] for doc in result["docs"]]
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
    if reranking is not None and reranking.cost:
        await _cost(reader, embedder, spec, limit, queries, reranking)
    return out


async def _cost(
    reader: AsyncReader,
    embedder: Embedder,
    spec: CorpusSpec,
    limit: int,
    queries: list[dict[str, Any]],
    reranking: Reranking,
) -> None:
    """p50 per query, interleaved in one run: the bare query embedding (default model), ``ground`` without
    the stage, and with it once every candidate's vector is cached (the measured pass came first)."""
    embed_query = partial(asyncio.to_thread, embedder.embed_query)
    times: dict[str, list[float]] = {"embed": [], "plain": [], "reranked": []}
    params = {"priority_corpus": CORPUS, "top_files": 10, "chunks_per_file": 1, "limit": limit}
    for q in queries:
        started = time.perf_counter()
        await embed_query(q["query"])
        times["embed"].append(time.perf_counter() - started)
        for name, extra in (("plain", {}), ("reranked", {"rerank": reranking.stage()})):
            started = time.perf_counter()
            await ground(reader, embed_query, [spec], q["query"], snippet_chars=80, **params, **extra)
            times[name].append(time.perf_counter() - started)
    p50 = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(
        f"cost ({len(queries)} queries, p50): query embedding {p50['embed']:.1f} ms, ground "
        f"{p50['plain']:.1f} ms ({p50['plain'] / p50['embed']:.2f}x), ground + warm rerank "
        f"{p50['reranked']:.1f} ms ({p50['reranked'] / p50['plain']:.2f}x ground)"
    )


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
        "--rerank", default=None, metavar="MODEL", help="rerank the fused candidates with this reranker"
    )
    rerank_how = parser.add_mutually_exclusive_group()
    rerank_how.add_argument(
        "--rerank-fuse", type=float, default=None, metavar="W", help="fuse the reranker's ranking at weight W"
    )
    rerank_how.add_argument(
        "--rerank-replace", action="store_true", help="the reranker's order replaces the fused one"
    )
    parser.add_argument(
        "--rerank-cost", action="store_true", help="also time ground with and without the stage"
    )
    parser.add_argument("--rerank-pool", type=int, default=None, help="candidates the reranker scores")
    parser.add_argument(
        "--rerank-cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="a bi-encoder's passage vectors kept in FILE (.npz) between runs (its first-pass times then "
        "measure a warm cache)",
    )
    parser.add_argument("--lexical-prf", default=None, metavar="PAGES,TERMS", help="BM25 query expansion")
    parser.add_argument("--prf-gate-expanded", action="store_true", help="the gate counts the added terms")
    parser.add_argument(
        "--multi-vector", default=None, metavar="MIN_WORDS[,ALPHA]", help="one vector per clause"
    )
    parser.add_argument(
        "--per-query", type=Path, default=None, metavar="FILE", help="write each query's fused file ranking"
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
    reranking = None
    if opts.rerank:
        model = load_reranker(xdg.default_model_cache(), opts.rerank)
        fuse = None if opts.rerank_replace else opts.rerank_fuse
        if fuse is None and not opts.rerank_replace:
            fuse = getattr(model, "fuse_weight", None)
        reranking = Reranking(model, fuse, cost=opts.rerank_cost)
        vectors = getattr(model, "_cache", None)  # a bi-encoder's passage vectors, by content hash
        if opts.rerank_cache is not None and vectors is not None and opts.rerank_cache.exists():
            with np.load(opts.rerank_cache) as kept:
                vectors.update((bytes.fromhex(key), kept[key]) for key in kept.files)
        if opts.rerank_pool is not None:
            pool = opts.rerank_pool
            rerank_module.pool_size = lambda top_files: pool
        how = "replacing" if fuse is None else f"fused at weight {fuse}"
        print(f"rerank with {opts.rerank}, {how}, pool {rerank_module.pool_size(10)}")
    levers = Levers(prf_gate_expanded=opts.prf_gate_expanded)
    if opts.lexical_prf:
        levers.prf_pages, levers.prf_terms = (int(x) for x in opts.lexical_prf.split(","))
        print(f"lexical PRF: {levers.prf_terms} terms of the {levers.prf_pages} best pages")
    if opts.multi_vector:
        words, *alpha = opts.multi_vector.split(",")
        levers.multi_min_words, levers.multi_alpha = int(words), float(alpha[0]) if alpha else 1.0
        print(f"multi-vector from {levers.multi_min_words} words, clauses x {levers.multi_alpha}")
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
        first = len(reranking.took_ms) if reranking else 0
        ranked: dict[str, list[str]] = {}
        results = evaluate(name, embedder, settings, reranking, levers, ranked)
        if opts.per_query is not None:
            _, queries = load_set(name)
            with opts.per_query.open("a") as out:
                for q in queries:
                    files = ranked.get(q["query"], [])
                    rank = files.index(q["expected_file"]) + 1 if q["expected_file"] in files else None
                    out.write(json.dumps({"set": name, **q, "rank": rank, "files": files}) + "\n")
        for ranking, group, m in results:
            label = f"{group} ({m['n']})"
            print(
                f"{name:8s} {ranking:8s} {label:17s} {m['recall@1']:6.3f} {m['recall@5']:6.3f} "
                f"{m['mrr']:6.3f} {m['exact_top_chunk']:6.3f}"
            )
        if reranking is not None:
            # Each query is reranked once per group it is in; the first pass over a set meets cold vectors.
            times = reranking.took_ms[first:]
            n = len(load_set(name)[1])
            cold, warm = sorted(times[:n]), sorted(times[n:])
            if opts.rerank_cache is not None and vectors is not None:
                np.savez(opts.rerank_cache, **{key.hex(): vector for key, vector in vectors.items()})
            print(
                f"{name:8s} rerank stage p50: first pass {cold[len(cold) // 2]:.0f} ms, "
                f"repeated {warm[len(warm) // 2] if warm else float('nan'):.0f} ms"
            )


if __name__ == "__main__":
    main()
