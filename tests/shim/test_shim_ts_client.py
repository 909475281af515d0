"""``hallouminate serve`` driven by the official TypeScript SDK's MCP client (``support/ts_sdk.py``): the
handshake it negotiates and ``tools/list``, per face."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hallouminate.shim.tools import TOOLS
from support.sandbox import Sandbox
from support.ts_sdk import TsSession, node, ts_session

# The versions the TypeScript SDK (1.32) asks for and accepts: it sends its latest and refuses any answer
# outside this list; the mcp 2.x server must settle on one of them.
TS_SDK_LATEST = "2025-11-25"

# Each face: its `serve` arguments (given the test's sandbox and repository), and its tools. One line per face.
FACES: dict[str, tuple[Callable[[Sandbox, Path], list[str]], set[str]]] = {
    "hallouminate": (lambda sandbox, repo: [], set(TOOLS)),
}


def _session(sandbox: Sandbox, face: str, requests: list[dict[str, object]]) -> tuple[TsSession, Path]:
    repo = sandbox.make_repo(wiki=None)
    args, _tools = FACES[face]
    return ts_session(sandbox, requests, serve_args=args(sandbox, repo), cwd=repo), repo


@pytest.mark.parametrize("face", list(FACES))
def test_the_typescript_client_negotiates_and_lists_the_tools(sandbox: Sandbox, face: str) -> None:
    session, _repo = _session(sandbox, face, [{"method": "tools/list"}])
    assert session.protocol_version == TS_SDK_LATEST
    assert session.server_info["name"] == "hallouminate"
    assert "tools" in session.capabilities
    tools = {tool["name"]: tool for tool in session.result(0)["tools"]}
    assert set(tools) == FACES[face][1]
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object" and tool["description"]


def test_without_node_the_typescript_client_fails_saying_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH holding no node
    assert not os.access(tmp_path / "node", os.X_OK)
    with pytest.raises(pytest.fail.Exception, match=r"node is not on PATH.*make setup"):
        node()
