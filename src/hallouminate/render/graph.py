"""Text for ``get_connection_graph``: the walk as an indented tree under its start page."""

from __future__ import annotations

from hallouminate.protocol.results import ConnectionGraphResult, GraphNode


def render_graph(result: ConnectionGraphResult) -> str:
    """The start page, then each node under its parent (two spaces a level): score, edge, path, heading,
    and its snippet on the next line; the truncations, the clamped parameters and the stats last."""
    nodes = result.get("nodes", [])
    lines = [result.get("start_path", "")]
    children: dict[int | None, list[GraphNode]] = {}
    for node in nodes:
        children.setdefault(node["parent_id"], []).append(node)

    def walk(parent: int | None, depth: int) -> None:
        for node in children.get(parent, []):
            pad = "  " * depth
            heading = f" § {node['heading']}" if node.get("heading") else ""
            edge = "link" if node.get("edge") == "link" else "sim"
            lines.append(f"{pad}└ {node['score']:.3f} {edge} {node['path']}{heading}")
            if node.get("snippet"):
                lines.append(f"{pad}    {node['snippet']}")
            walk(node["node_id"], depth + 1)

    walk(None, 1)
    if not nodes:
        lines.append("  (no related chunks above min_similarity)")
    for cut in result.get("truncation", []):
        lines.append(f"truncated ({cut['reason']}, limit {cut['limit']}): {cut['detail']}")
    for clamp in result.get("clamped", []):
        lines.append(f"clamped: {clamp['param']} {clamp['given']} -> {clamp['used']}")
    stats = result.get("stats")
    if stats:
        lines.append(
            f"{stats['total_nodes']} nodes, depth {stats['max_depth_reached']}, {stats['seeds_used']} seeds, "
            f"{stats['knn_queries']} kNN queries, {stats['duration_ms']} ms"
        )
    return "\n".join(lines)
