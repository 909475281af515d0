"""``search_rag``: the KuraDB face's retrieval over one corpus (docs/kuradb-face.md).

Each mode is one of ``ground``'s two signals alone, through the same reader calls ``ground`` makes:
``keyword`` the BM25 search (``ReaderPort.fts_search``, the query's terms by the one analyser), ``semantic``
the vector search (``ReaderPort.vector_search``). Each returns up to ``limit`` chunks, best first; no
fusion, no roll-up, no snippets: KuraDB's shape is the chunks themselves, grouped by file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from hallouminate.analysis import query_terms
from hallouminate.ports import ChunkRow, QueryEmbedder, ReaderPort
from hallouminate.protocol.limits import RAG_MODES
from hallouminate.protocol.results import RagSource, SearchRagResult


async def retrieve(
    reader: ReaderPort,
    embed_query: QueryEmbedder,
    store_key: str,
    query: str,
    *,
    modes: Sequence[str] = RAG_MODES,
    limit: int,
) -> SearchRagResult:
    """``{keyword?: [...], semantic?: [...]}`` for the ``modes`` asked (both by default), each run at once
    beside the other. A mode that fails fails the call with its own error (KuraDB: a failing branch is
    the call's error, with its message); the other is not waited for."""
    keys = [store_key]

    async def keyword() -> list[ChunkRow]:
        terms = query_terms(query)
        return await reader.fts_search(terms, keys, limit) if terms else []

    async def semantic() -> list[ChunkRow]:
        return await reader.vector_search(await embed_query(query), keys, limit)

    runs: dict[str, Callable[[], Awaitable[list[ChunkRow]]]] = {"keyword": keyword, "semantic": semantic}
    wanted = [mode for mode in RAG_MODES if mode in modes]
    tasks = [asyncio.ensure_future(runs[mode]()) for mode in wanted]
    try:
        found = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    result: SearchRagResult = {}
    for mode, rows in zip(wanted, found, strict=True):
        result[mode] = by_source(rows)  # type: ignore[literal-required]
    return result


def by_source(rows: Sequence[ChunkRow]) -> list[RagSource]:
    """Ranked chunks grouped by file: files in the order of their best chunk, each file's chunks in rank
    order (pure)."""
    files: dict[str, RagSource] = {}
    for row in rows:
        source = row["abs_path"]
        entry = files.get(source)
        if entry is None:
            entry = files[source] = {"source": source, "matches": []}
        entry["matches"].append({"chunk": int(row["ordinal"]), "content": row["text"] or ""})
    return list(files.values())
