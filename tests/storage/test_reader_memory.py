"""What the reader holds between searches (ADR 0057): a phrase scan past the in-memory bound streams the
corpus's text in batches and finds the same rows as a scan of the held rows, keeping none of it after."""

from __future__ import annotations

import gc
from pathlib import Path

import pyarrow as pa

from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.store_rows import chunk_rows

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


def _store(tmp_path: Path, words: int = 300) -> Store:
    store = Store(tmp_path / "db", 8)
    for corpus, pages in (("c", 24), ("d", 9)):
        store.replace_files(
            corpus,
            {
                # Every third chunk holds the phrase; each text 2 kB or more, so a held copy would show.
                f"p{i:02d}.md": chunk_rows(
                    f"p{i:02d}.md",
                    [
                        (" ".join(WORDS[(i + j + k) % 10] for k in range(words)))
                        + (" Rolling Back the migration" if (i + j) % 3 == 0 else "")
                        for j in range(4)
                    ],
                    seed=100 * i,
                )
                for i in range(pages)
            },
        )
    return store


async def test_a_phrase_scan_past_the_bound_streams_the_same_rows_in_batches(tmp_path: Path) -> None:
    store = _store(tmp_path)

    async def scan(reader: AsyncReader, corpora: list[str], max_rows: int) -> tuple[list[object], bool]:
        found = await reader.phrase_rows(corpora, r"rolling\s+back", max_rows)
        rows = [(r["corpus"], r["path"], r["ordinal"], r["occurrences"]) for r in found.rows]
        return [
            *rows,
            found.texts([0][: len(rows)]),
            found.full_rows([len(rows) - 1][: len(rows)]),
        ], found.more

    held = AsyncReader(store)
    streamed = AsyncReader(store, in_memory_rows=0, scan_batch=7)  # many batches, matches split across them
    for corpora, max_rows in (
        (["c", "d"], 1000),
        (["c", "d"], 30),
        (["c"], 10),
        (["d", "c"], 20),
        (["c"], 0),
    ):
        expected = await scan(held, corpora, max_rows)
        assert await scan(streamed, corpora, max_rows) == expected, (corpora, max_rows)
    every, more = await scan(held, ["c", "d"], 1000)
    assert len(every) - 2 == 44 and not more  # the phrase really is in a third of chunks
    assert (await scan(held, ["c", "d"], 30))[1]  # and the cap really cut it


async def test_a_phrase_scan_past_the_bound_holds_no_copy_of_the_corpus_after(tmp_path: Path) -> None:
    store = _store(tmp_path, words=1500)
    reader = AsyncReader(store, in_memory_rows=0, scan_batch=16)
    await reader.count_rows("c")
    gc.collect()
    before = pa.total_allocated_bytes()
    found = await reader.phrase_rows(["c"], r"rolling\s+back", 5)
    assert len(found.rows) == 5 and found.more
    del found
    gc.collect()
    # The corpus's text is ~950 kB (a copy held until the next commit would show); what is left is not.
    assert pa.total_allocated_bytes() - before < 200_000
