"""Map our error kinds to JSON-RPC codes: caller mistakes -32602, faults -32603 (retryable flagged)."""

from __future__ import annotations

from mcp import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from hallouminate.errors import HallouminateError, Retryable


def to_mcp_error(error: HallouminateError) -> MCPError:
    data = dict(error.data)
    if error.kind == "invalid_params":
        return MCPError(INVALID_PARAMS, error.message, data or None)
    if isinstance(error, Retryable) or error.kind == "retryable":
        data["retryable"] = True
    return MCPError(INTERNAL_ERROR, error.message, data or None)
