"""Concurrent ``ground`` throughput on a kept bench world (bench/build_store.py), with CPU per call.

The suite's load (bench/suite.py: ``make_queries``' ranked queries of 6-9 consecutive words of a chunk, dealt
round-robin, ``closed_loop``'s clients calling back to back, the tools' defaults) over ``--clients``
daemon-protocol connections, then over as many MCP sessions (each a ``hallouminate serve`` shim). Beside
calls/s and p50/p95 it reports the CPU seconds per call of the daemon, of the shims (the warm host's forked
shims and the launchers) and of this process (the clients): on a shared 2-core machine calls/s moves with
everyone else's load, CPU per call barely does.

``--profile FILE`` starts the daemon itself under cProfile (its event-loop thread: the Python work per call)
and writes the stats to FILE when the run ends; the profiler slows the daemon, so calls/s of such a run are
not figures.

Usage: .venv/bin/python bench/throughput.py --root WORLD [--clients 8] [--seconds 10] [--only daemon|mcp]
       [--profile FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT
from foundation import stop_shim_host
from indexing import process_cpu_s, wait_loaded
from suite import chunk_budget, closed_loop, ground_call, log, make_queries, mcp_session, walk_chunks

WARMUP_CALLS = 3  # per client, before the window: the corpus loaded, each connection's first call made


def load_env(root: Path) -> None:
    """The world's XDG dirs and socket (ROOT/env.sh) in this process, and so in every process it starts."""
    for line in (root / "env.sh").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            os.environ[key] = shlex.split(value)[0] if value else ""


def repo_of(root: Path) -> Path:
    repos = [p for p in root.iterdir() if (p / ".hallouminate" / "config.toml").is_file()]
    if len(repos) != 1:
        raise SystemExit(f"{root} holds {len(repos)} repositories; expected the one build_store.py made")
    return repos[0]


def queries_of(repo: Path, model_cache: Path, n: int, seed: int) -> list[str]:
    """The suite's ranked queries over the world's chunks; kept beside the world (chunking 10k chunks again
    takes ~30 s)."""
    kept = repo.parent / f"throughput-queries-{n}-{seed}.json"
    if kept.is_file():
        return list(json.loads(kept.read_text()))
    from hallouminate.embedding import Embedder

    counter = Embedder(model_cache)
    pairs = walk_chunks(repo, counter.count_tokens, chunk_budget(counter.max_tokens))
    ranked, _phrases = make_queries([embed_text for _text, embed_text in pairs], n, seed)
    kept.write_text(json.dumps(ranked))
    return ranked


def children_of(pids: set[int]) -> list[int]:
    """Live processes whose parent is one of ``pids``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) in pids:
            found.append(int(entry.name))
    return found


def thread_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process's main thread alone (the daemon's event loop)."""
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Meter:
    """CPU seconds of groups of processes over a window (each group's pids asked for at start; a negative
    pid: that process's main thread alone)."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]]) -> None:
        self.pids = {name: list(pids()) for name, pids in groups.items()}
        self.start = {name: self._cpu(pids) for name, pids in self.pids.items()}

    @staticmethod
    def _cpu(pids: list[int]) -> float:
        total = 0.0
        for pid in pids:
            with contextlib.suppress(OSError):
                total += process_cpu_s(pid) if pid > 0 else thread_cpu_s(-pid)
        return total

    def per_call(self, calls: int) -> dict[str, float]:
        out = {}
        for name, pids in self.pids.items():
            used = self._cpu(pids) - self.start[name]
            out[f"{name}_cpu_s"] = used
            out[f"{name}_cpu_ms_per_call"] = used / max(calls, 1) * 1000
        return out


async def daemon_protocol(
    repo: Path, queries: list[str], clients: int, seconds: float, daemon: int
) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn

    conns = [await connect_or_spawn() for _ in range(clients)]
    try:

        async def call(w: int, i: int) -> None:
            query = queries[(i * clients + w) % len(queries)]
            await conns[w].call("ground", str(repo), {"query": query})

        await asyncio.gather(
            *(call(w, -1 - w * WARMUP_CALLS - j) for w in range(clients) for j in range(WARMUP_CALLS))
        )
        meter = Meter(
            {"daemon": lambda: [daemon], "daemon_loop": lambda: [-daemon], "clients": lambda: [os.getpid()]}
        )
        figures = await closed_loop(clients, seconds, call)
        figures.update(meter.per_call(figures["calls"]))
        return figures
    finally:
        for conn in conns:
            await conn.close()


async def mcp(repo: Path, queries: list[str], clients: int, seconds: float, daemon: int) -> dict[str, Any]:
    host_lock = Path(os.environ["HALLOUMINATE_SOCKET"] + ".shim.lock")
    env = dict(os.environ)
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(mcp_session(env)) for _ in range(clients)]

        async def call(w: int, i: int) -> None:
            await ground_call(sessions[w], repo, queries[(i * clients + w) % len(queries)], False)

        await asyncio.gather(
            *(call(w, -1 - w * WARMUP_CALLS - j) for w in range(clients) for j in range(WARMUP_CALLS))
        )

        def shims() -> list[int]:
            # The launchers (our children) and the shims the warm host forked for them.
            ours = set(children_of({os.getpid()}))
            with contextlib.suppress(OSError, ValueError):
                ours |= set(children_of({int(host_lock.read_text().strip())}))
            return sorted(ours - {daemon})

        meter = Meter(
            {
                "daemon": lambda: [daemon],
                "daemon_loop": lambda: [-daemon],
                "shims": shims,
                "clients": lambda: [os.getpid()],
            }
        )
        figures = await closed_loop(clients, seconds, call)
        figures.update(meter.per_call(figures["calls"]))
        figures["shim_processes"] = len(meter.pids["shims"])
    return figures


def start_profiled_daemon(profile: Path) -> subprocess.Popen[bytes]:
    """The daemon as ``hallouminate daemon run`` would run it, under cProfile (stats written as it exits)."""
    # The daemon ends with os._exit (daemon/server.py): a SystemExit here, so that the stats are written.
    # Timed by the thread's CPU clock: wall time on a shared machine counts other processes' turns too.
    code = (
        "import cProfile, os, runpy, sys, time\n"
        "def leave(code):\n    raise SystemExit(code)\n"
        "os._exit = leave\n"
        "sys.argv = ['hallouminate', 'daemon', 'run']\n"
        "profile = cProfile.Profile(time.thread_time)\n"
        "try:\n"
        '    profile.runctx(\'runpy.run_module("hallouminate", run_name="__main__")\', globals(), {})\n'
        "except SystemExit:\n    pass\n"
        f"profile.dump_stats({str(profile)!r})\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdin=subprocess.DEVNULL)


async def daemon_pid(started: bool) -> int:
    from hallouminate.client import connect_or_spawn

    for _ in range(600):  # a daemon we started (profiled) may take a while to listen: never spawn another
        try:
            conn = await connect_or_spawn(spawn=not started)
            break
        except Exception:
            if not started:
                raise
            await asyncio.sleep(0.1)
    try:
        await wait_loaded(conn)
        return int((await conn.call("ping"))["pid"])
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True, help="a world bench/build_store.py made")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--only", choices=["daemon", "mcp"], help="one of the two loads (default: both)")
    parser.add_argument("--profile", type=Path, help="run the daemon under cProfile, stats to this file")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT / "throughput.json")
    args = parser.parse_args()
    root = args.root.resolve()
    from hallouminate import xdg

    model_cache = xdg.default_model_cache()  # resolved before the world's XDG variables move it
    load_env(root)
    repo = repo_of(root)
    from hallouminate.client import stop_daemon

    asyncio.run(stop_daemon())  # a fresh daemon: its CPU counts this run alone (and --profile needs its own)
    stop_shim_host(dict(os.environ))
    queries = queries_of(repo, model_cache, 2000, args.seed)
    log(f"{len(queries)} ranked queries from {repo}")
    profiled = start_profiled_daemon(args.profile.resolve()) if args.profile else None
    try:
        pid = asyncio.run(daemon_pid(profiled is not None))
        result: dict[str, Any] = {"root": str(root), "clients": args.clients, "seconds": args.seconds}
        if args.only in (None, "daemon"):
            log(f"{args.clients} daemon-protocol clients, {args.seconds:.0f} s ...")
            result["daemon_protocol"] = asyncio.run(
                daemon_protocol(repo, queries, args.clients, args.seconds, pid)
            )
            report("daemon protocol", result["daemon_protocol"])
        if args.only in (None, "mcp"):
            log(f"{args.clients} MCP sessions, {args.seconds:.0f} s ...")
            result["mcp"] = asyncio.run(mcp(repo, queries, args.clients, args.seconds, pid))
            report("MCP", result["mcp"])
    finally:
        asyncio.run(stop_daemon())
        stop_shim_host(dict(os.environ))
        if profiled is not None:
            profiled.wait(timeout=60)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    if args.profile:
        print_profile(args.profile.resolve())
    log(f"raw figures: {args.out}")


def print_profile(path: Path, top: int = 30) -> None:
    """The daemon's own functions (and pyarrow's, tantivy's, the streams'), by CPU ms per ``ground`` call."""
    import pstats

    stats: dict[Any, Any] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    calls = next(
        (v[1] for k, v in stats.items() if k[2] == "assemble" and k[0].endswith("search/ground.py")), 0
    )
    rows = []
    for (file, line, name), (_cc, _nc, tottime, cumtime, _callers) in stats.items():
        if any(part in file for part in ("hallouminate", "pyarrow", "asyncio/streams")) or "tantivy" in name:
            rows.append(
                (
                    cumtime / max(calls, 1) * 1000,
                    tottime / max(calls, 1) * 1000,
                    f"{file.split('/src/')[-1]}:{line}({name})",
                )
            )
    rows.sort(reverse=True)
    print(f"daemon main thread CPU per ground call ({calls} calls), ms: cumulative, own")
    for cum, own, where in rows[:top]:
        print(f"  {cum:8.3f} {own:8.3f}  {where}")


def report(label: str, f: dict[str, Any]) -> None:
    cpu = "  ".join(
        f"{k.removesuffix('_cpu_ms_per_call')} {v:.2f}" for k, v in f.items() if k.endswith("_per_call")
    )
    log(
        f"  {label}: {f['calls_per_s']:.1f} calls/s, p50 {f['p50_ms']:.1f} ms, p95 {f['p95_ms']:.1f} ms, "
        f"{f['errors']} errors; CPU ms/call: {cpu}"
    )


if __name__ == "__main__":
    main()
