"""Foundation figures on the sample wiki, in one run:

- shim spawn-to-initialized time (`hallouminate serve` as a subprocess, real MCP client over stdio): warm
  (the shim host is up, the usual case), first launch (starts the host), and without the host
  (`HALLOUMINATE_SHIM_HOST=0`, the shim imports the SDK itself);
- `ground` round trip through MCP, p50/p95;
- the bare query-embedding time (the model called in-process), and the time a bare interpreter takes to
  import the MCP SDK's server, as baselines measured in the same run.

Usage: .venv/bin/python bench/foundation.py [--rounds 200] [--spawns 10] [--model NAME]

`--model sentence-transformers/all-mpnet-base-v2` measures the opt-in quality model (ADR 0018; install it
first with `hallouminate model install --model sentence-transformers/all-mpnet-base-v2`); its figures go
to `bench/out/foundation-all-mpnet-base-v2.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, REPO_ROOT, bench_world, percentile

QUESTIONS = [q["query"] for q in json.loads((REPO_ROOT / "tests/fixtures/sample_questions.json").read_text())]


def serve_command() -> tuple[str, list[str]]:
    script = shutil.which("hallouminate", path=str(Path(sys.executable).parent))
    return (script, ["serve"]) if script else (sys.executable, ["-m", "hallouminate", "serve"])


async def spawn_to_initialized(env: dict[str, str], spawns: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command, args = serve_command()
    times = []
    for _ in range(spawns):
        params = StdioServerParameters(command=command, args=args, env=env)
        started = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            times.append(time.perf_counter() - started)
    return times


async def ground_round_trips(env: dict[str, str], repo: Path, rounds: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command, args = serve_command()
    params = StdioServerParameters(command=command, args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("index", {"cwd": str(repo)})
        for query in QUESTIONS:  # warm-up: daemon caches, model, store
            await session.call_tool("ground", {"cwd": str(repo), "query": query})
        times = []
        for i in range(rounds):
            query = QUESTIONS[i % len(QUESTIONS)]
            started = time.perf_counter()
            result = await session.call_tool("ground", {"cwd": str(repo), "query": query})
            times.append(time.perf_counter() - started)
            assert result.structured_content["docs"], query
    return times


def stop_shim_host(env: dict[str, str]) -> None:
    lock = Path(env["HALLOUMINATE_SOCKET"] + ".shim.lock")
    try:
        pid = int(lock.read_text().strip())
    except (OSError, ValueError):
        return
    subprocess.run(["kill", str(pid)], check=False)
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.02)


def sdk_import_floor(runs: int) -> list[float]:
    """Seconds for a bare interpreter to import the MCP SDK's server: the floor under any shim's start."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], check=True)
        times.append(time.perf_counter() - started)
    return times


def bare_query_embedding(model_cache: Path, rounds: int, model: str | None = None) -> list[float]:
    from hallouminate.embedding import Embedder

    embedder = Embedder(model_cache) if model is None else Embedder(model_cache, model)
    for query in QUESTIONS:
        embedder.embed_query(query)
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        embedder.embed_query(QUESTIONS[i % len(QUESTIONS)])
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--spawns", type=int, default=10)
    parser.add_argument("--model", default=None, help="embedding model (default: the default model)")
    opts = parser.parse_args()
    with bench_world(model=opts.model) as world:
        # The first shim spawns the daemon; spawn timing below measures the shim alone (daemon up).
        ground = asyncio.run(ground_round_trips(world.env, world.repo, opts.rounds))
        spawn = asyncio.run(spawn_to_initialized(world.env, opts.spawns))
        no_host = asyncio.run(spawn_to_initialized({**world.env, "HALLOUMINATE_SHIM_HOST": "0"}, opts.spawns))
        stop_shim_host(world.env)
        first = asyncio.run(spawn_to_initialized(world.env, 1))
        embed = bare_query_embedding(world.model_cache, opts.rounds, opts.model)
        floor = sdk_import_floor(opts.spawns)
        # The host started by the first launch above would otherwise outlive the world by its idle time.
        stop_shim_host(world.env)
    ms = 1000.0
    figures = {
        "shim_spawn_to_initialized_s": {
            "median": statistics.median(spawn),
            "max": max(spawn),
            "n": len(spawn),
            "target": 0.8,
        },
        "first_launch_starting_the_host_s": first[0],
        "shim_without_host_s": {"median": statistics.median(no_host), "n": len(no_host)},
        "ground_mcp_ms": {
            "p50": percentile(ground, 50) * ms,
            "p95": percentile(ground, 95) * ms,
            "n": len(ground),
            "target_p50": 25.0,
        },
        "sdk_import_floor_s": {"median": statistics.median(floor), "n": len(floor)},
        "bare_query_embedding_ms": {"p50": percentile(embed, 50) * ms, "p95": percentile(embed, 95) * ms},
    }
    model = opts.model or "sentence-transformers/all-MiniLM-L6-v2"
    figures["model"] = model
    print(f"hallouminate foundation bench (sample wiki, 2 cores, {model})")
    print(
        f"  shim spawn -> initialized : median {figures['shim_spawn_to_initialized_s']['median']:.3f} s, "
        f"max {figures['shim_spawn_to_initialized_s']['max']:.3f} s over {len(spawn)} spawns, host up  (target <= 0.8 s)"
    )
    print(f"    first launch, starting the shim host : {first[0]:.3f} s")
    print(
        f"    without the host (HALLOUMINATE_SHIM_HOST=0) : median "
        f"{figures['shim_without_host_s']['median']:.3f} s"
    )
    print(
        f"  (baseline) python -c 'import mcp.server' : median {figures['sdk_import_floor_s']['median']:.3f} s"
    )
    print(
        f"  ground via MCP round trip : p50 {figures['ground_mcp_ms']['p50']:.1f} ms, "
        f"p95 {figures['ground_mcp_ms']['p95']:.1f} ms over {len(ground)} calls  (target p50 <= 25 ms; issue 5: 15 ms)"
    )
    print(
        f"  bare query embedding      : p50 {figures['bare_query_embedding_ms']['p50']:.1f} ms, "
        f"p95 {figures['bare_query_embedding_ms']['p95']:.1f} ms"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    name = "foundation.json" if opts.model is None else f"foundation-{model.rsplit('/', 1)[-1]}.json"
    (OUT / name).write_text(json.dumps(figures, indent=2))
    print(f"  raw figures: {OUT / name}")


if __name__ == "__main__":
    main()
