"""The private world a test runs in: XDG dirs, a short socket path, a baseline config, and the processes
started there (daemon, warm shim host), with the helpers that find and stop them.

Plain helpers, imported by name (``from support.sandbox import Sandbox``); the fixtures built on them
(``sandbox``, ``model_cache``) are in ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mcp import ClientSession

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_WIKI = REPO_ROOT / ".hallouminate" / "wiki"
# A few pages of the sample wiki, for tests about the machinery rather than what the whole wiki answers:
# the shim's question still finds architecture.md first, and guides/ is still a subdirectory.
SMALL_WIKI = (
    "index.md",
    "architecture.md",
    "overview.md",
    "daemon-lifecycle.md",
    "guides/getting-started.md",
)


@dataclass
class Sandbox:
    """A private world for one test: XDG dirs, a short socket path, a baseline config."""

    root: Path
    env: dict[str, str]
    socket: Path
    config_file: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def write_config(self, text: str) -> None:
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(text)

    def make_repo(
        self, name: str = "sample", *, wiki: Path | None = SAMPLE_WIKI, pages: Sequence[str] | None = None
    ) -> Path:
        """A repository whose wiki is a copy of the sample wiki (or empty); ``pages``: only those of its
        pages (embedding the whole sample costs ~10 s of CPU, ``SMALL_WIKI`` a fifth of that)."""
        repo = self.root / name
        (repo / ".hallouminate").mkdir(parents=True)
        (repo / ".hallouminate" / "config.toml").write_text(f'[[repository]]\nname = "{name}"\npath = "."\n')
        target = repo / ".hallouminate" / "wiki"
        if wiki is None:
            target.mkdir()
        elif pages is None:
            shutil.copytree(wiki, target)
        else:
            for page in pages:
                (target / page).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(wiki / page, target / page)
        return repo

    def start_daemon(self, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hallouminate", "daemon", "run"],
            env={**self.env, **(extra_env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        wait_for_socket(self.socket, proc)
        return proc

    @property
    def daemon_log(self) -> Path:
        """The daemon's own log (what it did and why: drains, idle exits, watcher re-indexes)."""
        return Path(self.env["XDG_STATE_HOME"]) / "hallouminate" / "daemon.log"

    def daemon_log_text(self) -> str:
        try:
            return self.daemon_log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def daemon_pid(self) -> int | None:
        lock = self.socket.with_name(self.socket.name + ".lock")
        try:
            text = lock.read_text().strip()
        except OSError:
            return None
        return int(text) if text else None


def hm(sandbox: Sandbox, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI, as a process in the sandbox's world."""
    return subprocess.run(
        [sys.executable, "-m", "hallouminate", *args],
        env=sandbox.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def config_only_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a CLI process that only reads config files: this one's, with its own HOME and
    XDG_CONFIG_HOME under ``tmp_path`` and none of our variables (no daemon is reached through it)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    base.update({"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    return base


def wait_for_socket(socket: Path, proc: subprocess.Popen[bytes] | None = None, timeout: float = 60) -> None:
    import socket as socketlib

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            raise RuntimeError(f"daemon exited with {proc.returncode}: {out}")
        with contextlib.suppress(OSError), socketlib.socket(socketlib.AF_UNIX) as s:
            s.connect(str(socket))
            return
        time.sleep(0.05)
    raise TimeoutError(f"no daemon on {socket}")


@contextlib.contextmanager
def daemon_import_log(sandbox: Sandbox, log: Path) -> Iterator[Callable[[], str]]:
    """A daemon started under ``python -X importtime`` (every module it imports, with its cost, written to
    ``log``), up on its socket; the body drives it and must stop it (``hallouminate daemon stop``). Yields
    a function that waits for the daemon to exit and returns the log's text."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "hallouminate", "daemon", "run"],
            env=sandbox.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        sandbox.procs.append(proc)
        wait_for_socket(sandbox.socket, proc)

        def text() -> str:
            proc.wait(timeout=60)
            return log.read_text(errors="replace")

        yield text


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); treat it as dead.
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1][0] != "Z"
    return True


def daemons_serving(sandbox: Sandbox) -> list[int]:
    """Pids of live daemon processes started for this sandbox's socket."""
    marker = f"HALLOUMINATE_SOCKET={sandbox.socket}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # exited meanwhile, or not ours to read
        if b"daemon\x00run" in cmdline and marker in environ.split(b"\x00") and pid_alive(int(entry.name)):
            pids.append(int(entry.name))
    return pids


def kill_daemon_of(sandbox: Sandbox, sig: int = signal.SIGTERM) -> None:
    pid = sandbox.daemon_pid()
    if pid and pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def shim_host_pid(sandbox: Sandbox) -> int | None:
    lock = sandbox.socket.with_name(sandbox.socket.name + ".shim.lock")
    with contextlib.suppress(OSError, ValueError):
        return int(lock.read_text().strip())
    return None


def kill_shim_host_of(sandbox: Sandbox) -> None:
    pid = shim_host_pid(sandbox)
    if pid and pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def private_world(
    model_cache: Path,
    *,
    prefix: str = "hm-",
    baseline_extra: str = "",
    extra_env: Callable[[Path], dict[str, str]] | None = None,
    in_process: bool = True,
    stop_signal: int = signal.SIGTERM,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> Iterator[Sandbox]:
    """A private world: XDG dirs, a short socket path, a baseline config; torn down with every process
    of ours started in it (daemon, warm shim host, ``procs``). ``in_process`` also points this process's
    environment at it, for in-process clients (and the daemons they spawn)."""
    # Short root under /tmp: Unix socket paths are limited to ~107 bytes.
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data"),
            "HALLOUMINATE_SOCKET": str(root / "run" / "d.sock"),
            **(extra_env(root) if extra_env is not None else {}),
        }
    )
    # A test's own `monkeypatch`, when given, so that its undo restores everything in one place.
    patch = monkeypatch or pytest.MonkeyPatch()
    if in_process:
        for key in list(os.environ):
            if key.startswith(("XDG_", "HALLOUMINATE_")):
                patch.delenv(key)
        for key, value in env.items():
            if key.startswith(("XDG_", "HALLOUMINATE_")) or key == "HOME":
                patch.setenv(key, value)
    box = Sandbox(
        root=root,
        env=env,
        socket=root / "run" / "d.sock",
        config_file=root / "config" / "hallouminate" / "config.toml",
    )
    box.write_config(f'[embeddings]\ncache_dir = "{model_cache}"\n{baseline_extra}')
    try:
        yield box
    finally:
        kill_daemon_of(box, stop_signal)
        kill_shim_host_of(box)
        for proc in box.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if monkeypatch is None:
            patch.undo()
        shutil.rmtree(root, ignore_errors=True)


# -- a real MCP client over stdio --------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def mcp_session(sandbox: Sandbox, *, cwd: Path | None = None) -> AsyncIterator[ClientSession]:
    """``hallouminate serve`` as a subprocess (started in ``cwd``), driven by the SDK's stdio client."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hallouminate", "serve"], env=sandbox.env, cwd=cwd
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
