"""The daemon's memory under hostile HTTP (docs/http.md, "Security model"): its RSS (VmRSS, from /proc)
before, at the peak of 1,000 sessions opened and abandoned, and after they expire; then under 200
slowloris connections (each sending a request's headers a byte a second) and after the read deadline
cut them.

A fresh daemon (bench_world) with ``[http] enabled``, ``max_sessions = 1000`` (so that all 1,000 live at
once: the default cap, 256, bounds a real daemon at a quarter of the figure) and ``session_idle_secs =
IDLE_SECS`` (long enough that the first session opened is still live when the last one is, on a busy
2-core machine); the model loaded before the first figure. Python rarely gives freed memory back to the
system, so "after" shows what is kept for reuse, not a leak: a second round of the same hostility must
not grow it much (it is measured too).

Usage: .venv/bin/python bench/http_hostile.py [--rounds 2]
Writes bench/out/http_hostile.json and bench/out/http_hostile.md. About a minute a round (``make bench``
runs one).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

from _sandbox import OUT, bench_world
from indexing import peak_rss_mib, wait_loaded

SESSIONS = 1000
SLOWLORIS = 200
IDLE_SECS = 30
MB = 1024 * 1024 / 1e6  # MiB -> MB
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def rss(pid: int) -> float:
    return peak_rss_mib(pid)["VmRSS"] * MB


async def open_sessions(base_url: str, count: int) -> tuple[list[str], int]:
    import httpx2

    async with httpx2.AsyncClient(
        base_url=base_url, timeout=120, limits=httpx2.Limits(max_connections=16)
    ) as c:
        gate = asyncio.Semaphore(16)

        async def one() -> httpx2.Response:
            async with gate:
                return await c.post("/mcp", json=INITIALIZE, headers=HEADERS)

        answers = await asyncio.gather(*(one() for _ in range(count)))
    ids = [a.headers["mcp-session-id"] for a in answers if a.status_code == 200]
    return ids, sum(1 for a in answers if a.status_code != 200)


def expired(base_url: str, session: str) -> bool:
    import httpx2

    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    answer = httpx2.post(
        base_url + "/mcp", json=body, headers={**HEADERS, "mcp-session-id": session}, timeout=30
    )
    return answer.status_code == 404


def sessions_round(base_url: str, pid: int) -> dict[str, Any]:
    before = rss(pid)
    started = time.perf_counter()
    ids, refused = asyncio.run(open_sessions(base_url, SESSIONS))
    open_s = time.perf_counter() - started
    peak = rss(pid)
    time.sleep(IDLE_SECS + 3)
    gone = expired(base_url, ids[-1]) and expired(base_url, ids[0])
    return {
        "before_mb": before,
        "peak_mb": peak,
        "after_expiry_mb": rss(pid),
        "opened": len(ids),
        "refused": refused,
        "open_s": open_s,
        "per_session_kb": (peak - before) * 1000 / max(len(ids), 1),
        "expired": gone,
    }


def slowloris_round(base_url: str, pid: int) -> dict[str, Any]:
    parts = urlsplit(base_url)
    assert parts.hostname is not None and parts.port is not None
    before = rss(pid)
    head = f"POST /mcp HTTP/1.1\r\nhost: {parts.netloc}\r\ncontent-type: application/json\r\n".encode()
    socks = [socket.create_connection((parts.hostname, parts.port), timeout=30) for _ in range(SLOWLORIS)]
    started = time.monotonic()
    peak = before
    cut = 0
    for i in range(len(head)):
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.sendall(head[i : i + 1])
        peak = max(peak, rss(pid))
        time.sleep(1.0)
        if time.monotonic() - started > 20:
            break
    for sock in socks:
        sock.settimeout(30)
        with contextlib.suppress(OSError):
            cut += b" 408 " in sock.recv(4096)
        sock.close()
    return {
        "before_mb": before,
        "peak_mb": peak,
        "after_mb": rss(pid),
        "connections": SLOWLORIS,
        "cut_408": cut,
    }


def main() -> None:
    import argparse

    from hallouminate.client import connect_or_spawn

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of 1,000 abandoned sessions")
    rounds = parser.parse_args().rounds

    with bench_world() as world:
        config = world.root / "config" / "hallouminate" / "config.toml"
        config.write_text(
            config.read_text()
            + f'\n[http]\nenabled = true\nroot = "{world.root}"\nmax_sessions = {SESSIONS}\n'
            + f"session_idle_secs = {IDLE_SECS}\n"
        )

        async def daemon_pid() -> int:
            conn = await connect_or_spawn()
            try:
                await wait_loaded(conn)
                return int((await conn.call("ping"))["pid"])
            finally:
                await conn.close()

        pid = asyncio.run(daemon_pid())
        endpoint = Path(os.environ["HALLOUMINATE_SOCKET"] + ".endpoint")
        deadline = time.monotonic() + 60
        while not endpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        base_url = endpoint.read_text().strip()
        figures: dict[str, Any] = {
            "sessions": [sessions_round(base_url, pid) for _ in range(rounds)],
            "slowloris": slowloris_round(base_url, pid),
            "idle_secs": IDLE_SECS,
        }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "http_hostile.json").write_text(json.dumps(figures, indent=2) + "\n")
    (OUT / "http_hostile.md").write_text("\n".join(table(figures)) + "\n")
    print("\n".join(table(figures)))


def table(figures: dict[str, Any]) -> list[str]:
    """The Markdown table of a run (also used by the suite's report)."""
    lines = ["| hostility | RSS before | at the peak | after | |", "|---|---|---|---|---|"]
    for n, row in enumerate(figures["sessions"], 1):
        lines.append(
            f"| {row['opened']:,} sessions opened and abandoned (round {n}) | {row['before_mb']:.1f} MB "
            f"| {row['peak_mb']:.1f} MB (+{row['peak_mb'] - row['before_mb']:.1f}) "
            f"| {row['after_expiry_mb']:.1f} MB after expiry "
            f"| {row['per_session_kb']:.0f} kB a session; opened in {row['open_s']:.1f} s; "
            f"{row['refused']} refused; expired: {row['expired']} |"
        )
    slow = figures["slowloris"]
    lines.append(
        f"| {slow['connections']} slowloris connections | {slow['before_mb']:.1f} MB "
        f"| {slow['peak_mb']:.1f} MB (+{slow['peak_mb'] - slow['before_mb']:.1f}) "
        f"| {slow['after_mb']:.1f} MB after the cut | {slow['cut_408']} answered 408 |"
    )
    return lines


if __name__ == "__main__":
    main()
