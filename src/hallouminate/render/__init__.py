"""Human-readable text for results: what the MCP shim puts in text content and what the CLI prints."""

from hallouminate.render.best_practice import render_best_practice
from hallouminate.render.browse import (
    render_backlinks,
    render_corpora,
    render_files,
    render_read,
    render_stats,
    render_tree,
)
from hallouminate.render.document import render_document
from hallouminate.render.graph import render_graph
from hallouminate.render.index_report import render_index
from hallouminate.render.move import render_move
from hallouminate.render.outline import render_ground
from hallouminate.render.topics import render_topics
from hallouminate.render.writes import render_delete, render_write

__all__ = [
    "render_backlinks",
    "render_best_practice",
    "render_corpora",
    "render_delete",
    "render_document",
    "render_files",
    "render_graph",
    "render_ground",
    "render_index",
    "render_move",
    "render_read",
    "render_stats",
    "render_topics",
    "render_tree",
    "render_write",
]
