"""The MCP stdio transport's front door: every line we are sent is answered or handed to the SDK whole.

The SDK's stdio transport parses each line with pydantic and, when that fails, drops the line without a
word: a request holding a lone surrogate (``"\\ud800"``, which the parser refuses) or a line that is not
JSON was never answered, and the client waited forever. So we read stdin ourselves and check each line
first. A line the SDK would accept goes on to it unchanged; any other gets its JSON-RPC error here, at
once, written through the transport's own output stream (so replies never interleave):

- not JSON: -32700 (``id: null``);
- JSON holding text that is not valid Unicode (a lone surrogate escape, or bytes that are not UTF-8):
  -32602 with ``data.problem = "encoding"`` and the id of the request; nothing reaches the daemon;
- JSON but not a JSON-RPC 2.0 message: -32600, with the request's id when it has a usable one.

A notification (no ``id``) is never answered (JSON-RPC), only reported on stderr like every refused line.

When stdin closes, the gate ends its lines only once every request it handed on has been answered (or
cancelled by the client): the SDK cancels the handlers still running when its input ends, so a client
that writes its requests and closes stdin at once would otherwise lose the answers still in flight.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
from anyio.abc import ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

from hallouminate.errors import BadEncoding
from hallouminate.shim.errors import to_mcp_error

# The exit code of a `serve` whose input held lines but not one JSON-RPC message (docs/cli.md: a caller's
# mistake): whatever launched it is not an MCP client, and exiting 0 would hide that.
NO_MESSAGE_EXIT = 2


@dataclass(frozen=True)
class Refusal:
    """Why a line was not handed to the SDK: the error answered (None for a notification) and a summary."""

    reply: JSONRPCError | None
    summary: str


def _request_id(message: object) -> int | str | None:
    if isinstance(message, dict):
        rid = message.get("id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            return rid
        if isinstance(rid, str) and _bad_text(rid) is None:
            return rid
    return None


def _bad_text(text: str) -> int | None:
    """The character offset of the first lone surrogate in ``text`` (what cannot be UTF-8), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _find_bad_text(value: object, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], int] | None:
    """Where the first string that is not valid Unicode sits (its key path) and its offset, or None."""
    if isinstance(value, str):
        offset = _bad_text(value)
        return None if offset is None else (path, offset)
    if isinstance(value, dict):
        for key, item in value.items():
            offset = _bad_text(key)
            if offset is not None:
                return (*path, key.encode("utf-8", "backslashreplace").decode()), offset
            found = _find_bad_text(item, (*path, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_bad_text(item, (*path, str(index)))
            if found is not None:
                return found
    return None


def _encoding_error(message: dict[str, Any], path: tuple[str, ...], offset: int, utf8: bool) -> BadEncoding:
    what = (
        "a lone surrogate escape such as \\ud800 (surrogate escapes must come in pairs)"
        if utf8
        else "a byte that is not UTF-8"
    )
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    if message.get("method") == "tools/call" and path[:2] == ("params", "arguments") and len(path) > 2:
        param = path[2]
        return BadEncoding(
            f"{tool if isinstance(tool, str) else 'tool'} argument {param!r} is not valid Unicode: "
            f"character {offset} is {what}; send valid UTF-8 text (nothing was done)",
            {"problem": "encoding", "param": param, "offset": offset},
        )
    field = ".".join(path) or "message"
    return BadEncoding(
        f"{field} is not valid Unicode: character {offset} is {what}; send valid UTF-8 text",
        {"problem": "encoding", "field": field, "offset": offset},
    )


# A request's id as the gate remembers it: 1 and "1" are different ids in JSON-RPC.
_Key = tuple[type, int | str]


@dataclass(frozen=True)
class Accepted:
    """A line the SDK will accept: its text, and its request id when it is a request (else None)."""

    text: str
    request: _Key | None = None
    # A notifications/cancelled: the id of the request the client gave up (it gets no answer).
    cancels: _Key | None = None


def _key(rid: object) -> _Key | None:
    return (type(rid), rid) if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


def check_line(line: bytes) -> Accepted | Refusal | None:
    """The text to hand to the SDK, the refusal to answer, or None for a blank line (ignored)."""
    # surrogateescape: bytes that are not UTF-8 become lone surrogates, found and refused below with
    # the request's id, rather than U+FFFD silently written into a page.
    try:
        text, utf8 = line.decode("utf-8"), True
    except UnicodeDecodeError:
        text, utf8 = line.decode("utf-8", errors="surrogateescape"), False
    text = text.rstrip("\r\n")
    if not text.strip():
        return None
    sdk_error: Exception | None = None
    if utf8:
        # The common case costs one parse here (the SDK's own); only a refused line is looked into.
        try:
            parsed = jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:  # pydantic's ValidationError, or anything its JSON parser refuses
            sdk_error = exc
        else:
            if isinstance(parsed, JSONRPCRequest):
                return Accepted(text, request=_key(parsed.id))
            if isinstance(parsed, JSONRPCNotification) and parsed.method == "notifications/cancelled":
                params = parsed.params or {}
                return Accepted(text, cancels=_key(params.get("requestId")))
            return Accepted(text)
    try:
        message = json.loads(text)
    except ValueError as exc:
        reason = f"not JSON ({exc})" if _bad_text(str(exc)) is None else "not JSON"
        error = ErrorData(
            code=PARSE_ERROR,
            message=f"Parse error: the line is {reason}; send one JSON-RPC 2.0 message per line",
        )
        return Refusal(JSONRPCError(jsonrpc="2.0", id=None, error=error), reason)
    is_request = isinstance(message, dict) and "method" in message and "id" in message
    found = _find_bad_text(message)
    if found is not None:
        bad = _encoding_error(message if isinstance(message, dict) else {}, *found, utf8)
        if not is_request:
            return Refusal(None, f"a message without an id that is not valid Unicode: {bad.message}")
        error = to_mcp_error(bad).error
        return Refusal(JSONRPCError(jsonrpc="2.0", id=_request_id(message), error=error), bad.message)
    errors = getattr(sdk_error, "errors", None)
    first = errors()[0] if callable(errors) and errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    detail = f"{where}: {first.get('msg')}" if first else type(sdk_error).__name__
    if isinstance(message, dict) and "id" not in message and "method" in message:
        return Refusal(None, f"a malformed notification ({detail})")
    error = ErrorData(
        code=INVALID_REQUEST,
        message=f"Invalid Request: not a JSON-RPC 2.0 message ({detail}); expected "
        '{"jsonrpc": "2.0", "id": ..., "method": ..., "params": {...}}',
    )
    return Refusal(
        JSONRPCError(jsonrpc="2.0", id=_request_id(message), error=error),
        f"not a JSON-RPC message ({detail})",
    )


class LineGate:
    """An async iterator of the lines the SDK may parse; answers and reports every other line.

    ``replies`` is the transport's output stream, set once it exists (before the first line is read).
    """

    def __init__(self, source: AsyncIterable[bytes], stderr: TextIO | None = None) -> None:
        self._source = source
        self._stderr = stderr
        self.replies: ObjectSendStream[SessionMessage] | None = None
        self.accepted = 0
        self.refused = 0
        self._line = 0
        # Requests handed to the SDK and not answered yet; set when none is.
        self._pending: set[_Key] = set()
        self._drained = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for raw in self._source:
            self._line += 1
            checked = check_line(raw)
            if checked is None:
                continue
            if isinstance(checked, Accepted):
                self.accepted += 1
                if checked.request is not None:
                    self._pending.add(checked.request)
                if checked.cancels is not None:
                    self.answered(checked.cancels)
                yield checked.text
                continue
            self.refused += 1
            answered = f"answered {checked.reply.error.code}" if checked.reply else "not answered"
            self._report(f"line {self._line} refused ({answered}): {checked.summary}")
            if checked.reply is not None and self.replies is not None:
                await self.replies.send(SessionMessage(checked.reply))
        # stdin closed: ending here would make the SDK cancel the handlers still running.
        while self._pending:
            self._drained = anyio.Event()
            await self._drained.wait()

    def answered(self, key: _Key | None) -> None:
        """The request ``key`` was answered (or cancelled): it no longer holds the gate open."""
        if key is not None:
            self._pending.discard(key)
            if not self._pending:
                self._drained.set()

    def watch(self, replies: ObjectSendStream[SessionMessage]) -> _Answers:
        """``replies`` (the transport's output stream), telling the gate of each answer sent through it."""
        self.replies = replies
        return _Answers(replies, self)

    def _report(self, text: str) -> None:
        out = self._stderr or sys.stderr
        with contextlib.suppress(OSError, ValueError):  # stderr closed: the reply still went out
            print(f"hallouminate serve: {text}", file=out, flush=True)

    def exit_code(self) -> int:
        """0, or ``NO_MESSAGE_EXIT`` (said on stderr) when lines came and none was a JSON-RPC message."""
        if self.accepted == 0 and self.refused > 0:
            self._report(
                f"stdin closed after {self.refused} line(s), none of them a JSON-RPC message: this is an MCP "
                "stdio server; an MCP client sends one JSON-RPC 2.0 message per line (see docs/mcp.md)"
            )
            return NO_MESSAGE_EXIT
        return 0


class _Answers:
    """The SDK's output stream, telling the gate which requests have had their answer."""

    def __init__(self, stream: ObjectSendStream[SessionMessage], gate: LineGate) -> None:
        self._stream = stream
        self._gate = gate

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        try:
            await self._stream.send(item)
        finally:  # sent, or it never can be (stdout gone): either way nothing is left to wait for
            if isinstance(message, (JSONRPCResponse, JSONRPCError)):
                self._gate.answered(_key(message.id))

    async def __aenter__(self) -> _Answers:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # aclose, send_nowait, clone, ...: the stream's own
        return getattr(self._stream, name)
