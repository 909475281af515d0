"""Chunk quality (ADR 0029) end to end: scored at index time, stored, returned on every ranked chunk.

Through the real MCP client and shim over a real daemon (index paths: the ``index`` tool, the watcher
after a write), and through the real CLI over a store written by the previous schema (version 4), which
the next index run rebuilds with the column.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import lancedb
import pytest

from hallouminate.storage.schema import SCHEMA_VERSION
from support.crash import store_dir
from support.files import write
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import SMALL_WIKI, Sandbox, hm, kill_daemon_of

# Prose, then a "See also" list of links, then a licence block: three sections, three chunks.
FAILOVER_MD = """# Quokka failover

When the primary quokka database stops answering, Patroni promotes the replica with the least lag
after three missed health checks in a row; the old primary rejoins as a replica once it is back.

## See also

- [Quokka backups](backups.md)
- [Quokka replication](replication.md)
- [Quokka on-call](oncall.md)

## Licence

Copyright (c) 2024 Quokka Corp. All rights reserved.
Licensed under the Apache License, Version 2.0; see the LICENSE file.
"""


class World:
    def __init__(self, client: McpClient, repo: Path) -> None:
        self.client = client
        self.repo = repo

    def ground(self, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.repo), **args}).structured_content
        jsonschema.validate(result, RESULT_SCHEMA)
        return result


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "acme")
        wiki = repo / ".hallouminate" / "wiki"
        write(wiki / "failover.md", FAILOVER_MD)
        write(
            wiki / "caching.md",
            "# Caching\n\nThe cache keeps invoices for ten minutes and drops the least recently used entries\n"
            "first when memory runs short; a miss reads through to the database.\n",
        )
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(client, repo)
        finally:
            client.close()


def _quality_by_section(result: dict[str, Any], path: str) -> dict[str, float]:
    doc = next(d for d in result["docs"] if d["path"] == path)
    return {chunk["heading_path"][-1]: chunk["quality"] for chunk in doc["chunks"]}


def test_link_only_and_licence_sections_score_low_and_prose_full(world: World) -> None:
    result = world.ground(query="quokka failover see also licence copyright", chunks_per_file=5)
    assert _quality_by_section(result, "failover.md") == {
        "Quokka failover": 1.0,
        "See also": 0.5,  # boilerplate (links only), several lines
        "Licence": 0.5,  # boilerplate (licence), several lines
    }


def test_every_ranked_chunk_carries_its_quality(world: World) -> None:
    result = world.ground(query="what happens when the cache runs out of memory", chunks_per_file=5)
    chunks = [chunk for doc in result["docs"] for chunk in doc["chunks"]]
    assert chunks and all(0.0 <= chunk["quality"] <= 1.0 for chunk in chunks)
    assert _quality_by_section(result, "caching.md") == {"Caching": 1.0}


def test_the_watcher_scores_a_page_written_while_the_daemon_runs(world: World) -> None:
    page = world.repo / ".hallouminate" / "wiki" / "links.md"
    write(page, "# Wombat links\n\n- [Wombat one](one.md)\n- [Wombat two](two.md)\n")
    deadline = time.monotonic() + 120
    while True:  # the watcher re-indexes the page on its own; no index call
        result = world.ground(query="wombat links", chunks_per_file=5)
        if any(doc["path"] == "links.md" for doc in result["docs"]):
            break
        assert time.monotonic() < deadline, "the watcher never indexed links.md"
        time.sleep(0.5)
    assert _quality_by_section(result, "links.md") == {"Wombat links": 0.5}


# -- a store of the previous schema ----------------------------------------------------------------------
def _as_version_4(store: Path) -> None:
    """Rewrite the daemon's table as the previous release left it: no ``quality`` column, schema "4",
    every row and file state otherwise the same (so only the version tells the table is old)."""
    db = lancedb.connect(str(store))
    table = db.open_table("chunks").to_arrow().drop_columns(["quality"])
    meta = dict(table.schema.metadata or {})
    meta[b"hallouminate.schema"] = b"4"
    table = table.replace_schema_metadata(meta)
    db.drop_table("chunks")
    db.create_table("chunks", table)
    reopened = lancedb.connect(str(store)).open_table("chunks").schema
    assert "quality" not in reopened.names and reopened.metadata[b"hallouminate.schema"] == b"4"


def test_a_version_4_store_is_rebuilt_by_the_next_index_run_with_the_column(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    question = "How does the MCP shim reach the daemon?"
    assert hm(sandbox, "index", cwd=repo).returncode == 0
    kill_daemon_of(sandbox)
    _as_version_4(store_dir(sandbox))

    # The files are unchanged since their rows were written: without the rebuild the change gate would
    # keep every old row, without a quality.
    indexed = hm(sandbox, "index", "--format", "json", cwd=repo)
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    # Every page embedded again, by this run or by the catch-up the restarted daemon began (ADR 0027).
    upserted = sum(
        c["files_upserted"] + sum(work["files_upserted"] for work in c.get("background", []))
        for c in report["corpora"]
    )
    assert upserted == len(SMALL_WIKI), report
    assert f"schema version 4 is not this release's {SCHEMA_VERSION}" in sandbox.daemon_log_text()

    found = hm(sandbox, "ground", question, "--format", "json", cwd=repo)
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    jsonschema.validate(result, RESULT_SCHEMA)
    assert result["docs"][0]["path"] == "architecture.md"
    assert all("quality" in chunk for doc in result["docs"] for chunk in doc["chunks"])

    kill_daemon_of(sandbox)
    schema = lancedb.connect(str(store_dir(sandbox))).open_table("chunks").schema
    assert "quality" in schema.names and schema.metadata[b"hallouminate.schema"] == SCHEMA_VERSION.encode()


def test_a_page_of_one_short_line_is_found_under_the_default_floor(world: World) -> None:
    # Under 30 characters on one line scores 0.1 as a fragment of a page; as the whole page it is what
    # its author wrote and must stay findable (indexing/quality.py).
    write(world.repo / ".hallouminate" / "wiki" / "owner.md", "Numbat payments owner: @alice\n")
    deadline = time.monotonic() + 120
    while True:  # the watcher indexes the page; no index call
        result = world.ground(query="who owns numbat payments")
        doc = next((d for d in result["docs"] if d["path"] == "owner.md"), None)
        if doc is not None:
            break
        assert time.monotonic() < deadline, "owner.md was never found"
        time.sleep(0.5)
    assert [chunk["quality"] for chunk in doc["chunks"]] == [1.0]
