"""Chunk quality (ADR 0029) on our labelled evaluation sets: what a min_quality of 0.3 would drop.

For each set (eval, heldout, sample; indexed as bench/eval_ranking.py does, with the real model), prints:

1. The distribution of the stored ``quality`` column (and that every row has one equal to
   ``chunk_quality`` of its text), how many chunks fall under the threshold, by reason, with examples.
2. For each labelled query, whether its answer survives: eval_ranking's notion of the expected answer is
   the expected file and, where labelled, the heading path of its best chunk. The answer survives when at
   least one chunk of that file (with that heading path) scores >= the threshold. Every query whose answer
   does not survive is listed.
3. The ranking ``ground`` returns (R@1, R@5, MRR by file, exact top chunk: eval_ranking's measures) with
   every chunk (``include_low_quality``) and with ``ground``'s own ``min_quality`` filter at the threshold,
   which removes the chunks under it before retrieval (search/filters.py).

Usage: .venv/bin/python bench/quality.py [--set eval|heldout|sample|all] [--threshold 0.3] [--examples 12]
       .venv/bin/python bench/quality.py --wiki DIR  (any Markdown tree, unlabelled: the distribution only;
       e.g. --wiki docs, this repository's documentation, which has link lists, tables and contents)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import indexed, load_set, measure
from hallouminate import xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing.quality import chunk_quality
from hallouminate.search import ground
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader


def all_rows(store: Store, spec: CorpusSpec) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(store.file_states(spec.store_key)):
        rows.extend(dict(r) for r in store.file_rows(spec.store_key, path))
    return rows


def distribution(name: str, rows: list[dict[str, Any]], threshold: float, examples: int) -> None:
    mismatched = [
        r
        for r in rows
        if r["quality"] is None
        or abs(r["quality"] - chunk_quality(r["text"], r["heading_path"]).score) > 1e-6
    ]
    scores = Counter(round(float(r["quality"]), 2) for r in rows if r["quality"] is not None)
    low = [r for r in rows if r["quality"] is not None and r["quality"] < threshold]
    print(f"\n== {name}: {len(rows)} chunks in {len({r['path'] for r in rows})} files")
    print(f"stored quality missing or not chunk_quality(text): {len(mismatched)}")
    print("quality  chunks")
    for score in sorted(scores, reverse=True):
        print(f"{score:7.2f}  {scores[score]}")
    reasons = Counter("+".join(chunk_quality(r["text"], r["heading_path"]).reasons) or "none" for r in rows)
    print("reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    print(f"under {threshold}: {len(low)} of {len(rows)} chunks ({100 * len(low) / max(1, len(rows)):.1f}%)")
    for r in low[:examples]:
        q = chunk_quality(r["text"], r["heading_path"])
        text = " ".join(r["text"].split())
        print(f"  {q.score:.2f} {'+'.join(q.reasons):22s} {r['path']} {r['heading_path']}: {text[:90]!r}")


def answers(queries: list[dict[str, Any]], rows: list[dict[str, Any]], threshold: float) -> None:
    lost: list[str] = []
    for q in queries:
        heading = q["expected_heading"]
        holding = [
            r
            for r in rows
            if r["path"] == q["expected_file"]
            and (heading is None or list(r["heading_path"] or []) == heading)
        ]
        if not holding:
            lost.append(f"  {q['query'][:60]!r}: no chunk of {q['expected_file']} {heading} at all (label?)")
        elif max(float(r["quality"]) for r in holding) < threshold:
            best = max(holding, key=lambda r: r["quality"])
            lost.append(
                f"  {q['query'][:60]!r}: {q['expected_file']} {heading} best {best['quality']:.2f}: {best['text'][:80]!r}"
            )
    print(f"labelled answers kept at {threshold}: {len(queries) - len(lost)} of {len(queries)}")
    for line in lost:
        print(line)


async def rankings(
    store: Store,
    embedder: Embedder,
    spec: CorpusSpec,
    limit: int,
    queries: list[dict[str, Any]],
    threshold: float,
) -> list[tuple[str, dict[str, float]]]:
    reader = AsyncReader(store)
    embed_query = partial(asyncio.to_thread, embedder.embed_query)
    out: list[tuple[str, dict[str, float]]] = []
    # ground's own quality filter (search/filters.py), off and at the threshold.
    for label, floor in (
        ("all chunks", {"include_low_quality": True}),
        (f"quality >= {threshold}", {"min_quality": threshold}),
    ):

        async def fused(query: str, floor: dict[str, Any] = floor) -> list[tuple[str, list[str]]]:
            result = await ground(
                reader,
                embed_query,
                [spec],
                query,
                priority_corpus=spec.name,
                top_files=10,
                chunks_per_file=1,
                limit=limit,
                snippet_chars=80,
                **floor,
            )
            return [(doc["path"], doc["chunks"][0]["heading_path"]) for doc in result["docs"]]

        out.append((label, await measure(fused, queries)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=("eval", "heldout", "sample", "all"), default="all")
    parser.add_argument("--threshold", type=float, default=0.3)
    parser.add_argument("--examples", type=int, default=12, help="low chunks shown per set")
    parser.add_argument(
        "--wiki", type=Path, default=None, help="only the distribution, on this Markdown tree"
    )
    opts = parser.parse_args()
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    print(f"model {embedder.model_name}, chunk_tokens = {settings.chunk_tokens}, threshold {opts.threshold}")
    if opts.wiki is not None:
        with indexed(opts.wiki.resolve(), embedder, settings) as (store, spec):
            distribution(str(opts.wiki), all_rows(store, spec), opts.threshold, opts.examples)
        return
    names = ("eval", "heldout", "sample") if opts.set == "all" else (opts.set,)
    results: list[tuple[str, str, dict[str, float]]] = []
    for name in names:
        wiki, queries = load_set(name)
        with indexed(wiki, embedder, settings) as (store, spec):
            rows = all_rows(store, spec)
            distribution(name, rows, opts.threshold, opts.examples)
            answers(queries, rows, opts.threshold)
            for label, m in asyncio.run(
                rankings(store, embedder, spec, settings.limit, queries, opts.threshold)
            ):
                results.append((name, label, m))
    print(f"\n{'set':8s} {'chunks':16s} {'n':>4s} {'R@1':>6s} {'R@5':>6s} {'MRR':>6s} {'exact':>6s}")
    for name, label, m in results:
        print(
            f"{name:8s} {label:16s} {m['n']:4d} {m['recall@1']:6.3f} {m['recall@5']:6.3f} {m['mrr']:6.3f} {m['exact_top_chunk']:6.3f}"
        )


if __name__ == "__main__":
    main()
