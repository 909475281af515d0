"""The daemon on its real socket: frames sent straight to it, modes, the singleton lock, peer checks."""

from __future__ import annotations

import os
import socket
import stat
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

from hallouminate import __version__
from hallouminate.protocol import MAX_FRAME, PROTOCOL_VERSION
from support.sandbox import Sandbox, mcp_session, private_world


class RawClient:
    """Bytes on the socket, nothing of ours in between."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, message: object) -> None:
        body = msgpack.packb(message)
        self.send_raw(struct.pack(">I", len(body)) + body)

    def recv(self) -> dict:
        header = self._exactly(4)
        return msgpack.unpackb(self._exactly(struct.unpack(">I", header)[0]))

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def ping(self, rid: int = 1) -> dict:
        self.send({"v": 1, "id": rid, "op": "ping", "cwd": None, "args": {}})
        return self.recv()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def daemon(model_cache: Path) -> Iterator[Sandbox]:
    """One daemon for the tests that only talk to it: none stops it or changes its socket's modes."""
    with private_world(model_cache, prefix="hm-sk-", in_process=False) as box:
        box.start_daemon()
        yield box


@pytest.fixture
def own_daemon(sandbox: Sandbox) -> Sandbox:
    """A daemon of the test's own, for a test that stops it or opens its socket to others."""
    sandbox.start_daemon()
    return sandbox


def test_ping_reports_version_and_protocol(daemon: Sandbox) -> None:
    client = RawClient(str(daemon.socket))
    answer = client.ping(5)
    assert answer["ok"] is True and answer["id"] == 5
    assert answer["result"]["version"] == __version__
    assert answer["result"]["protocol"] == PROTOCOL_VERSION


def test_garbage_frame_gets_invalid_params_and_the_connection_goes_on(daemon: Sandbox) -> None:
    client = RawClient(str(daemon.socket))
    client.send_raw(struct.pack(">I", 3) + b"\xc1\xc1\xc1")
    answer = client.recv()
    assert answer["ok"] is False and answer["error"]["kind"] == "invalid_params"
    assert "msgpack" in answer["error"]["message"]
    assert client.ping(2)["ok"] is True


def test_oversized_frame_gets_invalid_params_then_hang_up_and_daemon_lives(daemon: Sandbox) -> None:
    client = RawClient(str(daemon.socket))
    client.send_raw(struct.pack(">I", MAX_FRAME + 1))
    answer = client.recv()
    assert answer["error"]["kind"] == "invalid_params"
    assert str(MAX_FRAME) in answer["error"]["message"]
    assert RawClient(str(daemon.socket)).ping()["ok"] is True


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"v": 1, "id": 3, "op": "frobnicate", "cwd": None, "args": {}}, "unknown op 'frobnicate'"),
        ({"v": 1, "id": 3, "op": "ping", "args": {}}, "missing field(s) cwd"),
        ({"v": 1, "id": 3, "op": "ground", "cwd": "/", "args": {}}, "'query' is a required property"),
        ({"v": 1, "id": 3, "op": "ground", "cwd": "rel", "args": {"query": "x"}}, "absolute path"),
        ("just a string", "must be a msgpack map"),
    ],
)
def test_bad_requests_are_answered_with_invalid_params(
    daemon: Sandbox, message: object, fragment: str
) -> None:
    client = RawClient(str(daemon.socket))
    client.send(message)
    answer = client.recv()
    assert answer["ok"] is False and answer["error"]["kind"] == "invalid_params"
    assert fragment in answer["error"]["message"]
    assert client.ping(4)["ok"] is True


def test_several_requests_share_one_connection(daemon: Sandbox) -> None:
    client = RawClient(str(daemon.socket))
    for rid in (10, 11, 12):
        client.send({"v": 1, "id": rid, "op": "ping", "cwd": None, "args": {}})
    assert sorted(client.recv()["id"] for _ in range(3)) == [10, 11, 12]


def test_socket_is_0600_in_a_0700_directory(daemon: Sandbox) -> None:
    assert stat.S_IMODE(daemon.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.socket.parent.stat().st_mode) == 0o700


def test_a_second_daemon_is_refused_naming_the_lock(daemon: Sandbox) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "hallouminate", "daemon", "run"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1
    assert "d.sock.lock" in second.stdout and "already running" in second.stdout
    assert RawClient(str(daemon.socket)).ping()["ok"] is True


def test_a_stale_socket_from_a_dead_daemon_is_replaced(sandbox: Sandbox) -> None:
    sandbox.socket.parent.mkdir(mode=0o700, parents=True)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(sandbox.socket))
    stale.close()  # the file stays, nobody listens: what a kill -9 leaves behind
    sandbox.start_daemon()
    assert RawClient(str(sandbox.socket)).ping()["ok"] is True


def test_a_connection_from_another_uid_is_refused(own_daemon: Sandbox) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another uid")  # CI and this machine run as root
    # Open the doors so the kernel lets the other user connect; the peer-credential check must still refuse.
    os.chmod(own_daemon.root, 0o711)
    os.chmod(own_daemon.socket.parent, 0o711)
    os.chmod(own_daemon.socket, 0o666)
    code = (
        "import os, socket, struct, msgpack, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "body = msgpack.packb({'v': 1, 'id': 1, 'op': 'ping', 'cwd': None, 'args': {}})\n"
        "try:\n"
        "    s.sendall(struct.pack('>I', len(body)) + body)\n"
        "except BrokenPipeError:\n"
        "    pass  # the daemon may refuse and hang up before we speak; its answer is still there\n"
        "n = struct.unpack('>I', s.recv(4))[0]; data = b''\n"
        "while len(data) < n: data += s.recv(n)\n"
        "print(msgpack.unpackb(data)['error']['message'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(own_daemon.socket)], capture_output=True, text=True, timeout=30
    )
    assert "serves its own user only" in out.stdout, out.stderr


def test_shared_socket_directory_is_refused(sandbox: Sandbox) -> None:
    shared = sandbox.root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    env = {**sandbox.env, "HALLOUMINATE_SOCKET": str(shared / "d.sock")}
    out = subprocess.run(
        [sys.executable, "-m", "hallouminate", "daemon", "run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and "shared" in out.stdout


async def test_an_existing_socket_directory_of_ours_is_used_as_it_is_never_chmoded(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(wiki=None)
    mine = sandbox.root / "mine"
    mine.mkdir()
    os.chmod(mine, 0o755)  # a user's ordinary directory: readable by others, writable by us only
    (mine / "notes.txt").write_text("the user's\n")
    # Teardown finds the daemon and the warm host through the sandbox's socket.
    sandbox.socket = mine / "d.sock"
    sandbox.env["HALLOUMINATE_SOCKET"] = str(sandbox.socket)
    async with mcp_session(sandbox) as session:
        listed = await session.call_tool("list_corpora", {"cwd": str(repo)})
    assert listed.structured_content["corpora"][0]["name"] == "repo:sample:wiki"
    assert sandbox.daemon_pid() is not None
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755
    assert stat.S_IMODE(sandbox.socket.stat().st_mode) == 0o600


async def test_a_refused_socket_directory_is_left_as_it_was(sandbox: Sandbox) -> None:
    from mcp import MCPError

    repo = sandbox.make_repo(wiki=None)
    shared = sandbox.root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    sandbox.env["HALLOUMINATE_SOCKET"] = str(shared / "d.sock")
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("list_corpora", {"cwd": str(repo)})
    assert "is shared (mode 0o1777)" in info.value.message and "HALLOUMINATE_SOCKET" in info.value.message
    # No daemon or warm host was started there, so nothing of theirs (spawn log, shim log, lock) is left.
    assert sorted(os.listdir(shared)) == []
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_sigterm_removes_the_socket(own_daemon: Sandbox) -> None:
    proc = own_daemon.procs[-1]
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert not own_daemon.socket.exists()
