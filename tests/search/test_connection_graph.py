"""``get_connection_graph`` (issue 16) through a real MCP client, the real shim, a real daemon and the real
CLI: the defaults and the result's shape, each bound clamped and reported, ``max_nodes`` 0, both
truncations, ``dedup_by_path``, category / topic, ``exclude_paths``, centroid against all_chunks, the link
edges, an unknown start, and a call on a knowledge base (``kb``).

One daemon and one index for the module: a corpus ``notes`` of pages about harbour cranes (similar to each
other, several chunks each), pages on other subjects, and a start page linking to two of those.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.client import connect_or_spawn
from hallouminate.errors import NotFound
from hallouminate.protocol.schemas import RESULTS
from support.files import write
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, hm

SCHEMA = RESULTS["get_connection_graph"]
START = "cranes/harbour/overview.md"
SECTIONS = (
    ("Greasing", "Grease the harbour crane slewing bearing every week and the hoist drum every month."),
    ("Cables", "Inspect the harbour crane wire ropes for broken strands and corrosion before each shift."),
    ("Brakes", "Test the harbour crane hoist brakes under load; worn brake linings are replaced at once."),
    ("Electrics", "Check the harbour crane slip rings, cable reels and limit switches every quarter."),
    ("Records", "Every harbour crane inspection is written in the maintenance log with the crane number."),
)


def _sections(title: str, sections: tuple[tuple[str, str], ...]) -> str:
    return f"# {title}\n\n" + "".join(f"## {name}\n\n{text}\n\n" for name, text in sections)


PAGES = {
    START: _sections("Harbour crane maintenance", SECTIONS)
    + "See also [[bread]] and [the night sky](../../sky/stars.md), and [a site](https://example.org/x.md).\n",
    "cranes/harbour/ropes.md": _sections(
        "Crane wire ropes",
        (
            ("Wear", "Harbour crane wire ropes wear at the sheaves; inspect strands and lubricate the rope."),
            ("Discard", "Discard a crane wire rope with broken strands, kinks or heavy corrosion."),
        ),
    ),
    "cranes/harbour/brakes.md": _sections(
        "Crane hoist brakes",
        (
            ("Testing", "Test the crane hoist brake with a full load before the crane goes back to work."),
            ("Linings", "Replace worn brake linings of the harbour crane hoist; adjust the brake gap."),
        ),
    ),
    "cranes/yard/greasing.md": _sections(
        "Greasing the yard cranes",
        (
            ("Bearings", "Grease the yard crane slewing bearing weekly, with the crane turning slowly."),
            ("Drums", "Grease the crane hoist drum and open gears monthly; wipe off the old grease."),
        ),
    ),
    "docks/cranes/logbook.md": _sections(
        "Crane logbook",
        (("Entries", "Write each crane inspection and repair in the maintenance logbook, with the date."),),
    ),
    "docks/ships/berthing.md": _sections(
        "Berthing ships",
        (("Lines", "Ships berth with mooring lines; the harbour cranes wait until the ship is fast."),),
    ),
    "far/bread.md": _sections(
        "Sourdough bread", (("Starter", "Feed the sourdough starter with flour and water every day."),)
    ),
    "sky/stars.md": _sections(
        "The night sky", (("Stars", "Orion rises in the east on winter evenings; Betelgeuse is red."),)
    ),
}

# The chunks of the pages other than the start: one per section.
OTHER_CHUNKS = 10


class World:
    def __init__(self, client: McpClient, box: Sandbox, repo: Path) -> None:
        self.client = client
        self.box = box
        self.repo = repo

    def graph(self, **args: Any) -> dict[str, Any]:
        result = self.client.call(
            "get_connection_graph", {"cwd": str(self.repo), "corpus": "notes", "start": START, **args}
        )
        assert not result.is_error, result.content
        content: dict[str, Any] = result.structured_content
        jsonschema.validate(content, SCHEMA)
        _check_tree(content)
        self.text = result.content[0].text
        return content

    def error(self, **args: Any) -> MCPError:
        with pytest.raises(MCPError) as info:
            self.client.call("get_connection_graph", {"cwd": str(self.repo), "corpus": "notes", **args})
        assert info.value.code == INVALID_PARAMS, info.value
        return info.value

    def cli(self, *args: str) -> Any:
        return hm(self.box, "graph", "--corpus", "notes", *args, cwd=self.repo)


def _check_tree(result: dict[str, Any]) -> None:
    """What holds of every graph: ids 1..n in order, parents earlier and one level up, the start absent."""
    nodes = result["nodes"]
    assert [n["node_id"] for n in nodes] == list(range(1, len(nodes) + 1))
    depth_of = {n["node_id"]: n["depth"] for n in nodes}
    for node in nodes:
        if node["parent_id"] is None:
            assert node["depth"] == 1
        else:
            assert node["parent_id"] < node["node_id"]
            assert depth_of[node["parent_id"]] == node["depth"] - 1
        assert node["path"] != result["start_path"]
        assert len(node["snippet"]) <= 201
    assert len({n["chunk_id"] for n in nodes}) == len(nodes)
    stats = result["stats"]
    assert stats["total_nodes"] == len(nodes)
    assert stats["max_depth_reached"] == max((n["depth"] for n in nodes), default=0)
    assert result["truncated"] == bool(result["truncation"])


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "acme", '[[corpus]]\nname = "notes"\npaths = ["notes"]\n')
        for path, text in PAGES.items():
            write(repo / "notes" / path, text)
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(client, box, repo)
        finally:
            client.close()


def _similar(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in result["nodes"] if n["edge"] == "similar"]


# -- defaults and shape ------------------------------------------------------------------------------
def test_defaults_walk_two_levels_of_similar_chunks(world: World) -> None:
    result = world.graph()
    assert set(result) == {"start_path", "truncated", "truncation", "nodes", "stats", "clamped"}
    assert result["start_path"] == START
    assert result["clamped"] == []
    assert result["truncated"] is False
    stats = result["stats"]
    assert stats["seeds_used"] == len(SECTIONS)
    assert stats["max_depth_reached"] == 2  # default depth
    similar = _similar(result)
    # fan_out 5: the start gets 5 similar children, each at most 5; all at least min_similarity 0.3.
    assert len([n for n in similar if n["depth"] == 1]) == 5
    for node_id in {n["parent_id"] for n in similar}:
        assert len([n for n in similar if n["parent_id"] == node_id]) <= 5
    assert all(n["score"] >= 0.3 for n in similar)
    # The nearest pages are the other crane pages, not bread or stars.
    assert {n["path"] for n in similar if n["depth"] == 1} <= {
        p for p in PAGES if p.startswith(("cranes/", "docks/"))
    }
    node = similar[0]
    assert node["title"] and node["heading"] and node["snippet"]
    assert node["topic"] == node["path"].split("/")[1]
    # all_chunks: one kNN query per seed at level 1, then one per node of level 1 (more if re-asked).
    assert stats["knn_queries"] >= len(SECTIONS) + 5
    # The text content is the tree: the start first, each node indented under its parent.
    lines = world.text.splitlines()
    assert lines[0] == START
    assert any(line.startswith("  └ ") for line in lines) and any(line.startswith("    └ ") for line in lines)


def test_an_unknown_start_is_not_found_naming_the_fix(world: World) -> None:
    error = world.error(start="cranes/nowhere.md")
    assert "not an indexed page" in str(error) and "corpus-relative" in str(error)
    # A missing .md, a typo or a missing directory: the closest indexed pages are named.
    assert "(did you mean 'cranes/harbour/ropes.md'?)" in str(world.error(start="cranes/harbour/ropes"))
    assert "'cranes/harbour/brakes.md'" in str(world.error(start="cranes/harbour/brake.md"))
    assert "'far/bread.md'" in str(world.error(start="bread.md"))


# -- bounds ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("param", "given", "used"),
    [
        ("depth", 9, 3),
        ("depth", 0, 1),
        ("fan_out", 50, 20),
        ("fan_out", -2, 1),
        ("min_similarity", 1.5, 1.0),
        ("min_similarity", -0.5, 0.0),
        ("max_nodes", 100_000, 2000),
        ("max_nodes", -1, 0),
        ("max_seed_chunks", 0, 1),
        ("max_seed_chunks", 5000, 1000),
    ],
)
def test_each_bound_is_clamped_and_reported(world: World, param: str, given: float, used: float) -> None:
    # A low floor and a small fan-out let the walk reach depth 3 in this small corpus (10 other chunks).
    loose = {"min_similarity": 0.0, "fan_out": 2} if param == "depth" else {}
    if param == "fan_out":
        loose = {"min_similarity": 0.0, "depth": 1}
    result = world.graph(**{**loose, param: given}, links=False)
    assert result["clamped"] == [{"param": param, "given": given, "used": used}]
    nodes, stats = result["nodes"], result["stats"]
    if param == "depth":
        assert stats["max_depth_reached"] == used
    elif param == "fan_out":
        assert len(nodes) == min(used, OTHER_CHUNKS)
    elif param == "min_similarity":
        assert all(n["score"] >= used for n in nodes)
        assert (nodes == []) == (used == 1.0)
    elif param == "max_nodes" and used == 0:
        assert nodes == [] and stats["knn_queries"] == 0
    elif param == "max_nodes":
        # 2000: the whole default walk, untruncated (it has fewer nodes).
        assert nodes == world.graph(links=False)["nodes"] and not result["truncated"]
    else:
        assert stats["seeds_used"] == min(used, len(SECTIONS))


def test_exclude_paths_beyond_64_are_clamped_and_reported(world: World) -> None:
    many = [f"none/{i}.md" for i in range(63)] + ["cranes/harbour/ropes.md", "cranes/harbour/brakes.md"]
    result = world.graph(exclude_paths=many, links=False)
    assert result["clamped"] == [{"param": "exclude_paths", "given": 65, "used": 64}]
    paths = {n["path"] for n in result["nodes"]}
    assert "cranes/harbour/ropes.md" not in paths  # the 64th: used
    assert "cranes/harbour/brakes.md" in paths  # the 65th: dropped, so walked to


def test_max_nodes_zero_is_an_empty_graph(world: World) -> None:
    result = world.graph(max_nodes=0)
    assert result["nodes"] == [] and result["truncated"] is False and result["clamped"] == []
    assert result["stats"] == {
        "total_nodes": 0,
        "max_depth_reached": 0,
        "knn_queries": 0,
        "duration_ms": result["stats"]["duration_ms"],
        "seeds_used": 0,
    }


def test_the_node_budget_truncates_and_says_so(world: World) -> None:
    result = world.graph(max_nodes=3)
    assert len(result["nodes"]) == 3
    assert result["truncated"] is True
    assert [(t["reason"], t["limit"]) for t in result["truncation"]] == [("node_budget", 3)]
    assert "max_nodes" in result["truncation"][0]["detail"]
    assert "truncated (node_budget, limit 3)" in world.text
    # A budget the walk exactly fills is not a truncation: nothing was left out.
    whole = world.graph()["nodes"]
    exact = world.graph(max_nodes=len(whole))
    assert exact["nodes"] == whole and exact["truncated"] is False


def test_seed_chunks_truncate_and_say_so(world: World) -> None:
    result = world.graph(max_seed_chunks=2, links=False)
    assert result["stats"]["seeds_used"] == 2
    assert result["truncated"] is True
    [cut] = result["truncation"]
    assert (cut["reason"], cut["limit"]) == ("seed_chunks", 2)
    assert f"has {len(SECTIONS)} chunks" in cut["detail"]
    assert result["nodes"]


# -- what is walked ------------------------------------------------------------------------------------
def test_dedup_by_path_keeps_one_node_per_page(world: World) -> None:
    plain = world.graph(depth=3, fan_out=10, min_similarity=0.0, links=False)
    paths = [n["path"] for n in plain["nodes"]]
    assert len(paths) > len(set(paths))  # pages of several chunks appear more than once
    deduped = world.graph(depth=3, fan_out=10, min_similarity=0.0, links=False, dedup_by_path=True)
    paths = [n["path"] for n in deduped["nodes"]]
    assert len(paths) == len(set(paths)) == len(PAGES) - 1  # every other page, once


def test_category_and_topic_keep_to_their_pages(world: World) -> None:
    result = world.graph(category="docks", min_similarity=0.0, fan_out=20)
    assert {n["path"] for n in result["nodes"]} == {"docks/cranes/logbook.md", "docks/ships/berthing.md"}
    result = world.graph(topic="harbour", min_similarity=0.0, fan_out=20)
    assert {n["path"] for n in result["nodes"]} == {"cranes/harbour/ropes.md", "cranes/harbour/brakes.md"}


def test_exclude_paths_are_never_nodes(world: World) -> None:
    before = {n["path"] for n in world.graph(links=False)["nodes"]}
    assert "cranes/harbour/ropes.md" in before
    after = world.graph(exclude_paths=["cranes/harbour/ropes.md"], links=False)
    assert "cranes/harbour/ropes.md" not in {n["path"] for n in after["nodes"]}
    assert after["clamped"] == []


def test_centroid_asks_one_query_for_the_start_all_chunks_one_per_seed(world: World) -> None:
    every = world.graph(depth=1, links=False)
    centroid = world.graph(depth=1, links=False, seed_strategy="centroid")
    dashed = world.graph(depth=1, links=False, seed_strategy="all-chunks")
    assert every["stats"]["knn_queries"] == len(SECTIONS)
    assert centroid["stats"]["knn_queries"] == 1
    assert dashed["nodes"] == every["nodes"]
    assert len(centroid["nodes"]) == len(every["nodes"]) == 5
    # all_chunks scores a neighbour by its best seed: never below the centroid's score for it.
    best = {n["chunk_id"]: n["score"] for n in every["nodes"]}
    for node in centroid["nodes"]:
        if node["chunk_id"] in best:
            assert best[node["chunk_id"]] >= node["score"] - 1e-4


def test_links_are_edges_of_their_own_kind(world: World) -> None:
    result = world.graph(depth=1, min_similarity=0.95)
    links = [n for n in result["nodes"] if n["edge"] == "link"]
    # [[bread]] (a stem) and the relative Markdown link; the external URL is not a page.
    assert [n["path"] for n in links] == ["far/bread.md", "sky/stars.md"]
    assert all(n["parent_id"] is None and n["depth"] == 1 for n in links)
    assert all(n["score"] < 0.95 for n in links)  # unrelated pages: links are not held to min_similarity
    assert " link far/bread.md" in world.text
    without = world.graph(depth=1, min_similarity=0.95, links=False)
    assert all(n["edge"] == "similar" for n in without["nodes"])
    # Excluded pages are not followed either.
    excluded = world.graph(depth=1, min_similarity=0.95, exclude_paths=["far/bread.md"])
    assert [n["path"] for n in excluded["nodes"] if n["edge"] == "link"] == ["sky/stars.md"]


# -- the CLI -----------------------------------------------------------------------------------------
def test_cli_prints_the_tree_and_the_json(world: World) -> None:
    done = world.cli("--start", START, "--depth", "7", "--fan-out", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == START and lines[1].startswith("  └ ")
    assert "clamped: depth 7 -> 3" in done.stdout
    done = world.cli("--start", START, "--json", "--max-nodes", "2", "--no-links")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    jsonschema.validate(result, SCHEMA)
    assert len(result["nodes"]) == 2 and result["truncation"][0]["reason"] == "node_budget"


def test_cli_unknown_start_exits_2_with_the_fix(world: World) -> None:
    done = world.cli("--start", "nope.md")
    assert done.returncode == 2
    assert "not an indexed page" in done.stderr
    done = world.cli("--start", "nope.md", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["type"] == "not_found"


# -- a knowledge base (the GrooveSeek face's calls) ------------------------------------------------------
async def test_a_kb_call_walks_the_knowledge_base(world: World, tmp_path: Path) -> None:
    # The module's daemon: a knowledge base is a corpus of its own beside the repository's.
    kb = tmp_path / "kb"
    for path in (START, "cranes/harbour/ropes.md", "far/bread.md"):
        write(kb / path, PAGES[path])
    conn = await connect_or_spawn(world.box.socket, spawn=False)
    try:
        await conn.call("index", str(kb), {}, kb=True)
        result = await conn.call("get_connection_graph", str(kb), {"start": START, "depth": 1}, kb=True)
        jsonschema.validate(result, SCHEMA)
        assert {n["path"] for n in result["nodes"] if n["edge"] == "similar"} == {"cranes/harbour/ropes.md"}
        assert [n["path"] for n in result["nodes"] if n["edge"] == "link"] == ["far/bread.md"]
        with pytest.raises(NotFound, match="corpus 'kb'"):
            await conn.call("get_connection_graph", str(kb), {"start": "missing.md"}, kb=True)
    finally:
        await conn.close()
