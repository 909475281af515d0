"""``hallouminate graph``: the connection graph from one page (``get_connection_graph``), as a tree."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from hallouminate.protocol import limits

if TYPE_CHECKING:
    from hallouminate.protocol.results import ConnectionGraphResult


def _bound(what: str, bound: limits.Range) -> str:
    return f"{what} (default {bound.default}; {bound.span}, a value outside is clamped)."


@click.command("graph")
@click.option(
    "--start", required=True, help="The indexed page to walk from, corpus-relative (e.g. guides/setup.md)."
)
@click.option("--corpus", help="The corpus of the start page (default: this repository's wiki).")
@click.option("--depth", type=int, help=_bound("Levels to walk", limits.GRAPH_DEPTH))
@click.option("--fan-out", type=int, help=_bound("Neighbours per node", limits.GRAPH_FAN_OUT))
@click.option(
    "--min-similarity",
    type=float,
    help=f"Similarity a similar node needs to its parent (default {limits.GRAPH_MIN_SIMILARITY.default}; "
    "0 to 1, clamped).",
)
@click.option(
    "--seed-strategy",
    type=click.Choice(["all_chunks", "all-chunks", "centroid"]),
    help="all_chunks (default): every chunk of the start page is a query; centroid: their mean.",
)
@click.option("--dedup-by-path", is_flag=True, default=None, help="At most one node per page.")
@click.option("--category", help="Only nodes of pages of this category.")
@click.option("--topic", help="Only nodes of pages of this topic.")
@click.option("--exclude", "exclude_paths", multiple=True, help="A page to leave out (repeatable).")
@click.option("--max-nodes", type=int, help=_bound("Nodes at most, 0: none", limits.GRAPH_MAX_NODES))
@click.option(
    "--max-seed-chunks", type=int, help=_bound("Start chunks used as seeds", limits.GRAPH_MAX_SEED_CHUNKS)
)
@click.option("--no-links", is_flag=True, help="Similarity only: do not follow the pages' links.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def graph_command(
    start: str,
    corpus: str | None,
    depth: int | None,
    fan_out: int | None,
    min_similarity: float | None,
    seed_strategy: str | None,
    dedup_by_path: bool | None,
    category: str | None,
    topic: str | None,
    exclude_paths: tuple[str, ...],
    max_nodes: int | None,
    max_seed_chunks: int | None,
    no_links: bool,
    fmt: str,
    as_json: bool,
) -> None:
    """Walk from START to the chunks most similar to it, and theirs, and to the pages it links to.

    Prints an indented tree (score, edge, path, heading, snippet); --json prints the full result.
    """
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_graph

    args: dict[str, Any] = {
        "start": start,
        "corpus": corpus,
        "depth": depth,
        "fan_out": fan_out,
        "min_similarity": min_similarity,
        "seed_strategy": seed_strategy,
        "dedup_by_path": dedup_by_path,
        "category": category,
        "topic": topic,
        "exclude_paths": list(exclude_paths) or None,
        "max_nodes": max_nodes,
        "max_seed_chunks": max_seed_chunks,
        "links": False if no_links else None,
    }
    result: ConnectionGraphResult = call_daemon(
        "get_connection_graph", {k: v for k, v in args.items() if v is not None}
    )
    click.echo(
        json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" or as_json else render_graph(result)
    )
