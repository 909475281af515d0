"""``GET /api/search``: KuraDB's ``search_rag`` for scripts, the same validation and JSON (docs/http.md)."""

from __future__ import annotations

from starlette.routing import BaseRoute

from hallouminate.http.context import HttpContext


def routes(ctx: HttpContext) -> list[BaseRoute]:
    return []
