"""Our errors as JSON-RPC errors: the code and ``data`` come from the error's family (``hallouminate.errors``).

Caller mistakes -32602, faults -32603, transient faults -32603 with ``data.retryable = true``.
"""

from __future__ import annotations

from mcp import MCPError

from hallouminate.errors import HallouminateError, public_data


def to_mcp_error(error: HallouminateError) -> MCPError:
    return MCPError(error.family.jsonrpc_code, error.message, public_data(error) or None)
