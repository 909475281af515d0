"""The warm shim host: later launches are forked from a process that already imported the MCP SDK."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.sandbox import SMALL_WIKI, Sandbox, mcp_session, pid_alive, shim_host_pid

QUESTION = "How does the MCP shim reach the daemon?"


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(") ", 1)[1].split()[1]) == pid and pid_alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def wait_until(predicate, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


async def test_the_first_launch_starts_a_host_and_the_next_one_is_forked_from_it(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    async with mcp_session(sandbox) as session:
        await session.call_tool("index", {"cwd": str(repo)})
    host = shim_host_pid(sandbox)
    assert host is not None and pid_alive(host)
    async with mcp_session(sandbox) as session:
        # The shim answering us is the host's child, running on our stdio.
        # (A host steps aside when our source files change between the two launches: not in CI.)
        assert shim_host_pid(sandbox) == host
        assert len(children_of(host)) == 1
        found = await session.call_tool("ground", {"cwd": str(repo), "query": QUESTION})
        assert found.structured_content["docs"][0]["path"] == "architecture.md"
    # The client closed stdin: the forked shim ended with its session, the host stays for the next one.
    assert wait_until(lambda: not children_of(host))
    assert pid_alive(host)


def test_killing_the_launcher_stops_its_forked_shim(sandbox: Sandbox) -> None:
    async def warm_up() -> None:
        async with mcp_session(sandbox):
            pass

    asyncio.run(warm_up())
    host = shim_host_pid(sandbox)
    assert host is not None
    launcher = subprocess.Popen(
        [sys.executable, "-m", "hallouminate", "serve"],
        env=sandbox.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    sandbox.procs.append(launcher)
    assert wait_until(lambda: len(children_of(host)) == 1)
    (shim,) = children_of(host)
    # What an MCP host does to a server it is done with: kill its process group, stdin still open.
    os.killpg(launcher.pid, signal.SIGKILL)
    launcher.wait()
    assert wait_until(lambda: not pid_alive(shim)), "the forked shim outlived its launcher"


async def test_a_host_running_other_code_steps_aside_for_a_fresh_one(sandbox: Sandbox) -> None:
    old_world = {**sandbox.env, "HALLOUMINATE_TEST_SHIM_FINGERPRINT": "older build"}
    old = subprocess.Popen([sys.executable, "-m", "hallouminate.shim.host"], env=old_world)
    sandbox.procs.append(old)
    assert wait_until(lambda: shim_host_pid(sandbox) == old.pid)
    async with mcp_session(sandbox) as session:
        assert (await session.list_tools()).tools
    assert old.wait(timeout=30) == 0
    assert wait_until(lambda: (shim_host_pid(sandbox) or old.pid) != old.pid)
    fresh = shim_host_pid(sandbox)
    assert fresh is not None and pid_alive(fresh)


async def test_the_host_can_be_turned_off(sandbox: Sandbox) -> None:
    sandbox.env["HALLOUMINATE_SHIM_HOST"] = "0"
    async with mcp_session(sandbox) as session:
        assert (await session.list_tools()).tools
    assert shim_host_pid(sandbox) is None


async def test_daemon_stop_logs_no_traceback_and_the_host_exits_with_the_daemon(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(wiki=None)
    host_log = sandbox.socket.with_name(sandbox.socket.name + ".shim.log")
    async with mcp_session(sandbox) as session:
        await session.call_tool("list_corpora", {"cwd": str(repo)})
        host, daemon = shim_host_pid(sandbox), sandbox.daemon_pid()
        assert host is not None and daemon is not None
        # Stopped while this shim is still connected: its connection is cut by the daemon's teardown.
        stop = subprocess.run(
            [sys.executable, "-m", "hallouminate", "daemon", "stop"],
            env=sandbox.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert stop.returncode == 0 and "daemon stopped" in stop.stdout, stop
        assert "stopped" in sandbox.daemon_log_text()
        assert "Traceback" not in sandbox.daemon_log_text(), sandbox.daemon_log_text()
        assert "CancelledError" not in sandbox.daemon_log_text()
        # A shim still runs on the host: it stays, and says why.
        assert wait_until(lambda: "still run" in host_log.read_text(), timeout=30), host_log.read_text()
        assert pid_alive(host)
    # The session ended: nothing holds the host any more.
    assert wait_until(lambda: not pid_alive(host), timeout=30), host_log.read_text()
    assert f"the daemon (pid {daemon})" in host_log.read_text()
    assert "has stopped: exiting with it" in host_log.read_text()
