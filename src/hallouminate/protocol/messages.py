"""Request, answer and event messages, and the checks every request passes before dispatch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from hallouminate.errors import FAMILIES, BadRequest, HallouminateError, WireError, to_wire

PROTOCOL_VERSION = 1
ERROR_KINDS = tuple(family.kind for family in FAMILIES)

# A request's id: a malformed request is answered with None.
RequestId = int | str | None


class RequestMessage(TypedDict):
    v: int
    id: int | str
    op: str
    cwd: str | None
    # The operation's arguments, checked against its schema (protocol/schemas.py ARGS) by the daemon.
    args: dict[str, Any]
    stream: NotRequired[bool]
    # cwd is itself a knowledge base (`serve --kb-path DIR`): its one corpus is "kb", rooted at cwd.
    kb: NotRequired[bool]


class OkAnswer(TypedDict):
    v: int
    id: RequestId
    ok: Literal[True]
    # The operation's result: one of protocol/results.py's types.
    result: object


class ErrorAnswer(TypedDict):
    v: int
    id: RequestId
    ok: Literal[False]
    error: WireError


class EventMessage(TypedDict):
    v: int
    id: RequestId
    event: str
    data: object


Answer = OkAnswer | ErrorAnswer


@dataclass(frozen=True)
class Request:
    id: int | str
    op: str
    cwd: str | None
    args: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    kb: bool = False


def request_message(
    id: int | str,
    op: str,
    cwd: str | None,
    args: dict[str, Any] | None = None,
    *,
    stream: bool = False,
    kb: bool = False,
) -> RequestMessage:
    message: RequestMessage = {"v": PROTOCOL_VERSION, "id": id, "op": op, "cwd": cwd, "args": args or {}}
    if stream:
        message["stream"] = True
    if kb:
        message["kb"] = True
    return message


def ok_response(id: RequestId, result: object) -> OkAnswer:
    return {"v": PROTOCOL_VERSION, "id": id, "ok": True, "result": result}


def error_response(id: RequestId, error: HallouminateError) -> ErrorAnswer:
    return {
        "v": PROTOCOL_VERSION,
        "id": id,
        "ok": False,
        "error": to_wire(error),
    }


def event_message(id: RequestId, event: str, data: object) -> EventMessage:
    return {"v": PROTOCOL_VERSION, "id": id, "event": event, "data": data}


def request_id_of(message: object) -> int | str | None:
    """The id to answer with, even for a malformed request (``None`` when there is none usable)."""
    if isinstance(message, dict):
        rid = message.get("id")
        if isinstance(rid, (int, str)) and not isinstance(rid, bool):
            return rid
    return None


def parse_request(message: Any) -> Request:
    """Check the envelope of a decoded request; raise ``BadRequest`` naming the first problem."""
    if not isinstance(message, dict):
        raise BadRequest(f"a request must be a msgpack map, got {type(message).__name__}")
    missing = [key for key in ("v", "id", "op", "cwd", "args") if key not in message]
    if missing:
        raise BadRequest(
            f"request is missing field(s) {', '.join(missing)}; expected {{v, id, op, cwd, args}}",
            {"missing": missing},
        )
    if message["v"] != PROTOCOL_VERSION:
        raise BadRequest(
            f"protocol version {message['v']!r} is not supported (this daemon speaks {PROTOCOL_VERSION})",
            {"supported": PROTOCOL_VERSION},
        )
    rid = request_id_of(message)
    if rid is None:
        raise BadRequest("request field 'id' must be an integer or a string")
    op, cwd, args = message["op"], message["cwd"], message["args"]
    if not isinstance(op, str) or not op:
        raise BadRequest("request field 'op' must be a non-empty string")
    if cwd is not None and not isinstance(cwd, str):
        raise BadRequest("request field 'cwd' must be a string or nil")
    if not isinstance(args, dict):
        raise BadRequest("request field 'args' must be a map")
    kb = message.get("kb", False)
    if not isinstance(kb, bool):
        raise BadRequest("request field 'kb' must be a boolean")
    if kb and cwd is None:
        raise BadRequest("request field 'kb' needs a cwd: the knowledge base's directory")
    return Request(id=rid, op=op, cwd=cwd, args=args, stream=message.get("stream") is True, kb=kb)
