"""``hallouminate serve``: a stateless MCP stdio server that forwards every tool call to the daemon.

It imports neither lancedb nor fastembed, and never opens the store: when the daemon cannot be reached or
started, calls fail with -32603.
"""

from hallouminate.shim.server import build_server, serve

__all__ = ["build_server", "serve"]
