"""Route each request to its operation, after checking the envelope and the arguments."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from hallouminate import testing_hooks
from hallouminate.config.types import Where
from hallouminate.errors import BadRequest, Bug, HallouminateError
from hallouminate.protocol import PROTOCOL_VERSION, Request, error_response, ok_response, parse_request
from hallouminate.protocol.arguments import (
    AddMarkdownArgs,
    BacklinksArgs,
    BestPracticeArgs,
    ConnectionGraphArgs,
    CorpusArgs,
    DeleteMarkdownArgs,
    GetDocumentArgs,
    GroundArgs,
    IndexArgs,
    ListFilesArgs,
    MoveMarkdownArgs,
    ReadMarkdownArgs,
    ReadResourceArgs,
    SearchArgs,
    SearchRagArgs,
)
from hallouminate.protocol.cwd import canonical_cwd
from hallouminate.protocol.messages import Answer, request_id_of
from hallouminate.protocol.results import (
    AddMarkdownResult,
    BacklinksResult,
    BestPracticeResult,
    ConnectionGraphResult,
    CorpusStatsResult,
    DeleteMarkdownResult,
    GetDocumentResult,
    GroundResult,
    HttpReloadResult,
    IndexResult,
    ListCorporaResult,
    ListFilesResult,
    ListTopicsResult,
    ListTreeResult,
    MoveMarkdownResult,
    OpResult,
    PingResult,
    ProgressEvent,
    ReadMarkdownResult,
    ReadResourceResult,
    ResourceGroupsResult,
    SearchRagResult,
    SearchResult,
    ShutdownResult,
    StatusResult,
)
from hallouminate.protocol.schemas import ARGS
from hallouminate.protocol.validation import validate_args

if TYPE_CHECKING:
    from hallouminate.daemon.runtime import Runtime

log = logging.getLogger("hallouminate.daemon")

Emit = Callable[[str, ProgressEvent], None]
Handler = Callable[[Request, Emit | None], Awaitable[OpResult]]


class Server(Protocol):
    """What the dispatcher needs of the socket server (``daemon/server.py``'s ``DaemonServer``).

    Declared here so that the dispatcher does not import the server, which imports the dispatcher.
    """

    @property
    def socket_path(self) -> Path: ...

    @property
    def started(self) -> float: ...

    @property
    def connections(self) -> int: ...

    @property
    def in_flight_count(self) -> int: ...

    @property
    def idle_exit_secs(self) -> float: ...

    @property
    def http_url(self) -> str | None: ...

    @property
    def http_error(self) -> str | None: ...

    async def reload_http(self) -> str | None: ...

    def request_stop(self, reason: str) -> None: ...


class Dispatcher:
    def __init__(self, runtime: Runtime, server: Server) -> None:
        self.runtime = runtime
        self.server = server
        self.ops: dict[str, Handler] = {
            "ping": self.ping,
            "status": self.status,
            "shutdown": self.shutdown,
            "http_reload": self.http_reload,
            "index": self.index,
            "ground": self.ground,
            "search": self.search,
            "search_rag": self.search_rag,
            "list_corpora": self.list_corpora,
            "list_files": self.browse,
            "list_tree": self.browse,
            "read_markdown": self.browse,
            "backlinks": self.browse,
            "corpus_stats": self.corpus_stats,
            "get_best_practice": self.get_best_practice,
            "get_connection_graph": self.connection_graph,
            "list_topics": self.list_topics,
            "add_markdown": self.write,
            "delete_markdown": self.write,
            "move_markdown": self.move_markdown,
            "get_document": self.get_document,
            "resource_groups": self.resource_groups,
            "read_resource": self.read_resource,
        }

    async def handle(self, message: Any, emit: Emit) -> Answer:
        rid = request_id_of(message)
        op = message.get("op") if isinstance(message, dict) else None
        started = time.perf_counter()
        response: Answer
        try:
            request = parse_request(message)
            handler = self.ops.get(request.op)
            if handler is None:
                raise BadRequest(
                    f"unknown op {request.op!r}; this daemon knows {', '.join(sorted(self.ops))}",
                    {"op": request.op, "known": sorted(self.ops)},
                )
            validate_args(ARGS[request.op], request.args, f"{request.op} arguments")
            await self.runtime.refuse_write(request.op)  # a read-only daemon's refusal, naming the writer
            result = await handler(request, emit if request.stream else None)
            response = ok_response(request.id, result)
        except HallouminateError as exc:
            response = error_response(rid, exc)
        except Exception as exc:  # never let one request's bug become a crash or a raw traceback
            log.exception("op %r failed", op)
            response = error_response(
                rid,
                Bug(f"internal error in {op!r}: {type(exc).__name__}: {exc}; details in the daemon log"),
            )
        log.debug("op %s took %.1f ms", op, (time.perf_counter() - started) * 1000)
        return response

    # -- operations --------------------------------------------------------------------------------
    # ``handle`` checked each request's args against ARGS[op] before calling these: the casts give them
    # the type that check guarantees (protocol/arguments.py says the same as the schemas).
    async def ping(self, request: Request, emit: Emit | None) -> PingResult:
        version = testing_hooks.fake_daemon_version() or self.runtime.version
        return {"version": version, "protocol": PROTOCOL_VERSION, "pid": os.getpid()}

    async def status(self, request: Request, emit: Emit | None) -> StatusResult:
        # cast: the listener's optional keys are added below, not in the ** part.
        result = cast(
            StatusResult,
            {
                **self.runtime.status(),
                "socket": str(self.server.socket_path),
                "uptime_secs": round(time.time() - self.server.started, 3),
                "connections": self.server.connections,
                "in_flight": self.server.in_flight_count,
                "idle_exit_secs": self.server.idle_exit_secs,
            },
        )
        if self.server.http_url is not None:
            result["http_url"] = self.server.http_url
        if self.server.http_error is not None:
            result["http_error"] = self.server.http_error
        return result

    async def http_reload(self, request: Request, emit: Emit | None) -> HttpReloadResult:
        return {"url": await self.server.reload_http()}

    async def shutdown(self, request: Request, emit: Emit | None) -> ShutdownResult:
        self.server.request_stop("shutdown requested by a client")
        return {"stopping": True, "pid": os.getpid()}

    async def index(self, request: Request, emit: Emit | None) -> IndexResult:
        return await self.runtime.index(await _where(request), cast(IndexArgs, request.args), emit)

    async def ground(self, request: Request, emit: Emit | None) -> GroundResult:
        return await self.runtime.ground(await _where(request), cast(GroundArgs, request.args))

    async def search(self, request: Request, emit: Emit | None) -> SearchResult:
        return await self.runtime.search(await _where(request), cast(SearchArgs, request.args))

    async def search_rag(self, request: Request, emit: Emit | None) -> SearchRagResult:
        return await self.runtime.search_rag(await _where(request), cast(SearchRagArgs, request.args))

    async def list_corpora(self, request: Request, emit: Emit | None) -> ListCorporaResult:
        return await self.runtime.list_corpora(await _where(request))

    async def browse(
        self, request: Request, emit: Emit | None
    ) -> ListFilesResult | ListTreeResult | ReadMarkdownResult | BacklinksResult:
        args = cast(CorpusArgs | ListFilesArgs | ReadMarkdownArgs | BacklinksArgs, request.args)
        return await self.runtime.browse(await _where(request), request.op, args)

    async def get_best_practice(self, request: Request, emit: Emit | None) -> BestPracticeResult:
        return await self.runtime.get_best_practice(
            await _where(request), cast(BestPracticeArgs, request.args)
        )

    async def corpus_stats(self, request: Request, emit: Emit | None) -> CorpusStatsResult:
        return await self.runtime.corpus_stats(
            await _where(request), cast(CorpusArgs, request.args).get("corpus")
        )

    async def connection_graph(self, request: Request, emit: Emit | None) -> ConnectionGraphResult:
        return await self.runtime.connection_graph(
            await _where(request), cast(ConnectionGraphArgs, request.args)
        )

    async def list_topics(self, request: Request, emit: Emit | None) -> ListTopicsResult:
        return await self.runtime.list_topics(
            await _where(request), cast(CorpusArgs, request.args).get("corpus")
        )

    async def write(self, request: Request, emit: Emit | None) -> AddMarkdownResult | DeleteMarkdownResult:
        args = cast(AddMarkdownArgs | DeleteMarkdownArgs, request.args)
        return await self.runtime.write(await _where(request), request.op, args)

    async def move_markdown(self, request: Request, emit: Emit | None) -> MoveMarkdownResult:
        return await self.runtime.move_markdown(await _where(request), cast(MoveMarkdownArgs, request.args))

    async def get_document(self, request: Request, emit: Emit | None) -> GetDocumentResult:
        return await self.runtime.get_document(await _where(request), cast(GetDocumentArgs, request.args))

    async def resource_groups(self, request: Request, emit: Emit | None) -> ResourceGroupsResult:
        return await self.runtime.resource_groups(await _where(request))

    async def read_resource(self, request: Request, emit: Emit | None) -> ReadResourceResult:
        return await self.runtime.read_resource(
            await _where(request), cast(ReadResourceArgs, request.args)["uri"]
        )


async def _where(request: Request) -> Where:
    """The request's cwd checked and made canonical (stats and a realpath, in a thread: a hung mount must
    not stall the loop), and whether it is a knowledge base of its own (``kb``)."""
    return Where(await asyncio.to_thread(canonical_cwd, request.cwd), kb=request.kb)
