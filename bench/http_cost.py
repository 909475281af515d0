"""What the HTTP listener costs, in one run: the daemon's start-up time and RSS with ``[http] enabled``
against without, and one ``ground`` round trip over Streamable HTTP (the Python SDK's client) against
over the stdio shim (the SDK's stdio client driving ``hallouminate serve``), p50 of ``--calls`` calls each,
as ratios (the calls alternate between the two). Raw numbers: ``bench/out/http_cost.json``.

Usage: .venv/bin/python bench/http_cost.py [--starts 3] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, BenchWorld, bench_world, percentile

QUESTION = "How does the MCP shim reach the daemon?"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def _ask(op: str, args: dict[str, Any] | None = None, cwd: str = "/") -> Any:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn(spawn=False)
    try:
        return await conn.call(op, cwd, args or {})
    finally:
        await conn.close()


def _set_http(world: BenchWorld, enabled: bool) -> None:
    config = world.root / "config" / "hallouminate" / "config.toml"
    text = config.read_text().split("\n[http]")[0]
    config.write_text(text + ("\n[http]\nenabled = true\n" if enabled else ""))


def one_start(world: BenchWorld, http: bool) -> dict[str, float]:
    """Seconds from ``daemon run`` to its socket answering (and, with HTTP, to its endpoint file), and its
    RSS once the model is loaded and one ``ground`` answered."""
    _set_http(world, http)
    endpoint = Path(world.env["HALLOUMINATE_SOCKET"] + ".endpoint")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hallouminate", "daemon", "run"],
        env=world.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    while True:
        try:
            asyncio.run(_ask("ping"))
            break
        except Exception:
            time.sleep(0.01)
    answered = time.perf_counter() - started
    while http and not endpoint.exists():
        time.sleep(0.01)
    listening = time.perf_counter() - started
    asyncio.run(_ask("ground", {"query": QUESTION}, str(world.repo)))
    while asyncio.run(_ask("status"))["model"] != "loaded":
        time.sleep(0.05)
    rss = _rss_mb(proc.pid)
    from hallouminate.client import stop_daemon

    asyncio.run(stop_daemon())
    proc.wait()
    return {"answers_s": answered, "ready_s": listening, "rss_mb": rss}


async def round_trips(world: BenchWorld, url: str, calls: int) -> dict[str, dict[str, list[float]]]:
    """``calls`` timed calls of each tool (``list_corpora``: the transport alone, a small answer;
    ``ground``: a search) over each transport, alternating one and the other so that the machine's load
    (shared) weighs on both alike: {tool: {"http": [...], "stdio": [...]}}."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hallouminate", "serve"], env=world.env, cwd=world.repo
    )
    tools = {
        "list_corpora": {"cwd": str(world.repo)},
        "ground": {"cwd": str(world.repo), "query": QUESTION},
    }
    out: dict[str, dict[str, list[float]]] = {}
    async with (
        streamable_http_client(url) as (h_read, h_write),
        ClientSession(h_read, h_write) as http,
        stdio_client(params) as (s_read, s_write),
        ClientSession(s_read, s_write) as stdio,
    ):
        await http.initialize()
        await stdio.initialize()
        for tool, args in tools.items():
            for _ in range(20):  # warm-up: caches, the model's first batches
                await http.call_tool(tool, args)
                await stdio.call_tool(tool, args)
            times: dict[str, list[float]] = {"http": [], "stdio": []}
            for i in range(calls):
                order = [("http", http), ("stdio", stdio)]
                for name, session in order if i % 2 else reversed(order):
                    began = time.perf_counter()
                    result = await session.call_tool(tool, args)
                    times[name].append(time.perf_counter() - began)
                    assert not result.is_error
            out[tool] = times
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    opts = parser.parse_args()
    with bench_world() as world:
        subprocess.run(
            [sys.executable, "-m", "hallouminate", "index"], env=world.env, cwd=world.repo, check=True
        )
        asyncio.run(__import__("hallouminate.client", fromlist=["stop_daemon"]).stop_daemon())
        starts: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
        for _ in range(opts.starts):  # interleaved: load on the machine hits both alike
            starts["off"].append(one_start(world, False))
            starts["on"].append(one_start(world, True))
        med = {k: {m: statistics.median(s[m] for s in v) for m in v[0]} for k, v in starts.items()}

        _set_http(world, True)
        os.environ.update(world.env)
        subprocess.run(
            [sys.executable, "-m", "hallouminate", "http", "enable"],
            env=world.env,
            check=True,
            capture_output=True,
        )
        url = Path(world.env["HALLOUMINATE_SOCKET"] + ".endpoint").read_text().strip() + "/mcp"
        trips = asyncio.run(round_trips(world, url, opts.calls))
    p50 = {
        tool: {name: percentile(values, 50) * 1000 for name, values in by.items()}
        for tool, by in trips.items()
    }
    report = {
        "starts": starts,
        "median": med,
        "p50_ms": p50,
        "p99_ms": {
            tool: {name: percentile(values, 99) * 1000 for name, values in by.items()}
            for tool, by in trips.items()
        },
        "http_over_stdio_p50": {tool: ms["http"] / ms["stdio"] for tool, ms in p50.items()},
        "calls": opts.calls,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "http_cost.json").write_text(json.dumps(report, indent=2))
    off, on = med["off"], med["on"]
    print(f"start-up, socket answers: {off['answers_s']:.2f} s off, {on['answers_s']:.2f} s on")
    print(f"start-up, listener up:    {on['ready_s']:.2f} s (HTTP on)")
    print(
        f"RSS (model loaded): {off['rss_mb']:.0f} MB off, {on['rss_mb']:.0f} MB on "
        f"(+{on['rss_mb'] - off['rss_mb']:.0f} MB)"
    )
    for tool, ms in p50.items():
        print(
            f"{tool} p50 over {opts.calls} calls each, alternating: HTTP {ms['http']:.1f} ms, "
            f"stdio {ms['stdio']:.1f} ms, ratio {ms['http'] / ms['stdio']:.2f}"
        )


if __name__ == "__main__":
    main()
