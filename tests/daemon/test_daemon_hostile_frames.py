"""Hostile bytes on the socket: the daemon never dies, answers what is framed, and stays bounded.

A hypothesis-driven fuzzer sends random and mutated frames (bad lengths, truncated bodies, wrong types,
huge strings, deep nesting, unknown ops) to one daemon for the whole module. `HALLOUMINATE_FUZZ_FRAMES`
raises the frame count for the stress tier (`make stress`).
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hallouminate.protocol.schemas import ARGS
from support.sandbox import pid_alive, wait_for_socket

FRAMES_WANTED = int(os.environ.get("HALLOUMINATE_FUZZ_FRAMES", "2500"))
HEADER = struct.Struct(">I")
MAX_FRAME = 4 * 1024 * 1024
# Long enough that another client is served well within it on a loaded machine; only the stalled-client
# test waits for it (every broken stream ends with EOF, not a stall).
STALL_SECS = 3.0
sent = {"framed": 0, "broken": 0}


@dataclass
class Target:
    socket: Path
    proc: subprocess.Popen[bytes]


@pytest.fixture(scope="module")
def target(model_cache: Path) -> Iterator[Target]:
    root = Path(tempfile.mkdtemp(prefix="hm-fz-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_DATA_HOME": str(root / "data"),
            "HALLOUMINATE_SOCKET": str(root / "run" / "d.sock"),
            "HALLOUMINATE_TEST_FRAME_STALL_SECS": str(STALL_SECS),
        }
    )
    config = root / "config" / "hallouminate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[embeddings]\ncache_dir = "{model_cache}"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "hallouminate", "daemon", "run"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_socket(root / "run" / "d.sock", proc)
        yield Target(root / "run" / "d.sock", proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def connect(target: Target) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(30)
    sock.connect(str(target.socket))
    return sock


def recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def recv_message(sock: socket.socket) -> dict[str, Any]:
    (length,) = HEADER.unpack(recv_exact(sock, 4))
    return msgpack.unpackb(recv_exact(sock, length), raw=False)


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def call(sock: socket.socket, message: Any) -> dict[str, Any]:
    sock.sendall(frame(msgpack.packb(message, use_bin_type=True)))
    return recv_message(sock)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


# -- what the fuzzer sends --------------------------------------------------------------------------------
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.binary(max_size=40),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=30,
)
# Every op the daemon serves: an "unknown op" must be none of them (hypothesis found "shutdown").
KNOWN_OPS = frozenset(ARGS)
OPS = ["ground", "index", "read_markdown", "list_files", "status", "ping", "nonsense", "", "GROUND"]


@dataclass(frozen=True)
class Deep:
    """Arrays nested `depth` deep, as raw msgpack: deeper than any packer (or printer) would go."""

    depth: int

    def body(self) -> bytes:
        return b"\x91" * self.depth + b"\xc0"


def encode(message: Any) -> bytes:
    if isinstance(message, Deep):
        return message.body()
    return msgpack.packb(message, use_bin_type=True)


def summary(message: Any) -> str:
    text = repr(message)
    return text if len(text) < 300 else text[:300] + f"... ({len(text)} chars)"


@st.composite
def bad_requests(draw: st.DrawFn) -> Any:
    """A decodable body that is not a valid request: every one must get `invalid_params`."""
    kind = draw(st.sampled_from(["not-a-map", "missing", "types", "unknown-op", "args", "huge", "deep"]))
    base: dict[str, Any] = {"v": 1, "id": draw(st.integers(1, 10**6)), "op": "ground", "cwd": "/", "args": {}}
    if kind == "not-a-map":
        return draw(st.one_of(scalars, st.lists(values, max_size=5)))
    if kind == "missing":
        for key in draw(st.lists(st.sampled_from(list(base)), min_size=1, unique=True)):
            base.pop(key)
        return base
    if kind == "types":
        key = draw(st.sampled_from(["v", "id", "op", "cwd", "args"]))
        base[key] = draw(values.filter(lambda v, key=key: not _acceptable(key, v)))
        return base
    if kind == "unknown-op":
        base["op"] = draw(st.text(min_size=1, max_size=30).filter(lambda s: s not in KNOWN_OPS))
        return base
    if kind == "args":
        base["op"] = draw(st.sampled_from(OPS))
        base["args"] = draw(st.dictionaries(st.text(max_size=12), values, min_size=1, max_size=5))
        base["args"]["\x00unknown field"] = True  # every op refuses unknown fields
        return base
    if kind == "huge":
        base["args"] = {"query": "x" * draw(st.integers(10_000, 300_000)), "\x00unknown": 1}
        return base
    return Deep(draw(st.integers(100, 200_000)))


def _acceptable(key: str, value: Any) -> bool:
    if key == "v":
        return value == 1 and not isinstance(value, bool)
    if key == "id":
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    if key == "op":
        return isinstance(value, str) and value in KNOWN_OPS
    if key == "cwd":
        return value is None or isinstance(value, str)
    return isinstance(value, dict) and not value


@st.composite
def broken_streams(draw: st.DrawFn) -> bytes:
    """Bytes after which the stream cannot continue: the daemon answers or hangs up, and lives on."""
    kind = draw(st.sampled_from(["oversized", "truncated", "short-header", "garbage", "bitflip"]))
    if kind == "oversized":
        return HEADER.pack(draw(st.integers(MAX_FRAME + 1, 2**32 - 1))) + draw(st.binary(max_size=64))
    if kind == "truncated":
        body = msgpack.packb({"v": 1, "id": 1, "op": "ping", "cwd": None, "args": {}})
        return HEADER.pack(len(body) + draw(st.integers(1, 1000))) + body
    if kind == "short-header":
        return draw(st.binary(min_size=1, max_size=3))
    if kind == "garbage":
        return draw(st.binary(min_size=4, max_size=512))
    body = bytearray(frame(msgpack.packb({"v": 1, "id": 7, "op": "ping", "cwd": None, "args": {}})))
    for index in draw(st.lists(st.integers(0, len(body) - 1), min_size=1, max_size=4)):
        body[index] ^= 1 << draw(st.integers(0, 7))
    return bytes(body)


# -- the tests ----------------------------------------------------------------------------------------------
BATCH = 40
FUZZ = settings(
    max_examples=max(1, FRAMES_WANTED // BATCH),
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    database=None,
)


@FUZZ
@given(batch=st.lists(bad_requests(), min_size=BATCH, max_size=BATCH))
def test_every_well_framed_bad_request_gets_invalid_params(target: Target, batch: list[Any]) -> None:
    with connect(target) as sock:
        for message in batch:
            body = encode(message)
            if len(body) > MAX_FRAME:
                continue
            sock.sendall(frame(body))
            answer = recv_message(sock)
            sent["framed"] += 1
            assert answer["ok"] is False, (summary(message), answer)
            assert answer["error"]["kind"] == "invalid_params", (summary(message), answer)
        assert call(sock, {"v": 1, "id": 0, "op": "ping", "cwd": None, "args": {}})["ok"] is True


@settings(FUZZ, max_examples=max(1, FRAMES_WANTED // 100))
@given(data=broken_streams())
def test_a_broken_stream_costs_only_its_own_connection(target: Target, data: bytes) -> None:
    with connect(target) as sock:
        sock.settimeout(STALL_SECS + 20)
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)  # no more from us: whatever was whole gets its answer, then EOF
        sent["broken"] += 1
        # The daemon answers (invalid_params) and/or hangs up; it must never hang on us for good.
        try:
            while True:
                answer = recv_message(sock)
                assert answer["ok"] is False or answer["result"].get("pid"), answer
                if answer["ok"] is False:
                    assert answer["error"]["kind"] == "invalid_params", answer
        except ConnectionError:
            pass
    with connect(target) as sock:
        assert call(sock, {"v": 1, "id": 1, "op": "ping", "cwd": None, "args": {}})["ok"] is True


def test_a_stalled_client_is_dropped_and_blocks_nobody(target: Target) -> None:
    stalled = connect(target)
    stalled.sendall(HEADER.pack(100) + b"\x85")  # a frame begun, never finished
    with connect(target) as other:
        assert call(other, {"v": 1, "id": 1, "op": "ping", "cwd": None, "args": {}})["ok"] is True
    # Served while the stalled peer was still waited for: its answer (sent when the daemon gives up on it)
    # has not come yet. A daemon blocked on the stalled frame would have answered it first.
    assert select.select([stalled], [], [], 0)[0] == [], (
        "a stalled peer was dropped before another was served"
    )
    answer = recv_message(stalled)
    assert answer["error"]["kind"] == "invalid_params" and "not finished" in answer["error"]["message"]
    assert stalled.recv(1) == b""  # and hung up
    stalled.close()


def test_a_string_that_is_not_utf8_is_answered_under_its_request_id(target: Target) -> None:
    # The MCP shim refuses such text itself; a raw client reaching the socket must still get an answer
    # it can match (before, the answer had no id and the caller waited forever).
    request = {"v": 1, "id": 4242, "op": "ground", "cwd": "/", "args": {"query": "QQQQ"}}
    body = msgpack.packb(request, use_bin_type=True).replace(b"QQQQ", b"Q\xff\xfeQ")
    with connect(target) as sock:
        sock.sendall(frame(body))
        answer = recv_message(sock)
        assert answer["id"] == 4242 and answer["ok"] is False, answer
        assert answer["error"]["kind"] == "invalid_params", answer
        assert answer["error"]["type"] == "bad_encoding", answer
        assert answer["error"]["data"]["problem"] == "encoding", answer
        assert "not valid UTF-8" in answer["error"]["message"]
        # The connection goes on.
        assert call(sock, {"v": 1, "id": 5, "op": "ping", "cwd": None, "args": {}})["ok"] is True


def test_our_client_refuses_to_send_a_lone_surrogate_and_its_connection_goes_on(target: Target) -> None:
    import asyncio

    from hallouminate.client import DaemonConnection
    from hallouminate.errors import BadEncoding

    async def exchange() -> tuple[BadEncoding, Any]:
        async with await DaemonConnection.open(target.socket) as conn:
            try:
                await conn.call("ground", "/", {"query": "why \ud800"}, timeout=30)
            except BadEncoding as exc:
                return exc, await conn.call("ping", timeout=30)
            raise AssertionError("a lone surrogate was sent")

    refused, pong = asyncio.run(exchange())
    assert refused.data["problem"] == "encoding" and "not valid Unicode" in refused.message
    assert pong["pid"] == target.proc.pid


def test_the_daemon_survived_and_its_memory_stayed_bounded(target: Target) -> None:
    # Runs last in this module (file order): every fuzz case above has been sent by now.
    assert pid_alive(target.proc.pid)
    with connect(target) as sock:
        status = call(sock, {"v": 1, "id": 1, "op": "status", "cwd": None, "args": {}})
    assert status["ok"] is True
    assert sent["framed"] + sent["broken"] >= FRAMES_WANTED, sent
    before = rss_kib(target.proc.pid)
    # Another round of the heaviest inputs must not grow the daemon: nothing is kept per bad request.
    with connect(target) as sock:
        for _ in range(50):
            answer = call(sock, {"v": 1, "id": 2, "op": "ground", "cwd": "/", "args": {"q": "x" * 2_000_000}})
            assert answer["error"]["kind"] == "invalid_params"
    grown_mib = (rss_kib(target.proc.pid) - before) / 1024
    print(f"frames sent: {sent}, RSS growth over 50 x 2 MB requests: {grown_mib:.1f} MiB")
    assert grown_mib < 64, f"RSS grew by {grown_mib:.1f} MiB"
