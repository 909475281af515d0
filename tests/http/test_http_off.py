"""A daemon without ``[http] enabled`` pays nothing for the HTTP transport: it never imports the HTTP stack
(the MCP SDK, Starlette, uvicorn: ~2 s of CPU at every start), only the stdlib module that clears a stale
endpoint file."""

from __future__ import annotations

import re
from pathlib import Path

from support.sandbox import Sandbox, daemon_import_log, hm

HTTP_STACK = re.compile(r"\|\s+(uvicorn|starlette|mcp|hallouminate\.http\.(?!endpoint$)[\w.]+)$", re.M)


def test_a_daemon_without_http_never_imports_the_http_stack(sandbox: Sandbox, tmp_path: Path) -> None:
    with daemon_import_log(sandbox, tmp_path / "imports.txt") as import_log:
        status = hm(sandbox, "status", "--format", "json", cwd=sandbox.root)
        assert status.returncode == 0, status.stdout + status.stderr
        assert "http_url" not in status.stdout
        stopped = hm(sandbox, "daemon", "stop", cwd=sandbox.root)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        text = import_log()
    assert "hallouminate.http.endpoint" in text  # the check ran: a start clears a stale endpoint file
    assert HTTP_STACK.findall(text) == []
