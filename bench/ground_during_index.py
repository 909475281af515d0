"""`ground` latency in one repository while a large corpus of another is being indexed, as a ratio to the
same `ground` with no indexing running, in one run (target: p95 ratio <= 3).

Two repositories in one private world served by one daemon: ``sample`` (a copy of the sample wiki, where
the searches run) and ``alpha`` (generated wiki pages of ``bench/_corpora.py``, written until the product's
chunker makes ``--chunks`` chunks, 5,000 by default). Phases, all over the daemon protocol:

1. ``sample`` is indexed; ``--rounds`` searches with nothing indexing (the quiet baseline, before);
2. ``alpha`` is indexed by one ``index`` call; meanwhile the same searches run one at a time, ``--gap``
   seconds apart, from the run's first progress event until it ends. Only searches that began and ended
   while the run was going count (the run's progress events and its answer tell);
3. the quiet baseline again (after): the machine is shared, so the baseline is both quiet phases together.

The queries are 6-9 consecutive words of the sample wiki's chunks (``bench/suite.py``'s ``make_queries``),
distinct, cycled through in every phase. Other processes' CPU during each phase is reported beside it.

Usage: .venv/bin/python bench/ground_during_index.py [--chunks 5000] [--rounds 100] [--gap 0.2] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpora
from _sandbox import OUT, bench_world
from indexing import CpuMeter, wait_loaded
from suite import chunk_budget, latency_figures, make_queries, walk_chunks

TARGET_P95_RATIO = 3.0


async def timed_grounds(conn: Any, repo: Path, queries: list[str], rounds: int) -> list[float]:
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        await conn.call("ground", str(repo), {"query": queries[i % len(queries)]})
        times.append(time.perf_counter() - started)
    return times


async def during_index(
    conn: Any, other: Any, repo: Path, alpha: Path, queries: list[str], gap: float
) -> dict[str, Any]:
    """Searches of ``repo`` while ``alpha`` is indexed (over another connection, as another client)."""
    first_event = asyncio.Event()
    events = 0

    def progress(data: dict[str, Any]) -> None:
        nonlocal events
        events += 1
        first_event.set()

    started = time.perf_counter()
    index = asyncio.ensure_future(other.call("index", str(alpha), {}, on_progress=progress))
    await asyncio.wait({index, asyncio.ensure_future(first_event.wait())}, return_when="FIRST_COMPLETED")
    running_from = time.perf_counter()
    times: list[float] = []
    warned = 0
    i = 0
    while not index.done():
        call_started = time.perf_counter()
        result = await conn.call("ground", str(repo), {"query": queries[i % len(queries)]})
        elapsed = time.perf_counter() - call_started
        i += 1
        if index.done():  # the run ended during this call: not a search made wholly during it
            break
        times.append(elapsed)
        warned += any(w["code"] == "not-indexed" for w in result["warnings"])
        await asyncio.sleep(gap)
    report = (await index)["corpora"][0]
    return {
        "times": times,
        "index_seconds": time.perf_counter() - started,
        "searching_seconds": time.perf_counter() - running_from,
        "progress_events": events,
        "report": report,
        "searches_warned": warned,
    }


async def phases(world: Any, alpha: Path, queries: list[str], rounds: int, gap: float) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    other = await connect_or_spawn()
    try:
        pid = (await conn.call("ping"))["pid"]
        await wait_loaded(conn)
        await conn.call("index", str(world.repo), {})
        await timed_grounds(conn, world.repo, queries, 10)  # warm-up: first loads, first allocations
        meter = CpuMeter(pid)
        before = await timed_grounds(conn, world.repo, queries, rounds)
        before_cpu = meter.stop()
        print(f"  quiet baseline: {latency_figures(before)['p50_ms']:.1f} ms p50", file=sys.stderr)
        print("  indexing alpha while searching sample ...", file=sys.stderr)
        meter = CpuMeter(pid)
        busy = await during_index(conn, other, world.repo, alpha, queries, gap)
        busy_cpu = meter.stop()
        meter = CpuMeter(pid)
        after = await timed_grounds(conn, world.repo, queries, rounds)
        after_cpu = meter.stop()
    finally:
        await conn.close()
        await other.close()
    return {
        "before": before,
        "after": after,
        "busy": busy,
        "cpu": {"before": before_cpu, "during": busy_cpu, "after": after_cpu},
    }


def run(chunks: int, rounds: int, gap: float, seed: int) -> dict[str, Any]:
    from hallouminate.embedding import Embedder

    with bench_world(name="sample") as world:
        embedder = Embedder(world.model_cache)
        budget = chunk_budget(embedder.max_tokens)
        counter = _corpora.TokenCounter(embedder.count_tokens)
        sample_texts = [embed for _, embed in walk_chunks(world.repo, counter, budget)]
        queries, _ = make_queries(sample_texts, rounds, seed)

        def chunk(text: str) -> list[str]:
            from hallouminate.indexing import chunk_markdown

            return [c.embed_text for c in chunk_markdown(text, counter, budget).chunks]

        alpha = world.root / "alpha"
        (alpha / ".hallouminate").mkdir(parents=True)
        (alpha / ".hallouminate" / "config.toml").write_text('[[repository]]\nname = "alpha"\npath = "."\n')
        generated = _corpora.generate_to_chunks(alpha / ".hallouminate" / "wiki", seed, chunks, chunk)
        del embedder  # the daemon embeds; this process only needed the tokenizer's counts
        print(f"  alpha: {generated.files} files, {generated.chunks} chunks", file=sys.stderr)
        figures = asyncio.run(phases(world, alpha, queries, rounds, gap))
    quiet = figures["before"] + figures["after"]
    busy = figures["busy"]
    base, during = latency_figures(quiet), latency_figures(busy["times"])
    return {
        "chunks_target": chunks,
        "alpha": {"files": generated.files, "chunks": generated.chunks},
        "rounds": rounds,
        "gap_s": gap,
        "seed": seed,
        "quiet": base,
        "quiet_before": latency_figures(figures["before"]),
        "quiet_after": latency_figures(figures["after"]),
        "during_index": during,
        "p50_ratio": during["p50_ms"] / base["p50_ms"],
        "p95_ratio": during["p95_ms"] / base["p95_ms"],
        "target_p95_ratio": TARGET_P95_RATIO,
        "index": {
            "seconds": busy["index_seconds"],
            "searching_seconds": busy["searching_seconds"],
            "progress_events": busy["progress_events"],
            "files_upserted": busy["report"]["files_upserted"],
            "chunks_written": busy["report"]["chunks_written"],
        },
        "searches_warned_not_indexed": busy["searches_warned"],
        "cpu": figures["cpu"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=7)
    opts = parser.parse_args()
    f = run(opts.chunks, opts.rounds, opts.gap, opts.seed)
    ok = {True: "ok", False: "MISSED"}
    quiet, during, index, cpu = f["quiet"], f["during_index"], f["index"], f["cpu"]
    print(
        f"hallouminate ground during an index (alpha: {f['alpha']['files']} files, "
        f"{f['alpha']['chunks']} chunks; searches in sample; seed {opts.seed})"
    )
    print(f"  {'phase':<30} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9}  other processes' CPU s")
    rows = [
        ("quiet, before", f["quiet_before"], cpu["before"]),
        ("quiet, after", f["quiet_after"], cpu["after"]),
        ("quiet (both: the baseline)", quiet, None),
        ("during the index of alpha", during, cpu["during"]),
    ]
    for name, figures, spent in rows:
        others = f"{spent['others_cpu_s']:.0f}" if spent else ""
        print(
            f"  {name:<30} {figures['n']:>5} {figures['p50_ms']:>9.1f} {figures['p95_ms']:>9.1f} "
            f"{figures['p99_ms']:>9.1f}  {others}"
        )
    print(f"  {'p50 ratio (during / quiet)':<30} {f['p50_ratio']:>25.2f}")
    print(
        f"  {'p95 ratio (during / quiet)':<30} {f['p95_ratio']:>25.2f}  "
        f"target <= {TARGET_P95_RATIO:.0f}: {ok[f['p95_ratio'] <= TARGET_P95_RATIO]}"
    )
    print(
        f"  index of alpha: {index['seconds']:.1f} s, {index['chunks_written']} chunks written, "
        f"{index['progress_events']} progress events; searches ran for {index['searching_seconds']:.1f} s"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ground_during_index.json").write_text(json.dumps(f, indent=2))
    print(f"  raw figures: {OUT / 'ground_during_index.json'}")


if __name__ == "__main__":
    main()
