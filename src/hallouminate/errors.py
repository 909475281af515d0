"""The error vocabulary shared by the engine, the daemon and its clients.

Every failure the product reports is one of three kinds. The daemon puts the kind on the wire
(`hallouminate.protocol`), and the MCP shim maps it to a JSON-RPC code: caller mistakes to -32602,
faults to -32603, and retryable faults to -32603 with ``data.retryable = true``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class HallouminateError(Exception):
    """Base class: a message meant for the caller, plus structured data for machines."""

    kind: ClassVar[str] = "internal"

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = dict(data or {})


class InvalidParams(HallouminateError):
    """The caller asked for something wrong: bad cwd, unknown corpus, unsafe path, bad argument."""

    kind = "invalid_params"


class Internal(HallouminateError):
    """A fault on our side (or the daemon being unavailable); the caller's request was fine."""

    kind = "internal"


class Retryable(HallouminateError):
    """A transient fault: the same request may succeed if sent again later."""

    kind = "retryable"


KINDS: dict[str, type[HallouminateError]] = {cls.kind: cls for cls in (InvalidParams, Internal, Retryable)}


def from_kind(kind: str, message: str, data: dict[str, Any] | None = None) -> HallouminateError:
    """Rebuild an error received from the wire; unknown kinds are treated as internal faults."""
    return KINDS.get(kind, Internal)(message, data)
