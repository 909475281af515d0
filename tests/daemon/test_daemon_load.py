"""Load: a full house gets a clear "busy, retry", and reads keep answering while a large index runs."""

from __future__ import annotations

import asyncio
import socket
import struct
import time

import msgpack

from hallouminate.client import connect_or_spawn
from hallouminate.daemon.server import MAX_CONNECTIONS
from support.sandbox import SMALL_WIKI, Sandbox


def recv_message(sock: socket.socket) -> dict:
    def exact(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    (length,) = struct.unpack(">I", exact(4))
    return msgpack.unpackb(exact(length), raw=False)


def ping(sock: socket.socket) -> dict:
    body = msgpack.packb({"v": 1, "id": 1, "op": "ping", "cwd": None, "args": {}})
    sock.sendall(struct.pack(">I", len(body)) + body)
    return recv_message(sock)


def test_the_connection_cap_answers_busy_retry_instead_of_hanging(sandbox: Sandbox) -> None:
    sandbox.start_daemon()
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(30)
            sock.connect(str(sandbox.socket))
            held.append(sock)
        assert ping(held[-1])["ok"] is True  # every held connection is accepted and counted by now
        extra = socket.socket(socket.AF_UNIX)
        extra.settimeout(30)
        extra.connect(str(sandbox.socket))
        answer = recv_message(extra)
        assert answer["ok"] is False and answer["error"]["kind"] == "retryable"
        assert "busy" in answer["error"]["message"] and answer["error"]["data"]["retryable"] is True
        extra.close()
        held.pop().close()
        deadline = time.monotonic() + 10
        while True:  # a slot freed: the next client is served again
            again = socket.socket(socket.AF_UNIX)
            again.settimeout(30)
            again.connect(str(sandbox.socket))
            try:
                if ping(again)["ok"]:
                    break
            except ConnectionError:
                pass
            finally:
                again.close()
            assert time.monotonic() < deadline, "the freed slot was never reused"
            time.sleep(0.05)
    finally:
        for sock in held:
            sock.close()


async def test_search_and_reads_answer_while_a_large_index_runs(sandbox: Sandbox) -> None:
    small = sandbox.make_repo("small", pages=SMALL_WIKI)
    big = sandbox.make_repo("big", wiki=None)
    wiki = big / ".hallouminate" / "wiki"
    for i in range(60):
        sections = "\n\n".join(f"## Part {j}\n\nText {i}-{j} about shards and replicas." for j in range(6))
        (wiki / f"page-{i:03d}.md").write_text(f"# Page {i}\n\n{sections}\n")
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    # One connection: its frames arrive in the order the daemon wrote them. Reads answered between the
    # run's first progress event (files left) and its last (sent once all are embedded) were served while
    # it ran; reads that queued behind the run would all come after that last event.
    seen: list[str] = []
    try:
        await conn.call("index", str(small), {})
        indexing = asyncio.ensure_future(
            conn.call(
                "index",
                str(big),
                {},
                timeout=600,
                on_progress=lambda e: seen.append("mid" if e["done"] < e["total"] else "end"),
            )
        )
        waits = []
        while not indexing.done():
            started = time.monotonic()
            found = await conn.call(
                "ground", str(small), {"query": "How does the MCP shim reach the daemon?"}
            )
            page = await conn.call(
                "read_markdown", str(small), {"corpus": "repo:small:wiki", "path": "index.md"}
            )
            waits.append(time.monotonic() - started)
            seen.append("read")
            assert found["docs"][0]["path"] == "architecture.md"
            assert page["content"]
        report = await indexing
    finally:
        await conn.close()
    assert "mid" in seen and "end" in seen, seen
    during = seen[seen.index("mid") : seen.index("end")].count("read")
    waits.sort()
    print(f"reads during the index: {during} of {len(waits)}, median {waits[len(waits) // 2]:.3f} s")
    assert during >= 3, f"{during} reads answered while the index ran: make it longer"
    assert report["corpora"][0]["files_upserted"] == 60
    # Reads share two cores with the embedding batches, so they slow down, but never queue behind the run:
    # relative, in the same run, each one takes a small part of it.
    assert waits[len(waits) // 2] < report["seconds"] / 5, (waits, report["seconds"])
