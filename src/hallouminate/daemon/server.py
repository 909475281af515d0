"""The daemon's socket server: connections, framing, concurrency, idle exit and graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import socket
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hallouminate import testing_hooks, xdg
from hallouminate.daemon.dispatch import Dispatcher
from hallouminate.daemon.logs import setup_logging
from hallouminate.daemon.runtime import Runtime, store_location
from hallouminate.errors import (
    AnswerTooLarge,
    BadEncoding,
    Bug,
    Forbidden,
    HallouminateError,
    Unavailable,
)
from hallouminate.protocol import (
    FrameNotUnicode,
    FrameStalled,
    FrameTooLarge,
    decode_body,
    encode_frame,
    error_response,
    event_message,
    read_frame,
)
from hallouminate.protocol.messages import Answer, EventMessage, request_id_of
from hallouminate.protocol.results import ProgressEvent
from hallouminate.socket_guard import SocketGuard

if TYPE_CHECKING:
    from hallouminate.config.types import Settings
    from hallouminate.storage.lease import WriterLease

log = logging.getLogger("hallouminate.daemon")

MAX_CONNECTIONS = 64
# Requests of one connection being handled at once. Past it the daemon stops reading that connection until
# one is answered: a client pipelining requests without reading the answers would otherwise make the daemon
# hold a task and an answer per request, without bound (measured: ~5 KB each, 400 MB after 80k requests).
MAX_IN_FLIGHT_PER_CONNECTION = 32
DRAIN_TIMEOUT = 60.0
# A frame begun must be finished within this time: a half-sent frame would otherwise pin a connection
# slot (and its buffer) forever.
FRAME_STALL_SECS = 10.0
_PEERCRED = struct.Struct("3i")


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    sock = writer.get_extra_info("socket")
    if sock is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    except OSError:
        return None
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


class DaemonServer:
    def __init__(self, runtime: Runtime, guard: SocketGuard, idle_exit_secs: float) -> None:
        self.runtime = runtime
        self.guard = guard
        self.idle_exit_secs = idle_exit_secs
        self.dispatcher = Dispatcher(runtime, self)
        self.started = time.time()
        self.connections = 0
        self.in_flight: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._idle_handle: asyncio.TimerHandle | None = None
        self._server: asyncio.base_events.Server | None = None
        # The HTTP listener (http/listener.py), while [http] enabled; why it is not listening, when it
        # could not start.
        self.http: Any = None
        self.http_error: str | None = None
        self._http_lock = asyncio.Lock()

    @property
    def socket_path(self) -> Path:
        return self.guard.path

    @property
    def in_flight_count(self) -> int:
        return len(self.in_flight)

    @property
    def http_url(self) -> str | None:
        return self.http.url if self.http is not None else None

    # -- lifecycle ---------------------------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            log.info("stopping: %s", reason)
            self._stop.set()

    def _arm_idle_timer(self) -> None:
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        # A daemon whose HTTP listener is up does not exit on idle: its URL must stay reachable, and
        # nothing would start it again for an HTTP client (docs/daemon.md, "Idle exit").
        if self.connections == 0 and self.idle_exit_secs > 0 and self.http is None:
            loop = asyncio.get_running_loop()
            self._idle_handle = loop.call_later(
                self.idle_exit_secs, self.request_stop, f"idle for {self.idle_exit_secs:g} s"
            )

    async def serve(self) -> None:
        assert self.guard.sock is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop, f"signal {sig.name}")
        if _early_signal is not None:
            self.request_stop(f"signal {_early_signal.name} (before the loop started)")
        self._server = await asyncio.start_unix_server(self._on_connection, sock=self.guard.sock)
        log.info("daemon %s listening on %s (pid %d)", self.runtime.version, self.guard.path, os.getpid())
        self.runtime.start_background_load()
        await self.start_http()
        # Armed once the listener is up (or failed): its start-up must not count as idle time.
        self._arm_idle_timer()
        await self._stop.wait()
        # Drain: stop accepting, let in-flight requests finish, then release the socket and the lock.
        self._server.close()
        await self.stop_http()
        if self.in_flight:
            log.info("draining %d in-flight request(s)", len(self.in_flight))
            await asyncio.wait(set(self.in_flight), timeout=DRAIN_TIMEOUT)
        # The runtime closed (a writer's lease released) and "stopped" logged before the lock goes:
        # `daemon stop` returns when the lock is released, and by then the daemon has stopped.
        await self.runtime.close()
        log.info("stopped")
        self.guard.release()

    async def start_http(self) -> None:
        """Start the HTTP listener when ``[http] enabled``; a listener that cannot start is logged (and
        reported by ``status``) and the socket keeps serving."""
        from hallouminate.http.endpoint import remove_stale_endpoint

        remove_stale_endpoint(self.guard.path)
        settings = self.runtime.settings.http
        if not settings.enabled:
            return
        # Only now: the HTTP stack costs a daemon that serves the socket alone nothing (http/endpoint.py).
        from hallouminate.http.listener import HttpListener

        # Held while it starts: an `http_reload` meanwhile waits for this start instead of racing it.
        async with self._http_lock:
            listener = HttpListener(self.dispatcher, self.guard.path)
            try:
                await listener.start(settings, settings.root or Path.home())
            except Exception as exc:
                self.http_error = exc.message if isinstance(exc, HallouminateError) else f"{exc}"
                log.error("the HTTP listener did not start: %s", self.http_error)
                return
            self.http = listener

    async def stop_http(self) -> None:
        async with self._http_lock:
            if self.http is not None:
                await self.http.stop()
                self.http = None

    async def reload_http(self) -> str | None:
        """Apply the baseline config's ``[http]`` as it is now (``http enable``, ``port set``): stop, start
        or restart the listener; its URL, or None when disabled. A new listener that cannot start leaves
        the one running (if any) serving, and the error says so."""
        from hallouminate.config import load_baseline
        from hallouminate.http.listener import HttpListener

        async with self._http_lock:
            if self._stop.is_set():  # stop_http has run or is waiting for the lock: start nothing
                raise Unavailable("the daemon is shutting down; run the command again once it has stopped")
            settings = (await asyncio.to_thread(load_baseline)).settings.http
            root = settings.root or Path.home()
            old = self.http
            if not settings.enabled:
                if old is not None:
                    await old.stop()
                self.http, self.http_error = None, None
            elif old is None or not old.serves(settings, root):
                # The same address must be freed first; another one is taken before the old is let go.
                same = old is not None and (old.settings.host, old.settings.port) == (
                    settings.host,
                    settings.port,
                )
                if same:
                    await old.stop()
                    self.http = old = None
                listener = HttpListener(self.dispatcher, self.guard.path)
                try:
                    await listener.start(settings, root)
                except HallouminateError as exc:
                    log.error("the HTTP listener did not start: %s", exc.message)
                    if old is None:  # nothing listens now: `status` says why
                        self.http_error = exc.message
                    else:
                        raise type(exc)(
                            f"{exc.message} (the listener keeps serving on {old.url})", exc.data
                        ) from exc
                    raise
                if old is not None:
                    await old.stop()
                self.http, self.http_error = listener, None
            self._arm_idle_timer()
            return self.http_url

    # -- connections -------------------------------------------------------------------------------
    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._client(reader, writer)
        except asyncio.CancelledError:
            # A client still connected when the daemon stops: the loop's teardown cancels its handler,
            # wherever it waits (a read, closing the writer). The connection just ends; re-raising would
            # have asyncio log a CancelledError traceback for each such client.
            if not self._stop.is_set():
                raise

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._arm_idle_timer()
        write_lock = asyncio.Lock()
        try:
            uid = peer_uid(writer)
            if uid is None or uid != os.getuid():
                log.warning("refused a connection from uid %s", uid)
                await self._send(
                    writer,
                    write_lock,
                    error_response(
                        None, Forbidden("connection refused: the daemon serves its own user only")
                    ),
                )
                return
            if self.connections > MAX_CONNECTIONS or self._stop.is_set():
                why = "shutting down" if self._stop.is_set() else f"{MAX_CONNECTIONS} connections open"
                await self._send(
                    writer,
                    write_lock,
                    error_response(None, Unavailable(f"daemon busy ({why}); retry shortly")),
                )
                return
            await self._serve_connection(reader, writer, write_lock)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # a bug in one connection must never take the daemon down
            log.exception("connection handler failed")
        finally:
            self.connections -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._arm_idle_timer()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, write_lock: asyncio.Lock
    ) -> None:
        slots = asyncio.Semaphore(MAX_IN_FLIGHT_PER_CONNECTION)
        while not self._stop.is_set():
            # Backpressure, not an error: the next frame waits in the socket until a slot frees up.
            await slots.acquire()
            try:
                body = await read_frame(
                    reader, stall_timeout=testing_hooks.frame_stall_secs(FRAME_STALL_SECS)
                )
            except (FrameTooLarge, FrameStalled) as exc:
                # The body was not read, so the stream cannot be resynchronised: answer, then hang up.
                await self._send(writer, write_lock, error_response(None, exc))
                return
            if body is None:
                return
            try:
                message = decode_body(body)
            except HallouminateError as exc:
                # Answered under the request's id when one could be read, so its caller is not left waiting.
                rid = exc.request_id if isinstance(exc, FrameNotUnicode) else None
                await self._send(writer, write_lock, error_response(rid, exc))
                slots.release()
                continue
            task = asyncio.get_running_loop().create_task(self._handle(message, writer, write_lock))
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
            # Freed once the answer is written (or the task fails or is cancelled).
            task.add_done_callback(lambda _task: slots.release())

    async def _handle(self, message: Any, writer: asyncio.StreamWriter, write_lock: asyncio.Lock) -> None:
        rid = request_id_of(message)
        loop = asyncio.get_running_loop()

        def emit(event: str, data: ProgressEvent) -> None:
            # Called from worker threads; frames are written on the loop.
            loop.call_soon_threadsafe(
                lambda: loop.create_task(self._send(writer, write_lock, event_message(rid, event, data)))
            )

        response = await self.dispatcher.handle(message, emit)
        await self._send(writer, write_lock, response)

    async def _send(
        self, writer: asyncio.StreamWriter, lock: asyncio.Lock, message: Answer | EventMessage
    ) -> None:
        try:
            frame = encode_frame(message)
        except BadEncoding as exc:  # text we produced that has no UTF-8 form: our fault, still answered
            frame = encode_frame(
                error_response(message.get("id"), Bug(f"the answer could not be sent: {exc.message}"))
            )
        except HallouminateError as exc:
            frame = encode_frame(
                error_response(
                    message.get("id"),
                    AnswerTooLarge(
                        f"the answer was too large to send: {exc.message}; narrow the request", exc.data
                    ),
                )
            )
        async with lock:
            if writer.is_closing():
                return
            with contextlib.suppress(ConnectionError):
                writer.write(frame)
                await writer.drain()


_early_signal: signal.Signals | None = None


def _remember_early_signal(signum: int, _frame: object) -> None:
    global _early_signal
    _early_signal = signal.Signals(signum)


def run(socket_path: Path | None = None, *, read_only: bool = False) -> int:
    """Entry point of ``hallouminate daemon run``: returns the process exit code. ``read_only``: as
    ``[store] mode = "read-only"`` (daemon/read_only.py)."""
    from hallouminate.config import load_baseline

    # The socket accepts connections (backlog) before the event loop installs its handlers; a
    # SIGTERM in that window must still mean a clean stop that removes the socket, not a kill.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _remember_early_signal)
    # A write past RLIMIT_FSIZE must fail with EFBIG (reported as "disk full or file too large") rather
    # than kill the daemon. CPython ignores SIGXFSZ already; said here so it never depends on that.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # Before any thread allocates: large freed blocks go back to the system (ADR 0057).
    from hallouminate.storage import allocator

    allocator.tune()

    setup_logging(xdg.log_file())
    try:
        resolved = load_baseline()
    except HallouminateError as exc:
        log.error("cannot start: %s", exc.message)
        print(f"hallouminate daemon: {exc.message}", flush=True)
        return exc.family.exit_code
    settings = resolved.settings
    if read_only:
        settings = dataclasses.replace(settings, store_mode="read-only")
    # The lease before the socket: a daemon refused as a second writer must never have listened (a client
    # would connect to it, then lose the connection when it exits).
    try:
        lease = _writer_lease(settings)
    except HallouminateError as exc:  # another writer holds the store, or its bucket does not answer
        log.error("cannot start: %s", exc.message)
        print(f"hallouminate daemon: {exc.message}", flush=True)
        return exc.family.exit_code
    guard = SocketGuard(socket_path)
    try:
        guard.acquire()
    except HallouminateError as exc:
        log.error("%s", exc.message)
        print(f"hallouminate daemon: {exc.message}", flush=True)
        if lease is not None:
            with contextlib.suppress(Exception):  # the daemon already on this socket writes the store
                lease.release()
        return exc.family.exit_code
    runtime = Runtime(settings, lease)
    server = DaemonServer(runtime, guard, settings.idle_exit_secs)
    try:
        import uvloop

        uvloop.run(server.serve())
    finally:
        guard.release()
    logging.shutdown()
    # In-flight requests are drained by now. Skip interpreter teardown: a model still loading in a
    # native thread would abort the process ("terminate called without an active exception").
    os._exit(0)


def _writer_lease(settings: Settings) -> WriterLease | None:
    """The writer's lease on an object store, taken before this daemon serves anything: exactly one daemon
    writes a store (ADR 0063), and a second one refuses to start naming the holder. None for a local
    store (one machine: the daemon's own socket lock is the rule there) or a read-only daemon."""
    if settings.store_uri is None or settings.store_mode == "read-only":
        return None
    from hallouminate.storage.lease import WriterLease

    lease = WriterLease.for_location(store_location(settings), settings.store_lease_secs)
    lease.acquire()
    return lease
