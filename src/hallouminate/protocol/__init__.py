"""The wire format between the daemon and its clients (the MCP shim and the CLI).

A frame is a 4-byte big-endian length followed by a msgpack map. Requests are
``{v, id, op, cwd, args}`` (plus ``stream: true`` to receive progress events); the daemon answers each
with ``{v, id, ok: true, result}`` or ``{v, id, ok: false, error: {kind, message, data}}``, and may send
``{v, id, event, data}`` frames before the answer of a streaming request. Several requests may be in flight
on one connection; answers carry the request's ``id``.
"""

from hallouminate.protocol.framing import (
    HEADER,
    MAX_FRAME,
    FrameError,
    FrameNotUnicode,
    FrameStalled,
    FrameTooLarge,
    decode_body,
    encode_frame,
    read_frame,
)
from hallouminate.protocol.messages import (
    ERROR_KINDS,
    PROTOCOL_VERSION,
    Request,
    error_response,
    event_message,
    ok_response,
    parse_request,
    request_message,
)

__all__ = [
    "ERROR_KINDS",
    "HEADER",
    "MAX_FRAME",
    "PROTOCOL_VERSION",
    "FrameError",
    "FrameNotUnicode",
    "FrameStalled",
    "FrameTooLarge",
    "Request",
    "decode_body",
    "encode_frame",
    "error_response",
    "event_message",
    "ok_response",
    "parse_request",
    "read_frame",
    "request_message",
]
