"""The listener's front door, before any route: Host and Origin (DNS-rebinding defence), the bearer token,
the body cap; and one shape for every refusal, ours and the MCP SDK's. Every refusal is an HTTP 4xx (or
503) with a JSON body saying what was wrong and how to fix it, and is logged, at most one line per problem
per ``LOG_EVERY_SECS`` (docs/http.md, "Security model").

The body shape is a JSON-RPC error, so an MCP client shows our message as the call's error::

    {"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "problem": "host", "message": "..."}}
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hallouminate.config.types import HttpSettings
from hallouminate.errors import ConfigError, Unavailable
from hallouminate.http.ui import PAGE_FILES

log = logging.getLogger("hallouminate.http")

# JSON-RPC codes of the refusal body: INVALID_REQUEST for what the caller can fix, a transient fault's
# code (errors.py, the one mapping) for a full server (the MCP SDK's choices for the same refusals).
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
SERVER_FULL = Unavailable.family.jsonrpc_code
LOG_EVERY_SECS = 10.0
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
# CORS for a page on an allowed origin: what it may send and read (the MCP transport's own headers).
CORS_ALLOW_HEADERS = (
    "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id"
)
CORS_EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version"
# Served without the token: /healthz, so that a supervisor needs no secret (it answers `{"ok": true}` and
# nothing else); the operator page's own files, which hold no data and which a browser fetches on
# navigation, when it cannot send a header (the page then asks for the token: http/ui.py).
TOKEN_FREE = frozenset({"/healthz", *PAGE_FILES})


def refusal_body(problem: str, message: str, code: int = INVALID_REQUEST) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "problem": problem, "message": message}}
    ).encode()


class RefusalLog:
    """One log line per refusal, but at most one per problem every ``LOG_EVERY_SECS``: a client hammering
    the listener must not fill the daemon's log. The next line says how many were not logged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._muted: dict[str, int] = {}

    def refused(self, problem: str, status: int, client: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(problem, -LOG_EVERY_SECS) < LOG_EVERY_SECS:
                self._muted[problem] = self._muted.get(problem, 0) + 1
                return
            self._last[problem] = now
            muted = self._muted.pop(problem, 0)
        more = f" (and {muted} more {problem!r} refusals not logged)" if muted else ""
        log.warning("HTTP %d refused (%s) from %s: %s%s", status, problem, client, message, more)


REFUSALS = RefusalLog()


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def refuse(
    scope: Scope,
    send: Send,
    status: int,
    problem: str,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    headers: Iterable[tuple[bytes, bytes]] = (),
    close: bool = False,
) -> None:
    """Answer ``status`` with the refusal body, and log it."""
    body = refusal_body(problem, message, code)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    if close:
        # The rest of the request (an oversized body) is not read: the connection ends with the answer.
        raw.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
    REFUSALS.refused(problem, status, _client(scope), message)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def read_token(settings: HttpSettings) -> str | None:
    """The bearer token from ``[http] token_file`` (surrounding whitespace dropped), or None when unset.
    A token file that cannot be read or is empty stops the listener from starting: it never serves open
    when a token was asked for."""
    if settings.token_file is None:
        if not is_loopback(settings.host):
            raise ConfigError(
                f"[http] host = {settings.host!r} is not a loopback address, so the listener needs a token: "
                "set [http] token_file to a file holding one (e.g. the output of `openssl rand -hex 32`)"
            )
        return None
    try:
        token = settings.token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"[http] token_file {settings.token_file} cannot be read ({exc})") from exc
    if not token:
        raise ConfigError(f"[http] token_file {settings.token_file} is empty: put the token in it")
    return token


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


class Guard:
    """ASGI middleware wrapping the whole app: the checks of every request, in order Host (421), Origin
    (403), token (401), body cap (413); then the app, whose refusals are rewritten to our shape."""

    def __init__(self, app: ASGIApp, settings: HttpSettings) -> None:
        self.app = app
        self.settings = settings
        token = read_token(settings)
        self.token = token.encode() if token is not None else None
        self.allowed_origins = frozenset(origin.lower().rstrip("/") for origin in settings.allowed_origins)
        host = settings.host.lower()
        self.wildcard = host in ("0.0.0.0", "::")
        names = {*LOOPBACK_NAMES, _bracket(host)}
        if self.wildcard:
            # Bound to every address: the names this machine answers to, besides the address dialled.
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.host_names = frozenset(names)
        # We log every refusal (rate-limited); the SDK's own line per session opened, refused or unknown
        # would flood the daemon's log under 1,000 abandoned sessions. Its errors still reach the log.
        for name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
            logging.getLogger(name).setLevel(logging.ERROR)

    def _allowed_hosts(self, scope: Scope) -> set[str]:
        server = scope.get("server")
        port = server[1] if server else None
        names = set(self.host_names)
        if self.wildcard and server:
            names.add(_bracket(str(server[0])))
        allowed = {f"{name}:{port}" for name in names}
        if port == 80:
            allowed |= names
        return allowed

    def _own_origins(self, scope: Scope) -> set[str]:
        return {f"http://{host}" for host in self._allowed_hosts(scope)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = (_header(scope, b"host") or "").lower()
        if host not in self._allowed_hosts(scope):
            expected = sorted(self._allowed_hosts(scope))
            await refuse(
                scope,
                send,
                421,
                "host",
                f"Host {host or '(none)'!r} is not this listener (a DNS-rebinding defence): call it as "
                f"{', '.join(expected)}",
            )
            return
        origin = _header(scope, b"origin")
        cors_origin = None
        if origin is not None:
            origin = origin.lower().rstrip("/")
            if origin in self.allowed_origins:
                cors_origin = origin
            elif origin not in self._own_origins(scope):
                await refuse(
                    scope,
                    send,
                    403,
                    "origin",
                    f"Origin {origin!r} may not call this listener (a page on another site): add it to "
                    "[http] allowed_origins in the baseline config if it should",
                )
                return
        if cors_origin is not None and scope["method"] == "OPTIONS":
            await _preflight(send, cors_origin)
            return
        if self.token is not None and scope["path"] not in TOKEN_FREE and not self._authorized(scope):
            given = _header(scope, b"authorization") is not None
            await refuse(
                scope,
                send,
                401,
                "token",
                (
                    "the bearer token is wrong: send the one in [http] token_file"
                    if given
                    else "this listener needs a bearer token: send `Authorization: Bearer <the token in "
                    "[http] token_file>`"
                ),
                headers=[(b"www-authenticate", b'Bearer error="invalid_token"' if given else b"Bearer")],
            )
            return
        app_send = _Rewriter(scope, send, self.settings, cors_origin).send
        await self._within_cap(scope, receive, send, app_send)

    def _authorized(self, scope: Scope) -> bool:
        value = _header(scope, b"authorization") or ""
        scheme, _, token = value.partition(" ")
        assert self.token is not None
        # Constant time: how much of a guess matched must not show in the answer's timing.
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.token)

    async def _within_cap(self, scope: Scope, receive: Receive, send: Send, app_send: Send) -> None:
        """The app, under the body cap: ``send`` answers our refusal, ``app_send`` carries the app's."""
        cap = self.settings.max_body_bytes
        declared = _header(scope, b"content-length")
        too_large = (
            f"the request body is over the {cap}-byte cap ([http] max_body_bytes): send less (one call per "
            "request), or raise the cap in the baseline config"
        )
        if declared is not None and declared.strip().isdigit() and int(declared) > cap:
            # Refused on the header alone: not one byte of the body is read.
            await refuse(scope, send, 413, "body", too_large, close=True)
            return
        seen = 0
        refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    # A chunked body (no Content-Length) passing the cap: answered now, the rest unread,
                    # and the app sees the client gone.
                    refused = True
                    await refuse(scope, send, 413, "body", too_large, close=True)
                    return {"type": "http.disconnect"}
            return message

        async def quiet(message: Message) -> None:
            if not refused:
                await app_send(message)

        await self.app(scope, counted, quiet)


async def _preflight(send: Send, origin: str) -> None:
    headers = [
        (b"access-control-allow-origin", origin.encode()),
        (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
        (b"access-control-allow-headers", CORS_ALLOW_HEADERS.encode()),
        (b"access-control-max-age", b"600"),
        (b"vary", b"Origin"),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _explain(status: int, text: str, settings: HttpSettings) -> tuple[str, str, int]:
    """The problem and the message (what was wrong, how to fix it) of a refusal the app answered, from
    its status and its own words (the MCP SDK's or Starlette's)."""
    lowered = text.lower()
    if status == 503 and "session" in lowered:
        return (
            "sessions",
            f"{settings.max_sessions} sessions are open, the cap ([http] max_sessions): end the sessions you "
            f"no longer need (DELETE with their Mcp-Session-Id) or retry later: a session idle for "
            f"{settings.session_idle_secs:g} s ([http] session_idle_secs) expires",
            SERVER_FULL,
        )
    if status == 400 and "missing session id" in lowered:
        return (
            "session",
            "this request needs the Mcp-Session-Id header that the answer to initialize carried: send "
            "initialize first (without the header), then that id with every request",
            INVALID_REQUEST,
        )
    if status == 404 and "session" in lowered:
        return (
            "session",
            "no open session has this Mcp-Session-Id: it expired (idle for "
            f"{settings.session_idle_secs:g} s, [http] session_idle_secs), was ended, or never existed; "
            "send initialize again without the header for a new session",
            INVALID_REQUEST,
        )
    if "parse error" in lowered:
        return (
            "json",
            f"the body is not valid JSON ({_detail(text)}): send one JSON-RPC message (or a batch) as JSON",
            PARSE_ERROR,
        )
    if "validation error" in lowered:
        return (
            "jsonrpc",
            f"the body is JSON but not a JSON-RPC message ({_detail(text)}): send "
            '{"jsonrpc": "2.0", "id": ..., "method": ..., "params": ...}',
            INVALID_REQUEST,
        )
    if "content-type" in lowered or status == 415:
        return ("content-type", "send the body with `Content-Type: application/json`", INVALID_REQUEST)
    if status == 406:
        return (
            "accept",
            "send `Accept: application/json, text/event-stream` (the MCP client may answer either way)",
            INVALID_REQUEST,
        )
    if status == 413:
        return (
            "body",
            f"the request body is over the {settings.max_body_bytes}-byte cap ([http] max_body_bytes)",
            INVALID_REQUEST,
        )
    if status == 405:
        return ("method", f"this endpoint does not take that method ({_detail(text)})", INVALID_REQUEST)
    if status == 404:
        return (
            "path",
            "no such endpoint: see docs/http.md (/mcp, /kuradb/mcp, /api/search, /ui, /healthz)",
            INVALID_REQUEST,
        )
    return ("request", _detail(text) or f"refused with HTTP {status}", INVALID_REQUEST)


def _detail(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _jsonrpc_message(body: bytes) -> str | None:
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("error"), dict) and data.get("jsonrpc") == "2.0":
        message = data["error"].get("message")
        return message if isinstance(message, str) else None
    return None


class _Rewriter:
    """The app's sends, with its refusals put in our shape: a 4xx or 503 that is plain text (Starlette's,
    some of the SDK's) or a JSON-RPC error without our ``problem`` (the SDK's, on an MCP endpoint). JSON
    that is neither (the REST search's own 400s) passes untouched. Adds CORS headers for an allowed origin."""

    def __init__(self, scope: Scope, send: Send, settings: HttpSettings, cors_origin: str | None) -> None:
        self._scope = scope
        self._send = send
        self._settings = settings
        self._cors = cors_origin
        self._start: Message | None = None
        self._body = bytearray()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            if self._cors is not None:
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", []),
                        (b"access-control-allow-origin", self._cors.encode()),
                        (b"access-control-expose-headers", CORS_EXPOSE_HEADERS.encode()),
                        (b"vary", b"Origin"),
                    ],
                }
            status = message["status"]
            # Refusals only: a 500 is a fault of ours, reported as such, not a request to fix.
            if 400 <= status < 500 or status == 503:
                self._start = message  # held until its body is in
                return
            await self._send(message)
            return
        if self._start is None or message["type"] != "http.response.body":
            await self._send(message)
            return
        self._body += message.get("body", b"")
        if message.get("more_body", False):
            return
        await self._rewrite(self._start, bytes(self._body))
        self._start = None

    async def _rewrite(self, start: Message, body: bytes) -> None:
        status = start["status"]
        headers = [
            (k, v)
            for k, v in start.get("headers", [])
            if k.lower() not in (b"content-type", b"content-length")
        ]
        content_type = dict((k.lower(), v) for k, v in start.get("headers", [])).get(b"content-type", b"")
        text = _jsonrpc_message(body)
        if text is None and content_type.startswith(b"application/json"):
            # JSON of the route's own (the REST search's 400s): already says why, in its documented shape.
            await self._send(start)
            await self._send({"type": "http.response.body", "body": body})
            return
        if text is None:
            text = body.decode("utf-8", "replace")
        problem, explained, code = _explain(status, text, self._settings)
        if status == 503:
            headers.append((b"retry-after", b"5"))
        await refuse(self._scope, self._send, status, problem, explained, code=code, headers=headers)
