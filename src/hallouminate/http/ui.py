"""``GET /ui``: the operator page (status band and search box), served by the daemon (docs/http.md)."""

from __future__ import annotations

from starlette.routing import BaseRoute

from hallouminate.http.context import HttpContext


def routes(ctx: HttpContext) -> list[BaseRoute]:
    return []
