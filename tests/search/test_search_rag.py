"""``search/rag.py``, the KuraDB face's retrieval, over a real store read by the daemon's reader, held in
memory and read from LanceDB: each mode is one signal alone, up to ``limit`` chunks, grouped by file with
each chunk's ordinal in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hallouminate.search.rag import retrieve
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.store_rows import DIM, chunk_rows, unit_vec


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "db", DIM)
    store.replace_files(
        "c",
        {
            "a.md": chunk_rows("a.md", ["alpha bravo", "charlie delta", "alpha echo"], seed=0),
            "b.md": chunk_rows("b.md", ["golf hotel", "alpha india"], seed=10),
        },
    )
    store.replace_files("other", {"z.md": chunk_rows("z.md", ["alpha alpha alpha"], seed=20)})
    return store


def embed_as(seed: int) -> Any:
    async def embed(text: str) -> np.ndarray:
        return np.asarray(unit_vec(seed), dtype=np.float32)

    return embed


@pytest.mark.parametrize("in_memory_rows", [200_000, 0], ids=["held", "lancedb"])
async def test_each_mode_is_one_signal_grouped_by_file(store: Store, in_memory_rows: int) -> None:
    reader = AsyncReader(store, in_memory_rows=in_memory_rows)
    keyword = await retrieve(reader, embed_as(11), "c", "alpha", modes=("keyword",), limit=10)
    assert set(keyword) == {"keyword"}
    found = {
        (entry["source"], match["chunk"], match["content"])
        for entry in keyword["keyword"]
        for match in entry["matches"]
    }
    # Every chunk of corpus c holding "alpha", with its ordinal in its file; never another corpus's.
    assert found == {
        ("/abs/a.md", 0, "alpha bravo"),
        ("/abs/a.md", 2, "alpha echo"),
        ("/abs/b.md", 1, "alpha india"),
    }
    assert len({entry["source"] for entry in keyword["keyword"]}) == len(keyword["keyword"])

    semantic = await retrieve(reader, embed_as(11), "c", "alpha", modes=("semantic",), limit=1)
    # The query's vector is b.md's second chunk's: the vectors alone find it, whatever its words.
    assert semantic == {
        "semantic": [{"source": "/abs/b.md", "matches": [{"chunk": 1, "content": "alpha india"}]}]
    }


async def test_both_modes_run_when_none_is_named_each_up_to_the_limit(store: Store) -> None:
    reader = AsyncReader(store)
    both = await retrieve(reader, embed_as(1), "c", "alpha", limit=2)
    assert set(both) == {"keyword", "semantic"}
    for mode in both:
        assert sum(len(entry["matches"]) for entry in both[mode]) == 2
    # The query's vector is a.md's chunk 1's: it leads, and the next nearest (chunk 2) joins it, one file.
    assert both["semantic"] == [
        {
            "source": "/abs/a.md",
            "matches": [{"chunk": 1, "content": "charlie delta"}, {"chunk": 2, "content": "alpha echo"}],
        }
    ]


async def test_a_query_without_searchable_words_finds_no_keyword_chunks(store: Store) -> None:
    reader = AsyncReader(store)
    found = await retrieve(reader, embed_as(0), "c", "the of", modes=("keyword",), limit=5)
    assert found == {"keyword": []}


async def test_a_failing_branch_fails_the_call_with_its_error(store: Store) -> None:
    async def broken(text: str) -> np.ndarray:
        raise RuntimeError("the model is gone")

    with pytest.raises(RuntimeError, match="the model is gone"):
        await retrieve(AsyncReader(store), broken, "c", "alpha", limit=5)
