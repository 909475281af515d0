"""A read-only store's reader loads the corpora it holds at the writer's next version before the store
swaps to it (``AsyncReader.preload`` as ``Store.follow``'s ``prepare``): searches meanwhile answer from the
old version, and the first search after the swap finds the new version's rows already held."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from hallouminate.storage.store import ReadOnlyStore
from support.store_rows import DIM, chunk_rows, unit_vec


async def test_the_first_search_after_a_follow_finds_the_new_version_held(tmp_path: Path) -> None:
    writer = Store(tmp_path / "db", DIM)
    writer.replace_files("c", {f"p{i}.md": chunk_rows(f"p{i}.md", [f"a {i}"], seed=10 * i) for i in range(5)})
    follower = ReadOnlyStore(tmp_path / "db", DIM)
    reader = AsyncReader(follower)
    before = await reader.vector_search(unit_vec(500), ["c"], 3)  # the corpus is held now
    assert "new.md" not in {row["path"] for row in before}
    writer.replace_files("c", {"new.md": chunk_rows("new.md", ["the new page"], seed=500)})

    loop = asyncio.get_running_loop()
    during: list[list[str]] = []
    staged: list[object] = []

    def prepare(version: int) -> None:
        # Before the swap: a search answers from the old version, then the reader loads the new one.
        found = asyncio.run_coroutine_threadsafe(reader.vector_search(unit_vec(500), ["c"], 3), loop).result()
        during.append([row["path"] for row in found])
        asyncio.run_coroutine_threadsafe(reader.preload(version), loop).result()
        staged.append(reader._staged[1]["c"] if reader._staged else None)

    assert await asyncio.to_thread(follower.follow, None, prepare)
    assert during and "new.md" not in during[0], "a search during the preload saw the new version"
    held_before_search = staged[0]
    assert held_before_search is not None
    after = await reader.vector_search(unit_vec(500), ["c"], 3)
    assert after[0]["path"] == "new.md"
    # The rows the search used are the ones loaded before the swap: no second load.
    assert reader._vectors["c"] is held_before_search


async def test_a_preload_of_nothing_held_does_nothing(tmp_path: Path) -> None:
    writer = Store(tmp_path / "db", DIM)
    writer.replace_files("c", {"a.md": chunk_rows("a.md", ["alpha"], seed=1)})
    follower = ReadOnlyStore(tmp_path / "db", DIM)
    reader = AsyncReader(follower)
    await reader.preload(follower.latest_version())
    assert reader._staged is None
