"""Ranking quality on our labelled evaluation set, for each signal alone and for the fusion.

Indexes tests/fixtures/eval_wiki in a temp store with the real model, runs every query of
tests/fixtures/eval_queries.json, and prints Recall@1/5, MRR (by file) and the exact-top-chunk rate
for: dense only, BM25 only, and the fused ranking `ground` returns.

Usage: .venv/bin/python bench/eval_ranking.py [--by-kind]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hallouminate import xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search import ground
from hallouminate.search.terms import query_terms
from hallouminate.storage import Store

ROOT = Path(__file__).resolve().parent.parent
WIKI = ROOT / "tests" / "fixtures" / "eval_wiki"
QUERIES = json.loads((ROOT / "tests" / "fixtures" / "eval_queries.json").read_text())
CORPUS = "eval"

Ranker = Callable[[str], list[tuple[str, list[str]]]]  # query -> [(file, heading_path of its best chunk)]


def files_in_order(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    seen: dict[str, list[str]] = {}
    for row in rows:
        seen.setdefault(row["path"], list(row["heading_path"] or []))
    return list(seen.items())


def measure(ranker: Ranker, queries: list[dict[str, Any]]) -> dict[str, float]:
    recall1 = recall5 = mrr = exact = 0.0
    for q in queries:
        ranked = ranker(q["query"])
        files = [path for path, _ in ranked]
        rank = files.index(q["expected_file"]) + 1 if q["expected_file"] in files else None
        recall1 += rank == 1
        recall5 += rank is not None and rank <= 5
        mrr += 1.0 / rank if rank else 0.0
        exact += bool(ranked) and ranked[0][0] == q["expected_file"] and ranked[0][1] == q["expected_heading"]
    n = len(queries)
    return {
        "recall@1": recall1 / n,
        "recall@5": recall5 / n,
        "mrr": mrr / n,
        "exact_top_chunk": exact / n,
        "n": n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--by-kind", action="store_true", help="also report keyword and paraphrase queries apart"
    )
    opts = parser.parse_args()
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache())
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db", embedder.dim)
        spec = CorpusSpec(CORPUS, "custom", (WIKI,), ("**/*.md",), (), None)
        Indexer(store, embedder, settings).index_corpus(spec)
        store.optimize()
        limit = settings.limit

        def dense(query: str) -> list[tuple[str, list[str]]]:
            return files_in_order(store.vector_search(embedder.embed_query(query), [spec.store_key], limit))

        def bm25(query: str) -> list[tuple[str, list[str]]]:
            terms = query_terms(query)
            return files_in_order(store.fts_search(" ".join(terms), [spec.store_key], limit)) if terms else []

        def fused(query: str) -> list[tuple[str, list[str]]]:
            result = ground(
                store,
                embedder,
                [spec],
                query,
                priority_corpus=CORPUS,
                top_files=10,
                chunks_per_file=1,
                limit=limit,
                snippet_chars=80,
            )
            return [(doc["path"], doc["chunks"][0]["heading_path"]) for doc in result["docs"]]

        groups = {"all": QUERIES}
        if opts.by_kind:
            for kind in ("keyword", "paraphrase"):
                groups[kind] = [q for q in QUERIES if q["kind"] == kind]
        print(f"{'ranking':8s} {'queries':10s} {'R@1':>6s} {'R@5':>6s} {'MRR':>6s} {'exact':>6s}")
        for name, ranker in (("dense", dense), ("bm25", bm25), ("fused", fused)):
            for group, queries in groups.items():
                m = measure(ranker, queries)
                label = f"{group} ({m['n']})"
                print(
                    f"{name:8s} {label:10s} {m['recall@1']:6.3f} {m['recall@5']:6.3f} "
                    f"{m['mrr']:6.3f} {m['exact_top_chunk']:6.3f}"
                )


if __name__ == "__main__":
    main()
