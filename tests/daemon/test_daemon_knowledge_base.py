"""A request marked `kb` treats its cwd as a knowledge base of its own (`serve --kb-path DIR`): one corpus,
`kb`, rooted there, indexed without `init-repo`; no other corpus is seen from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hallouminate.client import connect_or_spawn
from hallouminate.errors import BadRequest, NotFound
from support.sandbox import Sandbox, private_world


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world and daemon: each test's knowledge bases are directories of its own (its ``tmp_path``).
    In process: ``connect_or_spawn`` reaches (or spawns) the daemon through this process's environment."""
    with private_world(model_cache, prefix="hm-kb-") as box:
        yield box


def write_kb(root: Path) -> None:
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "rollback.md").write_text(
        "# Rollback\n\nRoll a release back with the blue-green switch.\n"
    )
    (root / "notes.md").write_text("# Notes\n\nThe office plant needs water on Fridays.\n")


async def test_a_kb_request_indexes_and_searches_its_directory_as_corpus_kb(
    world: Sandbox, tmp_path: Path
) -> None:
    kb = tmp_path / "kb"
    write_kb(kb)
    conn = await connect_or_spawn()
    try:
        # Without the mark the directory is nothing configured.
        with pytest.raises(NotFound, match="no corpus is configured"):
            await conn.call("ground", str(kb), {"query": "rollback"})
        corpora = await conn.call("list_corpora", str(kb), {}, kb=True)
        assert [c["name"] for c in corpora["corpora"]] == ["kb"]
        report = await conn.call("index", str(kb), {}, kb=True)
        assert [r["corpus"] for r in report["corpora"]] == ["kb"]
        assert report["corpora"][0]["files_upserted"] == 2
        found = await conn.call("ground", str(kb), {"query": "how do I roll back a release"}, kb=True)
        assert found["docs"][0]["path"] == "deploy/rollback.md"
        assert found["docs"][0]["corpus"] == "kb"
        read = await conn.call("read_markdown", str(kb), {"path": "notes.md"}, kb=True)
        assert "plant" in read["content"]
    finally:
        await conn.close()


async def test_two_knowledge_bases_never_share_rows(world: Sandbox, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_kb(first)
    second.mkdir()
    (second / "other.md").write_text("# Other\n\nNothing about releases here, only gardening.\n")
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(first), {}, kb=True)
        await conn.call("index", str(second), {}, kb=True)
        found = await conn.call("ground", str(second), {"query": "rollback release"}, kb=True)
        assert {d["path"] for d in found["docs"]} <= {"other.md"}
    finally:
        await conn.close()


async def test_the_kb_mark_must_be_a_boolean(tmp_path: Path) -> None:
    from hallouminate.protocol import parse_request

    with pytest.raises(BadRequest, match="'kb' must be a boolean"):
        parse_request({"v": 1, "id": 1, "op": "ping", "cwd": str(tmp_path), "args": {}, "kb": "yes"})
    with pytest.raises(BadRequest, match="'kb' needs a cwd"):
        parse_request({"v": 1, "id": 1, "op": "ping", "cwd": None, "args": {}, "kb": True})
