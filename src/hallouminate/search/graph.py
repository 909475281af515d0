"""``get_connection_graph``: a breadth-first walk from a page over its chunks' vector neighbours and its
explicit links (domain; docs/tools/get_connection_graph.md, docs/adr/0038-connection-graph.md).

The start page's chunks (at most ``max_seed_chunks``, by ordinal) seed the walk: each is a query
(``all_chunks``, a neighbour scoring its best seed) or their mean is one (``centroid``). Each level asks the
reader once for the neighbours of every node of the level before it (``ReaderPort.neighbours``: one
matrix product over the corpus's held vectors per 64 queries; the seeds as one ``best_of`` list), leaving
out the pages and chunks already taken; a node whose candidates were all taken by its siblings asks again,
for more. A node gets at most ``fan_out`` similar children, each at least ``min_similarity`` to it, and
then at most ``fan_out`` link children: the pages its page links to (``[[wikilinks]]`` and relative Markdown links,
found by the ``links`` callable the daemon passes in), each as its chunk nearest the parent, scored by that
similarity but not held to ``min_similarity`` (the author stated the relation). A link to a page already in
the graph adds nothing. Every node counts towards ``max_nodes``.

Numbers outside GrooveSeek's bounds are clamped, not refused, and each clamp is reported in ``clamped``.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np

from hallouminate.errors import NotFound
from hallouminate.ports import ChunkRow, ReaderPort, Vector
from hallouminate.protocol import limits
from hallouminate.protocol.arguments import ConnectionGraphArgs
from hallouminate.protocol.results import (
    ConnectionGraphResult,
    GraphClamp,
    GraphNode,
    GraphTruncation,
)
from hallouminate.search.filters import Eligibility, category_topic, frontmatter

# The pages a page links to (corpus-relative, indexed or not), in document order.
LinkFinder = Callable[[str], Awaitable[Sequence[str]]]
# The corpus's indexed pages (for the "did you mean" of an unknown start).
PageLister = Callable[[], Awaitable[Collection[str]]]
# Candidates asked per query beyond fan_out at first: siblings and earlier levels take some of a node's
# nearest chunks (and with dedup_by_path a page's other chunks crowd its best one), so a little over-fetch
# saves most second rounds.
OVER_FETCH = 2


@dataclass
class _Bounds:
    depth: int
    fan_out: int
    min_similarity: float
    max_nodes: int
    max_seed_chunks: int
    exclude_paths: list[str]
    clamped: list[GraphClamp]


def bounds(args: ConnectionGraphArgs) -> _Bounds:
    """The walk's numbers from ``args``: defaults for the missing, clamped into range (and reported)."""
    clamped: list[GraphClamp] = []

    def integer(name: str, bound: limits.Range) -> int:
        given = cast("Mapping[str, Any]", args).get(name)
        if given is None:
            assert bound.default is not None
            return bound.default
        used = min(max(int(given), bound.low), bound.high)
        if used != given:
            clamped.append({"param": name, "given": given, "used": used})
        return used

    depth = integer("depth", limits.GRAPH_DEPTH)
    fan_out = integer("fan_out", limits.GRAPH_FAN_OUT)
    max_nodes = integer("max_nodes", limits.GRAPH_MAX_NODES)
    seeds = integer("max_seed_chunks", limits.GRAPH_MAX_SEED_CHUNKS)
    similarity = limits.GRAPH_MIN_SIMILARITY
    given = args.get("min_similarity")
    min_similarity = similarity.default
    if given is not None:
        # A non-finite number (possible from msgpack, not JSON) falls back to the default, like GrooveSeek's
        # min_confidence_ratio; anything else is clamped.
        used = min(max(float(given), similarity.low), similarity.high) if math.isfinite(given) else None
        min_similarity = similarity.default if used is None else used
        if min_similarity != given:
            clamped.append({"param": "min_similarity", "given": given, "used": min_similarity})
    excluded = list(args.get("exclude_paths", []))
    cap = limits.GRAPH_EXCLUDE_PATHS.high
    if len(excluded) > cap:
        clamped.append({"param": "exclude_paths", "given": len(excluded), "used": cap})
        excluded = excluded[:cap]
    return _Bounds(depth, fan_out, min_similarity, max_nodes, seeds, excluded, clamped)


@dataclass
class _Expanding:
    """A node whose neighbours the next level asks for (the start: ``node_id`` None)."""

    node_id: int | None
    path: str
    queries: Vector  # one row per query: a node's own vector, or the start's seeds / their centroid
    picked: int = 0  # similar children so far
    rows: list[ChunkRow] = field(default_factory=list)  # candidates, best first
    more: bool = False  # asking again for more candidates may find some


@dataclass
class _Walk:
    reader: ReaderPort
    corpus: str
    b: _Bounds
    eligible: Eligibility | None
    dedup_by_path: bool
    links: LinkFinder | None
    excluded: set[str]
    nodes: list[GraphNode] = field(default_factory=list)
    vectors: dict[int, Vector] = field(default_factory=dict)
    taken_ids: set[str] = field(default_factory=set)
    taken_paths: set[str] = field(default_factory=set)
    knn_queries: int = 0
    full: bool = False  # a node was left out for max_nodes

    def room(self) -> bool:
        if len(self.nodes) < self.b.max_nodes:
            return True
        self.full = True
        return False

    def add(
        self, parent: _Expanding, depth: int, row: ChunkRow, score: float, edge: Literal["similar", "link"]
    ) -> GraphNode:
        node = _node(len(self.nodes) + 1, parent.node_id, depth, row, score, edge)
        self.nodes.append(node)
        self.taken_ids.add(row["id"])
        self.taken_paths.add(row["path"])
        return node

    async def level(self, frontier: list[_Expanding], depth: int) -> list[GraphNode]:
        """The nodes of ``depth``: the similar children of every node of ``frontier``, then their links."""
        added: list[GraphNode] = []
        pending = frontier
        limit = self.b.fan_out * (1 + OVER_FETCH)
        while pending:
            await self.ask(pending, limit)
            again = []
            for item in pending:
                short = self.pick(item, depth, added)
                if self.full:
                    return added
                if short:
                    again.append(item)
            pending, limit = again, limit * 4
        if self.links is not None:
            for item in frontier:
                await self.follow(item, depth, added)
                if self.full:
                    break
        return added

    async def ask(self, items: list[_Expanding], limit: int) -> None:
        """Each item's candidates: one call of the reader for every query of every item."""
        queries = np.concatenate([item.queries for item in items])
        self.knn_queries += len(queries)
        # The start's seeds (all_chunks) are asked as one: each chunk at its best seed's score.
        seeds = len(items) == 1 and len(queries) > 1
        answers = await self.reader.neighbours(
            queries,
            self.corpus,
            limit,
            self.eligible,
            exclude_paths=self.excluded | (self.taken_paths if self.dedup_by_path else set()),
            exclude_ids=self.taken_ids,
            best_of=seeds,
        )
        at = 0
        for item in items:
            mine = answers[at : at + (1 if seeds else len(item.queries))]
            at += len(mine)
            item.rows = mine[0]
            # More may pass when a query answered all ``limit`` rows and its worst is above the floor.
            item.more = any(
                len(rows) == limit and rows[-1]["score"] >= self.b.min_similarity for rows in mine
            )

    def pick(self, item: _Expanding, depth: int, added: list[GraphNode]) -> bool:
        """Take ``item``'s best untaken candidates; True when it may find more by asking again."""
        for row in item.rows:
            if item.picked >= self.b.fan_out:
                return False
            if row["score"] < self.b.min_similarity:
                return False
            if row["id"] in self.taken_ids or (self.dedup_by_path and row["path"] in self.taken_paths):
                continue
            if not self.room():
                return False
            added.append(self.add(item, depth, row, row["score"], "similar"))
            item.picked += 1
        return item.picked < self.b.fan_out and item.more

    async def follow(self, item: _Expanding, depth: int, added: list[GraphNode]) -> None:
        """``item``'s link children: each linked page not in the graph yet, as its chunk nearest ``item``."""
        assert self.links is not None
        followed = 0
        for target in dict.fromkeys(await self.links(item.path)):
            if followed >= self.b.fan_out:
                return
            if target in self.excluded or target in self.taken_paths:
                continue
            rows = await self.reader.page_rows(self.corpus, target)
            if not rows:
                continue  # not indexed (not Markdown, ignored, or new): nothing to show of it
            if self.eligible is not None and not self.eligible.page_passes(target, rows[0].get("fields")):
                continue
            vectors = await self.reader.chunk_vectors([row["id"] for row in rows], [self.corpus])
            scores = (vectors @ item.queries.T).max(axis=1)
            best = int(np.argmax(scores))
            if not self.room():
                return
            added.append(self.add(item, depth, rows[best], float(scores[best]), "link"))
            followed += 1


async def connection_graph(
    reader: ReaderPort,
    corpus: str,
    args: ConnectionGraphArgs,
    *,
    corpus_name: str,
    links: LinkFinder | None = None,
    pages: PageLister | None = None,
) -> ConnectionGraphResult:
    """The graph walked from ``args["start"]`` over the store's corpus ``corpus`` (``corpus_name`` as the
    caller names it). ``links`` is None, or args ``links: false``: similarity only. ``pages`` lists the
    indexed pages, asked only to suggest the closest ones to an unknown start."""
    started = time.perf_counter()
    start = args["start"]
    b = bounds(args)
    rows = await reader.page_rows(corpus, start)
    if not rows:
        closest = _closest(start, await pages()) if pages is not None else []
        hint = f" (did you mean {' or '.join(map(repr, closest))}?)" if closest else ""
        raise NotFound(
            f"start {start!r} is not an indexed page of corpus {corpus_name!r}{hint}: give its "
            "corpus-relative path as ground or list_files return it (e.g. 'guides/setup.md'); a page "
            "written since the last index needs `index` first",
            {"param": "start", "path": start, "corpus": corpus_name, "closest": closest},
        )
    truncation: list[GraphTruncation] = []
    nodes: list[GraphNode] = []
    seeds_used = knn_queries = 0
    if b.max_nodes > 0:
        seeds = rows[: b.max_seed_chunks]
        if len(rows) > len(seeds):
            truncation.append(
                {
                    "reason": "seed_chunks",
                    "limit": b.max_seed_chunks,
                    "detail": f"{start} has {len(rows)} chunks; its first {len(seeds)} seeded the walk "
                    "(raise max_seed_chunks to use more)",
                }
            )
        seeds_used = len(seeds)
        vectors = await reader.chunk_vectors([row["id"] for row in seeds], [corpus])
        if args.get("seed_strategy") == "centroid":
            mean = vectors.mean(axis=0, keepdims=True)
            vectors = mean / max(float(np.linalg.norm(mean)), 1e-12)
        category, topic = args.get("category"), args.get("topic")
        walk = _Walk(
            reader,
            corpus,
            b,
            Eligibility(category=category, topic=topic, min_quality=0.0) if category or topic else None,
            bool(args.get("dedup_by_path", False)),
            links if args.get("links", True) else None,
            {start, *b.exclude_paths},
        )
        frontier = [_Expanding(None, start, vectors)]
        for depth in range(1, b.depth + 1):
            added = await walk.level(frontier, depth)
            if walk.full or depth == b.depth or not added:
                break
            found = await reader.chunk_vectors([node["chunk_id"] for node in added], [corpus])
            frontier = [
                _Expanding(node["node_id"], node["path"], found[i : i + 1]) for i, node in enumerate(added)
            ]
        nodes, knn_queries = walk.nodes, walk.knn_queries
        if walk.full:
            truncation.append(
                {
                    "reason": "node_budget",
                    "limit": b.max_nodes,
                    "detail": f"the walk stopped at max_nodes = {b.max_nodes} with neighbours left to add "
                    "(raise max_nodes, or lower depth or fan_out)",
                }
            )
    return {
        "start_path": start,
        "truncated": bool(truncation),
        "truncation": truncation,
        "nodes": nodes,
        "stats": {
            "total_nodes": len(nodes),
            "max_depth_reached": max((node["depth"] for node in nodes), default=0),
            "knn_queries": knn_queries,
            "duration_ms": round((time.perf_counter() - started) * 1000),
            "seeds_used": seeds_used,
        },
        "clamped": b.clamped,
    }


def _closest(start: str, pages: Collection[str]) -> list[str]:
    """Up to three indexed pages ``start`` may have meant: the page with ``.md`` added, else the nearest
    spellings (difflib's ratio, as a typo or a missing directory leaves it high)."""
    if f"{start}.md" in pages:
        return [f"{start}.md"]
    return difflib.get_close_matches(start, sorted(pages), n=3, cutoff=0.6)


def _node(
    node_id: int,
    parent_id: int | None,
    depth: int,
    row: ChunkRow,
    score: float,
    edge: Literal["similar", "link"],
) -> GraphNode:
    front = frontmatter(row.get("fields"))
    headings = row.get("heading_path") or []
    own_title = front.get("title")
    title = " ".join(own_title.split()) if isinstance(own_title, str) and own_title.strip() else None
    text = " ".join((row.get("text") or "").split())
    cut = limits.GRAPH_SNIPPET_CHARS
    return {
        "node_id": node_id,
        "parent_id": parent_id,
        "depth": depth,
        "chunk_id": row["id"],
        "score": round(score, 4),
        "path": row["path"],
        "heading": headings[-1] if headings else None,
        "title": title or (headings[0] if headings else None),
        "topic": category_topic(row["path"], front)[1],
        "snippet": text if len(text) <= cut else text[:cut] + "…",
        "edge": edge,
    }
