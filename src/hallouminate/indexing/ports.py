"""What the indexer and the search need from the store and the embedder, as structural types.

Domain code depends on these protocols, never on the adapters (lancedb, fastembed) themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol


class FileStateLike(Protocol):
    size: int
    mtime_ns: int
    content_hash: str
    indexed_at_ms: int


class EmbedderPort(Protocol):
    dim: int

    def embed_passages(self, texts: list[str]) -> Any: ...

    def embed_query(self, text: str) -> Any: ...

    def count_tokens(self, text: str) -> int: ...


class StorePort(Protocol):
    def file_states(self, corpus: str) -> Mapping[str, FileStateLike]: ...

    def replace_files(self, corpus: str, files: Mapping[str, Sequence[Mapping[str, Any]]]) -> None: ...

    def delete_files(self, corpus: str, paths: Iterable[str]) -> None: ...

    def update_stats_many(self, corpus: str, stats: Mapping[str, tuple[int, int]]) -> None: ...

    def maybe_optimize(self) -> bool: ...

    def vector_search(self, vector: Any, corpora: list[str], limit: int) -> list[dict[str, Any]]: ...

    def fts_search(self, terms: Sequence[str], corpora: list[str], limit: int) -> list[dict[str, Any]]: ...


class AsyncReaderPort(Protocol):
    async def vector_search(self, vector: Any, corpora: list[str], limit: int) -> list[dict[str, Any]]: ...

    async def fts_search(
        self, terms: Sequence[str], corpora: list[str], limit: int
    ) -> list[dict[str, Any]]: ...

    async def count_rows(self, corpus: str) -> int: ...
