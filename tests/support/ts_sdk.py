"""The official TypeScript SDK's MCP client (``ts_client/client.mjs``): driving ``hallouminate serve`` over
stdio (``ts_session``), or a face's Streamable HTTP endpoint on the daemon's listener (``ts_http_session``).

``make setup`` installs it (``npm ci`` in ``tests/support/ts_client``, from its committed lock file). A
machine without Node.js, or a checkout where setup has not run, fails the tests that use it with a message
saying what to do: it is never a skip, since a skip would hide that the second client was not run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.sandbox import Sandbox

TS_CLIENT = Path(__file__).resolve().parent / "ts_client"
SCRIPT = TS_CLIENT / "client.mjs"
SDK = TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
NODE_MAJOR_MIN = 18  # the SDK's own engines field


@dataclass
class TsSession:
    """What the TypeScript client saw: the negotiated handshake and one answer per request, in order."""

    protocol_version: str | None
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None
    responses: list[dict[str, Any]]
    session_id: str | None = None  # HTTP: the Mcp-Session-Id the server issued at initialize
    terminated: bool = False  # HTTP with terminate=True: the session was ended with DELETE

    def result(self, index: int) -> dict[str, Any]:
        """The result of request ``index``; fails the test with the error if that request got one."""
        answer = self.responses[index]
        assert "result" in answer, f"request {index} failed: {answer.get('error')}"
        return answer["result"]  # type: ignore[no-any-return]

    def error(self, index: int) -> dict[str, Any]:
        answer = self.responses[index]
        assert "error" in answer, f"request {index} succeeded, an error was expected: {answer.get('result')}"
        return answer["error"]  # type: ignore[no-any-return]


def node() -> str:
    """The ``node`` executable, or a test failure that says how to get it and the SDK."""
    found = shutil.which("node")
    if found is None:
        pytest.fail(
            f"node is not on PATH: the TypeScript SDK MCP client needs Node.js >= {NODE_MAJOR_MIN} with npm; "
            "install them (e.g. apt-get install nodejs npm), then run `make setup`",
            pytrace=False,
        )
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout
    major = int(version.strip().lstrip("v").split(".")[0] or 0)
    if major < NODE_MAJOR_MIN:
        pytest.fail(
            f"{found} is Node.js {version.strip()}; the TypeScript SDK needs >= {NODE_MAJOR_MIN}",
            pytrace=False,
        )
    if not SDK.is_file():
        pytest.fail(
            f"the TypeScript SDK is not installed in {TS_CLIENT.relative_to(TS_CLIENT.parents[2])}: "
            "run `make setup` (it runs `npm ci` there)",
            pytrace=False,
        )
    return found


def ts_session(
    sandbox: Sandbox,
    requests: Sequence[dict[str, Any]],
    *,
    serve_args: Sequence[str] = (),
    cwd: Path | None = None,
    timeout: float = 240,
) -> TsSession:
    """Run ``hallouminate serve [serve_args]`` (in ``cwd``) under the TypeScript client and send
    ``requests`` (``{"method": ..., "params": ...}``), one session for all of them."""
    spec = {
        "command": sys.executable,
        "args": ["-m", "hallouminate", "serve", *serve_args],
        "env": sandbox.env,
        "cwd": str(cwd) if cwd is not None else None,
        "requests": list(requests),
    }
    return _run(spec, timeout)


def ts_http_session(
    url: str,
    requests: Sequence[dict[str, Any]],
    *,
    headers: dict[str, str] | None = None,
    terminate: bool = False,
    timeout: float = 240,
) -> TsSession:
    """The SDK's ``StreamableHTTPClientTransport`` on ``url`` (a face's endpoint, e.g. ``base_url + "/mcp"``
    or ``"/kuradb/mcp"``), sending ``headers`` on every request: one session (initialize, then ``requests``
    as for ``ts_session``); with ``terminate`` the client ends it with DELETE before closing."""
    return _run(
        {"url": url, "headers": headers or {}, "terminate": terminate, "requests": list(requests)}, timeout
    )


def _run(spec: dict[str, Any], timeout: float) -> TsSession:
    done = subprocess.run(
        [node(), str(SCRIPT)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=TS_CLIENT,
    )
    assert done.returncode == 0, f"the TypeScript client failed ({done.returncode}):\n{done.stderr}"
    out = json.loads(done.stdout)
    return TsSession(
        protocol_version=out["protocolVersion"],
        server_info=out["serverInfo"],
        capabilities=out["capabilities"],
        instructions=out["instructions"],
        responses=out["responses"],
        session_id=out["sessionId"],
        terminated=out["terminated"],
    )
