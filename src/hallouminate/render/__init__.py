"""Human-readable text for results: what the MCP shim puts in text content and what the CLI prints."""

from hallouminate.render.index_report import render_index
from hallouminate.render.outline import render_ground

__all__ = ["render_ground", "render_index"]
