"""Shared helpers of the load and kill -9 tests: tool calls through a real MCP session, latency figures,
unique tokens that ground can find one page by.

The kill -9 helpers (pages, disk and store states, temp-file checks) are in ``support.crash``.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from typing import Any

from mcp import ClientSession

# Writes and reads of a repository wiki list their directory's pages between these markers in index.md.
INDEX_START = "<!-- HALLOUMINATE:INDEX-START -->"
INDEX_END = "<!-- HALLOUMINATE:INDEX-END -->"


class ToolFailed(AssertionError):
    """A tool call that answered with an error (an ``is_error`` result, or an MCP error)."""


class Latencies:
    """Wall-clock seconds of each call, by tool; ``report`` prints p50/p99 (visible with ``pytest -s``)."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.in_flight = 0
        self.peak = 0  # the most calls in flight at once: how much the callers really overlapped

    def add(self, tool: str, seconds: float) -> None:
        self.samples[tool].append(seconds)

    def report(self, title: str) -> str:
        lines = [title, f"  {'tool':<16} {'calls':>6} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}"]
        for tool in sorted(self.samples):
            values = self.samples[tool]
            lines.append(
                f"  {tool:<16} {len(values):>6} {percentile(values, 50) * 1000:>9.1f} "
                f"{percentile(values, 99) * 1000:>9.1f} {max(values) * 1000:>9.1f}"
            )
        text = "\n".join(lines)
        print(text)
        return text


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation: p99 of 400 calls is the 396th smallest)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


async def tool(
    session: ClientSession, name: str, latencies: Latencies | None = None, **arguments: Any
) -> dict[str, Any]:
    """A tool call's structured result; any error answer raises ``ToolFailed`` (the MCP error raises
    itself, an ``MCPError``). Latencies are filed by tool, a ground in phrase mode apart (no embedding)."""
    started = time.perf_counter()
    if latencies is not None:
        latencies.in_flight += 1
        latencies.peak = max(latencies.peak, latencies.in_flight)
    try:
        result = await session.call_tool(name, arguments)
    finally:
        if latencies is not None:
            latencies.in_flight -= 1
    if latencies is not None:
        mode = arguments.get("match")
        latencies.add(f"{name} ({mode})" if mode else name, time.perf_counter() - started)
    if result.is_error or not isinstance(result.structured_content, dict):
        raise ToolFailed(f"{name} answered an error: {result.content}")
    return result.structured_content


def token(rng: random.Random) -> str:
    """A word no page holds by chance; lower-case letters only, so the keyword index keeps it as one
    token (no stemming or splitting to make two pages share it)."""
    return "zq" + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))


async def phrase_hits(session: ClientSession, cwd: str, corpus: str, text: str) -> list[str]:
    """Paths of the pages holding ``text`` literally (phrase mode: exact, no ranking noise)."""
    found = await tool(session, "ground", cwd=cwd, corpus=corpus, query=text, match="phrase", top_files=20)
    return [doc["path"] for doc in found["docs"]]
