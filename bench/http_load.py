"""``ground`` under load over Streamable HTTP: 32 concurrent MCP sessions on the daemon's ``/mcp``, calling
``ground`` back to back for 30 s at 10k chunks, against the same 32-client load over the daemon protocol
(no MCP, no HTTP) on the same daemon and queries in the same run, as a ratio. ``make bench`` runs it on its
10k tier (bench/suite.py, beside the 8 stdio MCP sessions it measures there); alone, this script builds its
own store with the suite's generator (``--chunks``).

The load comes from worker processes (``--procs``, 4 by default, the sessions dealt among them), each an
asyncio loop of lean clients: a session is ``initialize`` (its ``Mcp-Session-Id`` kept and sent after it,
with ``Mcp-Protocol-Version``), ``notifications/initialized``, then ``tools/call ground`` in a loop, each
answer read as the SSE or JSON the server chose. The SDK's client (pydantic models, anyio streams) would
spend more CPU per call than the daemon does on 2 cores; these clients speak the same wire. Each worker
reports its own CPU seconds, so the report says how much of the machine the load generator took. Alone, the
script also runs the same 32 clients over MCP stdio as agents reach the daemon today (a ``hallouminate
serve`` shim per client, the SDK's client; ``--no-stdio`` skips it). Any error
(an HTTP status other than 200/202, a JSON-RPC error, ``isError``, a result without ``structuredContent``)
fails the run.

Alone, the first ``--embed-limit`` chunks (2,000) are embedded by the daemon and the store is grown to
``--chunks`` as the suite grows its 100k tier (the search then scans real-like vectors and BM25 postings
of every chunk; embedding 10k chunks on a busy 2-core machine takes most of an hour).

Usage: .venv/bin/python bench/http_load.py [--quick] [--chunks 10000] [--embed-limit 2000] [--clients 32]
       [--seconds 30] [--procs 4] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, BenchWorld, percentile

PROTOCOL_VERSION = "2025-11-25"
CLIENTS = 32
SECONDS = 30.0
PROCS = 4
ACCEPT = "application/json, text/event-stream"


# -- one worker process ------------------------------------------------------------------------------------
def _answer(response: Any, want_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to request ``want_id`` in a JSON or SSE response body."""
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
    if response.headers.get("content-type", "").startswith("application/json"):
        message: dict[str, Any] = response.json()
        return message
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == want_id:
                return message
    raise RuntimeError(f"no answer to request {want_id} in the event stream: {response.text[:200]}")


async def _http_clients(spec: dict[str, Any]) -> dict[str, Any]:
    import httpx2

    url, repo, queries, total = spec["url"], spec["repo"], spec["queries"], spec["total_clients"]
    limits = httpx2.Limits(max_connections=len(spec["clients"]) + 1, max_keepalive_connections=None)
    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:

        async def open_session() -> dict[str, str]:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "hallouminate-bench-http-load", "version": "1"},
                },
            }
            response = await http.post(url, json=init, headers={"Accept": ACCEPT})
            answer = _answer(response, 0)
            if "result" not in answer:
                raise RuntimeError(f"initialize failed: {answer}")
            headers = {
                "Accept": ACCEPT,
                "Mcp-Session-Id": response.headers["mcp-session-id"],
                "Mcp-Protocol-Version": answer["result"]["protocolVersion"],
            }
            note = await http.post(
                url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
            )
            if note.status_code != 202:
                raise RuntimeError(f"notifications/initialized: HTTP {note.status_code}")
            return headers

        sessions = [await open_session() for _ in spec["clients"]]

        async def call(w: int, i: int) -> None:
            query = queries[(i * total + w) % len(queries)]
            request = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "ground", "arguments": {"cwd": repo, "query": query}},
            }
            headers = sessions[spec["clients"].index(w)]
            answer = _answer(await http.post(url, json=request, headers=headers), i + 1)
            if "error" in answer:
                raise RuntimeError(f"JSON-RPC error {answer['error']}")
            result = answer["result"]
            if result.get("isError") or not isinstance(result.get("structuredContent"), dict):
                raise RuntimeError(f"tool error: {json.dumps(result)[:200]}")

        figures = await _closed_loop(spec, call)
        for headers in sessions:  # end each session as a host does (DELETE), so none lingers
            await http.delete(url, headers=headers)
    return figures


async def _stdio_clients(spec: dict[str, Any]) -> dict[str, Any]:
    """MCP sessions as over stdio today: a ``hallouminate serve`` shim per client and the SDK's client."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from foundation import serve_command

    repo, queries, total = spec["repo"], spec["queries"], spec["total_clients"]
    command, args = serve_command()
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for w in spec["clients"]:
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions[w] = session

        async def call(w: int, i: int) -> None:
            query = queries[(i * total + w) % len(queries)]
            result = await sessions[w].call_tool("ground", {"cwd": repo, "query": query})
            if result.is_error or not isinstance(result.structured_content, dict):
                raise RuntimeError(f"tool error: {str(result.content)[:200]}")

        return await _closed_loop(spec, call)


async def _daemon_clients(spec: dict[str, Any]) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn

    repo, queries, total = spec["repo"], spec["queries"], spec["total_clients"]
    conns = {w: await connect_or_spawn(spawn=False) for w in spec["clients"]}
    try:

        async def call(w: int, i: int) -> None:
            await conns[w].call("ground", repo, {"query": queries[(i * total + w) % len(queries)]})

        return await _closed_loop(spec, call)
    finally:
        for conn in conns.values():
            await conn.close()


async def _closed_loop(spec: dict[str, Any], call: Any) -> dict[str, Any]:
    """Every client of this process calls back to back from ``start_at`` (wall clock, shared by all the
    processes) for ``seconds``; a warm-up call per client first, untimed."""
    for w in spec["clients"]:
        await call(w, len(spec["queries"]) + w)  # first call: connections, the daemon's per-session setup
    latencies: list[float] = []
    errors: list[str] = []
    await asyncio.sleep(max(0.0, spec["start_at"] - time.time()))
    started = time.perf_counter()
    cpu_before = _cpu_s()
    deadline = started + spec["seconds"]

    async def client(w: int) -> None:
        i = 0
        while time.perf_counter() < deadline:
            t = time.perf_counter()
            try:
                await call(w, i)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
            else:
                latencies.append(time.perf_counter() - t)
            i += 1

    await asyncio.gather(*(client(w) for w in spec["clients"]))
    return {
        "elapsed_s": time.perf_counter() - started,
        "cpu_s": _cpu_s() - cpu_before,
        "latencies": latencies,
        "errors": len(errors),
        "first_errors": errors[:3],
    }


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker_main() -> None:
    spec = json.loads(sys.stdin.read())
    run = {"http": _http_clients, "stdio": _stdio_clients, "daemon": _daemon_clients}[spec["mode"]]
    try:
        import uvloop

        figures = uvloop.run(run(spec))
    except ImportError:
        figures = asyncio.run(run(spec))
    print(json.dumps(figures))


# -- the load, from the bench process ----------------------------------------------------------------------
def load(
    mode: str,
    world: BenchWorld,
    queries: list[str],
    *,
    url: str | None = None,
    clients: int = CLIENTS,
    seconds: float = SECONDS,
    procs: int = PROCS,
) -> dict[str, Any]:
    """``clients`` closed-loop clients (``mode`` ``http`` on ``url``, or ``daemon``: the daemon protocol)
    in ``procs`` worker processes, for ``seconds``: calls/s, p50/p95/p99, errors, and the CPU seconds
    of the load generator, of the daemon and of everything else meanwhile."""
    from indexing import CpuMeter

    daemon = _daemon_pid(world)
    procs = max(1, min(procs, clients))
    # Every session opens and makes its warm-up call before anyone starts (a shim each takes longer).
    start_at = time.time() + 10.0 + (1.5 if mode == "stdio" else 0.5) * clients / procs
    running = []
    for p in range(procs):
        spec = {
            "mode": mode,
            "url": url,
            "repo": str(world.repo),
            "queries": queries,
            "clients": list(range(p, clients, procs)),
            "total_clients": clients,
            "seconds": seconds,
            "start_at": start_at,
        }
        child = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=world.env,
            text=True,
        )
        assert child.stdin is not None
        child.stdin.write(json.dumps(spec))
        child.stdin.close()
        running.append(child)
    time.sleep(max(0.0, start_at - time.time()))
    meter, metered = CpuMeter(daemon), time.perf_counter()
    outs = []
    for child in running:
        assert child.stdout is not None
        text = child.stdout.read()
        if child.wait() != 0:
            raise RuntimeError(f"a {mode} load worker failed (exit {child.returncode})")
        outs.append(json.loads(text))
    cpu, metered = meter.stop(), time.perf_counter() - metered  # the loads' end, sessions closed
    latencies = [t for out in outs for t in out["latencies"]]
    elapsed = max(out["elapsed_s"] for out in outs)
    client_cpu = sum(out["cpu_s"] for out in outs)
    ms = 1000.0
    return {
        "mode": mode,
        "clients": clients,
        "processes": procs,
        "seconds": elapsed,
        "calls": len(latencies),
        "calls_per_s": len(latencies) / elapsed,
        "errors": sum(out["errors"] for out in outs),
        "first_errors": [e for out in outs for e in out["first_errors"]][:3],
        "p50_ms": percentile(latencies, 50) * ms,
        "p95_ms": percentile(latencies, 95) * ms,
        "p99_ms": percentile(latencies, 99) * ms,
        # CPU seconds over wall time = cores kept busy (2 in all here). The clients count their timed loop;
        # the daemon and the others are metered from the start to the last worker's exit.
        "client_cpu_s": client_cpu,
        "daemon_cpu_s": cpu["own_cpu_s"],
        "others_cpu_s": max(0.0, cpu["others_cpu_s"] - client_cpu),
        "metered_s": metered,
        "client_cores": client_cpu / elapsed,
        "daemon_cores": cpu["own_cpu_s"] / metered,
        "others_cores": max(0.0, cpu["others_cpu_s"] - client_cpu) / metered,
        "daemon_cpu_ms_per_call": cpu["own_cpu_s"] / max(1, len(latencies)) * ms,
    }


def _daemon_pid(world: BenchWorld) -> int:
    from hallouminate.client import connect_or_spawn

    async def ping() -> int:
        conn = await connect_or_spawn(spawn=False)
        try:
            return int((await conn.call("ping"))["pid"])
        finally:
            await conn.close()

    return asyncio.run(ping())


@contextlib.contextmanager
def listening(world: BenchWorld) -> Iterator[None]:
    """``world``'s daemon restarted with ``[http] enabled`` for the block, then stopped and the config
    restored: the suite's other figures (RSS above all) stay those of a daemon without a listener."""
    from hallouminate.client import connect_or_spawn, stop_daemon
    from indexing import wait_loaded

    config = Path(world.env["XDG_CONFIG_HOME"]) / "hallouminate" / "config.toml"
    before = config.read_text()

    async def restart() -> None:
        await stop_daemon()
        conn = await connect_or_spawn()
        try:
            await wait_loaded(conn)
            await conn.call("index", str(world.repo))  # the restarted daemon's catch-up, before the load
        finally:
            await conn.close()

    config.write_text(before + "\n[http]\nenabled = true\n")
    try:
        asyncio.run(restart())
        yield
    finally:
        asyncio.run(stop_daemon())
        config.write_text(before)


def endpoint_url(world: BenchWorld, timeout: float = 60.0) -> str:
    """The base URL the daemon's listener wrote next to its socket."""
    path = Path(world.env["HALLOUMINATE_SOCKET"] + ".endpoint")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text().strip()):
            return text
        time.sleep(0.1)
    raise RuntimeError(f"the daemon's HTTP listener wrote no {path} in {timeout:.0f} s")


def measure(
    world: BenchWorld,
    queries: list[str],
    *,
    clients: int = CLIENTS,
    seconds: float = SECONDS,
    procs: int = PROCS,
    stdio: bool = False,
    log: Any = print,
) -> dict[str, Any]:
    """The HTTP load and its baseline, the same load over the daemon protocol, on ``world``'s running
    daemon (its ``[http]`` enabled); ``ratio`` = HTTP calls/s over daemon-protocol calls/s. With ``stdio``,
    the same load over MCP stdio too (a ``hallouminate serve`` shim per client; their CPU is in
    ``others``)."""
    url = endpoint_url(world) + "/mcp"
    log(f"  {clients} HTTP MCP sessions on /mcp ({procs} processes), {seconds:.0f} s closed loop ...")
    http = load("http", world, queries, url=url, clients=clients, seconds=seconds, procs=procs)
    log(_line(http))
    log(f"  {clients} daemon-protocol clients ({procs} processes), {seconds:.0f} s closed loop ...")
    direct = load("daemon", world, queries, clients=clients, seconds=seconds, procs=procs)
    log(_line(direct))
    over_stdio = None
    if stdio:
        log(f"  {clients} MCP stdio sessions ({procs} processes), {seconds:.0f} s closed loop ...")
        over_stdio = load("stdio", world, queries, clients=clients, seconds=seconds, procs=procs)
        log(_line(over_stdio))
    return {
        "http": http,
        "daemon_protocol": direct,
        "stdio": over_stdio,
        "ratio_calls_per_s": http["calls_per_s"] / direct["calls_per_s"],
        # What the daemon spends per call, which other processes' load moves far less than calls/s.
        "ratio_daemon_cpu_per_call": http["daemon_cpu_ms_per_call"] / direct["daemon_cpu_ms_per_call"],
        "ok": all(f is None or f["errors"] == 0 for f in (http, direct, over_stdio)),
    }


def _line(f: dict[str, Any]) -> str:
    return (
        f"    {f['calls_per_s']:.1f} calls/s, p50 {f['p50_ms']:.0f} ms, p99 {f['p99_ms']:.0f} ms, "
        f"{f['errors']} errors; CPU cores: daemon {f['daemon_cores']:.2f}, clients {f['client_cores']:.2f}, "
        f"others {f['others_cores']:.2f}"
        + (f"; first error: {f['first_errors'][0]}" if f["first_errors"] else "")
    )


def table(figures: dict[str, Any]) -> list[str]:
    """The Markdown table of one ``measure`` result (the suite's report uses it too)."""
    rows = [
        "| load | calls/s | p50 / p95 / p99 ms | errors | daemon CPU ms / call | cores: daemon / clients / others |",
        "|---|---|---|---|---|---|",
    ]
    loads = [
        ("HTTP `/mcp`", figures["http"]),
        ("daemon protocol", figures["daemon_protocol"]),
        ("MCP stdio (a shim each)", figures.get("stdio")),
    ]
    for name, f in loads:
        if f is None:
            continue
        rows.append(
            f"| {f['clients']} clients, {name} | {f['calls_per_s']:.1f} | "
            f"{f['p50_ms']:.0f} / {f['p95_ms']:.0f} / {f['p99_ms']:.0f} | {f['errors']} | "
            f"{f['daemon_cpu_ms_per_call']:.1f} | {f['daemon_cores']:.2f} / {f['client_cores']:.2f} / "
            f"{f['others_cores']:.2f} |"
        )
    rows += [
        "",
        f"HTTP / daemon protocol: calls/s **{figures['ratio_calls_per_s']:.2f}**, "
        f"daemon CPU per call {figures['ratio_daemon_cpu_per_call']:.2f}",
    ]
    return rows


# -- alone: a store of its own -----------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="300 chunks, 5 s per load: a smoke run")
    parser.add_argument("--chunks", type=int, help="size of the generated store (default 10000)")
    parser.add_argument(
        "--embed-limit",
        type=int,
        default=2000,
        help="chunks the daemon embeds for real; the store is grown past them as the suite's 100k tier is",
    )
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument(
        "--no-stdio", action="store_true", help="skip the same load over MCP stdio (a shim per client)"
    )
    parser.add_argument("--seconds", type=float, help=f"per load (default {SECONDS:.0f})")
    parser.add_argument("--procs", type=int, default=PROCS, help="load worker processes")
    parser.add_argument("--seed", type=int, default=7)
    a = parser.parse_args()
    if a.worker:
        worker_main()
        return
    chunks = a.chunks or (300 if a.quick else 10_000)
    seconds = a.seconds or (5.0 if a.quick else SECONDS)
    figures = standalone(chunks, a.embed_limit, a.clients, seconds, a.procs, a.seed, not a.no_stdio)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "http_load.json").write_text(json.dumps(figures, indent=2))
    print("\n".join(table(figures)))
    if not figures["ok"]:
        raise SystemExit("errors under load: the run failed (see first_errors in bench/out/http_load.json)")


def standalone(
    chunks: int, embed_limit: int, clients: int, seconds: float, procs: int, seed: int, stdio: bool
) -> dict[str, Any]:
    """A generated store of ``chunks`` chunks: the first ``embed_limit`` indexed for real by the daemon, the
    rest added as the suite grows its 100k tier (``suite.fill_phase``: the product's ``Indexer`` and
    ``Store``, vectors of real chunks plus noise); then the load on the restarted daemon."""
    import types

    import _corpora
    from _sandbox import bench_world
    from hallouminate import xdg
    from hallouminate.client import connect_or_spawn, stop_daemon
    from hallouminate.embedding import Embedder
    from hallouminate.indexing import chunk_markdown
    from indexing import timed_index, wait_loaded
    from suite import chunk_budget, fill_phase, make_queries

    started, load_avg = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    embedder = Embedder(xdg.default_model_cache())
    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = chunk_budget(embedder.max_tokens)
    del embedder  # the daemon has its own; the generator needs only the tokenizer's counts
    with tempfile.TemporaryDirectory(prefix="hmb-http-") as tmp:
        generated = _corpora.generate_to_chunks(
            Path(tmp) / "wiki",
            seed,
            min(chunks, embed_limit),
            lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks],
        )
        print(f"{generated.files} pages, {generated.chunks} chunks; indexing ...", flush=True)
        with bench_world(wiki=Path(tmp) / "wiki", name="http") as world:

            async def index() -> float:
                conn = await connect_or_spawn()
                try:
                    await wait_loaded(conn)
                    seconds, _report = await timed_index(conn, world.repo)
                    return seconds
                finally:
                    await conn.close()

            print(f"indexed in {asyncio.run(index()):.0f} s", flush=True)
            texts, total = generated.texts, generated.chunks
            if chunks > generated.chunks:
                asyncio.run(stop_daemon())
                print(f"filling to {chunks} chunks (bench/_fill.py) ...", flush=True)
                opts = types.SimpleNamespace(seed=seed, warmup=10, rounds=200, bare_sample=0)
                fill = fill_phase(world, generated, chunks, opts)
                texts, total = fill["kept_texts"] + texts, fill["rows"]
            queries, _phrases = make_queries(texts, 400, seed)
            with listening(world):
                figures = measure(world, queries, clients=clients, seconds=seconds, procs=procs, stdio=stdio)
    figures.update(
        {
            "chunks": total,
            "embedded_chunks": generated.chunks,
            "seed": seed,
            "cpus": os.cpu_count(),
            "load_avg_at_start": load_avg,
            "started": started,
        }
    )
    return figures


if __name__ == "__main__":
    main()
