"""``hallouminate http enable|disable|url|status`` and ``port set|clear`` through the real CLI (processes)
and a real daemon: the baseline config edited in place, the running listener started, moved and stopped
at once, the endpoint file holding the live URL or absent; and the listener's lifecycle (no idle exit
while it listens, SIGTERM removes the endpoint file, a kill -9 leaves one the next start replaces)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.http_world import endpoint_file
from support.sandbox import (
    Sandbox,
    hm,
    kill_daemon_of,
    pid_alive,
    private_world,
)

COMMENT = "# my own note, kept by every edit\n"


@pytest.fixture(scope="module")
def box(model_cache: Path) -> Iterator[Sandbox]:
    with private_world(model_cache, prefix="hm-hcli-", in_process=False) as sandbox:
        sandbox.write_config(COMMENT + sandbox.config_file.read_text())
        sandbox.make_repo("sample", pages=["index.md"])
        yield sandbox


def run(box: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return hm(box, *args, cwd=box.root / "sample")


def ok(box: Sandbox, *args: str) -> str:
    done = run(box, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr, box.daemon_log_text()[-2000:])
    return done.stdout.strip()


def healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=10).json() == {"ok": True}
    except httpx.TransportError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def endpoint(box: Sandbox) -> str | None:
    try:
        return endpoint_file(box).read_text().strip()
    except FileNotFoundError:
        return None


def test_enable_starts_the_daemon_and_prints_the_url(box: Sandbox) -> None:
    refused = run(box, "http", "url")
    assert refused.returncode == 3 and refused.stdout == ""
    assert "HTTP is not enabled" in refused.stderr and "hallouminate http enable" in refused.stderr
    assert box.daemon_pid() is None or not pid_alive(box.daemon_pid() or 0), "`http url` started no daemon"

    url = ok(box, "http", "enable")
    assert url.startswith("http://127.0.0.1:") and healthy(url)
    assert endpoint(box) == url
    assert ok(box, "http", "url") == url
    config = box.config_file.read_text()
    assert config.startswith(COMMENT) and "[embeddings]" in config and "enabled = true" in config
    # Every way of asking shows it: daemon status, status, http status.
    assert json.loads(ok(box, "daemon", "status", "--format", "json"))["http_url"] == url
    assert json.loads(ok(box, "status", "--format", "json"))["http_url"] == url
    assert f"HTTP: {url}" in ok(box, "status")
    shown = json.loads(ok(box, "http", "status", "--format", "json"))
    assert shown == {"enabled": True, "host": "127.0.0.1", "port": None, "daemon": True, "url": url}
    # Enabling again changes nothing: same listener, same URL.
    assert ok(box, "http", "enable") == url


def test_port_set_moves_the_running_listener(box: Sandbox) -> None:
    before = ok(box, "http", "enable")
    port = free_port()
    url = ok(box, "port", "set", str(port))
    assert url == f"http://127.0.0.1:{port}" and healthy(url) and endpoint(box) == url
    assert not healthy(before), "the old port is let go"
    assert f"port = {port}" in box.config_file.read_text()
    assert box.config_file.read_text().startswith(COMMENT)


@pytest.mark.parametrize("bad", ["0", "65536", "-1", "eighty"])
def test_port_set_outside_the_range_is_refused(box: Sandbox, bad: str) -> None:
    before = box.config_file.read_text()
    done = run(box, "port", "set", "--", bad)
    assert done.returncode == 2, done
    assert f"{bad!r} is not a port" in done.stderr and "1 to 65535" in done.stderr, done.stderr
    assert box.config_file.read_text() == before


def test_a_port_in_use_is_named_and_the_daemon_keeps_serving(box: Sandbox) -> None:
    url = ok(box, "http", "enable")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        done = run(box, "port", "set", str(busy))
    assert done.returncode == 2, done
    assert f"port {busy}" in done.stderr and "already in use" in done.stderr, done.stderr
    assert "hallouminate port set N" in done.stderr and f"keeps serving on {url}" in done.stderr
    # The socket and the listener it had are still there; the endpoint file still names it.
    assert healthy(url) and endpoint(box) == url
    assert json.loads(ok(box, "daemon", "status", "--format", "json"))["http_url"] == url
    ok(box, "port", "set", str(port_of(url)))  # back to the port that works


def test_port_clear_keeps_the_running_port_then_picks_a_random_one(box: Sandbox) -> None:
    url = ok(box, "http", "enable")
    fixed = free_port()
    url = ok(box, "port", "set", str(fixed))
    cleared = ok(box, "port", "clear")
    assert "random free port at the next start" in cleared and url in cleared
    assert "port =" not in box.config_file.read_text()
    assert healthy(url) and endpoint(box) == url, "the running listener keeps its port"
    assert ok(box, "daemon", "stop") == "daemon stopped"
    assert endpoint(box) is None, "a stopped daemon leaves no endpoint file"
    fresh = ok(box, "http", "url")  # starts the daemon: HTTP is enabled
    assert healthy(fresh) and endpoint(box) == fresh


def test_disable_stops_the_listener(box: Sandbox) -> None:
    url = ok(box, "http", "enable")
    assert "stopped the listener" in ok(box, "http", "disable")
    assert endpoint(box) is None and not healthy(url)
    assert "enabled = false" in box.config_file.read_text()
    refused = run(box, "http", "url")
    assert refused.returncode == 3 and "hallouminate http enable" in refused.stderr
    assert run(box, "http", "status").returncode == 3
    assert "http_url" not in json.loads(ok(box, "daemon", "status", "--format", "json"))
    assert "http_url" not in json.loads(ok(box, "status", "--format", "json"))


def wait_until(predicate: object, timeout: float = 60.0) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_listening_daemon_does_not_exit_on_idle(model_cache: Path) -> None:
    with private_world(
        model_cache, prefix="hm-hidle-", in_process=False, baseline_extra="[daemon]\nidle_exit_secs = 1\n"
    ) as world:
        world.make_repo("sample", pages=["index.md"])
        url = hm(world, "http", "enable", cwd=world.root).stdout.strip()
        assert healthy(url)
        pid = world.daemon_pid()
        assert pid is not None
        # Three idle periods with no socket connection: still up, still serving.
        time.sleep(3)
        assert pid_alive(pid) and healthy(url)
        assert hm(world, "http", "disable", cwd=world.root).returncode == 0
        # Without the listener the idle timer applies again.
        assert wait_until(lambda: not pid_alive(pid)), "the daemon exits on idle once HTTP is off"
        assert endpoint(world) is None


def test_sigterm_removes_the_endpoint_file_and_kill9_leaves_one_the_next_start_replaces(
    model_cache: Path,
) -> None:
    with private_world(model_cache, prefix="hm-hsig-", in_process=False) as world:
        url = hm(world, "http", "enable", cwd=world.root).stdout.strip()
        assert healthy(url) and endpoint(world) == url
        kill_daemon_of(world, signal.SIGTERM)
        assert endpoint(world) is None and not healthy(url)

        url = hm(world, "http", "url", cwd=world.root).stdout.strip()
        assert healthy(url) and endpoint(world) == url
        kill_daemon_of(world, signal.SIGKILL)
        assert endpoint(world) == url and not healthy(url), "a killed daemon cannot remove it"
        # The next start replaces the stale URL with its own...
        fresh = hm(world, "http", "url", cwd=world.root).stdout.strip()
        assert healthy(fresh) and endpoint(world) == fresh
        kill_daemon_of(world, signal.SIGKILL)
        # ...and one with HTTP disabled removes it.
        world.write_config(world.config_file.read_text().replace("enabled = true", "enabled = false"))
        world.start_daemon()
        assert wait_until(lambda: endpoint(world) is None), "a stale endpoint file is removed at start"
