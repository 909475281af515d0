"""The ``symbol_kind`` column (schema 6): written, read back null-or-set, kept by a move, and a table of
schema 5 (no such column) rebuilt. A real LanceDB store, small random vectors, no model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb

from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from hallouminate.storage.schema import SCHEMA_VERSION
from support.store_rows import DIM, chunk_rows


def _code_rows() -> list[dict[str, Any]]:
    rows = chunk_rows("src/keys.py", ["import os", "def rotate_keys(vault): ...", "class Vault: ..."])
    rows[1]["symbol_kind"] = "function_definition"
    rows[2]["symbol_kind"] = "class_definition"
    return rows  # the first (module-level code) names no symbol: null


def test_symbol_kind_round_trips_and_stays_null_where_unset(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files("c", {"src/keys.py": _code_rows(), "a.md": chunk_rows("a.md", ["prose"])})
    kinds = [row["symbol_kind"] for row in store.file_rows("c", "src/keys.py")]
    assert kinds == [None, "function_definition", "class_definition"]
    assert [row["symbol_kind"] for row in store.file_rows("c", "a.md")] == [None]
    # What a move re-writes (indexer.move): the column goes along.
    assert [row.get("symbol_kind") for row in store.file_writes("c", "src/keys.py")] == kinds
    reopened = Store(tmp_path / "db", DIM)
    assert [row["symbol_kind"] for row in reopened.file_rows("c", "src/keys.py")] == kinds


async def test_the_reader_returns_the_column_with_every_search(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files("c", {"src/keys.py": _code_rows()})
    reader = AsyncReader(store)
    rows = await reader.page_rows("c", "src/keys.py")
    assert [row["symbol_kind"] for row in rows] == [None, "function_definition", "class_definition"]
    scan = await reader.phrase_rows(["c"], "(?i)rotate_keys", 10)
    found = scan.full_rows(list(range(len(scan.rows))))
    assert [row["symbol_kind"] for row in found] == ["function_definition"]


def test_a_schema_5_table_without_the_column_is_rebuilt(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == "6"
    db_path = tmp_path / "db"
    Store(db_path, DIM).replace_files("c", {"a.md": chunk_rows("a.md", ["old"])})
    db = lancedb.connect(str(db_path))
    table = db.open_table("chunks").to_arrow().drop_columns(["symbol_kind"])
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"hallouminate.schema": b"5"})
    db.drop_table("chunks")
    db.create_table("chunks", table)
    # The files' states go with the rows: the next index run embeds every file again, with the column.
    rebuilt = Store(db_path, DIM)
    assert rebuilt.count_rows() == 0 and rebuilt.file_states("c") == {}
    rebuilt.replace_files("c", {"src/keys.py": _code_rows()})
    assert rebuilt.file_rows("c", "src/keys.py")[1]["symbol_kind"] == "function_definition"
