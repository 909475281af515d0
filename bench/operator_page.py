"""What the operator page (``GET /ui``) costs the daemon on a large store: its status band's
``GET /api/status`` (kept figures, and a forced ``?fresh=1`` recomputation) and one search through
``/mcp`` as the page sends it, beside the same operations over the daemon's socket (the baseline).

The store: the sample wiki indexed for real, then grown to ``--chunks`` generated chunks by the suite's
filler (bench/_fill.py: the product's Indexer and Store, vectors drawn from the real ones), as the suite's
100k tier is built. Prints one JSON document (also bench/out/operator_page.json).

Usage: python bench/operator_page.py [--chunks 100000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, bench_world, percentile
from indexing import wait_loaded

QUESTION = "How does the MCP shim reach the daemon?"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def figures(times: list[float]) -> dict[str, float]:
    return {"p50_ms": percentile(times, 50) * 1000, "max_ms": max(times) * 1000, "n": len(times)}


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=600) as resp:
        return json.loads(resp.read())


async def over_socket(root: Path, rounds: int) -> dict[str, Any]:
    """The baseline: status, corpus_stats and ground over the daemon's socket."""
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        out: dict[str, Any] = {}
        corpora = (await conn.call("list_corpora", str(root)))["corpora"]
        name = corpora[0]["name"]
        for label, op, args in (
            ("status", "status", None),
            ("corpus_stats", "corpus_stats", {"corpus": name}),
            ("ground", "ground", {"query": QUESTION}),
        ):
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                await conn.call(op, str(root), args or {})
                times.append(time.perf_counter() - started)
            out[label] = figures(times)
        return out
    finally:
        await conn.close()


async def over_mcp(base: str, root: Path, rounds: int) -> dict[str, Any]:
    """``ground`` through /mcp as the page calls it (cwd = the scope root), on one session."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(base + "/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            result = await session.call_tool("ground", {"cwd": str(root), "query": QUESTION})
            times.append(time.perf_counter() - started)
            assert not result.is_error, result
        return {"ground": figures(times)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    opts = parser.parse_args()
    from hallouminate.client import connect_or_spawn, stop_daemon

    with bench_world() as world:
        config = world.root / "config" / "hallouminate" / "config.toml"
        config.write_text(config.read_text() + f'\n[http]\nenabled = true\nroot = "{world.root}"\n')
        log("indexing the sample wiki for real ...")
        subprocess.run(
            [str(Path(sys.executable).with_name("hallouminate")), "index"],
            cwd=world.repo,
            env=world.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        have = asyncio.run(_rows(world.root))
        asyncio.run(stop_daemon())
        log(f"filling from {have} to {opts.chunks} chunks (bench/_fill.py) ...")
        with tempfile.TemporaryDirectory(prefix="hmb-ui-") as tmp:
            request = {
                "repo": str(world.repo),
                "seed": opts.seed,
                "start": 0,
                "chunks": opts.chunks - have,
                "keep": 4,
            }
            (Path(tmp) / "request.json").write_text(json.dumps(request))
            started = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).with_name("_fill.py")),
                    f"{tmp}/request.json",
                    f"{tmp}/result.json",
                ],
                check=True,
                env=world.env,
                stdout=sys.stderr,  # its progress; this script's stdout is the JSON document
            )
            fill = json.loads((Path(tmp) / "result.json").read_text())
        log(f"  {fill['rows']} rows in {time.perf_counter() - started:.0f} s; restarting the daemon ...")

        async def restart() -> None:
            conn = await connect_or_spawn()
            try:
                await wait_loaded(conn)
                await conn.call("index", str(world.repo), {})  # the catch-up, so nothing runs meanwhile
            finally:
                await conn.close()

        asyncio.run(restart())
        endpoint = Path(world.env["HALLOUMINATE_SOCKET"] + ".endpoint")
        base = endpoint.read_text().strip()
        out: dict[str, Any] = {"rows": fill["rows"], "rounds": opts.rounds}
        started = time.perf_counter()
        first = get(base + "/api/status")
        out["api_status_first_ms"] = (time.perf_counter() - started) * 1000
        out["corpora"] = [
            {k: c.get(k) for k in ("name", "indexed_files", "total_chunks")} for c in first["corpora"]
        ]
        for label, path in (("api_status_kept", "/api/status"), ("api_status_fresh", "/api/status?fresh=1")):
            times = []
            for _ in range(opts.rounds):
                if label == "api_status_fresh":
                    time.sleep(2.05)  # FRESH_MIN_SECS: each call recomputes
                started = time.perf_counter()
                get(base + path)
                times.append(time.perf_counter() - started)
            out[label] = figures(times)
        log("ground and status over the socket, ground over /mcp ...")
        out["socket"] = asyncio.run(over_socket(world.root, opts.rounds))
        out["mcp"] = asyncio.run(over_mcp(base, world.root, opts.rounds))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "operator_page.json").write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


async def _rows(root: Path) -> int:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        name = (await conn.call("list_corpora", str(root)))["corpora"][0]["name"]
        return int((await conn.call("corpus_stats", str(root), {"corpus": name}))["total_chunks"])
    finally:
        await conn.close()


if __name__ == "__main__":
    main()
