"""Bounds on every input that costs work, table-driven through the real MCP client and again on the daemon's
socket (a client that skips the shim's checks meets the same ones): each over-bound value is refused with
-32602 and a message naming the bound, short (it never echoes a megabyte back); and a client pipelining
requests without reading the answers cannot make the daemon hold more than a fixed number of them.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import pytest

from hallouminate.client import connect_or_spawn
from hallouminate.daemon.server import MAX_IN_FLIGHT_PER_CONNECTION
from hallouminate.errors import InvalidParams
from hallouminate.protocol import MAX_FRAME
from hallouminate.protocol.cwd import MAX_CWD_BYTES
from hallouminate.protocol.schemas import PAGE_MAX_CHARS, QUERY_MAX_CHARS
from hallouminate.shim.tools import CWD_PROP
from hallouminate.wiki.writes import WRITE_MAX_BYTES
from support.faults_world import INVALID_PARAMS, World, fails, ok, world, write_pages
from support.sandbox import mcp_session

WIKI = "repo:bounds:wiki"
BIG_PAGE = "big.md"  # planted over the read limit


@dataclass(frozen=True)
class Case:
    tool: str
    args: dict[str, Any]
    bound: str  # what the message must say
    # False where the value cannot even be framed for the daemon (an integer past 64 bits, a frame over
    # the limit) or the shim's wording differs: the shim's check is the only one that can see it.
    on_socket: bool = True
    cwd: str | None = None  # None: the repository
    label: str = field(default="")


def q(**args: Any) -> dict[str, Any]:
    return {"query": "setup", **args}


def page(**args: Any) -> dict[str, Any]:
    return {"corpus": WIKI, "path": "bounded.md", "content": "# Bounded\n", **args}


CASES: list[Case] = [
    # ground: the query and every number that scales its work.
    Case("ground", {"query": ""}, "'query' must be length >= 1"),
    Case("ground", {"query": "x" * (QUERY_MAX_CHARS + 1)}, f"'query' must be length <= {QUERY_MAX_CHARS}"),
    Case("ground", q(match="phrase", query="y" * 513), "phrase mode takes 1 to 512"),
    Case("ground", q(top_files=0), "'top_files' must be >= 1"),
    Case("ground", q(top_files=101), "'top_files' must be <= 100"),
    Case("ground", q(top_files=10**30), "'top_files' must be <= 100", on_socket=False),
    Case("ground", q(chunks_per_file=0), "'chunks_per_file' must be >= 1"),
    Case("ground", q(chunks_per_file=21), "'chunks_per_file' must be <= 20"),
    Case("ground", q(limit=0), "'limit' must be >= 1"),
    Case("ground", q(limit=1001), "'limit' must be <= 1000"),
    Case("ground", q(snippet_chars=19), "'snippet_chars' must be >= 20"),
    Case("ground", q(snippet_chars=4001), "'snippet_chars' must be <= 4000"),
    Case("ground", q(top_files="9" * 50), "'top_files' must be of type integer"),
    Case("ground", q(corpus="c" * 257), "'corpus' must be length <= 256"),
    # The read tools: path length in characters and in bytes, and the size of what is read.
    Case("read_markdown", {"path": "a/" * 2100 + "x.md"}, "'path' must be length <= 4096"),
    Case("read_markdown", {"path": "ééé/" * 600 + "x.md"}, "more than the 4096-byte limit"),
    Case("read_markdown", {"path": "x" * 256 + ".md"}, "255-byte file name limit"),
    Case("read_markdown", {"path": BIG_PAGE}, f"larger than the {WRITE_MAX_BYTES}-byte read limit"),
    Case("backlinks", {"path": "b" * 4097}, "'path' must be length <= 4096"),
    # Every tool taking a corpus: its name.
    *(Case(t, {"corpus": "c" * 257}, "'corpus' must be length <= 256") for t in ("index", "list_files")),
    *(
        Case(t, {"corpus": "c" * 257}, "'corpus' must be length <= 256")
        for t in ("list_tree", "corpus_stats", "list_topics")
    ),
    # The write tools: page size in characters, in bytes, and past the frame; section-edit arguments.
    Case(
        "add_markdown",
        page(content="x" * (PAGE_MAX_CHARS + 1)),
        f"'content' must be length <= {PAGE_MAX_CHARS} (got a string of",
    ),
    Case(
        "add_markdown",
        page(content="é" * 2_000_000),  # 4 MB of UTF-8 in 2 M characters: only the byte limit sees it
        f"more than the {WRITE_MAX_BYTES}-byte page limit",
    ),
    Case(
        "add_markdown",
        page(content="€" * 1_500_000),  # 4.5 MB: more than one frame can carry to the daemon
        f"exceeds the {MAX_FRAME}-byte frame limit",
        # Refused by the sending side; the daemon's own frame cap: tests/daemon/test_daemon_socket.py.
        on_socket=False,
    ),
    Case("add_markdown", page(under_heading="h" * 1025), "'under_heading' must be length <= 1024"),
    Case(
        "add_markdown",
        page(replace_match="m" * (PAGE_MAX_CHARS + 1)),
        f"'replace_match' must be length <= {PAGE_MAX_CHARS}",
    ),
    Case("add_markdown", page(replace_lines={"start": 0, "end": 1}), "'replace_lines.start' must be >= 1"),
    Case(
        "add_markdown",
        page(replace_lines={"start": 1, "end": PAGE_MAX_CHARS + 1}),
        f"'replace_lines.end' must be <= {PAGE_MAX_CHARS}",
    ),
    Case(
        "add_markdown",
        page(replace_lines={"start": 1, "end": 10**30}),
        f"'replace_lines.end' must be <= {PAGE_MAX_CHARS}",
        on_socket=False,
    ),
    Case("add_markdown", page(path="p" * 4097), "'path' must be length <= 4096"),
    Case("delete_markdown", {"corpus": WIKI, "path": "d" * 4097}, "'path' must be length <= 4096"),
    Case("delete_markdown", {"corpus": "c" * 257, "path": "x.md"}, "'corpus' must be length <= 256"),
    Case(
        "move_markdown", {"corpus": WIKI, "from": "f" * 4097, "to": "x.md"}, "'from' must be length <= 4096"
    ),
    Case("move_markdown", {"corpus": WIKI, "from": "x.md", "to": "t" * 4097}, "'to' must be length <= 4096"),
    Case("list_files", {"changed_since": "7" * 65}, "'changed_since' must be length <= 64"),
    Case("ground", q(changed_since=""), "'changed_since' must be length >= 1"),
    # cwd, which every tool takes: characters (the shim's schema) and bytes (both sides).
    *(
        Case(t, a, "'cwd' must be length <= 4096", on_socket=False, cwd="/" + "a" * 4096)
        for t, a in (("list_corpora", {}), ("ground", q()), ("read_markdown", {"path": "setup.md"}))
    ),
    Case("list_files", {}, f"more than the {MAX_CWD_BYTES}-byte path limit", cwd="/" + "é" * 2100),
]


def test_the_published_bounds_agree_with_the_ones_enforced() -> None:
    # protocol/ cannot import the wiki package, so the page bound is written twice: keep them equal.
    assert PAGE_MAX_CHARS == WRITE_MAX_BYTES
    assert CWD_PROP["maxLength"] == MAX_CWD_BYTES


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    # The big page exists to be refused by read_markdown; the indexer skips it (embedding 3 MiB of
    # filler would cost minutes on two cores).
    with world(model_cache, config="[indexing]\nmax_file_bytes = 1048576\n") as created:
        created.start()
        yield created


@pytest.fixture(scope="module")
def repo(w: World) -> Path:
    repo = w.box.make_repo("bounds", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    write_pages(wiki, {"setup.md": "# Setup\n\nHow to set things up.\n"})
    (wiki / BIG_PAGE).write_text("# Big\n\n" + "filler line of a page too big to read\n" * 90_000)
    assert (wiki / BIG_PAGE).stat().st_size > WRITE_MAX_BYTES
    return repo


async def test_every_bound_is_refused_through_mcp_naming_the_bound(w: World, repo: Path) -> None:
    wiki = repo / ".hallouminate" / "wiki"
    before = sorted(p.name for p in wiki.iterdir())
    async with mcp_session(w.box) as s:
        for case in CASES:
            error = await fails(s, case.tool, INVALID_PARAMS, cwd=case.cwd or str(repo), **case.args)
            assert case.bound in error.message, (case.tool, case.bound, error.message[:300])
            assert len(error.message) < 1000, (case.tool, case.bound, len(error.message))
        # Within the bounds the same calls work: the refusals above are about the bound alone.
        await ok(s, "ground", cwd=str(repo), query="s" * QUERY_MAX_CHARS, top_files=100, limit=1000)
        await ok(s, "ground", cwd=str(repo), query="setup", chunks_per_file=20, snippet_chars=4000)
    # No refused write left anything behind.
    assert sorted(p.name for p in wiki.iterdir()) == before


async def test_the_daemon_enforces_the_same_bounds_for_a_client_that_skips_the_shim(
    w: World, repo: Path
) -> None:
    conn = await connect_or_spawn(spawn=False)
    checked = 0
    try:
        for case in CASES:
            if not case.on_socket:
                continue
            with pytest.raises(InvalidParams) as info:
                await conn.call(case.tool, case.cwd or str(repo), case.args)
            # The daemon's schema check quotes the operation, not the tool, and the same bound.
            assert case.bound in info.value.message, (case.tool, case.bound, info.value.message[:300])
            assert len(info.value.message) < 1000
            checked += 1
        assert (await conn.call("ping"))["pid"] == w.pid
    finally:
        await conn.close()
    assert checked == sum(case.on_socket for case in CASES) >= 30


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _frame(message: dict[str, Any]) -> bytes:
    body = msgpack.packb(message)
    return struct.pack(">I", len(body)) + body


def test_a_client_pipelining_without_reading_answers_holds_a_bounded_number_of_requests(w: World) -> None:
    """Thousands of requests sent on one connection whose answers are never read: the daemon reads at most
    ``MAX_IN_FLIGHT_PER_CONNECTION`` of them at a time and leaves the rest in the socket (it held a task and
    an answer for each, without bound, before)."""
    pid = w.pid
    flood = socket.socket(socket.AF_UNIX)
    flood.connect(str(w.box.socket))
    flood.setblocking(False)
    status = _frame({"v": 1, "id": 1, "op": "status", "cwd": None, "args": {}}) * 500
    rss_before = _rss_mib(pid)
    sent = 0
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and sent < 20_000:
        try:
            flood.send(status)
            sent += 500
        except BlockingIOError:
            time.sleep(0.05)  # the socket is full: the daemon stopped reading it
    try:
        probe = socket.socket(socket.AF_UNIX)
        probe.settimeout(30)
        probe.connect(str(w.box.socket))
        probe.sendall(_frame({"v": 1, "id": 7, "op": "status", "cwd": None, "args": {}}))
        header = probe.recv(4, socket.MSG_WAITALL)
        answer = msgpack.unpackb(probe.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL))
        probe.close()
    finally:
        flood.close()
    assert answer["ok"] is True, answer
    # The probe's own request, plus at most the flood's cap.
    assert answer["result"]["in_flight"] <= MAX_IN_FLIGHT_PER_CONNECTION + 1, (answer["result"], sent)
    assert sent >= 2_000, "the flood was too small to show anything"
    assert _rss_mib(pid) - rss_before < 50
