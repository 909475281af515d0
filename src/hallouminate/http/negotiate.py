"""JSON or SSE as the client's ``Accept`` asks, on every MCP face.

The SDK's session manager answers a request in one mode for all its sessions: SSE (what we run: it carries
``index``'s progress notifications) or JSON, refusing a client that accepts only the other with HTTP 406.
A POST whose ``Accept`` takes ``application/json`` and not ``text/event-stream`` (``curl -H 'Accept:
application/json'``) is handed to the manager as accepting both, and the SSE answer it gets is sent back as
the one JSON-RPC response it carries, ``Content-Type: application/json``: what the SDK's JSON mode sends
(notifications tied to the request, such as progress, have no wire there and are dropped).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hallouminate.errors import Unavailable

_BOTH = b"application/json, text/event-stream"
# Headers of the SSE answer that do not describe a JSON body.
_STREAM_HEADERS = {b"content-type", b"content-length", b"cache-control", b"connection", b"x-accel-buffering"}


def json_only(scope: Scope) -> bool:
    """Whether the request accepts ``application/json`` but not ``text/event-stream`` (the SDK's reading
    of ``Accept``, wildcards included)."""
    accept = b", ".join(value for name, value in scope.get("headers", []) if name == b"accept")
    types = {part.split(b";")[0].strip().lower() for part in accept.split(b",")}
    has_json = bool(types & {b"*/*", b"application/*", b"application/json"})
    has_sse = bool(types & {b"*/*", b"text/*", b"text/event-stream"})
    return has_json and not has_sse


class JsonOrSse:
    """Wraps a face's Streamable HTTP app (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not json_only(scope):
            await self.app(scope, receive, send)
            return
        headers = [(name, value) for name, value in scope["headers"] if name != b"accept"]
        scope = {**scope, "headers": [*headers, (b"accept", _BOTH)]}
        start: Message | None = None
        body: list[bytes] = []

        async def to_json(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers", [])).get(b"content-type", b"")
                if kind.startswith(b"text/event-stream"):
                    start = message  # held: sent with the JSON body below
                    return
            elif message["type"] == "http.response.body" and start is not None:
                body.append(message.get("body", b""))
                if not message.get("more_body", False):
                    for part in _as_json(start, b"".join(body)):
                        await send(part)
                return
            await send(message)

        await self.app(scope, receive, to_json)


def _as_json(start: Message, stream: bytes) -> list[Message]:
    """The JSON-RPC response an SSE body carries, as a JSON answer with the SSE answer's other headers."""
    response = _response(stream)
    status = int(start.get("status", 200))
    if response is None:  # the session ended before the request was answered
        status = 500
        response = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": Unavailable.family.jsonrpc_code,
                "message": "the session ended before the request was answered; send the request again",
            },
        }
    data = json.dumps(response, ensure_ascii=False).encode()
    kept = [(name, value) for name, value in start.get("headers", []) if name.lower() not in _STREAM_HEADERS]
    headers = [*kept, (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": data, "more_body": False},
    ]


def _response(stream: bytes) -> dict[str, Any] | None:
    text = stream.decode("utf-8", errors="replace").replace("\r\n", "\n")
    for event in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:"))
        if not data.strip():
            continue
        try:
            message = json.loads(data)
        except ValueError:
            continue
        if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
            return message
    return None
