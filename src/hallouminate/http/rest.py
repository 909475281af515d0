"""``GET /api/search?db=&q=&mode=&limit=``: KuraDB's ``search_rag`` for scripts (docs/http.md, "Faces").

The same check as the MCP tool (``shim.kuradb.search_args``) and the same daemon op, so the answer is the
tool's structured output, byte for byte the same JSON. Invalid arguments (an unknown db included) are HTTP
400 with ``{"error": "invalid argument: ..."}``; another failure is 500 (503 when it may pass if retried)
with its message.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hallouminate.errors import CallerError, HallouminateError
from hallouminate.http.context import HttpContext
from hallouminate.shim.kuradb import search_args


def _query_args(request: Request) -> dict[str, Any]:
    """The query string as the tool's arguments: ``limit`` a number when it reads as one (else left a
    string, for the check to name), the rest strings; a repeated parameter is refused."""
    args: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getlist(key)
        args[key] = values if len(values) > 1 else values[0]
    limit = args.get("limit")
    if isinstance(limit, str) and limit.strip().lstrip("-").isdigit():
        args["limit"] = int(limit)
    return args


def routes(ctx: HttpContext) -> list[BaseRoute]:
    root = str(ctx.root)

    async def search(request: Request) -> Response:
        try:
            op_args = search_args(_query_args(request))
            conn = await ctx.link.connection()
            result = await conn.call("search_rag", root, op_args)
        except CallerError as exc:
            return JSONResponse({"error": exc.message}, status_code=400)
        except HallouminateError as exc:
            return JSONResponse({"error": exc.message}, status_code=503 if exc.retryable else 500)
        return JSONResponse(result)

    return [Route("/api/search", search, methods=["GET"])]
