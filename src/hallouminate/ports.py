"""What the domain needs from the adapters (the store, its reader, the embedder), as structural types.

The indexer, the search and the daemon depend on these protocols; ``storage/`` and ``embedding/`` satisfy
them (mypy checks it where the real classes are passed). This module imports nothing of ours, so the
packages that use it do not depend on one another through it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, Protocol, TypeAlias, TypedDict

if TYPE_CHECKING:  # numpy is for the checker only: light callers (browse, the CLI) import this module
    import numpy as np
    import numpy.typing as npt


class ChunkRow(TypedDict, total=False):
    """A stored chunk as the reads return it: the columns of storage/schema.py (a search returns its
    ``RESULT_COLUMNS`` and ``ordinal``, a phrase scan ``LIGHT_COLUMNS`` or the columns asked for) and what the read adds.

    Total=False because each read returns its own subset of the columns; a TypedDict is only a static
    type (rows stay the dicts pyarrow's ``to_pylist`` builds), so naming a column wrong or using it as
    the wrong type is caught by the checker at no cost at run time.
    """

    id: str
    corpus: str
    path: str
    abs_path: str
    ordinal: int
    heading_path: list[str] | None
    line_start: int
    line_end: int
    text: str
    summary: str
    content_hash: str
    file_size: int
    file_mtime_ns: int
    indexed_at_ms: int
    # Nullable columns: PDF chunks have a page; keywords and frontmatter fields may be absent.
    page: int | None
    keywords: list[str] | None
    fields: str | None
    # The chunk's index-time quality, 0..1 (indexing/quality.py); null reads as 1.0.
    quality: float | None
    # A source-code chunk's definition kind (the grammar's word); null on every other chunk.
    symbol_kind: str | None
    # Added by a search: cosine similarity (vector) or the BM25 score.
    score: float
    # Added by a phrase scan: the non-overlapping occurrences of the phrase in ``text``.
    occurrences: int


Vector: TypeAlias = "npt.NDArray[np.float32]"


class ChunkWrite(TypedDict):
    """A chunk as the indexer hands it to the store (``StorePort.replace_files``); the store adds its id,
    corpus, path, ordinal and (unless given) indexed_at_ms (storage/schema.py ``ROW_KEYS``)."""

    abs_path: str
    heading_path: list[str]
    line_start: int
    line_end: int
    text: str
    summary: str
    content_hash: str
    file_size: int
    file_mtime_ns: int
    vector: Vector
    page: NotRequired[int | None]
    keywords: NotRequired[list[str]]
    # The page's frontmatter fields as JSON.
    fields: NotRequired[str | None]
    # The chunk's quality, 0..1 (indexing/quality.py).
    quality: NotRequired[float]
    # A source-code chunk's definition kind (the grammar's word: "function_definition").
    symbol_kind: NotRequired[str | None]
    indexed_at_ms: NotRequired[int]


# The daemon embeds a query off its event loop (batched with concurrent ones): awaited by ``ground``.
QueryEmbedder = Callable[[str], Awaitable[Vector]]
# The daemon scores (query, passages) with the reranker off its event loop: awaited by the rerank stage.
RerankScorer = Callable[[str, list[str]], Awaitable[list[float]]]


class RerankerPort(Protocol):
    """A model scoring how well each passage answers a query (a cross-encoder, or a bi-encoder's cosine),
    higher is better."""

    @property
    def name(self) -> str:
        """As the config names it: reported in the result."""
        ...

    @property
    def fuse_weight(self) -> float | None:
        """None: its order replaces the fused one; a weight: its ranking joins the fused one by weighted RRF
        (search/rerank.py)."""
        ...

    def score(self, query: str, passages: list[str]) -> list[float]:
        """One score per passage, in order; blocking (the daemon calls it in a worker thread)."""
        ...


class FileStateLike(Protocol):
    """A file as last indexed. Read-only: the store hands out frozen records."""

    @property
    def size(self) -> int: ...

    @property
    def mtime_ns(self) -> int: ...

    @property
    def content_hash(self) -> str: ...

    @property
    def indexed_at_ms(self) -> int: ...


class EmbedderPort(Protocol):
    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """The most tokens the model reads of a text (special tokens included)."""
        ...

    @property
    def text_prep(self) -> str:
        """How the embedder prepares a text before the model reads it (prefixes); recorded in the store."""
        ...

    def embed_passages(self, texts: list[str]) -> Vector: ...

    def embed_query(self, text: str) -> Vector: ...

    def count_tokens(self, text: str) -> int: ...


class RefusedInputs(Exception):
    """Raised by ``EmbedderPort.embed_passages`` when the embedder refused some inputs (an endpoint's HTTP
    400/413/422) and embedded the rest: ``vectors`` holds every row (the refused ones zero), ``refused``
    the refused inputs' indices with the reason. The indexer skips those chunks and counts them per file."""

    def __init__(self, vectors: Vector, refused: dict[int, str]) -> None:
        super().__init__(f"{len(refused)} input(s) refused")
        self.vectors = vectors
        self.refused = refused


class StorePort(Protocol):
    """What the indexer writes and reads through (the daemon's ``Store``)."""

    def file_states(self, corpus: str) -> Mapping[str, FileStateLike]:
        """Each file as last indexed: the caller's own, which later writes do not change."""
        ...

    def replace_files(self, corpus: str, files: Mapping[str, Sequence[ChunkWrite]]) -> None: ...

    def delete_files(self, corpus: str, paths: Iterable[str]) -> None: ...

    def update_stats_many(self, corpus: str, stats: Mapping[str, tuple[int, int]]) -> None: ...

    def maybe_optimize(self) -> bool: ...

    def file_writes(self, corpus: str, path: str) -> list[ChunkWrite]:
        """One file's rows as written (vectors included), in chunk order: what a rename moves."""
        ...

    def count_rows(self, corpus: str | None = None) -> int: ...


class PhraseMatchesPort(Protocol):
    """The rows whose text matches a phrase, in scan order (corpus, path, ordinal).

    ``rows`` holds what ordering and counting need (corpus, path, ordinal, page, line_start, line_end)
    and ``occurrences``; the rest of a row is read only for the rows shown.
    """

    @property
    def rows(self) -> list[ChunkRow]: ...

    @property
    def more(self) -> bool:
        """The scan stopped at its row cap: rows after these were not read."""
        ...

    def texts(self, indices: list[int]) -> list[str]: ...

    def full_rows(self, indices: list[int], columns: list[str] | None = None) -> list[ChunkRow]: ...

    def count(self, texts: list[str]) -> list[int]:
        """Occurrences of the phrase in each of ``texts``, by the same rules as ``occurrences``."""
        ...


class EligibilityPort(Protocol):
    """Which chunks a search may return (search/filters.py ``Eligibility``), asked by the reader BEFORE it
    ranks: page rules on a page's path and frontmatter, a quality floor per chunk, text rules per chunk."""

    @property
    def filters_pages(self) -> bool: ...

    @property
    def filters_texts(self) -> bool: ...

    @property
    def page_key(self) -> str:
        """Equal for equal page rules: the reader caches each corpus's page mask under it."""
        ...

    @property
    def min_quality(self) -> float:
        """Chunks whose ``quality`` is below it are not candidates (a null or absent quality passes)."""
        ...

    @property
    def excluded_tokens(self) -> Sequence[Sequence[str]]:
        """Per excluded term, the analyser's tokens: a chunk holding all of one term's is excluded."""
        ...

    @property
    def phrase_tokens(self) -> Sequence[Sequence[str]]:
        """Each quoted phrase as the analyser's tokens: an eligible chunk holds them consecutively."""
        ...

    @property
    def rules_key(self) -> str:
        """Equal for equal path and frontmatter rules (``page_key`` without ``changed_since``)."""
        ...

    @property
    def changed_since_ns(self) -> int | None:
        """Only files modified at or after this instant (ns since the epoch) are eligible; None: any."""
        ...

    def page_passes(self, path: str, fields: str | None) -> bool: ...

    def mtime_passes(self, mtime_ns: int | None) -> bool: ...

    def text_passes(self, text: str) -> bool:
        """The exact text rules (the phrases verbatim, no excluded term): asked of candidates only."""
        ...


class ReaderPort(Protocol):
    """Everything ``ground`` reads (the daemon's ``storage.reader.AsyncReader``): each call sees every
    commit finished before it."""

    async def vector_search(
        self, vector: Vector, corpora: Sequence[str], limit: int, eligible: EligibilityPort | None = None
    ) -> list[ChunkRow]: ...

    async def fts_search(
        self,
        terms: Sequence[str],
        corpora: Sequence[str],
        limit: int,
        eligible: EligibilityPort | None = None,
    ) -> list[ChunkRow]: ...

    async def count_rows(self, corpus: str) -> int: ...

    async def phrase_rows(
        self,
        corpora: Sequence[str],
        pattern: str,
        max_rows: int,
        eligible: EligibilityPort | None = None,
        runs: Sequence[Sequence[str]] = (),
    ) -> PhraseMatchesPort: ...

    async def neighbours(
        self,
        queries: Vector,
        corpus: str,
        limit: int,
        eligible: EligibilityPort | None = None,
        *,
        exclude_paths: Collection[str] = (),
        exclude_ids: Collection[str] = (),
        best_of: bool = False,
    ) -> list[list[ChunkRow]]:
        """Per row of ``queries``, the ``limit`` nearest chunks of ``corpus`` that ``eligible`` lets
        through, outside the pages ``exclude_paths`` and the chunks ``exclude_ids``, best first with
        ``score`` (the connection graph: a level of its walk in one call); ``best_of``: one list, each
        chunk at its best query's score (the start's seeds under all_chunks)."""
        ...

    async def chunk_vectors(self, ids: Sequence[str], corpora: Sequence[str]) -> Vector:
        """The unit vectors of the chunks ``ids`` (of ``corpora``), one row each in that order; a zero row
        for a chunk a commit removed since it was found (mmr)."""
        ...

    async def page_rows(self, corpus: str, path: str) -> list[ChunkRow]:
        """Every chunk of one page, by ordinal: the search result columns and ``ordinal`` (parent)."""
        ...
