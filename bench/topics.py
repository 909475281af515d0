"""`list_topics` latency at 10k and 100k chunks, as a ratio to a plain `ground` in the same run.

The stores are bench/ground_stages.py's (reused from ``bench/out/ground_stages/`` when their chunk count
matches, built otherwise): pages ``catNN/topN/pageN.md`` (100 categories x 10 topics, 10 chunks a page)
with frontmatter. Everything runs in-process over the daemon's ``AsyncReader``, as the daemon serves it
(without the socket and the config resolution every op pays alike). Each round measures, in a shuffled
order:

- ``ground (plain)``: the baseline, the search alone (query embeddings reused), limit 50, top_files 10;
- ``list_topics``: what a call costs between commits (``page_heads`` and the per-commit cache);
- ``list_topics, first after a commit (rows held)``: the heads read from the rows searches hold, then
  one pass over the pages (the reader's and the topics' caches emptied first);
- ``list_topics, first after a commit (rows not held)``: the same with the heads read from LanceDB (one
  query of four light columns, first chunks only);
- ``compute only, nested paths``: ``list_topics`` over the same heads with each path given two more
  directory levels (``catNN/topN/dA/dB/pageN.md``), so the ``children`` trees are built too.

Usage: .venv/bin/python bench/topics.py [--chunks 10000 100000] [--rounds 40] [--seed 7]
       [--markdown docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, percentile
from ground_stages import SEARCH_LIMIT, bench_spec, build_store, queries

MARK_START = "<!-- topics:start -->"
MARK_END = "<!-- topics:end -->"
CASES = (
    "ground (plain)",
    "list_topics",
    "list_topics, first after a commit (rows held)",
    "list_topics, first after a commit (rows not held)",
    "compute only, nested paths",
)


def nested(heads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The heads with two more directory levels in each path (7 x 5 directories under each topic)."""
    out = []
    for number, head in enumerate(heads):
        directory, name = head["path"].rsplit("/", 1)
        out.append({**head, "path": f"{directory}/d{number % 7}/d{number % 5}/{name}"})
    return out


async def measure(store: Any, embedder: Any, chunks: int, rounds: int, seed: int) -> dict[str, Any]:
    from hallouminate.search import ground
    from hallouminate.search.topics import TopicsCache, list_topics
    from hallouminate.storage.reader import AsyncReader

    reader = AsyncReader(store)
    spec = bench_spec()
    corpus = spec.store_key
    cache = TopicsCache()
    embedded: dict[str, Any] = {}

    async def embed(text: str) -> Any:
        if text not in embedded:
            embedded[text] = embedder.embed_query(text)
        return embedded[text]

    async def plain(query: str) -> object:
        return await ground(
            reader,
            embed,
            [spec],
            query,
            priority_corpus=None,
            top_files=10,
            chunks_per_file=3,
            limit=SEARCH_LIMIT,
            snippet_chars=240,
        )

    async def warm(_query: str) -> object:
        return cache.topics(corpus, await reader.page_heads(corpus))

    async def after_commit_held(_query: str) -> object:
        kept = reader._heads.pop(corpus)  # what a commit empties (the rows stay held until a search)
        try:
            return TopicsCache().topics(corpus, await reader.page_heads(corpus))
        finally:
            reader._heads[corpus] = kept  # the list the warm case's cache knows

    async def after_commit_not_held(_query: str) -> object:
        kept = reader._heads.pop(corpus)
        held = reader._vectors.pop(corpus)  # as when no search has read the corpus since the commit
        try:
            return TopicsCache().topics(corpus, await reader.page_heads(corpus))
        finally:
            reader._vectors[corpus] = held
            reader._heads[corpus] = kept

    deep = nested(list(await reader.page_heads(corpus)))

    async def compute_nested(_query: str) -> object:
        return list_topics(deep)  # type: ignore[arg-type]

    runs: dict[str, Callable[[str], Awaitable[object]]] = dict(
        zip(CASES, (plain, warm, after_commit_held, after_commit_not_held, compute_nested), strict=True)
    )
    qs = queries(seed, rounds)
    for query in qs[:5]:  # warm-up: the corpus held in memory, the first embeddings, the caches
        for run in runs.values():
            await run(query)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    rng = random.Random(seed)
    for query in qs:
        order = list(CASES)
        rng.shuffle(order)
        for name in order:
            started = time.perf_counter()
            await runs[name](query)
            times[name].append(time.perf_counter() - started)
    topics = cache.topics(corpus, await reader.page_heads(corpus))
    pages = len(await reader.page_heads(corpus))
    base = percentile(times["ground (plain)"], 50)
    return {
        "chunks": chunks,
        "pages": pages,
        "entries": len(topics),
        "nested_entries_nodes": sum(len(t["children"]) for t in list_topics(deep)),  # type: ignore[arg-type]
        "rounds": rounds,
        "cases": {
            name: {
                "p50_ms": round(percentile(t, 50) * 1000, 3),
                "p95_ms": round(percentile(t, 95) * 1000, 3),
                "ratio_p50": round(percentile(t, 50) / base, 5),
            }
            for name, t in times.items()
        },
    }


def table(runs: list[dict[str, Any]]) -> str:
    sizes = [f"{r['chunks'] // 1000}k ({r['pages']:,} pages)" for r in runs]
    head = "| case | " + " | ".join(f"{k} p50 ms | p95 ms | ratio to ground" for k in sizes) + " |"
    rule = "| --- | " + " | ".join("---: | ---: | ---:" for _ in runs) + " |"
    lines = [head, rule]
    for name in CASES:
        cells = []
        for r in runs:
            c = r["cases"][name]
            cells.append(f"{c['p50_ms']:.3g} | {c['p95_ms']:.3g} | {c['ratio_p50']:.3g}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(path: Path, runs: list[dict[str, Any]], note: str) -> None:
    text = path.read_text()
    block = f"{MARK_START}\n{note}\n\n{table(runs)}\n{MARK_END}"
    if MARK_START in text:
        before, rest = text.split(MARK_START, 1)
        text = before + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## list_topics (bench/topics.py)\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--markdown", type=Path, help="Write the table into this file (between markers).")
    opts = parser.parse_args()

    from hallouminate import xdg
    from hallouminate.embedding import Embedder

    embedder = Embedder(xdg.default_model_cache())
    runs = []
    for chunks in opts.chunks:
        print(f"corpus of {chunks:,} chunks", file=sys.stderr)
        store = build_store(
            OUT / "ground_stages" / str(chunks), chunks, embedder.dim, opts.seed, opts.rebuild
        )
        runs.append(asyncio.run(measure(store, embedder, chunks, opts.rounds, opts.seed)))
    note = (
        f"In-process over the daemon's reader (bench/ground_stages.py's stores: 100 categories x 10 "
        f"topics, flat); {opts.rounds} rounds, each case once per round in shuffled order; ratios are p50 "
        f"over plain `ground`'s p50 in the same run (search only, query embeddings reused). "
        f"{time.strftime('%Y-%m-%d')}, 2 cores shared with other work."
    )
    out = OUT / "topics.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"note": note, "runs": runs}, indent=2))
    print(note)
    print(table(runs))
    print(json.dumps(runs, indent=2))
    if opts.markdown:
        write_markdown(opts.markdown, runs, note)


if __name__ == "__main__":
    main()
