"""An OpenAI-compatible embedding endpoint on loopback, for the tests of the endpoint provider: a real
HTTP server (uvicorn + starlette in a thread of the test process) answering ``POST /v1/embeddings`` with
the real MiniLM vectors, scripted faults served first (a 429 with Retry-After, 5xx), and inputs holding
a marker refused (413/422) as a real server refuses a batch: the whole request. Every request is recorded
(when, the inputs, the Authorization header) so that tests can say what the daemon sent.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

    from hallouminate.embedding import Embedder


@dataclass
class Seen:
    at: float  # time.monotonic() when it arrived
    status: int  # what it was answered
    inputs: list[str]
    model: str | None
    authorization: str | None
    body: dict[str, Any]


@dataclass
class Endpoint:
    """The server and its script. ``faults``: (status, headers, body) answered, in order, to the next
    requests; ``refuse``: an input containing this marker makes its whole request answer ``refuse_status``."""

    embedder: Embedder
    model: str = "minilm-over-http"
    faults: deque[tuple[int, dict[str, str], str]] = field(default_factory=deque)
    refuse: str | None = None
    refuse_status: int = 413
    seen: list[Seen] = field(default_factory=list)
    port: int = 0
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answered(self, status: int) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.status == status]

    def start(self) -> None:
        """Serve (again: on the same port after ``stop``, so the daemon's base_url stays right)."""
        import uvicorn

        config = uvicorn.Config(
            self._app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="embedding-endpoint", daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise AssertionError("the test embedding endpoint did not start")
            time.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]
        self._server, self._thread = server, thread

    def stop(self) -> None:
        """Stop listening: connections are refused until ``start``."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=30)
            self._server = self._thread = None

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, PlainTextResponse, Response
        from starlette.routing import Route

        async def embeddings(request: Request) -> Response:
            body = await request.json()
            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
            response: Response
            with self._lock:
                fault = self.faults.popleft() if self.faults else None
            if fault is not None:
                status, headers, text = fault
                # A body that echoes the request's headers: what a careless proxy does (the key must be
                # redacted by the client before it quotes this).
                text = text.replace("{authorization}", request.headers.get("authorization", ""))
                response = PlainTextResponse(text, status_code=status, headers=headers)
            elif self.refuse is not None and any(self.refuse in text for text in inputs):
                response = JSONResponse(
                    {"error": {"message": "input too long for this model", "type": "invalid_request_error"}},
                    status_code=self.refuse_status,
                )
            elif body.get("model") != self.model:
                response = JSONResponse({"error": {"message": "unknown model"}}, status_code=404)
            else:
                import asyncio

                vectors = await asyncio.to_thread(self.embedder.embed_passages, inputs)
                # Scaled: the client must normalise what it gets (our cosine assumes unit vectors).
                data = [
                    {"object": "embedding", "index": i, "embedding": [float(x) * 3.0 for x in vector]}
                    for i, vector in enumerate(vectors)
                ]
                data.reverse()  # out of order on purpose: the client must sort by index
                response = JSONResponse({"object": "list", "data": data, "model": self.model})
            with self._lock:
                self.seen.append(
                    Seen(
                        time.monotonic(),
                        response.status_code,
                        inputs,
                        body.get("model"),
                        request.headers.get("authorization"),
                        body,
                    )
                )
            return response

        return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


def endpoint_config(endpoint: Endpoint, cache_dir: str, *, key_env: str | None, extra: str = "") -> str:
    """A baseline config embedding with ``endpoint``."""
    lines = [
        "[embeddings]",
        f'cache_dir = "{cache_dir}"',
        'provider = "openai-compatible"',
        f'base_url = "{endpoint.base_url}"',
        f'model = "{endpoint.model}"',
        "dimensions = 384",
        "batch_size = 8",
        "max_retries = 3",
        "timeout_secs = 20",
    ]
    if key_env is not None:
        lines.append(f'api_key_env = "{key_env}"')
    return "\n".join(lines) + "\n" + extra


@contextmanager
def serving(embedder: Embedder) -> Iterator[Endpoint]:
    """An endpoint serving ``embedder``'s vectors until the block ends."""
    served = Endpoint(embedder)
    served.start()
    try:
        yield served
    finally:
        served.stop()


async def daemon_call(op: str, cwd: Path, args: dict[str, Any] | None = None) -> Any:
    """One request to the running daemon of this process's world (never spawning one)."""
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn(spawn=False)
    try:
        return await conn.call(op, str(cwd), args or {})
    finally:
        await conn.close()
