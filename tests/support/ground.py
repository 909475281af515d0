"""``ground`` as the daemon serves it, run in-process on a real store and the real model, and the published
result schema closed (every key the engine returns must be declared)."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

from hallouminate.config import CorpusSpec, Settings
from hallouminate.embedding import Embedder
from hallouminate.protocol.schemas import GROUND_RESULT
from hallouminate.search import ground
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

# Explicit, so that a developer's own baseline config cannot change what these tests see.
SETTINGS = Settings(
    model_name="unused",
    model_cache_dir=Path("/unused"),
    store_dir=Path("/unused"),
    idle_exit_secs=900,
    top_files=10,
    chunks_per_file=3,
    limit=50,
    snippet_chars=240,
    chunk_tokens=256,
    max_file_bytes=4 * 1024 * 1024,
)


def strict(schema: Any) -> Any:
    """The schema with every declared object closed: a key the engine returns must be declared."""
    if isinstance(schema, dict):
        out = {key: strict(value) for key, value in schema.items()}
        if "properties" in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    return schema


# What the MCP client validates structuredContent against: the tool's published outputSchema, closed.
RESULT_SCHEMA: dict[str, Any] = strict(GROUND_RESULT)


async def run_ground(
    store: Store, embedder: Embedder, corpora: list[CorpusSpec], query: str, **params: Any
) -> dict[str, Any]:
    """``ground`` as the daemon serves it: a reader of ``store`` (it sees every commit), the query
    embedded in a worker thread."""
    embed = partial(asyncio.to_thread, embedder.embed_query)
    result: dict[str, Any] = await ground(AsyncReader(store), embed, corpora, query, **params)
    return result
