"""``hallouminate serve`` fed raw bytes: every request gets an answer, whatever the line holds.

The SDK's client cannot send a lone surrogate or a line that is not JSON, so these tests write JSON-RPC
lines to the real ``serve`` process themselves and read its stdout line by line.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.sandbox import Sandbox, private_world

REPLY_TIMEOUT = 120.0
WIKI = "repo:raw:wiki"


class RawServe:
    """A ``hallouminate serve`` subprocess spoken to in raw lines."""

    def __init__(self, sandbox: Sandbox, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hallouminate", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**sandbox.env, **(env or {})},
            cwd=cwd,
        )
        sandbox.procs.append(self.proc)
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"no reply within {REPLY_TIMEOUT:g} s") from None
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, line: bytes) -> dict[str, Any]:
        self.send(line)
        return self.reply()

    def initialize(self) -> None:
        init = self.ask(
            request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            )
        )
        assert "result" in init, init
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def finish(self) -> tuple[int, str]:
        """Close stdin; the exit code and everything written on stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read().decode(errors="replace")

    def silent(self) -> bool:
        return self._lines.empty()


def request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def call(rid: int, tool: str, arguments: dict[str, Any]) -> bytes:
    return request(rid, "tools/call", {"name": tool, "arguments": arguments})


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[tuple[Sandbox, Path]]:
    with private_world(model_cache, prefix="hm-raw-", in_process=False) as box:
        yield box, box.make_repo("raw", wiki=None)


def test_lone_surrogates_and_lines_that_are_not_json_are_answered_and_the_session_goes_on(
    world: tuple[Sandbox, Path],
) -> None:
    box, repo = world
    wiki = repo / ".hallouminate" / "wiki"
    serve = RawServe(box, repo)
    serve.initialize()

    garbage = serve.ask(b"this is not json")
    assert garbage["id"] is None and garbage["error"]["code"] == -32700, garbage

    # json.dumps keeps a lone surrogate as the escape "\ud800", exactly what a buggy client sends.
    lone = serve.ask(call(2, "ground", {"cwd": str(repo), "query": "why \ud800"}))
    assert lone["id"] == 2 and lone["error"]["code"] == -32602, lone
    assert lone["error"]["data"]["problem"] == "encoding" and lone["error"]["data"]["param"] == "query"
    assert "not valid Unicode" in lone["error"]["message"]

    page = {"cwd": str(repo), "corpus": WIKI, "path": "lone.md", "content": "# Lone\n\n\udc00 here\n"}
    written = serve.ask(call(3, "add_markdown", page))
    assert written["id"] == 3 and written["error"]["code"] == -32602, written
    assert written["error"]["data"] == {"problem": "encoding", "param": "content", "offset": 8}

    # Bytes that are not UTF-8 inside a string: refused too, not written as U+FFFD.
    raw = call(4, "add_markdown", {**page, "path": "latin1.md", "content": "# Caf\u00e9\n"})
    raw = raw.replace(b"\\u00e9", b"\xe9")
    not_utf8 = serve.ask(raw)
    assert not_utf8["id"] == 4 and not_utf8["error"]["code"] == -32602, not_utf8
    assert not_utf8["error"]["data"]["problem"] == "encoding"
    assert "not UTF-8" in not_utf8["error"]["message"]

    invalid = serve.ask(b'{"jsonrpc": "2.0", "id": 5, "method": 7}')
    assert invalid["id"] == 5 and invalid["error"]["code"] == -32600, invalid

    # The session goes on: a good call after all that is served, and a good write is written.
    found = serve.ask(call(6, "ground", {"cwd": str(repo), "query": "why"}))
    assert found["id"] == 6 and "result" in found, found
    good = serve.ask(call(7, "add_markdown", {**page, "path": "good.md", "content": "# Good\n"}))
    assert good["id"] == 7 and good["result"]["structuredContent"]["action"] == "created", good

    code, stderr = serve.finish()
    assert code == 0, stderr
    assert sorted(p.name for p in wiki.iterdir() if p.suffix == ".md") == ["good.md", "index.md"]
    assert "line 3 refused (answered -32700)" in stderr, stderr  # line 2 was `initialized`
    assert stderr.count("refused") == 5, stderr


@pytest.mark.parametrize("warm_host", ["1", "0"])
def test_serve_fed_only_garbage_answers_each_line_then_exits_2_saying_why(
    world: tuple[Sandbox, Path], warm_host: str
) -> None:
    box, repo = world
    serve = RawServe(box, repo, {"HALLOUMINATE_SHIM_HOST": warm_host})
    for line in (b"hello", b"{not json", b"\xff\xfe"):
        answer = serve.ask(line)
        assert answer == {"jsonrpc": "2.0", "id": None, "error": answer["error"]}, answer
        assert answer["error"]["code"] == -32700 and "Parse error" in answer["error"]["message"]
    code, stderr = serve.finish()
    assert code == 2, stderr
    assert "none of them a JSON-RPC message" in stderr, stderr
    assert serve.silent()


def test_requests_written_before_stdin_closes_are_all_answered_before_serve_exits(
    world: tuple[Sandbox, Path],
) -> None:
    """A client that writes its requests and closes stdin at once still gets every answer: the SDK cancels
    the handlers still running at end of input, so serve waits for them first (ADR 0024). Calls that go
    to the daemon are among them, so some are still in flight when stdin closes."""
    box, repo = world
    serve = RawServe(box, repo)
    serve.initialize()
    ids = list(range(10, 40))
    lines = []
    for rid in ids:
        if rid % 3 == 0:
            lines.append(call(rid, "ground", {"cwd": str(repo), "query": f"question {rid}"}))
        elif rid % 3 == 1:
            lines.append(call(rid, "list_corpora", {"cwd": str(repo)}))
        else:
            lines.append(request(rid, "tools/list", {}))
    serve.send(b"\n".join(lines))  # one write, then end of input: nothing is answered in between
    code, stderr = serve.finish()
    answered = []
    while not serve.silent():
        answered.append(serve.reply()["id"])
    assert sorted(answered) == ids, (answered, stderr)
    assert code == 0, stderr
