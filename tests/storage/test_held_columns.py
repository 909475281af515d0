"""A held corpus keeps the columns repeated on every chunk of a page dictionary-encoded (less memory), and
every read of it returns plain values, the same as LanceDB's path returns."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from hallouminate.storage import Store
from hallouminate.storage.reader import REPEATED_COLUMNS, AsyncReader
from hallouminate.storage.schema import plain
from support.store_rows import DIM, chunk_rows, unit_vec


def test_plain_decodes_tables_columns_and_arrays_and_leaves_plain_data_alone() -> None:
    encoded = pc.dictionary_encode(pa.array(["a.md", "b.md", "a.md", None]))
    table = pa.table({"path": encoded, "n": [1, 2, 3, 4]})
    assert plain(table).schema == pa.schema([("path", pa.string()), ("n", pa.int64())])
    assert plain(table).to_pylist() == table.to_pylist()
    chunked = pa.chunked_array([encoded, pc.dictionary_encode(pa.array(["c.md"]))])
    assert plain(chunked).type == pa.string()
    assert plain(chunked).to_pylist() == ["a.md", "b.md", "a.md", None, "c.md"]
    untouched = pa.table({"n": [1]})
    assert plain(untouched) is untouched


async def test_held_rows_are_encoded_and_read_back_plain(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files(
        "c",
        {f"p{i}.md": chunk_rows(f"p{i}.md", [f"a {i}", f"b {i}", f"c {i}"], seed=10 * i) for i in range(5)},
    )
    held, past = AsyncReader(store, exact_rows=0), AsyncReader(store, in_memory_rows=0)
    found = await held.vector_search(unit_vec(20), ["c"], 6)
    # Equal but for the score's 16-bit rounding (vectors held as codes: storage/held_vectors.py).
    unscored = [{k: v for k, v in row.items() if k != "score"} for row in found]
    assert unscored == [
        {k: v for k, v in row.items() if k != "score"}
        for row in await past.vector_search(unit_vec(20), ["c"], 6)
    ]
    rows = held._vectors["c"].rows  # what the reader holds after the search
    encoded = {f.name for f in rows.schema if pa.types.is_dictionary(f.type)}
    assert encoded == REPEATED_COLUMNS & set(rows.column_names) and "path" in encoded
    for row in found:
        assert all(type(row[name]) is str for name in encoded if row[name] is not None)
    assert await held.page_rows("c", "p2.md") == await past.page_rows("c", "p2.md")
    assert [h["path"] for h in await held.page_heads("c")] == [f"p{i}.md" for i in range(5)]
