"""The HTTP listener's ASGI app: every face's MCP endpoint, ``/healthz``, and the routes the other http
modules add (REST search, the operator page). One ``shim.server`` definition per face, served through
the SDK's Streamable HTTP session manager; calls reach the daemon's dispatcher in process (http/local.py).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hallouminate.http.context import HttpContext

log = logging.getLogger("hallouminate.http")


@dataclass(frozen=True)
class Face:
    """One MCP face on the listener: its path and its session manager."""

    path: str
    manager: StreamableHTTPSessionManager


def _faces(ctx: HttpContext) -> list[Face]:
    from hallouminate.shim.server import build_server

    settings = ctx.settings
    built: list[tuple[str, Any]] = [
        ("/mcp", build_server(cwd=ctx.root, link=ctx.link)[0]),
        # KuraDB's face: its dbs are the corpora of [http] root (docs/kuradb-face.md).
        ("/kuradb/mcp", build_server(cwd=ctx.root, dialect="kuradb", link=ctx.link)[0]),
    ]
    if settings.kb_path is not None:
        server, _link = build_server(dialect="grooveseek", kb_path=settings.kb_path, link=ctx.link)
        built.append(("/grooveseek/mcp", server))
    faces = []
    for path, server in built:
        manager = StreamableHTTPSessionManager(
            app=server,
            # Host and Origin are checked for every route by the guard (http/guard.py), not per face.
            security_settings=None,
            max_request_body_size=settings.max_body_bytes,
            session_idle_timeout=settings.session_idle_secs,
            max_sessions=settings.max_sessions,
        )
        faces.append(Face(path, manager))
    return faces


async def healthz(request: Request) -> Response:
    """Liveness for supervisors: no data beyond ``ok``."""
    return JSONResponse({"ok": True})


def build_app(ctx: HttpContext) -> Starlette:
    from hallouminate.http import rest, ui
    from hallouminate.http.guard import Guard
    from hallouminate.http.negotiate import JsonOrSse

    faces = _faces(ctx)
    routes: list[BaseRoute] = [Route("/healthz", healthz, methods=["GET"])]
    for face in faces:
        # JSON or SSE as the client's Accept asks (http/negotiate.py).
        routes.append(Route(face.path, JsonOrSse(StreamableHTTPASGIApp(face.manager))))
    routes += rest.routes(ctx)
    routes += ui.routes(ctx)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for face in faces:
                await stack.enter_async_context(face.manager.run())
            yield

    return Starlette(routes=routes, middleware=[Middleware(Guard, settings=ctx.settings)], lifespan=lifespan)
