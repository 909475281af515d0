"""The error vocabulary shared by the engine, the daemon and its clients, and its one mapping to the wire.

Errors are named by what went wrong (``NotFound``, ``UnsafePath``, ``Conflict``, ...) and each belongs to
one of three families that say who must act (docs/adr/0021-errors-by-meaning.md):

- ``CallerError``: the caller must change the request;
- ``Fault``: we must fix something, in our code or on the machine it runs on; the request was fine;
- ``Transient``: nobody; the same request may succeed if sent again later.

Each family's ``Family`` record is the one place that says how its errors travel: the wire kind and the
``type`` of the daemon's error answer (``to_wire``/``from_wire``), the JSON-RPC code (``shim/errors.py``),
``data.retryable`` (``public_data``) and the CLI's exit code (``cli/daemon_calls.py``) all read it. Domain
code raises the named classes only, never a family or a wire name (tests/test_error_names.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self, TypedDict


@dataclass(frozen=True)
class Family:
    """How every error of a family is reported: on the daemon's wire, over MCP and by the CLI."""

    kind: str  # the wire kind (docs/protocol.md), frozen for protocol 1 (docs/stability.md)
    jsonrpc_code: int  # what the MCP shim answers (docs/mcp.md)
    retryable: bool  # whether ``data.retryable = true`` is added, on the wire and over MCP
    exit_code: int  # what a CLI command exits with (docs/cli.md)


CALLER = Family(kind="invalid_params", jsonrpc_code=-32602, retryable=False, exit_code=2)
FAULT = Family(kind="internal", jsonrpc_code=-32603, retryable=False, exit_code=1)
TRANSIENT = Family(kind="retryable", jsonrpc_code=-32603, retryable=True, exit_code=1)
FAMILIES = (CALLER, FAULT, TRANSIENT)


class HallouminateError(Exception):
    """Base class: a message meant for the caller (the problem and the fix), plus ``data`` for machines."""

    family: ClassVar[Family] = FAULT
    # The error's ``type`` on the wire: the nearest registered class's (see ``TYPES``).
    wire_type: ClassVar[str] = "fault"

    def __init__(self, message: str, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = dict(data or {})

    @property
    def kind(self) -> str:
        return self.family.kind

    @property
    def retryable(self) -> bool:
        return self.family.retryable

    def reworded(self, message: str) -> Self:
        """The same error (class, data, attributes) with another message, e.g. with context prefixed."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        Exception.__init__(clone, message)
        clone.message = message
        clone.data = dict(self.data)
        return clone


# -- the families: who must act --------------------------------------------------------------------------
class CallerError(HallouminateError):
    """The caller must change the request: a bad argument, an unknown name, a refused path, ..."""

    family = CALLER
    wire_type = "caller_error"


class Fault(HallouminateError):
    """A fault on our side (our code, the store, the model, the filesystem); the request was fine."""

    family = FAULT
    wire_type = "fault"


class Transient(HallouminateError):
    """Nobody is at fault: the same request may succeed if sent again later."""

    family = TRANSIENT
    wire_type = "transient"


# -- the caller's mistakes ---------------------------------------------------------------------------------
class InvalidArgument(CallerError):
    """A parameter's value, or a combination of parameters, is not accepted (``data.param`` or
    ``data.field`` names it; ``data.problem`` for section edits)."""

    wire_type = "invalid_argument"


class BadRequest(CallerError):
    """The request itself is malformed: a broken frame or envelope, an unknown operation or tool."""

    wire_type = "bad_request"


class Forbidden(CallerError):
    """The caller may not use this daemon at all (another user's connection)."""

    wire_type = "forbidden"


class NotFound(CallerError):
    """What the request names does not exist: a corpus, a file, a heading, a literal, a corpus root."""

    wire_type = "not_found"


class UnsafePath(CallerError):
    """A path the sandbox or the write rules refuse: ``data = {path, problem, ...}`` (the problems are
    listed in docs/tools/read_markdown.md and docs/tools/add_markdown.md)."""

    wire_type = "unsafe_path"

    @property
    def problem(self) -> str | None:
        found = self.data.get("problem")
        return found if isinstance(found, str) else None


class Conflict(CallerError):
    """The request clashes with the state it meets: the file exists, it changed since it was read, a
    match or a heading is not unique, the repository is already set up."""

    wire_type = "conflict"


class TooLarge(CallerError):
    """Content or a file over a size limit (``data.limit``)."""

    wire_type = "too_large"


class BadEncoding(CallerError):
    """Text that is not valid UTF-8 (a file) or not valid Unicode (content sent)."""

    wire_type = "bad_encoding"


class ConfigError(CallerError):
    """A configuration file is unreadable, malformed or inconsistent (``data.file`` and ``data.key``
    or ``data.files`` name where)."""

    wire_type = "config_error"


# -- our faults --------------------------------------------------------------------------------------------
class StoreFault(Fault):
    """The index store cannot be opened, read or written (``data.problem``: ``store-missing``,
    ``store-full``, ...); the message names the fix."""

    wire_type = "store_fault"


class ModelUnavailable(Fault):
    """The embedding model is not installed, damaged, unknown or could not be fetched; the message names
    the command that fixes it."""

    wire_type = "model_unavailable"


class FilesystemFault(Fault):
    """The filesystem refused us (permissions, a full disk, a file in the way of the socket); the
    message names the path and the fix."""

    wire_type = "filesystem_fault"


class AnswerTooLarge(Fault):
    """An answer exceeded the frame limit and could not be sent; narrowing the request helps."""

    wire_type = "answer_too_large"


class Bug(Fault):
    """An unexpected exception, caught at a boundary: the message names it, the log holds the traceback."""

    wire_type = "bug"


# -- nobody's fault ----------------------------------------------------------------------------------------
class Unavailable(Transient):
    """The daemon cannot be reached, went away mid-request, or is too busy to take the connection."""

    wire_type = "unavailable"


class StoreUnreachable(StoreFault):
    """The index store's object storage did not answer in time or answered with a server error (a
    partition, a gateway restarting): nothing is broken, the same request may succeed once it answers
    again. A ``StoreFault`` that is retryable (``data.retryable = true``)."""

    family = TRANSIENT
    wire_type = "store_unreachable"


# The wire names of protocol 1, kept so code written against them still catches the right errors. Our own
# code names families and meanings instead (tests/test_error_names.py): never raise these.
InvalidParams = CallerError
Internal = Fault
Retryable = Transient

# Every class that can be rebuilt from the wire, by its ``type``. A subclass defined elsewhere (the
# sandbox's ``PathMissing``, the client's ``DaemonUnavailable``) travels as its nearest class here.
TYPES: dict[str, type[HallouminateError]] = {
    cls.wire_type: cls
    for cls in (
        CallerError,
        Fault,
        Transient,
        InvalidArgument,
        BadRequest,
        Forbidden,
        NotFound,
        UnsafePath,
        Conflict,
        TooLarge,
        BadEncoding,
        ConfigError,
        StoreFault,
        ModelUnavailable,
        FilesystemFault,
        AnswerTooLarge,
        Bug,
        Unavailable,
        StoreUnreachable,
    )
}
_BY_KIND: dict[str, type[HallouminateError]] = {
    cls.family.kind: cls for cls in (CallerError, Fault, Transient)
}


def public_data(error: HallouminateError) -> dict[str, Any]:
    """``error.data`` as callers see it: with ``retryable: true`` for a transient error (set here only)."""
    data = dict(error.data)
    if error.family.retryable:
        data["retryable"] = True
    return data


class WireError(TypedDict):
    """The ``error`` map of a daemon answer (docs/protocol.md)."""

    kind: str
    type: str
    message: str
    # What the error is about (the parameter, the path, ...): free-form per error, JSON-ready.
    data: dict[str, Any]


def to_wire(error: HallouminateError) -> WireError:
    """The ``error`` map of a daemon answer: ``{kind, type, message, data}`` (docs/protocol.md)."""
    return {"kind": error.kind, "type": error.wire_type, "message": error.message, "data": public_data(error)}


def from_wire(error: Mapping[str, Any]) -> HallouminateError:
    """Rebuild an error map received from the daemon as the class it was raised as.

    ``type`` is optional (a daemon may predate it, or name a class this side does not know): the error is
    then rebuilt as its kind's family, and an unknown kind as a ``Fault``. ``data.retryable`` is the
    mapping's, not the error's: it is dropped and comes back from the family.
    """
    kind = str(error.get("kind", FAULT.kind))
    message = str(error.get("message") or "the daemon reported an error without a message")
    raw = error.get("data")
    data = dict(raw) if isinstance(raw, Mapping) else {}
    cls = TYPES.get(str(error.get("type")))
    if cls is None or cls.family.kind != kind:
        cls = _BY_KIND.get(kind, Fault)
    if cls.family.retryable:
        data.pop("retryable", None)
    return cls(message, data)
