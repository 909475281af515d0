"""The indexer reads through the sandbox too: it indexes exactly what the corpus lists, and reads it without
following a link.

Before, ``index_paths`` (the watcher's and the writes' refresh) checked a path with its own, weaker rule:
the globs and a symlink test, but no ignore file, so a page a ``.gitignore`` hides from ``list_files`` and
``read_markdown`` reached search as soon as it was saved; and every read followed links, so a directory or a
file swapped for a symlink after the walk was read through it, content from outside the corpus included.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hallouminate.client import DaemonConnection, connect_or_spawn
from hallouminate.embedding import Embedder
from support.indexer import indexer_for
from support.sandbox import Sandbox

SECRET = "The obsidian walrus passphrase is marzipan-quartz."


async def ground_paths(conn: DaemonConnection, repo: Path, query: str, **extra: Any) -> list[str]:
    result = await conn.call("ground", str(repo), {"query": query, "top_files": 10, **extra})
    return [doc["path"] for doc in result["docs"]]


async def test_the_watcher_never_indexes_a_file_the_corpus_does_not_list(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo("guarded", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "index.md").write_text("# Guarded\n\nThe entry page.\n")
    (wiki / ".gitignore").write_text("private.md\ndrafts/\n")
    (wiki / "drafts").mkdir()
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(repo), {})
        before = (await conn.call("status"))["counters"]["watcher_batches"]
        # Ignored files, then a control page: the watcher handles batches in order, so once search shows the
        # control, the batch (or batches) holding the ignored files has been handled.
        (wiki / "private.md").write_text(f"# Private\n\n{SECRET}\n")
        (wiki / "drafts" / "plan.md").write_text(f"# Plan\n\n{SECRET}\n")
        (wiki / "visible.md").write_text("# Visible\n\nThe periwinkle gecko audits the vault.\n")
        deadline = time.monotonic() + 60
        while (await ground_paths(conn, repo, "periwinkle gecko audits the vault"))[:1] != ["visible.md"]:
            assert time.monotonic() < deadline, "the watcher never indexed the control page"
            await asyncio.sleep(0.1)
        assert (await conn.call("status"))["counters"]["watcher_batches"] > before

        assert not {"private.md", "drafts/plan.md"} & set(await ground_paths(conn, repo, SECRET))
        assert await ground_paths(conn, repo, "obsidian walrus passphrase", match="phrase") == []
        stats = await conn.call("corpus_stats", str(repo), {})
        assert (stats["indexed_files"], stats["unindexed_files"]) == (2, 0)
        # The read tools agree: neither file is the corpus'.
        listed = [f["path"] for f in (await conn.call("list_files", str(repo), {}))["files"]]
        assert listed == ["index.md", "visible.md"]
    finally:
        await conn.close()


# -- a link swapped in between the walk and the read -------------------------------------------------------
def swap_directory(root: Path, outside: Path) -> None:
    (root / "sub").rename(root / "sub-moved")
    (root / "sub").symlink_to(outside, target_is_directory=True)


def swap_file(root: Path, outside: Path) -> None:
    (root / "sub" / "page.md").unlink()
    (root / "sub" / "page.md").symlink_to(outside / "page.md")


@pytest.mark.parametrize("swap", [swap_directory, swap_file], ids=["directory", "file"])
def test_a_link_swapped_in_after_the_walk_is_not_read(
    tmp_path: Path, embedder: Embedder, swap: Callable[[Path, Path], None]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "page.md").write_text(f"# Outside\n\n{SECRET}\n")
    root = tmp_path / "wiki"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "page.md").write_text("# Page\n\nThe page as the walk saw it.\n")
    indexer, store, spec = indexer_for(tmp_path, embedder, root)
    swapped: list[str] = []

    def progress(event: dict[str, Any]) -> None:
        # Called right before each file is read (the first call always comes): the walk is done by now.
        if event["path"] == "sub/page.md" and not swapped:
            swap(root, outside)
            swapped.append(event["path"])

    report = indexer.index_corpus(spec, progress)
    assert swapped == ["sub/page.md"], "the swap happened between the walk and the read"
    assert report["files_upserted"] == 0 and [s["path"] for s in report["skipped"]] == ["sub/page.md"]
    assert "symbolic link" in report["skipped"][0]["reason"]
    assert store.file_states(spec.store_key) == {}
    assert os.path.islink(root / "sub") or os.path.islink(root / "sub" / "page.md")
