"""The real CLI on a pseudo-terminal, as a user's terminal runs it: what a tty-only display (tqdm's bar) shows."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from support.sandbox import Sandbox


def hm_on_tty(sandbox: Sandbox, *args: str, cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """Run ``hallouminate ARGS`` with stdin, stdout and stderr on one pty; its exit code and everything it
    wrote (carriage returns kept: a bar redraws its line with them)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hallouminate", *args],
        env={**sandbox.env, "COLUMNS": "120"},
        cwd=cwd,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed its end
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            raise AssertionError(
                f"hallouminate {' '.join(args)} did not end in {timeout} s: {out.decode()!r}"
            )
        return proc.wait(timeout=30), out.decode(errors="replace")
    finally:
        os.close(master)
