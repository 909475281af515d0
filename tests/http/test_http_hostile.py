"""Hostile HTTP against a real daemon's listener: each request is refused with the status and the JSON body
docs/http.md ("Security model") documents, and afterwards the daemon is alive and a normal client still
gets a ``ground`` answer.

One world for the module: a token file, a small body cap and session cap, a short idle expiry, and short
read deadlines (the ``HALLOUMINATE_TEST_HTTP_READ_SECS`` hook) so that slowloris is cut in seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from support.http_world import HttpWorld, http_world, mcp_http_session

TOKEN = "s3cret-token-for-the-hostile-tests"
BODY_CAP = 65536
MAX_SESSIONS = 64
IDLE_SECS = 15
READ_SECS = 3.0
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    },
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


@pytest.fixture(scope="module")
def world(model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpWorld]:
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(TOKEN + "\n")
    extra = (
        f'token_file = "{token_file}"\nmax_body_bytes = {BODY_CAP}\nmax_sessions = {MAX_SESSIONS}\n'
        f"session_idle_secs = {IDLE_SECS}\n"
    )
    with http_world(
        model_cache, extra_http=extra, extra_env={"HALLOUMINATE_TEST_HTTP_READ_SECS": str(READ_SECS)}
    ) as w:
        yield w


def auth(**more: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TOKEN}", "accept": ACCEPT, "content-type": "application/json", **more}


def refusal(response: httpx2.Response, status: int, problem: str) -> str:
    """The refusal's message, after checking its status and its one shape."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["problem"] == problem, body
    message = body["error"]["message"]
    assert isinstance(message, str) and len(message) > 20
    return str(message)


async def ground_answer(world: HttpWorld) -> list[dict[str, Any]]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=120) as client,
        mcp_http_session(world.base_url + "/mcp", http_client=client) as session,
    ):
        result = await session.call_tool(
            "ground", {"cwd": str(world.repo), "query": "How does the MCP shim reach the daemon?"}
        )
    assert not result.is_error
    assert result.structured_content is not None
    docs: list[dict[str, Any]] = result.structured_content["docs"]
    return docs


def assert_serving(world: HttpWorld) -> None:
    """The daemon is alive and a normal client gets its ground answer."""
    docs = asyncio.run(ground_answer(world))
    assert docs and docs[0]["path"] == "architecture.md"


def open_session(client: httpx2.Client, url: str) -> str:
    response = client.post(url, json=INITIALIZE, headers=auth())
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=initialized, headers=auth(**{"mcp-session-id": session})).status_code == 202
    return str(session)


def test_wrong_host_is_refused(world: HttpWorld) -> None:
    port = urlsplit(world.base_url).port
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "attacker.test:80"):
            message = refusal(client.post("/mcp", json=INITIALIZE, headers=auth(host=host)), 421, "host")
            assert f"127.0.0.1:{port}" in message  # says what to call it instead
        # localhost names with the listener's port are this listener.
        assert client.get("/healthz", headers={"host": f"localhost:{port}"}).status_code == 200
    assert_serving(world)


def test_foreign_origin_is_refused_and_the_own_origin_admitted(world: HttpWorld) -> None:
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        message = refusal(
            client.post("/mcp", json=INITIALIZE, headers=auth(origin="http://evil.example")), 403, "origin"
        )
        assert "allowed_origins" in message
        refusal(client.get("/healthz", headers={"origin": "null"}), 403, "origin")
        own = client.post("/mcp", json=INITIALIZE, headers=auth(origin=world.base_url))
        assert own.status_code == 200, own.text
        client.delete("/mcp", headers=auth(**{"mcp-session-id": own.headers["mcp-session-id"]}))
    assert_serving(world)


def test_the_bearer_token_is_required_except_by_healthz(world: HttpWorld) -> None:
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        missing = client.post("/mcp", json=INITIALIZE, headers=headers)
        assert "token_file" in refusal(missing, 401, "token")
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = client.post("/mcp", json=INITIALIZE, headers={**headers, "authorization": "Bearer nope"})
        refusal(wrong, 401, "token")
        assert missing.headers["www-authenticate"].startswith("Bearer")
        assert "invalid_token" in wrong.headers["www-authenticate"]
        prefix = client.post(
            "/mcp", json=INITIALIZE, headers={**headers, "authorization": f"Bearer {TOKEN[:-1]}"}
        )
        refusal(prefix, 401, "token")
        # /healthz is for supervisors: no token, and nothing but liveness in it.
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json() == {"ok": True}
        right = client.post("/mcp", json=INITIALIZE, headers=auth())
        assert right.status_code == 200, right.text
        client.delete("/mcp", headers=auth(**{"mcp-session-id": right.headers["mcp-session-id"]}))
    assert_serving(world)


def test_missing_and_unknown_session_ids_are_refused(world: HttpWorld) -> None:
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        message = refusal(client.post("/mcp", json=TOOLS_LIST, headers=auth()), 400, "session")
        assert "initialize" in message
        unknown = client.post("/mcp", json=TOOLS_LIST, headers=auth(**{"mcp-session-id": "0" * 32}))
        assert "initialize again" in refusal(unknown, 404, "session")
        # An id that once was valid, after the client ended the session.
        session = open_session(client, "/mcp")
        assert client.delete("/mcp", headers=auth(**{"mcp-session-id": session})).status_code == 200
        refusal(
            client.post("/mcp", json=TOOLS_LIST, headers=auth(**{"mcp-session-id": session})), 404, "session"
        )
    assert_serving(world)


def test_malformed_json_is_refused(world: HttpWorld) -> None:
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        opening = client.post("/mcp", content=b'{"jsonrpc": "2.0", "id": 1, "method":', headers=auth())
        assert "not valid JSON" in refusal(opening, 400, "json")
        session = open_session(client, "/mcp")
        within = client.post("/mcp", content=b"{nope}", headers=auth(**{"mcp-session-id": session}))
        refusal(within, 400, "json")
        not_rpc = client.post("/mcp", json={"hello": "world"}, headers=auth(**{"mcp-session-id": session}))
        refusal(not_rpc, 400, "jsonrpc")
        plain = client.post(
            "/mcp",
            content=json.dumps(TOOLS_LIST),
            headers=auth(**{"mcp-session-id": session, "content-type": "text/plain"}),
        )
        assert "application/json" in refusal(plain, 400, "content-type")
        blind = client.post(
            "/mcp", json=TOOLS_LIST, headers=auth(**{"mcp-session-id": session, "accept": "text/html"})
        )
        assert "text/event-stream" in refusal(blind, 406, "accept")
        # The session survives its client's bad request.
        listed = client.post("/mcp", json=TOOLS_LIST, headers=auth(**{"mcp-session-id": session}))
        assert listed.status_code == 200, listed.text
        client.delete("/mcp", headers=auth(**{"mcp-session-id": session}))
    assert_serving(world)


def raw_connect(world: HttpWorld) -> socket.socket:
    parts = urlsplit(world.base_url)
    assert parts.hostname is not None and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=60)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One whole response read off a raw socket, up to the server closing it (or resetting it: a server
    that closes with our unread bytes in hand resets the connection after its answer)."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def answered(sock: socket.socket, wait: float) -> bool:
    """Whether the server has answered (or closed) within ``wait`` seconds: then we stop sending, so as
    to read its answer before our next bytes draw a reset."""
    return bool(select.select([sock], [], [], wait)[0])


def raw_head(world: HttpWorld, extra: str) -> bytes:
    host = urlsplit(world.base_url).netloc
    return (
        f"POST /mcp HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {TOKEN}\r\naccept: {ACCEPT}\r\n"
        f"content-type: application/json\r\n{extra}\r\n"
    ).encode()


def test_an_oversized_body_is_refused_unread(world: HttpWorld) -> None:
    # Content-Length over the cap: refused on the headers, before a byte of the body is sent.
    with raw_connect(world) as sock:
        sock.sendall(raw_head(world, f"content-length: {10 * BODY_CAP}\r\n"))
        status, headers, body = read_response(sock)
    assert status == 413 and headers["connection"] == "close"
    assert json.loads(body)["error"]["problem"] == "body"
    assert "max_body_bytes" in json.loads(body)["error"]["message"]
    # Chunked (no Content-Length): cut off and refused once it passes the cap; the rest goes unread.
    with raw_connect(world) as sock:
        sock.sendall(raw_head(world, "transfer-encoding: chunked\r\n"))
        chunk = b"x" * 8192
        sent = 0
        while sent < 4 * BODY_CAP and not answered(sock, 0.05):
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
        # Answered once past the cap, long before the whole body was sent.
        assert BODY_CAP < sent < 4 * BODY_CAP
        status, _headers, body = read_response(sock)
    assert status == 413 and json.loads(body)["error"]["problem"] == "body"
    assert_serving(world)


def test_slowloris_is_cut_at_the_deadline_while_others_are_served(world: HttpWorld) -> None:
    """Two clients sending a byte a second (one in its headers, one in its body) are answered 408 and
    closed after the read deadline; meanwhile a normal client gets its ground answer."""
    outcome: dict[str, tuple[float, float, float, int, str]] = {}

    def trickle(name: str, prefix: bytes, rest: bytes) -> None:
        with raw_connect(world) as sock:
            start = time.monotonic()
            sock.sendall(prefix)
            last_sent = start
            for byte in rest:
                sock.sendall(bytes([byte]))
                last_sent = time.monotonic()
                if answered(sock, 1.0):
                    break
            status, _headers, body = read_response(sock)
            problem = json.loads(body)["error"]["problem"]
            outcome[name] = (start, last_sent, time.monotonic(), status, problem)

    head = raw_head(world, "content-length: 400\r\n")
    threads = [
        threading.Thread(target=trickle, args=("headers", b"", head * 3)),
        threading.Thread(target=trickle, args=("body", head, b" " * 400)),
    ]
    for thread in threads:
        thread.start()
    served_from = time.monotonic()
    assert_serving(world)
    served_to = time.monotonic()
    for thread in threads:
        thread.join(120)
    for name in ("headers", "body"):
        start, last_sent, cut, status, problem = outcome[name]
        assert (status, problem) == (408, "slow"), name
        # Cut at the deadline, not before (the whole request would have taken minutes).
        assert last_sent - start >= READ_SECS - 1.0, name
        # The overlap happened: this client held its connection while the normal client was served.
        assert start < served_to and cut > served_from, (name, start, cut, served_from, served_to)
    assert_serving(world)


def test_connections_past_the_cap_are_refused_and_idle_ones_cut(world: HttpWorld) -> None:
    """``MAX_CONNECTIONS`` (512) connections that send nothing, and a few more: the extra ones are answered
    503 at once, the idle ones 408 at the read deadline; then a normal client is served."""
    socks = [raw_connect(world) for _ in range(520)]
    try:
        statuses = []
        for sock in socks:
            assert answered(sock, 60.0)
            status, headers, body = read_response(sock)
            statuses.append((status, json.loads(body)["error"]["problem"]))
            if status == 503:
                assert "512 connections" in json.loads(body)["error"]["message"]
                assert headers["retry-after"].isdigit()
    finally:
        for sock in socks:
            sock.close()
    assert set(statuses) == {(408, "slow"), (503, "connections")}
    # The first ones were admitted (and then cut for sending nothing); past the cap, refused.
    assert statuses[0] == (408, "slow") and statuses[-1] == (503, "connections")
    assert_serving(world)


def test_a_thousand_abandoned_sessions_are_capped_then_expire(world: HttpWorld) -> None:
    """1,000 initialize requests whose sessions are never used again: the first ``max_sessions`` open,
    the rest are refused 503 with Retry-After; after the idle expiry their ids answer 404 and new sessions
    are admitted."""

    async def burst() -> list[httpx2.Response]:
        limits = httpx2.Limits(max_connections=16)
        async with httpx2.AsyncClient(base_url=world.base_url, timeout=120, limits=limits) as client:
            gate = asyncio.Semaphore(16)

            async def one() -> httpx2.Response:
                async with gate:
                    return await client.post("/mcp", json=INITIALIZE, headers=auth())

            return list(await asyncio.gather(*(one() for _ in range(1000))))

    started = time.monotonic()
    responses = asyncio.run(burst())
    burst_secs = time.monotonic() - started
    admitted = [r.headers["mcp-session-id"] for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    if burst_secs < IDLE_SECS:
        assert len(admitted) == MAX_SESSIONS
    else:
        # A machine so loaded that the first sessions expired during the burst: each expiry lets one more in,
        # and none expires before IDLE_SECS.
        assert MAX_SESSIONS <= len(admitted) <= MAX_SESSIONS * (1 + burst_secs // IDLE_SECS)
    assert len(refused) == 1000 - len(admitted)
    for response in refused[:20] + refused[-20:]:
        assert "max_sessions" in refusal(response, 503, "sessions")
        assert response.headers["retry-after"].isdigit()
    # Every refusal is logged, but not 936 lines: one per problem per 10 s.
    logged = world.sandbox.daemon_log_text().count("refused (sessions)")
    assert 1 <= logged <= 2 + burst_secs / 10
    with httpx2.Client(base_url=world.base_url, timeout=30) as client:
        # At the cap a newcomer is refused too (the documented cost of the cap)...
        refusal(client.post("/mcp", json=INITIALIZE, headers=auth()), 503, "sessions")
        # ...until the abandoned sessions expire, IDLE_SECS after the burst's last request: then new
        # sessions are admitted again, and every abandoned id answers 404.
        expired_by = started + burst_secs + IDLE_SECS + 2
        admitted_again = None
        while admitted_again is None or time.monotonic() < expired_by:
            fresh = client.post("/mcp", json=INITIALIZE, headers=auth())
            if fresh.status_code == 200:
                admitted_again = admitted_again or time.monotonic()
                client.delete("/mcp", headers=auth(**{"mcp-session-id": fresh.headers["mcp-session-id"]}))
            else:
                refusal(fresh, 503, "sessions")
            assert time.monotonic() < expired_by + IDLE_SECS * 5, "the abandoned sessions never expired"
            time.sleep(0.5)
        # Not before the idle time ran out.
        assert admitted_again is not None and admitted_again > started + IDLE_SECS
        for sid in admitted:
            probe = client.post("/mcp", json=TOOLS_LIST, headers=auth(**{"mcp-session-id": sid}))
            refusal(probe, 404, "session")
    assert_serving(world)


@pytest.mark.asyncio
async def test_configured_origins_are_admitted_with_cors() -> None:
    """``[http] allowed_origins`` (parsed by the config layer): the Guard admits those origins, answers
    their CORS preflight and marks their answers readable; any other origin is refused. The real Guard
    around a small app, in process."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from hallouminate.config.types import HttpSettings
    from hallouminate.http.guard import Guard

    async def hello(request: Any) -> JSONResponse:
        return JSONResponse({"hello": True})

    settings = HttpSettings(enabled=True, allowed_origins=("http://app.example:3000",))
    app = Guard(Starlette(routes=[Route("/mcp", hello, methods=["GET", "POST"])]), settings)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        allowed = await client.get("/mcp", headers={"origin": "http://APP.example:3000"})
        assert allowed.status_code == 200 and allowed.json() == {"hello": True}
        assert allowed.headers["access-control-allow-origin"] == "http://app.example:3000"
        assert "mcp-session-id" in allowed.headers["access-control-expose-headers"]
        preflight = await client.options("/mcp", headers={"origin": "http://app.example:3000"})
        assert preflight.status_code == 204
        assert "mcp-session-id" in preflight.headers["access-control-allow-headers"]
        refusal(await client.get("/mcp", headers={"origin": "http://app.example:3001"}), 403, "origin")
        # A path that is not there: the plain-text 404 of the router, put in the one shape.
        refusal(await client.get("/nope"), 404, "path")
