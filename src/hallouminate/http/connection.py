"""Deadlines and a cap for the listener's connections, below the ASGI app: uvicorn's h11 protocol waits
for a request's headers and body as long as the client likes, so a client sending a byte a second (a
slowloris) would hold a connection, and with enough of them every file descriptor, forever.

``GuardedH11Protocol`` (uvicorn's ``http`` protocol class, set in http/listener.py) answers 408 and closes
a connection whose request headers are not in ``HEADER_SECS`` after its first byte (or after the
connection opened), or whose body is not in ``BODY_SECS`` after its headers; and answers 503 at once to a
connection opened while ``MAX_CONNECTIONS`` are open. Bodies are the refusal shape of http/guard.py.
"""

from __future__ import annotations

import asyncio
import http
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from hallouminate import testing_hooks
from hallouminate.http.guard import REFUSALS, SERVER_FULL, refusal_body

HEADER_SECS = 10.0
BODY_SECS = 30.0
# Open connections (each a file descriptor and a few KiB): well above 32 busy clients and max_sessions'
# default, well below the daemon's descriptor limit (LanceDB needs its own).
MAX_CONNECTIONS = 512


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read deadline per request and a cap on open connections."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading = ""  # "headers" or "body" while a deadline is armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            self._refuse(
                503,
                "connections",
                f"{MAX_CONNECTIONS} connections are open to this listener, its cap: close idle ones or retry "
                "in a few seconds",
                extra=b"retry-after: 5\r\n",
                code=SERVER_FULL,
            )
            return
        self._arm("headers")

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            # The first byte of a request on a kept-alive connection: its headers' clock starts.
            self._arm("headers")
        super().data_received(data)
        state = self.conn.their_state
        if self._reading == "headers" and state is not h11.IDLE:
            self._disarm()
            if state is h11.SEND_BODY:
                self._arm("body")
        elif self._reading == "body" and state is not h11.SEND_BODY:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, reading: str) -> None:
        self._disarm()
        secs = testing_hooks.http_read_secs(HEADER_SECS if reading == "headers" else BODY_SECS)
        self._reading = reading
        self._deadline = self.loop.call_later(secs, self._late, secs)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._reading = ""

    def _late(self, secs: float) -> None:
        reading = self._reading
        self._deadline = None
        self._reading = ""
        if self.transport.is_closing():
            return
        # While headers are awaited, ``cycle`` is the connection's previous request (or None).
        body = reading == "body" and self.cycle is not None
        if body and self.cycle.response_started:
            # The app answered already (an early refusal) and the client is still trickling: just close.
            self.transport.close()
            return
        if body:
            # The app waits on the body: it sees the client gone, and its late sends go nowhere.
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self._refuse(
            408,
            "slow",
            f"the request's {reading} did not arrive within {secs:g} s: send each request whole, promptly",
        )

    def _refuse(
        self, status: int, problem: str, message: str, *, extra: bytes = b"", code: int = -32600
    ) -> None:
        """Answer on the raw transport (no request may have been parsed) and close."""
        body = refusal_body(problem, message, code)
        phrase = http.HTTPStatus(status).phrase
        head = (
            (
                f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n"
            ).encode()
            + extra
            + b"\r\n"
        )
        self.transport.write(head + body)
        self.transport.close()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
        REFUSALS.refused(problem, status, client, message)
