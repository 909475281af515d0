"""``hallouminate serve``: a stateless MCP stdio server that forwards every tool call to the daemon.

It imports neither lancedb nor fastembed, and never opens the store: when the daemon cannot be reached or
started, calls fail with -32603. The MCP SDK is imported only by `server` (and the warm host that
pre-imports it), never by this package's `__init__`, so the launcher starts in milliseconds.
"""
