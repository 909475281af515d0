"""A read-only daemon (``[store] mode = "read-only"``, daemon/read_only.py) serving the store another daemon
writes, here on one machine's disk (the object-store topology is tests/daemon/test_daemon_team_store.py):
it answers ``ground`` as the writer does, refuses every write naming the writer, follows the writer's
commits within its poll interval, and serves ``read_markdown`` from the index.

Two real daemons, each in a private world of its own; the reader's baseline config points ``[store]
path`` at the writer's store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hallouminate.errors import CallerError
from support.daemon_call import call, ranked, scores
from support.sandbox import SMALL_WIKI, Sandbox, private_world

POLL_SECS = 0.5
CORPUS = "repo:team:wiki"
QUERY = "How does the MCP shim reach the daemon?"
DISTINCT = "Quetzal fermentation ledgers record the tamarind brine's salinity every equinox at noon."
# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 120.0


@dataclass
class Pair:
    writer: Sandbox
    reader: Sandbox
    repo: Path


@pytest.fixture(scope="module")
def pair(model_cache: Path) -> Iterator[Pair]:
    with private_world(model_cache, prefix="hmw-", in_process=False) as writer:
        repo = writer.make_repo("team", pages=SMALL_WIKI)
        store = Path(writer.env["XDG_DATA_HOME"]) / "hallouminate" / "lancedb"
        settings = f'[store]\npath = "{store}"\nmode = "read-only"\npoll_interval_secs = {POLL_SECS}\n'
        with private_world(model_cache, prefix="hmr-", baseline_extra=settings, in_process=False) as reader:
            writer.start_daemon()
            call(writer, "index", str(repo), {})
            reader.start_daemon()
            yield Pair(writer, reader, repo)


def test_the_reader_grounds_as_the_writer_does(pair: Pair) -> None:
    mine = call(pair.writer, "ground", str(pair.repo), {"query": QUERY})
    # The reader's cwd is anywhere: its corpora are the store's, under the writer's names.
    theirs = call(pair.reader, "ground", str(pair.reader.root), {"query": QUERY})
    assert ranked(theirs) == ranked(mine) and ranked(mine)
    assert scores(theirs) == pytest.approx(scores(mine), abs=1e-5)
    listed = call(pair.reader, "list_corpora", str(pair.reader.root))
    assert [c["name"] for c in listed["corpora"]] == [CORPUS]


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("add_markdown", {"corpus": CORPUS, "path": "new.md", "content": "# New\n"}),
        ("delete_markdown", {"corpus": CORPUS, "path": "index.md"}),
        ("move_markdown", {"corpus": CORPUS, "from": "index.md", "to": "moved.md"}),
        ("index", {}),
    ],
)
def test_every_write_is_refused_naming_the_writer(pair: Pair, op: str, args: dict[str, Any]) -> None:
    with pytest.raises(CallerError) as refused:
        call(pair.reader, op, str(pair.reader.root), args)
    error = refused.value
    assert error.family.jsonrpc_code == -32602
    assert "read-only" in error.message and "[store] mode" in error.message and op in error.message
    assert error.data["problem"] == "read-only-store" and error.data["op"] == op
    # Nothing was written where the writer's files are.
    assert not (pair.repo / ".hallouminate" / "wiki" / "new.md").exists()


def test_read_markdown_serves_the_indexed_text_and_says_so(pair: Pair) -> None:
    page = call(
        pair.reader, "read_markdown", str(pair.reader.root), {"corpus": CORPUS, "path": "architecture.md"}
    )
    assert page["served_from"] == "index" and "writer's machine" in page["note"]
    original = (pair.repo / ".hallouminate" / "wiki" / "architecture.md").read_text()
    # The indexed text is the file's, line by line (the frontmatter is not indexed); a chunk cut inside a
    # long line goes on that line, so the words run in the file's order.
    assert all(line.strip() in original for line in page["content"].splitlines())
    numbered = call(
        pair.reader,
        "read_markdown",
        str(pair.reader.root),
        {"corpus": CORPUS, "path": "architecture.md", "line_numbers": True},
    )
    file_lines = original.split("\n")
    for line in numbered["content"].splitlines():
        number, _, text = line.partition(": ")
        assert text.strip() in file_lines[int(number) - 1], line
    assert page["path"] == "architecture.md" and page["bytes"] == len(original.encode())
    listed = call(pair.reader, "list_files", str(pair.reader.root), {"corpus": CORPUS})
    assert sorted(f["path"] for f in listed["files"]) == sorted(SMALL_WIKI)
    with pytest.raises(CallerError) as refused:
        call(pair.reader, "list_tree", str(pair.reader.root), {"corpus": CORPUS})
    assert "writer's machine" in refused.value.message


def test_a_page_the_writer_adds_reaches_the_reader_within_the_poll(pair: Pair) -> None:
    call(pair.reader, "ground", str(pair.reader.root), {"query": QUERY})  # the store is loaded by now
    before = call(pair.reader, "status")
    assert before["store_mode"] == "read-only" and before["followed_version"] > 0
    call(
        pair.writer,
        "add_markdown",
        str(pair.repo),
        {"corpus": CORPUS, "path": "quetzal.md", "content": f"# Quetzal\n\n{DISTINCT}\n"},
    )
    written = time.monotonic()
    while True:
        found = call(pair.reader, "ground", str(pair.reader.root), {"query": DISTINCT})
        if found["docs"] and found["docs"][0]["path"] == "quetzal.md":
            break
        assert time.monotonic() - written < DEADLINE_SECS, "the reader never showed the writer's page"
        time.sleep(0.05)
    seen_after = time.monotonic() - written
    after = call(pair.reader, "status")
    assert after["followed_version"] > before["followed_version"]
    # Recorded, not asserted as a speed: the figure the docs quote is bench/'s.
    print(f"visible on the reader {seen_after:.2f} s after the write (poll {POLL_SECS} s)")
