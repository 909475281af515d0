"""The ``chunks`` table: its Arrow schema and how rows are built (the only place that knows columns)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

TABLE = "chunks"
# Bumped when the columns change: an older table is dropped and rebuilt by the next index run. Also bumped
# when the default chunking changes, since unchanged files are never re-chunked (4: 128-token chunks;
# 5: the ``quality`` column, ADR 0029; 6: the ``symbol_kind`` column, ADR 0041).
SCHEMA_VERSION = "6"
META_VERSION = b"hallouminate.schema"
META_MODEL = b"hallouminate.model"
# The token budget chunks were cut to: a table cut at another size is rebuilt, like one of another model.
META_CHUNK_TOKENS = b"hallouminate.chunk_tokens"
# How the embedded texts were prepared (the chunker's EMBED_TEXT_FORM and the model's query/passage
# prefixes): vectors made of texts prepared otherwise are not comparable with new ones.
META_TEXT_PREP = b"hallouminate.text_prep"

# Columns returned by searches: everything but the vector.
RESULT_COLUMNS = [
    "id",
    "corpus",
    "path",
    "abs_path",
    "heading_path",
    "line_start",
    "line_end",
    "text",
    "summary",
    "content_hash",
    "file_size",
    "file_mtime_ns",
    "indexed_at_ms",
    "page",
    "keywords",
    "fields",
    "quality",
    "symbol_kind",
]
STATE_COLUMNS = ["path", "file_size", "file_mtime_ns", "content_hash", "indexed_at_ms"]

# What a caller puts in each row of ``Store.replace_files``; the store adds id, corpus, path, ordinal.
ROW_KEYS = (
    "abs_path",
    "heading_path",
    "line_start",
    "line_end",
    "text",
    "summary",
    "content_hash",
    "file_size",
    "file_mtime_ns",
    "vector",
)
# Keys a row may omit (null when absent).
OPTIONAL_KEYS = ("page", "keywords", "fields", "quality", "symbol_kind")


def chunk_schema(
    dim: int, model_name: str | None, chunk_tokens: int | None = None, text_prep: str | None = None
) -> pa.Schema:
    meta = {META_VERSION: SCHEMA_VERSION.encode()}
    if text_prep:
        meta[META_TEXT_PREP] = text_prep.encode()
    if model_name:
        meta[META_MODEL] = model_name.encode()
    if chunk_tokens:
        meta[META_CHUNK_TOKENS] = str(chunk_tokens).encode()
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("corpus", pa.string(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("abs_path", pa.string()),
            pa.field("ordinal", pa.int32()),
            pa.field("heading_path", pa.list_(pa.string())),
            pa.field("line_start", pa.int32()),
            pa.field("line_end", pa.int32()),
            pa.field("text", pa.string()),
            pa.field("summary", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field("file_size", pa.int64()),
            pa.field("file_mtime_ns", pa.int64()),
            pa.field("indexed_at_ms", pa.int64()),
            # 1-based part of a document of labelled parts (a PDF's page, a deck's slide, a workbook's
            # sheet: indexing/documents.py); null for every other format.
            pa.field("page", pa.int32()),
            # The page's keywords (indexing/keywords.py), repeated on each of its rows like ``summary``.
            pa.field("keywords", pa.list_(pa.string())),
            # The page's YAML frontmatter as a JSON object (null without one): title, tags, date, ...
            pa.field("fields", pa.string()),
            # The chunk's quality, 0..1, scored at index time (indexing/quality.py); the indexer always
            # writes it, and a null (a row written without one) reads as 1.0.
            pa.field("quality", pa.float32()),
            # A source-code chunk's definition, in its grammar's word ("function_definition"); null on
            # every other chunk (module-level code, documents).
            pa.field("symbol_kind", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ],
        metadata=meta,
    )


def row_id(corpus: str, path: str, ordinal: int) -> str:
    # JSON keeps the three parts unambiguous whatever characters names and paths contain.
    return json.dumps([corpus, path, ordinal], ensure_ascii=False)


def build_table(schema: pa.Schema, corpus: str, files: Mapping[str, Sequence[Mapping[str, Any]]]) -> pa.Table:
    """Column-wise Arrow table for the rows of ``files`` (path -> rows in chunk order)."""
    dim = schema.field("vector").type.list_size
    now_ms = int(time.time() * 1000)
    cols: dict[str, list[Any]] = {name: [] for name in schema.names if name != "vector"}
    vectors: list[np.ndarray] = []
    for path, rows in files.items():
        for ordinal, row in enumerate(rows):
            missing = [k for k in ROW_KEYS if k not in row]
            if missing:
                raise ValueError(f"row {ordinal} of {path!r} lacks {missing}")
            cols["id"].append(row_id(corpus, path, ordinal))
            cols["corpus"].append(corpus)
            cols["path"].append(path)
            cols["ordinal"].append(ordinal)
            cols["indexed_at_ms"].append(int(row.get("indexed_at_ms", now_ms)))
            for key in ROW_KEYS:
                if key != "vector":
                    cols[key].append(row[key])
            for key in OPTIONAL_KEYS:
                cols[key].append(row.get(key))
            vector = np.asarray(row["vector"], dtype=np.float32).reshape(-1)
            if vector.shape[0] != dim:
                raise ValueError(f"row {ordinal} of {path!r}: vector has {vector.shape[0]} dims, want {dim}")
            vectors.append(vector)
    flat = np.concatenate(vectors) if vectors else np.empty(0, dtype=np.float32)
    arrays = [
        pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim)
        if name == "vector"
        else pa.array(cols[name], schema.field(name).type)
        for name in schema.names
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def plain(data: Any) -> Any:
    """``data`` (a table, or one column) with its dictionary-encoded columns decoded: ``to_pylist`` of a
    dictionary column converts value by value (~1.5 us a row, 7x a plain one); decoded first, by a take
    of its dictionary, the rows cost as plain ones plus ~20 us a column (the reader holds repeated columns
    encoded: reader.REPEATED_COLUMNS)."""
    if isinstance(data, pa.Table):
        if not any(pa.types.is_dictionary(field.type) for field in data.schema):
            return data
        return pa.table([plain(column) for column in data.columns], names=data.column_names)
    if not pa.types.is_dictionary(data.type):
        return data
    if isinstance(data, pa.ChunkedArray):
        return pa.chunked_array([plain(chunk) for chunk in data.chunks], type=data.type.value_type)
    return data.dictionary.take(data.indices)
