"""``GET /ui``: the operator page (status band and search box), served by the daemon (docs/http.md,
"The operator page"; ADR 0049).

The page is three static files of package data (``http/page/``: HTML, CSS, JS; no build step, no external
asset). Its search speaks MCP Streamable HTTP itself to ``/mcp``, the endpoint every MCP client uses; the
status band reads ``GET /api/status``, built here from the daemon's own ``status``, ``list_corpora`` and
``corpus_stats`` operations through the context's link (no engine code of its own).

``corpus_stats`` reads every row's file state (O(chunks)); the page polls every few seconds, so the
per-corpus figures are kept and computed again only when the daemon's status says something was written
(its write/watcher counters or the set of running index runs changed; at most every
``CHANGED_MIN_SECS``), when they are older than
``STATS_MAX_AGE_SECS``, or when the operator asks (``?fresh=1``, at most once per ``FRESH_MIN_SECS``).
One computation at a time, whoever asks: a hundred open tabs cost one.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hallouminate.errors import HallouminateError
from hallouminate.http.context import HttpContext

# Per-corpus figures older than this are computed again even if nothing says they changed (a write the
# counters do not see, e.g. files added while the watcher was off).
STATS_MAX_AGE_SECS = 60.0
# ``?fresh=1`` (the page's refresh key) forces a computation at most this often.
FRESH_MIN_SECS = 2.0
# Writes keep coming while the watcher is busy: the figures follow them at most this often.
CHANGED_MIN_SECS = 5.0
# One daemon operation behind /api/status: a status band that cannot answer says so rather than hang.
CALL_TIMEOUT_SECS = 30.0

# The page's own files: (content type, package file).
_ASSETS = {
    "/ui/page.css": ("text/css; charset=utf-8", "page.css"),
    "/ui/page.js": ("text/javascript; charset=utf-8", "page.js"),
}

# The page's own files: no data in them, and a browser cannot send a header when it navigates, so the
# guard serves them without the bearer token (the page asks for it and sends it on every request that
# reads something: /api/status, /mcp).
PAGE_FILES = frozenset({"/ui", *_ASSETS})

# Nothing but the listener's own origin; no inline script, no frame may hold the page.
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _asset(name: str) -> str:
    return resources.files("hallouminate.http").joinpath("page", name).read_text(encoding="utf-8")


@dataclass
class _Figures:
    """The last per-corpus figures and what the daemon's status said when they were computed."""

    key: Any = None
    at: float = 0.0
    corpora: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class StatusBand:
    """``GET /api/status``: what the page's status band shows, from the daemon's own operations."""

    def __init__(self, ctx: HttpContext) -> None:
        self._ctx = ctx
        self._figures = _Figures()
        self._lock = asyncio.Lock()

    async def _call(self, op: str, args: dict[str, Any] | None = None, cwd: str | None = None) -> Any:
        conn = await self._ctx.link.connection()
        return await conn.call(op, cwd, args or {}, timeout=CALL_TIMEOUT_SECS)

    async def _corpora(self, model_loaded: bool) -> tuple[list[dict[str, Any]], list[str]]:
        root = str(self._ctx.root)
        problems: list[str] = []
        try:
            listed = await self._call("list_corpora", cwd=root)
        except HallouminateError as exc:
            return [], [f"list_corpora: {exc.message}"]
        problems += [str(w) for w in listed.get("warnings", [])]
        corpora: list[dict[str, Any]] = []
        for entry in listed.get("corpora", []):
            row: dict[str, Any] = {"name": entry["name"], "kind": entry["kind"]}
            if model_loaded:  # corpus_stats waits for the store, which waits for the model
                try:
                    stats = await self._call("corpus_stats", {"corpus": entry["name"]}, cwd=root)
                except HallouminateError as exc:
                    row["error"] = exc.message
                else:
                    for key in ("indexed_files", "total_chunks", "unindexed_files", "skipped_files"):
                        row[key] = stats.get(key)
                    row["last_indexed_ms"] = stats.get("last_indexed_ms")
            corpora.append(row)
        return corpora, problems

    async def answer(self, fresh: bool) -> dict[str, Any]:
        status = await self._call("status")
        model_loaded = status.get("model") == "loaded"
        runs = status.get("indexing", [])
        # What changes when rows are written: the write and watcher counters, which index runs are going
        # on (not their progress: corpus_stats reports the figures from before a run until it ends).
        key = (
            model_loaded,
            tuple(sorted(status.get("counters", {}).items())),
            tuple(sorted((run["corpus"], run["kind"]) for run in runs)),
        )
        async with self._lock:  # one computation at a time; those who waited take its answer
            figures = self._figures
            age = time.monotonic() - figures.at
            stale = (
                figures.at == 0.0
                or figures.key[0] != model_loaded  # the counts appear as soon as the model has loaded
                or (figures.key != key and age > CHANGED_MIN_SECS)
                or age > STATS_MAX_AGE_SECS
                or (fresh and age > FRESH_MIN_SECS)
            )
            if stale:
                corpora, problems = await self._corpora(model_loaded)
                figures = self._figures = _Figures(key, time.monotonic(), corpora, problems)
        by_corpus = {run["corpus"]: run for run in runs}
        corpora = [
            {**row, "indexing": by_corpus[row["name"]]} if row["name"] in by_corpus else row
            for row in figures.corpora
        ]
        counters = status.get("counters", {})
        return {
            "version": status.get("version"),
            "pid": status.get("pid"),
            "uptime_secs": status.get("uptime_secs"),
            "model": status.get("model"),
            "model_name": status.get("model_name"),
            "watcher": {
                "roots": status.get("watched_roots", []),
                "batches": counters.get("watcher_batches", 0),
                "files_upserted": counters.get("watcher_files_upserted", 0),
            },
            "indexing": runs,
            "root": str(self._ctx.root),
            "corpora": corpora,
            "problems": figures.problems,
            "figures_age_secs": round(time.monotonic() - figures.at, 1),
        }

    async def respond(self, request: Request) -> Response:
        fresh = request.query_params.get("fresh") == "1"
        try:
            body = await self.answer(fresh)
        except HallouminateError as exc:
            return JSONResponse({"error": exc.message, "type": exc.wire_type}, status_code=503)
        except TimeoutError:
            return JSONResponse(
                {"error": f"the daemon did not answer its status within {CALL_TIMEOUT_SECS:.0f} s"},
                status_code=503,
            )
        return JSONResponse(body, headers={"Cache-Control": "no-store"})


def _page(ctx: HttpContext) -> str:
    """The HTML, told whether a token is needed (so the page asks for it before its first request) and
    where the search is scoped (the ``cwd`` its ``ground`` calls send)."""
    settings = json.dumps({"token": ctx.settings.token_file is not None, "root": str(ctx.root)})
    return _asset("index.html").replace("{{settings}}", escape(settings, quote=True))


def routes(ctx: HttpContext) -> list[BaseRoute]:
    html = _page(ctx)
    assets = {path: (kind, _asset(name)) for path, (kind, name) in _ASSETS.items()}

    async def page(request: Request) -> Response:
        return Response(html, media_type="text/html; charset=utf-8", headers=_HEADERS)

    def asset(path: str) -> Route:
        kind, text = assets[path]

        async def serve(request: Request) -> Response:
            return Response(text, media_type=kind, headers=_HEADERS)

        return Route(path, serve, methods=["GET"])

    return [
        Route("/ui", page, methods=["GET"]),
        *(asset(path) for path in assets),
        Route("/api/status", StatusBand(ctx).respond, methods=["GET"]),
    ]
