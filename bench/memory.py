"""Where the daemon's memory goes, stage by stage, on a kept bench world (bench/build_store.py; ADR 0057).

Starts the daemon on the world, then reads its /proc status (VmHWM, VmRSS, RssAnon, RssFile) at each
stage: at its first ping, with the model and store (and the BM25 index) loaded, after its first ranked
search (the corpus's rows and vectors held), after its first phrase search, and after the suite's serving
load (bench/suite.py's own functions, fewer rounds: sequential ranked and phrase ``ground`` calls through
MCP, 8 MCP sessions and 8 daemon-protocol clients in closed loops, a no-op re-index). Each lever's effect
is the difference between two runs of this script, in MB.

``--components`` also measures, in this process without the model: the store opened (LanceDB), its BM25
index built, and a BM25 index of ``--bm25-scale`` times the store's rows (the index at 1M, from a 100k
world's text repeated); and what a phrase search past the in-memory bound holds at the peak.

``--env K=V`` (repeatable) starts the daemon with extra environment (e.g. MALLOC_ARENA_MAX=2), to
measure a lever without a code change.

Usage: .venv/bin/python bench/memory.py --root /work/wt/stores/s100k [--rounds 50] [--components]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, BenchWorld
from foundation import stop_shim_host
from suite import (
    CLIENTS,
    Options,
    daemon_throughput,
    index_runs,
    log,
    make_queries,
    mcp_latencies,
    mcp_throughput,
)

STATUS_FIELDS = ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")


def memory_of(pid: int | str = "self") -> dict[str, float]:
    """The process's memory figures from /proc (MiB)."""
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in STATUS_FIELDS:
                out[key] = int(value.split()[0]) / 1024
    return out


def reset_peak() -> None:
    """Start this process's VmHWM afresh (Linux 4.0+), so a step's peak is its own."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def show(stage: str, figures: dict[str, float]) -> str:
    return f"{stage:<28}" + "  ".join(f"{k} {figures.get(k, 0):7.0f}" for k in STATUS_FIELDS)


def world_of(root: Path) -> BenchWorld:
    env = dict(os.environ)
    for line in (root / "env.sh").read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = shlex.split(value)[0]
    model_cache = Path(env["XDG_CACHE_HOME"])
    return BenchWorld(root=root, env=env, repo=root / "gen", model_cache=model_cache)


def sample_texts(world: BenchWorld, n: int) -> list[str]:
    """Chunk texts of the world's store, for the suite's query maker."""
    import lancedb

    from hallouminate.config import resolve

    store_dir = resolve(world.repo).settings.store_dir
    table = lancedb.connect(str(store_dir)).open_table("chunks")
    return [t for t in table.search().select(["text"]).limit(n).to_arrow()["text"].to_pylist() if t]


async def staged(world: BenchWorld, opts: Options, texts: list[str]) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn
    from indexing import wait_loaded

    stages: dict[str, Any] = {}
    ranked, phrases = make_queries(texts, opts.warmup + opts.rounds + 2, opts.seed)
    conn = await connect_or_spawn()
    try:
        pid = int((await conn.call("ping"))["pid"])
        stages["started"] = memory_of(pid)
        log(show("started (first ping)", stages["started"]))
        await wait_loaded(conn)
        stages["loaded"] = memory_of(pid)  # model, store and BM25 index
        log(show("model + store + BM25", stages["loaded"]))
        await conn.call("ground", str(world.repo), {"query": ranked[-1]})
        stages["first_ranked"] = memory_of(pid)
        log(show("first ranked (rows held)", stages["first_ranked"]))
        await conn.call("ground", str(world.repo), {"query": phrases[-1], "match": "phrase"})
        stages["first_phrase"] = memory_of(pid)
        log(show("first phrase", stages["first_phrase"]))
    finally:
        await conn.close()
    latencies = await mcp_latencies(world.env, world.repo, ranked, phrases, opts)
    stages["sequential_mcp"] = memory_of(pid)
    log(show(f"{opts.rounds}+{opts.rounds} MCP calls", stages["sequential_mcp"]))
    mcp = await mcp_throughput(world.env, world.repo, ranked, opts.concurrency_s)
    stages["mcp_sessions"] = memory_of(pid)
    log(show(f"{CLIENTS} MCP sessions", stages["mcp_sessions"]))
    direct = await daemon_throughput(world.repo, ranked, opts.daemon_concurrency_s)
    stages["daemon_clients"] = memory_of(pid)
    log(show(f"{CLIENTS} daemon clients", stages["daemon_clients"]))
    runs = await index_runs(world.repo, full=False)
    stages["after_load"] = memory_of(pid)
    log(show("no-op re-index (end)", stages["after_load"]))
    return {
        "pid": pid,
        "stages": stages,
        "ranked_p50_ms": latencies["ranked"]["p50_ms"],
        "phrase_p50_ms": latencies["phrase"].get("p50_ms"),
        "mcp_calls_per_s": mcp["calls_per_s"],
        "daemon_calls_per_s": direct["calls_per_s"],
        "errors": mcp["errors"] + direct["errors"],
        "noop_s": runs["noop"]["seconds"],
    }


def components(world: BenchWorld, scale: int, phrases: list[str]) -> dict[str, Any]:
    """In this process, no model, the allocator tuned as the daemon tunes it: the store, its BM25 index, a
    BM25 index ``scale`` times as big, and a phrase search past the in-memory bound (the reader's LanceDB
    path), and the CPU of ``phrases`` there (``phrase_cpu``). Freed memory is returned before each ``before`` (``allocator.release``), so each step's
    figure is its own (and VmHWM is reset: ``reset_peak``)."""
    import pyarrow as pa

    from hallouminate.config import resolve
    from hallouminate.storage import Store, allocator
    from hallouminate.storage.lexical import LEXICAL_COLUMNS, LexicalIndex
    from hallouminate.storage.reader import AsyncReader

    allocator.tune()
    out: dict[str, Any] = {"before": memory_of()}
    store_dir = resolve(world.repo).settings.store_dir
    import lancedb

    table = lancedb.connect(str(store_dir)).open_table("chunks")
    dim = len(table.search().select(["vector"]).limit(1).to_arrow()["vector"][0])
    del table
    out["lancedb_opened"] = memory_of()
    log(show("lancedb open (no model)", out["lancedb_opened"]))
    store = Store(store_dir, dim)  # no model named: the table is opened as it is
    out["store_bm25"] = memory_of()
    out["rows"] = store.lexical.num_docs()
    log(show(f"store + BM25 ({out['rows']} rows)", out["store_bm25"]))

    if scale > 1:
        rows = store._table.search().select(LEXICAL_COLUMNS).limit(None).to_arrow()
        gc.collect()
        allocator.release()
        reset_peak()
        base = memory_of()
        big = LexicalIndex()
        started = time.perf_counter()
        for copy in range(scale):
            ids = pa.array([f"{i}#{copy}" for i in rows["id"].to_pylist()])
            big.add(rows.set_column(0, "id", ids))
        allocator.release()
        out["bm25_scaled"] = {
            "rows": big.num_docs(),
            "seconds": time.perf_counter() - started,
            "before": base,  # holds the store's own index and the 100k rows' text read for the copies
            "after": memory_of(),
            "held_text_mib": rows.nbytes / 2**20,
        }
        log(show(f"BM25 of {big.num_docs()} rows", out["bm25_scaled"]["after"]))
        del big, rows
        gc.collect()

    async def phrase_past_bound() -> int:
        reader = AsyncReader(store, in_memory_rows=0)
        corpora = list(await _corpora_of(store))
        found = await reader.phrase_rows(corpora, "the", 200)
        return len(found.rows)

    gc.collect()
    allocator.release()
    reset_peak()
    before = memory_of()
    matched = asyncio.run(phrase_past_bound())
    out["phrase_past_bound"] = {"before": before, "after": memory_of(), "matched": matched}
    log(show("phrase past the bound", out["phrase_past_bound"]["after"]))
    out["phrase_cpu"] = asyncio.run(phrase_cpu(store, phrases))
    log(f"phrase past the bound, CPU per query: {out['phrase_cpu']}")
    return out


async def phrase_cpu(store: Any, phrases: list[str]) -> dict[str, Any]:
    """CPU seconds per phrase query past the in-memory bound, every row streamed against only the rows
    holding the phrase's sure tokens (ADR 0057), on the same queries in alternation (CPU time: the shared
    machine's load barely moves it); each pair's answers must be equal."""
    from hallouminate.search.phrase import Phrase
    from hallouminate.storage.reader import NARROW_SHARE, AsyncReader

    reader = AsyncReader(store, in_memory_rows=0)
    corpora = sorted(await _corpora_of(store))
    await reader.count_rows(corpora[0])
    spent = {"streamed": 0.0, "narrowed": 0.0}
    spent_when_read = {"streamed": 0.0, "narrowed": 0.0}  # on the queries whose rows were read by id
    with_tokens = read_by_id = 0
    for query in phrases:
        phrase = Phrase.parse(query)
        with_tokens += bool(phrase.runs)
        cap = sum([await reader.count_rows(c) for c in corpora]) // NARROW_SHARE
        by_id = bool(phrase.runs) and store.lexical.holding(phrase.runs, corpora, cap) is not None
        read_by_id += by_id
        answers = []
        for kind, tokens in (("streamed", ()), ("narrowed", phrase.runs)):
            started = time.process_time()
            found = await reader.phrase_rows(corpora, phrase.re2, 201, None, tokens)
            spent[kind] += time.process_time() - started
            if by_id:
                spent_when_read[kind] += time.process_time() - started
            answers.append(([(r["corpus"], r["path"], r["ordinal"]) for r in found.rows], found.more))
        if answers[0] != answers[1]:
            raise SystemExit(f"narrowed phrase scan differs from the stream for {query!r}")
    n = len(phrases)
    m = max(read_by_id, 1)
    return {
        "queries": n,
        "with_tokens": with_tokens,
        "read_by_id": read_by_id,
        "read_by_id_streamed_cpu_s": round(spent_when_read["streamed"] / m, 4),
        "read_by_id_narrowed_cpu_s": round(spent_when_read["narrowed"] / m, 4),
        "streamed_cpu_s": round(spent["streamed"] / n, 4),
        "narrowed_cpu_s": round(spent["narrowed"] / n, 4),
        "ratio": round(spent["narrowed"] / max(spent["streamed"], 1e-9), 4),
    }


async def _corpora_of(store: Any) -> set[str]:
    return set(store._table.search().select(["corpus"]).limit(None).to_arrow()["corpus"].to_pylist())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True, help="a kept world (bench/build_store.py)")
    parser.add_argument("--rounds", type=int, default=50, help="sequential ranked and phrase MCP calls each")
    parser.add_argument("--seconds", type=float, default=10.0, help="each closed loop's length")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--env", action="append", default=[], help="K=V for the daemon (a lever to try)")
    parser.add_argument("--label", default="", help="names the output file bench/out/memory[-LABEL].json")
    parser.add_argument(
        "--components", action="store_true", help="also measure parts in a model-less process"
    )
    parser.add_argument("--bm25-scale", type=int, default=10, help="with --components: BM25 of N x the rows")
    parser.add_argument(
        "--phrase-queries", type=int, default=20, help="with --components: phrases timed past the bound"
    )
    parser.add_argument("--no-daemon", action="store_true", help="only --components")
    args = parser.parse_args()
    world = world_of(args.root.resolve())
    for pair in args.env:
        key, _, value = pair.partition("=")
        world.env[key] = value
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(world.env)
    result: dict[str, Any] = {"root": str(world.root), "env": args.env}
    try:
        if not args.no_daemon:
            from hallouminate.client import stop_daemon

            asyncio.run(stop_daemon())
            texts = sample_texts(world, 4000)
            opts = Options(
                sizes=[],
                seed=args.seed,
                rounds=args.rounds,
                warmup=5,
                concurrency_s=args.seconds,
                daemon_concurrency_s=args.seconds,
                bare_sample=0,
                embed_limit=0,
                real=None,
                real_max_files=None,
                foundation=False,
                formats=False,
                hostile=False,
                http_load_s=0,
                quick=False,
                report_only=False,
                incremental=0,
                million=False,
                reuse=None,
                million_real=0,
                recall_queries=0,
                index_wait_s=0,
            )
            try:
                result["daemon"] = asyncio.run(staged(world, opts, texts))
            finally:
                stop_shim_host(world.env)
                asyncio.run(stop_daemon())
            end = result["daemon"]["stages"]["after_load"]
            log(f"daemon peak RSS (VmHWM) {end['VmHWM']:.0f} MiB; at the end VmRSS {end['VmRSS']:.0f} MiB")
        if args.components:
            phrases = make_queries(sample_texts(world, 4000), args.phrase_queries, args.seed)[1]
            result["components"] = components(world, args.bm25_scale, phrases)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / (f"memory-{args.label}.json" if args.label else "memory.json")
    path.write_text(json.dumps(result, indent=2))
    log(f"written to {path}")


if __name__ == "__main__":
    main()
