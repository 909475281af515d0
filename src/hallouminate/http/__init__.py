"""MCP over Streamable HTTP, a REST search and the operator page, served by the daemon on a TCP listener.

Off until enabled (``hallouminate http enable``; docs/http.md). Imported by the daemon only when the
listener starts: the MCP SDK, Starlette and uvicorn cost nothing to a daemon that serves the socket alone.
"""
