"""The MCP server: list the tools, check each call, forward it to the daemon, render the answer."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import anyio
from mcp import MCPError
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    TextContent,
    Tool,
    ToolAnnotations,
)

from hallouminate import __version__
from hallouminate.client import DaemonConnection, DaemonUnavailable, connect_or_spawn
from hallouminate.client.connection import ProgressCallback
from hallouminate.errors import BadRequest, Bug, HallouminateError
from hallouminate.protocol.cwd import canonical_cwd
from hallouminate.protocol.results import ProgressEvent
from hallouminate.protocol.validation import validate_args
from hallouminate.shim.errors import to_mcp_error
from hallouminate.shim.face import Call
from hallouminate.shim.grooveseek import FACE_TOOLS as GROOVESEEK_TOOLS
from hallouminate.shim.grooveseek import INSTRUCTIONS as GROOVESEEK_INSTRUCTIONS
from hallouminate.shim.kuradb import INSTRUCTIONS as KURADB_INSTRUCTIONS
from hallouminate.shim.kuradb import TOOLS as KURADB_TOOLS
from hallouminate.shim.link import Link
from hallouminate.shim.prompts import prompt_handlers
from hallouminate.shim.resources import KbResources
from hallouminate.shim.stdio import LineGate
from hallouminate.shim.tools import TOOLS

log = logging.getLogger("hallouminate.shim")

INSTRUCTIONS = """\
hallouminate serves this repository's written knowledge: the Markdown pages of its wiki \
(.hallouminate/wiki by default) and any other configured document corpora, indexed for hybrid \
semantic + keyword search.

Use `ground` to find what the project has written down about a topic (design decisions, how-tos, \
conventions, runbooks) before answering from general knowledge; cite the returned paths and line ranges. \
Use `list_topics` for a map of what a corpus covers (the category and topic values `ground`'s \
filters take), `get_connection_graph` to follow related pages from a hit (similar chunks and links), \
`list_corpora`, `list_tree` and `read_markdown` to browse, `backlinks` before renaming a page, \
`corpus_stats` to check the index, and `index` after many files changed outside hallouminate (edits are \
normally picked up on their own). Write what is worth keeping with `add_markdown` (read a page with \
`read_markdown` before overwriting it), rename them with `move_markdown` (every link to the page is \
rewritten) and remove pages with `delete_markdown`; all need an explicit `corpus`, and search sees the \
change at once.

Every call needs `cwd`: the absolute path of the checkout you are working in. It selects the repository, \
its configuration and its wiki.

What it is not: it keeps no conversation memory (nothing you say is stored unless written as a page), \
and it has no code intelligence: it can search the source files a corpus is configured to index, as \
text (chunked by definition), but it does no code navigation (no references, types, call graphs or \
builds; use your code tools for that). When it finds nothing relevant (a `ground` result with `low_confidence: true`, shown as \
a `weak-match` warning), say the knowledge base is silent rather than guessing.
"""


class DaemonLink:
    """The shim's one connection to the daemon, re-established (and the daemon respawned) on demand."""

    def __init__(self, socket: Path | None = None) -> None:
        self.socket = socket
        self._conn: DaemonConnection | None = None
        self._lock = asyncio.Lock()

    async def connection(self) -> DaemonConnection:
        async with self._lock:
            if self._conn is None or self._conn.closed:
                if self._conn is not None:
                    await self._conn.close()
                self._conn = None
                self._conn = await connect_or_spawn(self.socket)
            return self._conn

    async def call_op(
        self,
        op: str,
        cwd: str,
        args: dict[str, Any],
        *,
        idempotent: bool,
        kb: bool = False,
        session: Any = None,
    ) -> Any:
        """Send ``op`` to the daemon; an ``index`` sends MCP progress notifications to ``session``
        (only when the request carried a progress token)."""
        if op == "index" and session is not None:
            async with McpProgress(session) as progress:
                return await self._send(op, cwd, args, idempotent=idempotent, kb=kb, on_progress=progress)
        return await self._send(op, cwd, args, idempotent=idempotent, kb=kb)

    async def _send(
        self,
        op: str,
        cwd: str,
        args: dict[str, Any],
        *,
        idempotent: bool,
        kb: bool,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        for attempt in (1, 2):
            conn = await self.connection()
            try:
                return await conn.call(op, cwd, args, on_progress=on_progress, kb=kb)
            except DaemonUnavailable:
                # The daemon died under us (kill -9, crash): an idempotent call is sent once more to
                # a fresh daemon.
                if attempt == 2 or not idempotent:
                    raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()


class McpProgress:
    """The daemon's progress events of an ``index`` call as MCP ``notifications/progress``.

    MCP wants ``progress`` to grow with every notification, while the daemon counts files per corpus
    (and per run, when the call first waits for a run already going): each corpus or run adds its count
    to the files of those before it. Events arrive from the connection's reader; they are sent in order
    by one task, and the last is sent before the answer.
    """

    def __init__(self, session: Any) -> None:
        self._session = session
        self._queue: asyncio.Queue[tuple[float, float | None, str] | None] = asyncio.Queue()
        self._segment: tuple[str, str | None] | None = None
        self._base = 0
        self._done = 0
        self._sent = -1.0
        self._task: asyncio.Task[None] | None = None

    def __call__(self, event: ProgressEvent) -> None:
        corpus, done, total = str(event.get("corpus")), int(event["done"]), int(event["total"])
        waiting = event.get("waiting_for")
        segment = (corpus, waiting)
        if segment != self._segment:
            self._base += self._done
            self._segment, self._done = segment, 0
        self._done = max(self._done, done)
        progress = self._base + self._done
        if progress <= self._sent:
            return
        self._sent = progress
        if waiting:
            message = f"waiting for the running {waiting} of {corpus}: {done}/{total} files"
        else:
            message = f"indexing {corpus}: {done}/{total} files"
        self._queue.put_nowait((progress, self._base + total if total else None, message))

    async def _send(self) -> None:
        while (item := await self._queue.get()) is not None:
            progress, total, message = item
            try:
                await self._session.report_progress(progress, total, message)
            except Exception:  # a client that went away: the answer is what matters
                log.debug("progress notification not sent", exc_info=True)

    async def __aenter__(self) -> McpProgress:
        self._task = asyncio.get_running_loop().create_task(self._send())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._queue.put_nowait(None)
        if self._task is not None:
            await self._task


class _FaceTool(Protocol):
    """What a face publishes of a tool in ``tools/list`` and how it runs (shim/tools.py ``ToolSpec``,
    shim/face.py ``FaceTool``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...
    @property
    def output_schema(self) -> dict[str, Any] | None: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def destructive(self) -> bool: ...
    @property
    def idempotent(self) -> bool: ...
    @property
    def check(self) -> Callable[[dict[str, Any]], None] | None: ...

    def run(self, call: Call, args: dict[str, Any]) -> Awaitable[Any]: ...

    def text(self, result: Any) -> str: ...


# Where a face's calls take their cwd: from each call's own ``cwd`` argument (ours), or the face's scope
# directory (GrooveSeek's knowledge base, KuraDB's served directory).
Scope = Literal["argument", "directory", "knowledge_base"]


@dataclass(frozen=True)
class FaceSpec:
    """One MCP face: everything that differs between faces. ``build_server`` wires any of them the same way
    (tools/list, tools/call, the link to the daemon), so no face has a copy of that wiring."""

    server_name: str
    instructions: str
    tools: Mapping[str, _FaceTool]
    scope: Scope
    # The dialect whose prompts the face serves (shim/prompts.py), or None: no prompts.
    prompts: str | None
    # Whether the face serves the kb:// resources of its scope (shim/resources.py).
    resources: bool
    # How a refused or failed call is answered: a JSON-RPC error (ours, GrooveSeek's: caller mistakes
    # -32602, faults -32603), or a tool result with ``isError`` and the message as its text (KuraDB's).
    tool_errors: bool


FACES: dict[str, FaceSpec] = {
    "hallouminate": FaceSpec(
        server_name="hallouminate",
        instructions=INSTRUCTIONS,
        tools=TOOLS,
        scope="argument",
        prompts="hallouminate",
        resources=True,
        tool_errors=False,
    ),
    "grooveseek": FaceSpec(
        server_name="hallouminate-grooveseek",
        instructions=GROOVESEEK_INSTRUCTIONS,
        tools=GROOVESEEK_TOOLS,
        scope="knowledge_base",
        prompts="grooveseek",
        resources=True,
        tool_errors=False,
    ),
    "kuradb": FaceSpec(
        server_name="hallouminate-kuradb",
        instructions=KURADB_INSTRUCTIONS,
        tools=KURADB_TOOLS,
        scope="directory",
        prompts=None,
        resources=False,
        tool_errors=True,
    ),
}
DIALECTS = tuple(FACES)


def build_server(
    socket: Path | None = None,
    cwd: Path | None = None,
    *,
    dialect: str = "hallouminate",
    kb_path: Path | None = None,
    link: Link | None = None,
) -> tuple[Server[Any], Link]:
    """The MCP server of one face (``FACES``): ours (``hallouminate``), GrooveSeek's over the knowledge base
    ``kb_path`` (``grooveseek``; shim/grooveseek.py) or KuraDB's (``kuradb``; shim/kuradb.py).

    ``cwd``: the scope of what takes no cwd argument (our kb:// resources, KuraDB's corpora); default the
    directory we started in. ``link``: how calls reach the daemon; by default a socket connection to the
    daemon on ``socket`` (the stdio shim). The HTTP transport passes the daemon's own dispatcher
    (http/local.py)."""
    face = FACES.get(dialect)
    if face is None:
        raise ValueError(f"unknown dialect {dialect!r}; dialects: {', '.join(DIALECTS)}")
    if face.scope == "knowledge_base":
        if kb_path is None:
            raise ValueError(f"the {dialect} face needs a knowledge base path")
        scope, kb = str(kb_path), True
    else:
        # A start directory since removed: "/", a scope with no corpus (our resource list is empty).
        scope, kb = str(cwd) if cwd is not None else (_start_dir() or "/"), False
    if link is None:
        link = DaemonLink(socket)
    daemon = link
    tools = face.tools

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return _listing(tools.values())

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        tool = tools.get(params.name)
        if tool is None:  # a protocol error on every face: there is no tool to answer as
            raise to_mcp_error(BadRequest(f"unknown tool {params.name!r}; tools: {', '.join(tools)}"))
        arguments = dict(params.arguments or {})

        async def run() -> Any:
            if tool.check is not None:
                tool.check(arguments)
            else:
                validate_args(tool.input_schema, arguments, f"{tool.name} arguments")
            cwd = scope
            if face.scope == "argument":
                # cwd is checked and canonicalised here, before anything is sent to the daemon.
                cwd = str(canonical_cwd(arguments.pop("cwd", None)))

            async def call(op: str, args: dict[str, Any]) -> Any:
                return await daemon.call_op(
                    op, cwd, args, idempotent=tool.idempotent, kb=kb, session=ctx.session
                )

            result = await tool.run(call, arguments)
            if tool.output_schema is not None and not isinstance(result, dict):
                raise Bug(f"the daemon returned a malformed {tool.name} result")
            return result

        try:
            result = await _as_mcp(params.name, run)
        except MCPError as exc:
            if not face.tool_errors:
                raise
            # KuraDB's convention: the call's error is its result, flagged, with the message as text.
            return CallToolResult(content=[TextContent(text=exc.error.message)], is_error=True)
        structured = result if tool.output_schema is not None else None
        return CallToolResult(
            content=[TextContent(text=tool.text(result))], structured_content=structured, is_error=False
        )

    handlers: dict[str, Any] = {}
    if face.prompts is not None:
        # The prompts take no cwd: our face's text names the directory the MCP host started us in.
        prompts = prompt_handlers(face.prompts, _start_dir() if face.scope == "argument" else None)
        handlers.update(on_list_prompts=prompts.on_list_prompts, on_get_prompt=prompts.on_get_prompt)
    if face.resources:
        # The kb:// resources take no cwd in MCP: the face's scope, as every call of GrooveSeek's face.
        handlers.update(KbResources(link.connection, scope, kb=kb).handlers())
    server: Server[Any] = Server(
        face.server_name,
        version=__version__,
        instructions=face.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **handlers,
    )
    return server, link


def _listing(tools: Iterable[_FaceTool]) -> ListToolsResult:
    return ListToolsResult(
        tools=[
            Tool(
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
                annotations=ToolAnnotations(
                    read_only_hint=tool.read_only,
                    destructive_hint=tool.destructive,
                    idempotent_hint=tool.idempotent,
                    open_world_hint=False,
                ),
            )
            for tool in tools
        ]
    )


async def _as_mcp(name: str, run: Callable[[], Awaitable[Any]]) -> Any:
    """``run()``'s result, its errors as MCP errors: ours by their meaning, anything else a ``Bug`` (never
    a raw traceback or JSON-RPC code 0)."""
    try:
        return await run()
    except HallouminateError as exc:
        raise to_mcp_error(exc) from None
    except MCPError:
        raise
    except Exception as exc:
        log.exception("tool %s failed", name)
        raise to_mcp_error(Bug(f"{name} failed in the MCP server: {type(exc).__name__}: {exc}")) from None


def _start_dir() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # started in a directory since removed
        return None


async def serve(
    socket: Path | None = None, dialect: str = "hallouminate", kb_path: Path | None = None
) -> int:
    """Serve MCP on stdin/stdout until stdin closes; the process exit code (see ``LineGate.exit_code``)."""
    server, link = build_server(socket, dialect=dialect, kb_path=kb_path)
    # We read stdin ourselves so that every line gets an answer (shim/stdio.py); the SDK still owns
    # stdout (it diverts fd 1 to stderr so stray output cannot corrupt the wire).
    gate = LineGate(anyio.wrap_file(sys.stdin.buffer))
    try:
        async with stdio_server(stdin=cast(Any, gate)) as (read_stream, write_stream):
            replies = cast(Any, gate.watch(write_stream))
            await server.run(read_stream, replies, server.create_initialization_options())
    finally:
        await link.close()
    return gate.exit_code()
