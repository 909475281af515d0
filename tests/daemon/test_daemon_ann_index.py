"""The approximate vector index (storage/ann.py, ADR 0059) through a real daemon: built by the daemon after
an index run without holding searches behind it; with it, vector search finds what exact search finds;
a page written after it is found at once (read-your-writes), while the index does not cover it yet.

The sample wiki is small: ``HALLOUMINATE_TEST_ANN_ROWS`` lowers both the index's threshold and the reader's
in-memory bound, so the daemon builds the index and searches it in LanceDB, as at 1M rows. The build is
held once it has begun (``HALLOUMINATE_TEST_ANN_PAUSE``), so the test knows a search came while it ran.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hallouminate.client import connect_or_spawn
from support.sandbox import Sandbox, private_world

# Rows from which the daemon builds the index (the sample wiki has more chunks than this).
ANN_ROWS = 20
CORPUS = "repo:annrepo:wiki"
QUERIES = (
    "How does the MCP shim reach the daemon?",
    "what happens when the embedding model is missing",
    "writing a new wiki page with frontmatter",
    "error codes returned to callers",
    "how the watcher re-indexes changed files",
)
# A sentence no sample page holds anything near.
DISTINCT = "Quetzal fermentation ledgers record the tamarind brine's salinity every equinox at noon."
# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 180.0


@dataclass
class World:
    sandbox: Sandbox
    repo: Path
    # What happened while the build was held: status, a ground's result, and exact vector hits per query.
    held_status: dict[str, Any] = field(default_factory=dict)
    held_ground: dict[str, Any] = field(default_factory=dict)
    exact: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    ready_status: dict[str, Any] = field(default_factory=dict)


def semantic_hits(result: dict[str, Any]) -> list[tuple[str, int]]:
    """search_rag's semantic chunks, best file first: (file, chunk ordinal)."""
    return [(entry["source"], match["chunk"]) for entry in result["semantic"] for match in entry["matches"]]


async def semantic(conn: Any, repo: Path, query: str, limit: int = 5) -> list[tuple[str, int]]:
    args = {"corpus": CORPUS, "query": query, "mode": "semantic", "limit": limit}
    return semantic_hits(await conn.call("search_rag", str(repo), args, timeout=DEADLINE_SECS))


async def until(conn: Any, check: Any, what: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE_SECS
    while True:
        status = await conn.call("status")
        if check(status):
            return status
        assert time.monotonic() < deadline, f"{what} never happened: {status.get('vector_index')}"
        await asyncio.sleep(0.1)


async def build_held(world: World, pause: Path) -> None:
    repo = world.repo
    conn = await connect_or_spawn()
    try:
        pause.mkdir(exist_ok=True)
        (pause / "ann.pause").touch()  # the first build waits at its start for ann.go
        await conn.call("index", str(repo), {}, timeout=DEADLINE_SECS)
        deadline = time.monotonic() + DEADLINE_SECS
        while not (pause / "ann.reached").exists():
            assert time.monotonic() < deadline, "the daemon never began building the index"
            await asyncio.sleep(0.05)
        # Held mid-build: searches answer (exact: no index is committed yet), status says "building".
        world.held_ground = await asyncio.wait_for(
            conn.call("ground", str(repo), {"query": QUERIES[0]}), DEADLINE_SECS
        )
        for query in QUERIES:
            world.exact[query] = await semantic(conn, repo, query)
        world.held_status = await conn.call("status")
        (pause / "ann.go").touch()
        world.ready_status = await until(
            conn, lambda s: s.get("vector_index", {}).get("state") == "ready", "the index becoming ready"
        )
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with private_world(model_cache, prefix="hm-ann-") as box:
        pause = box.root / "ann-pause"
        box.start_daemon(
            {"HALLOUMINATE_TEST_ANN_ROWS": str(ANN_ROWS), "HALLOUMINATE_TEST_ANN_PAUSE": str(pause)}
        )
        made = World(box, box.make_repo("annrepo"))
        asyncio.run(build_held(made, pause))
        yield made


def test_searches_answer_while_the_index_is_built(world: World) -> None:
    """The build was held after it began (the daemon's status said so) and a `ground` answered meanwhile,
    with hits: the overlap really happened, and searches do not wait for builds."""
    assert world.held_status["vector_index"]["state"] == "building"
    assert world.held_ground["docs"], world.held_ground
    assert all(world.exact.values())


def test_the_index_covers_the_store_once_built(world: World) -> None:
    index = world.ready_status["vector_index"]
    assert index["state"] == "ready"
    assert index["rows_indexed"] >= ANN_ROWS
    assert index["rows_unindexed"] == 0


async def test_results_with_the_index_equal_exact_search(world: World) -> None:
    """Each query's vector hits through the index are those the exact scan gave before it existed."""
    conn = await connect_or_spawn()
    try:
        for query in QUERIES:
            assert await semantic(conn, world.repo, query) == world.exact[query], query
    finally:
        await conn.close()


async def test_a_written_page_is_found_before_the_index_covers_it(world: World) -> None:
    """add_markdown a page with a distinct sentence: right after, the index does not cover its rows (status
    counts them unindexed) and both vector search and `ground` find it first."""
    conn = await connect_or_spawn()
    try:
        args = {"corpus": CORPUS, "path": "notes/quetzal.md", "content": f"# Quetzal ledgers\n\n{DISTINCT}\n"}
        written = await conn.call("add_markdown", str(world.repo), args, timeout=DEADLINE_SECS)
        assert written["chunks_written"] >= 1
        status = await conn.call("status")
        assert status["vector_index"]["state"] == "ready"
        assert status["vector_index"]["rows_unindexed"] > 0, status["vector_index"]
        hits = await semantic(conn, world.repo, DISTINCT, limit=3)
        assert hits[0][0].endswith("notes/quetzal.md"), hits
        grounded = await conn.call("ground", str(world.repo), {"query": DISTINCT})
        assert grounded["docs"][0]["path"].endswith("quetzal.md"), grounded["docs"][:2]
        stats = await conn.call("corpus_stats", str(world.repo), {"corpus": CORPUS})
        assert stats["vector_index"]["rows_unindexed"] > 0
    finally:
        await conn.close()
