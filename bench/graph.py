"""`get_connection_graph` latency (depth 2, fan_out 5), as a ratio to a plain `ground` in the same run, at 10k
and 100k chunks.

The corpora are bench/ground_stages.py's (the same stores, built there or here and kept in
``bench/out/ground_stages/``): pages of ten chunks with random unit vectors, written straight to a real
store, searched in-process over the daemon's ``AsyncReader``. Both calls run the product's engine:
``search.connection_graph`` from a random page and ``search.ground`` on a query of the same round
(embedding reused: the search alone). Random vectors are nearly orthogonal, so the graph runs with
``min_similarity`` 0 (every node fills its fan-out: 30 nodes, the most work depth 2 and fan_out 5 can do);
a row with GrooveSeek's default 0.3 shows the walk that such vectors stop at the first level. Links are
not followed (the pages are not on disk); each round runs every case once, in a shuffled order.

Usage: .venv/bin/python bench/graph.py [--chunks 10000 100000] [--rounds 40] [--seed 7]
       [--markdown docs/benchmarks.md] [--report]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, percentile
from ground_stages import SEARCH_LIMIT, bench_spec, build_store, queries

MARK_START = "<!-- graph:start -->"
MARK_END = "<!-- graph:end -->"
# name -> get_connection_graph arguments beyond start (None: the plain ground baseline).
CASES: dict[str, dict[str, Any] | None] = {
    "ground (plain)": None,
    "graph depth 2, fan_out 5": {"depth": 2, "fan_out": 5, "min_similarity": 0.0},
    "graph depth 2, fan_out 5, centroid": {
        "depth": 2,
        "fan_out": 5,
        "min_similarity": 0.0,
        "seed_strategy": "centroid",
    },
    "graph depth 2, fan_out 5, dedup_by_path": {
        "depth": 2,
        "fan_out": 5,
        "min_similarity": 0.0,
        "dedup_by_path": True,
    },
    "graph defaults (min_similarity 0.3)": {},
}


async def measure(store: Any, embedder: Any, chunks: int, rounds: int, seed: int) -> dict[str, Any]:
    from hallouminate.search import connection_graph, ground
    from hallouminate.storage.reader import AsyncReader

    reader = AsyncReader(store)
    spec = bench_spec()
    pages = sorted(await asyncio.to_thread(store.file_states, spec.store_key))
    rng = random.Random(seed)
    starts = [rng.choice(pages) for _ in range(rounds)]
    qs = queries(seed, rounds)
    embedded = {q: embedder.embed_query(q) for q in qs}

    async def embed(text: str) -> Any:
        return embedded[text]

    times: dict[str, list[float]] = {name: [] for name in CASES}
    nodes: dict[str, list[int]] = {name: [] for name in CASES}
    knn: dict[str, list[int]] = {name: [] for name in CASES}

    async def once(name: str, start: str, query: str) -> None:
        case = CASES[name]
        began = time.perf_counter()
        if case is None:
            await ground(
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
        else:
            result = await connection_graph(
                reader,
                spec.store_key,
                {"start": start, **case},
                corpus_name=spec.name,  # type: ignore[typeddict-item]
            )
            nodes[name].append(result["stats"]["total_nodes"])
            knn[name].append(result["stats"]["knn_queries"])
        times[name].append(time.perf_counter() - began)

    for start, query in zip(starts[:5], qs[:5], strict=True):  # warm-up: the corpus loads, masks build
        for name in CASES:
            await once(name, start, query)
    for series in (*times.values(), *nodes.values(), *knn.values()):
        series.clear()
    for start, query in zip(starts, qs, strict=True):
        order = list(CASES)
        rng.shuffle(order)
        for name in order:
            await once(name, start, query)
    plain = percentile(times["ground (plain)"], 50)
    return {
        "chunks": chunks,
        "rounds": rounds,
        "cases": {
            name: {
                "p50_ms": round(percentile(t, 50) * 1000, 2),
                "p95_ms": round(percentile(t, 95) * 1000, 2),
                "ratio_p50": round(percentile(t, 50) / plain, 3),
                "nodes": round(sum(nodes[name]) / len(nodes[name]), 1) if nodes[name] else None,
                "knn_queries": round(sum(knn[name]) / len(knn[name]), 1) if knn[name] else None,
            }
            for name, t in times.items()
        },
    }


def table(runs: list[dict[str, Any]]) -> str:
    sizes = [f"{r['chunks'] // 1000}k" for r in runs]
    head = "| case | " + " | ".join(
        f"{k} p50 ms | ratio to ground | p95 ms | nodes | kNN queries" for k in sizes
    )
    lines = [head + " |", "| --- | " + " | ".join("---: | ---: | ---: | ---: | ---:" for _ in runs) + " |"]
    for name in CASES:
        cells = []
        for r in runs:
            c = r["cases"][name]
            extra = "- | -" if c["nodes"] is None else f"{c['nodes']:g} | {c['knn_queries']:g}"
            cells.append(f"{c['p50_ms']:.1f} | {c['ratio_p50']:.2f} | {c['p95_ms']:.1f} | {extra}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(path: Path, runs: list[dict[str, Any]], note: str) -> None:
    text = path.read_text()
    block = f"{MARK_START}\n{note}\n\n{table(runs)}\n{MARK_END}"
    if MARK_START in text:
        before, rest = text.split(MARK_START, 1)
        text = before + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## get_connection_graph (bench/graph.py)\n\n" + block + "\n"
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
    parser.add_argument("--report", action="store_true", help="Only re-render the last run's figures.")
    opts = parser.parse_args()
    out = OUT / "graph.json"
    if opts.report:
        saved = json.loads(out.read_text())
        print(table(saved["runs"]))
        if opts.markdown:
            write_markdown(opts.markdown, saved["runs"], saved["note"])
        return

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
        f"`get_connection_graph` and a plain `ground` in-process over the daemon's reader, on "
        f"bench/ground_stages.py's corpora (random unit vectors; ground's query embeddings reused), "
        f"{opts.rounds} rounds, each case once per round in shuffled order, a random start page of ten "
        f"chunks (all_chunks: ten seeds); ratio = p50 / ground's p50 in the same run; nodes and kNN "
        f"queries are means. Links not followed (no pages on disk). {time.strftime('%Y-%m-%d')}, 2 cores."
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"note": note, "runs": runs}, indent=2))
    print(note)
    print(table(runs))
    if opts.markdown:
        write_markdown(opts.markdown, runs, note)


if __name__ == "__main__":
    main()
