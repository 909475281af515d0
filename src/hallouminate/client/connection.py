"""A client connection to the daemon that carries several requests at once."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hallouminate import xdg
from hallouminate.errors import HallouminateError, Unavailable, from_wire
from hallouminate.protocol import decode_body, encode_frame, read_frame, request_message
from hallouminate.protocol.results import ProgressEvent


class DaemonUnavailable(Unavailable):
    """No daemon answers on the socket (or it went away mid-request)."""


def unavailable(socket: Path, problem: str) -> DaemonUnavailable:
    """The daemon cannot be reached: ``problem`` says why and what to do; the message and ``data`` add
    the socket and the daemon's log, where a user looks next (docs/mcp.md promises both)."""
    log = xdg.log_file()
    where = f"daemon log {log}" if str(socket) in problem else f"socket {socket}; daemon log {log}"
    return DaemonUnavailable(f"{problem} ({where})", {"socket": str(socket), "log": str(log)})


def _lost(socket: Path, how: str) -> DaemonUnavailable:
    return unavailable(
        socket,
        f"the daemon went away before answering ({how}): it exited or crashed; send the request again, a "
        "new daemon starts on the next call (a write may or may not have been applied: read before "
        "repeating it)",
    )


# Receives the data of each progress event (an index run's ``ProgressEvent``) as the daemon sends it.
ProgressCallback = Callable[[ProgressEvent], None]


class DaemonConnection:
    """One Unix-socket connection; answers are matched to requests by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: Path) -> None:
        self._reader = reader
        self._writer = writer
        self.path = path
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[int, ProgressCallback] = {}
        self._write_lock = asyncio.Lock()
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())
        self._closed_error: HallouminateError | None = None

    @classmethod
    async def open(cls, path: Path, *, timeout: float = 2.0) -> DaemonConnection:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), timeout)
        except (OSError, TimeoutError) as exc:
            raise unavailable(path, f"no daemon answers on {path}: {exc or type(exc).__name__}") from None
        return cls(reader, writer, path)

    @property
    def closed(self) -> bool:
        return self._closed_error is not None or self._reader_task.done()

    async def call(
        self,
        op: str,
        cwd: str | None = None,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        kb: bool = False,
    ) -> Any:
        """Send one request and wait for its answer; raise the daemon's error as our own type.

        ``kb``: ``cwd`` is itself a knowledge base, served as one corpus ``kb`` (``serve --kb-path``)."""
        if self._closed_error is not None:
            raise self._closed_error
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        if on_progress is not None:
            self._progress[rid] = on_progress
        try:
            frame = encode_frame(request_message(rid, op, cwd, args, stream=on_progress is not None, kb=kb))
            async with self._write_lock:
                self._writer.write(frame)
                await self._writer.drain()
            answer = await asyncio.wait_for(future, timeout)
        except (ConnectionError, BrokenPipeError) as exc:
            raise _lost(self.path, f"connection lost: {exc}") from None
        finally:
            self._pending.pop(rid, None)
            self._progress.pop(rid, None)
        if answer.get("ok"):
            return answer.get("result")
        error = answer.get("error")
        raise from_wire(error if isinstance(error, dict) else {})

    async def _read_loop(self) -> None:
        error: HallouminateError = _lost(self.path, "it closed the connection")
        try:
            while True:
                body = await read_frame(self._reader)
                if body is None:
                    break
                message = decode_body(body)
                if not isinstance(message, dict):
                    continue
                rid = message.get("id")
                if "event" in message:
                    callback = self._progress.get(rid)  # type: ignore[arg-type]
                    if callback is not None and isinstance(message.get("data"), dict):
                        callback(message["data"])
                    continue
                future = self._pending.get(rid)  # type: ignore[arg-type]
                if future is not None and not future.done():
                    future.set_result(message)
        except (OSError, asyncio.IncompleteReadError) as exc:
            error = _lost(self.path, f"connection lost: {exc}")
        except HallouminateError as exc:
            error = exc
        finally:
            self._closed_error = error
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)

    async def close(self) -> None:
        self._reader_task.cancel()
        self._writer.close()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            await self._writer.wait_closed()

    async def __aenter__(self) -> DaemonConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
