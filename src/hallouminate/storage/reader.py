"""Searches run on the daemon's event loop through LanceDB's async API.

The sync API hops to LanceDB's own loop thread on every call; measured on 2 cores that hop and its
conversions cost ~2 ms of a ~4.5 ms vector query and ~3 ms of a BM25 query. The reader keeps its own
handle on the table and moves it to the latest committed version whenever the writer (``Store``) has
committed since the last query, so a search always sees every finished write. Over a read-only store
(``ReadOnlyStore``, following another daemon's commits) it moves instead to exactly the version the store
swapped to (``Store.view``), so BM25 (the store's index of that version) and the vectors always agree.

On an object store every read has a deadline (the store's ``read_deadline_secs``): past it, or on a
request the store did not answer, the search fails as ``StoreUnreachable`` (retryable), and the same
reader answers again once the bucket does. A version pruned under a read-only store's reader moves the
store to the latest version and reads again, once.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import functools
import logging
import math
import os
from collections.abc import AsyncIterator, Callable, Collection, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hallouminate.errors import StoreFault
from hallouminate.ports import ChunkRow, EligibilityPort, Vector
from hallouminate.storage import allocator, ann, eligibility, sql
from hallouminate.storage.faults import object_store_fault, pruned, unreachable
from hallouminate.storage.held_vectors import EXACT_ROWS, HeldVectors
from hallouminate.storage.lancedb_import import import_lancedb
from hallouminate.storage.lexical import LexicalIndex, Scope, page_number
from hallouminate.storage.phrase_scan import SCAN_COLUMNS, PhraseMatches, match_rows, matching, sort_scan_rows
from hallouminate.storage.schema import RESULT_COLUMNS, TABLE, plain

if TYPE_CHECKING:
    from hallouminate.storage.store import Store

# Corpora up to this many rows (together, per request) are held in memory between commits and searched
# there: by vector, a matrix product over every vector, exact like LanceDB's flat scan (33-47 ms at 50k
# rows) (to within 16-bit rounding past 32k rows: storage/held_vectors.py) but ~7 ms at 100k; BM25 hits and phrase scans read
# their rows there too. The cost is ~0.8 kB of vector and ~1 kB of row per chunk (~190 MB at 100k); bigger
# sets are searched in LanceDB. The reader takes another bound as ``in_memory_rows`` (tests force the
# LanceDB path with 0).
IN_MEMORY_ROWS = 200_000
# Past this many rows a corpus's vector product runs in a worker thread (below it, the hop costs more).
OFF_LOOP_ROWS = 20_000
# A phrase scan past the in-memory bound reads this many rows of text at a time (~10 MB of it at ~1 kB a
# chunk; LanceDB's own batches are no bigger).
SCAN_BATCH = 8192
# Past the bound, a phrase scan reads only the rows holding its sure tokens when they are at most one in
# this many of the corpus's rows: fetching a row by id costs ~15-25 us of CPU, streaming ~2.5 us a row
# with the regex (100k rows; ADR 0057).
NARROW_SHARE = 20
# A filter letting through at most this share of a corpus's vectors has only those scored (gathered,
# then a product over them); above it the full product with the others' scores set to minus infinity is
# cheaper than the gather.
FEW_VECTORS = 0.1
# The connection graph's queries are scored this many at a time (``neighbours``): 64 x 100k scores are
# 25 MB, and the product of 64 costs little more per query than one of 10.
QUERY_BLOCK = 64
# What ``page_heads`` reads of each page's first chunk (list_topics, search/topics.py).
HEAD_COLUMNS = ["path", "fields", "file_mtime_ns", "heading_path"]
# A vector search under text rules ranks only the chunks BM25's index names as passing them when there are
# at most this many (fetching each id costs ~2 us); more are dense enough to find in score order.
TEXT_CANDIDATES = 5_000

# Held columns whose value is the same on every chunk of a page (or of a corpus): held dictionary-encoded,
# each distinct value once. At 100k chunks they were 42.6 MB as plain strings and are 8.5 MB so (the
# page summary alone 28.2 -> 4.2 MB). Searches read them as before (take, filter, to_pylist); they are
# encoded after the sort (Arrow sorts no dictionary column).
REPEATED_COLUMNS = frozenset({"corpus", "path", "abs_path", "summary", "content_hash"})
log = logging.getLogger("hallouminate.storage")

_T = TypeVar("_T")
_P = ParamSpec("_P")
# The key of the whole table's row count among the per-corpus counts (no corpus name is empty).
_ALL_CORPORA = ""
# Inside a bounded read already: the reads it calls are bounded by it (one deadline per operation).
_BOUNDED: contextvars.ContextVar[bool] = contextvars.ContextVar("hallouminate_bounded_read", default=False)


def _bounded(
    read: Callable[Concatenate[AsyncReader, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[AsyncReader, _P], Coroutine[Any, Any, _T]]:
    """A public read of ``AsyncReader`` with the object store's deadline and its failures explained
    (``StoreUnreachable``, retryable); a version pruned under a read-only store moves it to the latest
    and reads again, once. Reads of the writer's local store run as they are."""

    @functools.wraps(read)
    async def bounded(self: AsyncReader, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        if _BOUNDED.get() or (self._deadline is None and not self._store.read_only):
            return await read(self, *args, **kwargs)
        location = self._store.location
        token = _BOUNDED.set(True)
        try:
            for attempt in (0, 1):
                try:
                    async with asyncio.timeout(self._deadline):
                        return await read(self, *args, **kwargs)
                except StoreFault:
                    raise
                except TimeoutError as exc:
                    if self._deadline is None:
                        raise
                    why = f"no answer within the {self._deadline:g} s read deadline"
                    raise unreachable(location, why) from exc
                except Exception as exc:
                    if attempt == 0 and self._store.read_only and pruned(exc):
                        log.warning(
                            "version %s was pruned under a search: following the writer", self._store.version
                        )
                        await asyncio.to_thread(self._store.follow)
                        continue
                    fault = object_store_fault(location, exc) if location.directory is None else None
                    if fault is None:
                        raise
                    raise fault from exc
            raise AssertionError("unreachable")  # the loop returns or raises
        finally:
            _BOUNDED.reset(token)

    return bounded


class _CorpusRows:
    """A corpus held in memory: its rows (the result columns and the ordinal) in scan order (path,
    ordinal), which phrase scans read too; their unit vectors in the order they were read, with
    ``row_of[i]`` the row of vector ``i``; and row id -> row, for BM25 hits."""

    def __init__(self, rows: Any, held: HeldVectors, row_of: np.ndarray) -> None:
        self.rows = rows
        returned = [*RESULT_COLUMNS, "ordinal"]  # what searches return of a row
        self.encoded = [name for name in returned if pa.types.is_dictionary(rows.schema.field(name).type)]
        self.unencoded = rows.select([name for name in returned if name not in self.encoded])  # a view
        self.held = held
        self.row_of = row_of
        self.masks: dict[tuple[str, float], np.ndarray | None] = {}
        self.few_cache: dict[tuple[str, float], np.ndarray | None] = {}

    # How the vectors are held is this class's business: searches ask for scores and vectors through these.
    def __len__(self) -> int:
        """How many vectors are held."""
        return len(self.held)

    def scores(self, block: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarities of the held vectors (those at ``subset`` only, when given) with unit query
        vector(s) ``block`` (dim,) or (dim, k): float32, one row per vector."""
        return self.held.scores(block, subset)

    def vectors(self, places: np.ndarray) -> np.ndarray:
        """The unit vectors at ``places`` (vector order), float32."""
        return self.held.vectors(places)

    @functools.cached_property
    def pages(self) -> eligibility.Pages:  # read by filtered searches only; kept until the next commit
        return eligibility.Pages(self.rows)

    def quality_passing(self, min_quality: float) -> int:
        """How many rows the quality floor lets through (cached until the next commit)."""
        key = ("", min_quality)  # the key ``mask`` gives a filter without page rules: the same mask
        if key not in self.masks:
            self.masks[key] = eligibility.quality_mask(self.rows, min_quality)
        mask = self.masks[key]
        return self.rows.num_rows if mask is None else int(mask.sum())

    def mask(self, eligible: EligibilityPort | None) -> np.ndarray | None:
        """Rows (scan order) the filter's page rules and quality floor let through; None: every row."""
        if eligible is None:
            return None
        key = (eligible.page_key if eligible.filters_pages else "", eligible.min_quality)
        if key not in self.masks:  # kept until the next commit (a new _CorpusRows), a few filters at most
            if len(self.masks) >= eligibility.MASKS_KEPT:
                self.masks.clear()
            pages = self.pages if eligible.filters_pages else None
            self.masks[key] = eligibility.row_mask(self.rows, pages, eligible)
        return self.masks[key]

    def vector_mask(self, eligible: EligibilityPort | None) -> np.ndarray | None:
        """``mask`` in vector order (cached with it)."""
        mask = self.mask(eligible)
        if mask is None or eligible is None:
            return None
        key = ("vectors:" + (eligible.page_key if eligible.filters_pages else ""), eligible.min_quality)
        if key not in self.masks:
            self.masks[key] = mask[self.row_of]
        return self.masks[key]

    def few(self, vector_mask: np.ndarray, cache_for: EligibilityPort | None) -> np.ndarray | None:
        """The vectors a mask lets through when they are few enough (``FEW_VECTORS``) to score alone;
        cached for a filter's own mask (``cache_for``)."""
        key = (
            ("few:" + cache_for.page_key if cache_for.filters_pages else "few:", cache_for.min_quality)
            if cache_for
            else None
        )
        if key is not None and key in self.few_cache:
            return self.few_cache[key]
        chosen = (
            np.flatnonzero(vector_mask) if int(vector_mask.sum()) <= FEW_VECTORS * len(vector_mask) else None
        )
        if key is not None:
            if len(self.few_cache) >= eligibility.MASKS_KEPT:
                self.few_cache.clear()
            self.few_cache[key] = chosen
        return chosen

    def texts_pass(self, eligible: EligibilityPort, rows: np.ndarray) -> list[bool]:
        texts = self.rows["text"].take(pa.array(rows, pa.int64())).to_pylist()
        return [eligible.text_passes(text or "") for text in texts]

    def take(self, indices: list[int]) -> list[ChunkRow]:
        """The rows at ``indices`` as searches return them. The encoded columns come from each one's
        distinct values as Python strings, made once per commit (~10 MB at 100k rows): ~3x faster than
        Arrow converting their values row by row, and plain columns are no faster."""
        rows: list[dict[str, Any]] = self.unencoded.take(indices).to_pylist()
        at = np.asarray(indices, dtype=np.int64)
        for name in self.encoded:
            values, codes = self.decoder[name]
            for row, code in zip(rows, codes[at].tolist(), strict=True):
                row[name] = None if code < 0 else values[code]
        return cast("list[ChunkRow]", rows)

    @functools.cached_property
    def decoder(self) -> dict[str, tuple[list[Any], np.ndarray]]:
        """Each encoded column's distinct values and each row's code (-1: null)."""
        decoders = {}
        for name in self.encoded:
            column = self.rows[name].combine_chunks()
            codes = column.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
            decoders[name] = (column.dictionary.to_pylist(), codes)
        return decoders

    @functools.cached_property
    def ids(self) -> dict[str, int]:  # BM25 hits name rows by id; a vector search never needs this
        return {row_id: i for i, row_id in enumerate(self.rows["id"].to_pylist())}

    @functools.cached_property
    def vector_of(self) -> np.ndarray:  # row -> its vector's place among the held vectors (mmr)
        return np.argsort(self.row_of)

    @functools.cached_property
    def paths(self) -> list[str]:  # each row's path, sorted (scan order): a page's rows by bisection (parent)
        return cast("list[str]", plain(self.rows["path"]).to_pylist())


def _take(loaded: list[_CorpusRows], places: list[tuple[int, int]]) -> list[ChunkRow]:
    """The rows at (corpus position, row) ``places``, in that order: one take per corpus (converting
    row by row costs ~40 us a row)."""
    by_corpus: dict[int, list[int]] = {}
    for position, index in places:
        by_corpus.setdefault(position, []).append(index)
    converted: dict[tuple[int, int], ChunkRow] = {}
    for position, indices in by_corpus.items():
        for index, row in zip(indices, loaded[position].take(indices), strict=True):
            converted[(position, index)] = row
    return [converted[place] for place in places]


def _best_of(answers: list[list[ChunkRow]], limit: int) -> list[ChunkRow]:
    """Several queries' nearest rows as one list: each chunk at its best score, the best ``limit``."""
    best: dict[str, ChunkRow] = {}
    for rows in answers:
        for row in rows:
            kept = best.get(row["id"])
            if kept is None or row["score"] > kept["score"]:
                best[row["id"]] = row
    return sorted(best.values(), key=lambda row: -row["score"])[:limit]


def _heads_of(rows: Any, first_only: bool) -> list[ChunkRow]:
    """``page_heads`` from a corpus's held rows (scan order: every chunk) or from first chunks only."""
    if first_only:
        rows = rows.sort_by("path")
    else:
        rows = rows.select(HEAD_COLUMNS).filter(pc.equal(rows["ordinal"], 0))  # not a copy of every column
    return cast("list[ChunkRow]", plain(rows).to_pylist())


def _quality_passes(row: ChunkRow, floor: float) -> bool:
    quality = cast("dict[str, Any]", row).get("quality")  # the column lands with index-time quality
    return quality is None or float(quality) >= floor


def _texts_pass(
    held: _CorpusRows, eligible: EligibilityPort, chosen: np.ndarray | None, vectors: np.ndarray
) -> list[bool]:
    """The text rules on the rows of vectors ``vectors`` (a vector search's candidates; positions in
    ``chosen`` when only those vectors were scored)."""
    return held.texts_pass(eligible, held.row_of[vectors if chosen is None else chosen[vectors]])


class AsyncReader:
    """The daemon's reads of ``store`` (satisfies ports.ReaderPort): corpora of up to ``in_memory_rows``
    rows per request are searched in memory, bigger ones in LanceDB; a corpus of more than
    ``off_loop_rows`` rows is scored in a worker thread, and one of more than ``exact_rows`` is held as
    16-bit codes (held_vectors.py; tests force them with 0)."""

    def __init__(
        self,
        store: Store,
        *,
        in_memory_rows: int = IN_MEMORY_ROWS,
        off_loop_rows: int = OFF_LOOP_ROWS,
        scan_batch: int = SCAN_BATCH,
        exact_rows: int = EXACT_ROWS,
    ) -> None:
        os.environ.setdefault("LANCEDB_LOG", "error")
        self._store = store
        # Each read's deadline, on an object store only (a local disk answers or fails by itself).
        self._deadline: float | None = None if store.path is not None else store.read_deadline_secs
        # The BM25 index of the version the handle reads (the store's, as of the last move).
        self._lexical: LexicalIndex = store.view().lexical
        self._in_memory_rows = in_memory_rows
        self._exact_rows = exact_rows
        self._off_loop_rows = off_loop_rows
        self._table: Any = None
        self._generation = -1
        self._counts: dict[str, int] = {}
        self._corpora: list[str] | None = None  # ``corpora``, until the next commit
        # The held corpora loaded at a read-only store's next version (``preload``), taken up on the move.
        self._staged: tuple[int, dict[str, _CorpusRows]] | None = None
        # Phrase mode scans the text of whole corpora: up to IN_MEMORY_ROWS from the rows ranked searches
        # hold (measured on 5,000 rows: ~6 ms a scan from memory, ~30 ms from the table); past it, streamed
        # from the table ``scan_batch`` rows at a time, never held (ADR 0057).
        self._scan_batch = scan_batch
        self._vectors: dict[str, _CorpusRows] = {}
        # Past the in-memory bound, a filtered search's pages (path, frontmatter) per corpus.
        self._pages_cache: dict[str, eligibility.Pages] = {}
        # Each corpus's page heads (``page_heads``), until the next commit.
        self._heads: dict[str, list[ChunkRow]] = {}
        self._loads: dict[tuple[str, int], asyncio.Future[_CorpusRows]] = {}

    async def _fresh_table(self) -> Any:
        lancedb = import_lancedb()

        # The store's view before refreshing: a commit landing meanwhile is caught by the next query. A
        # read-only store's view names its version: the handle moves to exactly that one, never further
        # (the store's BM25 index is of that version).
        view = self._store.view()
        generation = view.generation
        if self._table is None:
            location = self._store.location
            db = await lancedb.connect_async(
                location.connect_uri(), storage_options=location.storage_options(reads=True)
            )
            table = await db.open_table(TABLE)
            if view.version is not None:
                await table.checkout(view.version)
            self._table = table
        elif generation != self._generation:
            if view.version is None:
                await self._table.checkout_latest()
            else:
                await self._table.checkout(view.version)
        if generation != self._generation:
            self._lexical = view.lexical
            self._counts.clear()
            self._corpora = None
            self._vectors.clear()
            staged, self._staged = self._staged, None
            if staged is not None and view.version is not None and staged[0] == view.version:
                self._vectors.update(staged[1])  # loaded by ``preload`` before the store moved
            self._pages_cache.clear()
            self._heads.clear()
            self._generation = generation
        return self._table

    @_bounded
    async def vector_search(
        self, vector: Vector, corpora: Sequence[str], limit: int, eligible: EligibilityPort | None = None
    ) -> list[ChunkRow]:
        """Nearest chunks by cosine distance among those ``eligible`` lets through (filtered before
        ranking); each row gains ``score`` = cosine similarity."""
        if not corpora or limit <= 0:
            return []
        table = await self._fresh_table()
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        sizes = [await self.count_rows(corpus) for corpus in corpora]
        if sum(sizes) <= self._in_memory_rows:
            return await self._vector_search_in_memory(table, query, corpora, limit, eligible)
        if eligible is not None:
            return await self._vector_search_filtered(table, query, corpora, limit, eligible)
        # Past the bound the approximate index answers, if the store has one (storage/ann.py): its
        # partitions probed, candidates re-scored exactly, rows written since it was built scanned exactly.
        builder = ann.tune(await table.search(query, vector_column_name="vector")).distance_type("cosine")
        if not await self._whole_table(corpora):
            # A prefilter costs a third of the query at 100k (61 against 41 ms, measured under load):
            # skipped when the corpora asked for are every row of the table (a large store's usual case).
            builder = builder.where(sql.in_list("corpus", corpora))
        rows: list[dict[str, Any]] = (  # LanceDB's rows: the result columns and its ``_distance``
            await builder.select([*RESULT_COLUMNS, "ordinal", "_distance"]).limit(limit).to_list()
        )
        for row in rows:
            row["score"] = 1.0 - float(row.pop("_distance"))
        return cast("list[ChunkRow]", rows)

    async def _in_memory(self, table: Any, corpus: str) -> _CorpusRows:
        """One corpus's rows and unit vectors, read once per commit."""
        held = self._vectors.get(corpus)
        if held is None:
            generation = self._generation
            # Concurrent searches of a corpus not yet held share one load: eight clients arriving after a
            # commit used to read a 100k-row corpus eight times over, at ~0.5 GB each at the peak.
            key = (corpus, generation)
            load = self._loads.get(key)
            if load is None:
                load = asyncio.ensure_future(self._load(table, corpus))
                self._loads[key] = load

                def finished(done: asyncio.Future[_CorpusRows]) -> None:
                    # Cached in the same callback that forgets the load: a search arriving between the two
                    # (its waiters resume later) would otherwise find neither and load the corpus again.
                    self._loads.pop(key, None)
                    if not done.cancelled() and done.exception() is None:
                        self._remember(self._vectors, corpus, done.result(), generation)

                load.add_done_callback(finished)
            # Shielded: one waiter giving up (its client went away) must not cancel the others' load.
            held = await asyncio.shield(load)
        return held

    def _remember(self, cache: dict[str, _T], key: str, value: _T, generation: int) -> None:
        """Cache what was read at ``generation`` only if no query moved the reader past it meanwhile:
        a load that began before a commit must not be served as the state after it (a write would
        then be missing from every search until the next commit)."""
        if self._generation == generation:
            cache[key] = value

    async def _load(self, table: Any, corpus: str) -> _CorpusRows:
        # Batch by batch into preallocated codes: reading the whole vector column at once held three
        # float32 copies of it at the peak (~460 MB at 100k rows).
        dim = self._store.dim
        vectors = HeldVectors(await self.count_rows(corpus), dim, self._exact_rows)
        batches = []
        stream = await (
            table.query()
            .where(f"corpus = {sql.literal(corpus)}")
            .select([*RESULT_COLUMNS, "ordinal", "vector"])
            .to_batches()
        )
        async for batch in stream:
            names = [n for n in batch.schema.names if n != "vector"]
            # Copied out of LanceDB's batch: an imported batch's buffers are freed together, so keeping
            # its other columns kept its vectors too (~150 MB at 100k rows, on top of the codes).
            every = pa.array(np.arange(batch.num_rows))
            batches.append(
                pa.RecordBatch.from_arrays([batch.column(n).take(every) for n in names], names=names)
            )
            # Unit rows (``put`` normalises), so cosine similarity is a dot product: the model's vectors
            # are already unit; this keeps the score right if a store ever holds others.
            vectors.put(batch.column("vector").flatten().to_numpy(zero_copy_only=False).reshape(-1, dim))
        filled = len(vectors)
        if not batches:
            schema = stream.schema.remove(stream.schema.get_field_index("vector"))
            return _CorpusRows(schema.empty_table(), vectors.trimmed(), np.empty(0, dtype=np.int64))
        read = pa.Table.from_batches(batches)
        order = pc.sort_indices(read, sort_keys=[("path", "ascending"), ("ordinal", "ascending")])
        row_of = np.empty(filled, dtype=np.int64)
        row_of[order.to_numpy()] = np.arange(filled)
        # Column by column, each read column dropped once sorted: the whole table taken at once held the
        # read rows and their sorted copy together (~110 MB more at 100k rows).
        del batches
        names = read.column_names
        columns = [read.column(name) for name in names]
        del read
        pool = pa.default_memory_pool()
        for i in range(len(columns)):
            # Joined first, the batches' pieces freed, then sorted: a take of the chunked column joins
            # them itself and keeps the pieces, the joined copy and the sorted one at once.
            joined = columns[i].combine_chunks()
            columns[i] = joined  # the pieces go
            pool.release_unused()  # else Arrow's pool keeps their pages (mimalloc)
            columns[i] = joined.take(order)
            del joined
            if names[i] in REPEATED_COLUMNS:
                columns[i] = pc.dictionary_encode(columns[i])
            pool.release_unused()
        held = _CorpusRows(pa.table(columns, names=names), vectors.trimmed(), row_of)
        allocator.release()  # the load freed several times what it holds: give it back (ADR 0057)
        return held

    async def _vector_search_in_memory(
        self, table: Any, query: Vector, corpora: Sequence[str], limit: int, eligible: EligibilityPort | None
    ) -> list[ChunkRow]:
        found: list[tuple[float, int, int]] = []  # (-score, corpus position, row) sorts best first
        loaded = [await self._in_memory(table, corpus) for corpus in corpora]
        texts_only = self._text_candidates(corpora, loaded, eligible)
        unit = query / max(float(np.linalg.norm(query)), 1e-12)
        texts = eligible is not None and eligible.filters_texts
        for position, held in enumerate(loaded):
            if not len(held):
                continue
            # Filtered before ranking: ineligible chunks never take a place among the best ``limit``.
            mask = held.vector_mask(eligible)
            if texts_only is not None:
                mask = (
                    texts_only[position][held.row_of]
                    if mask is None
                    else mask & texts_only[position][held.row_of]
                )
            if (
                mask is not None
                and (subset := held.few(mask, eligible if texts_only is None else None)) is not None
            ):
                # A selective filter: only its vectors are scored (a gather and a small product).
                scores = held.scores(unit, subset)
                check = functools.partial(_texts_pass, held, eligible, subset) if texts and eligible else None
                picked = eligibility.best_passing(scores, limit, None, check)
                found.extend((-float(scores[j]), position, int(held.row_of[subset[j]])) for j in picked)
                continue
            if len(held) > self._off_loop_rows:
                # Memory-bound (~25 ms at 100k rows) and numpy releases the GIL: off the loop, so the
                # other requests' Python work goes on meanwhile.
                scores = await asyncio.to_thread(held.scores, unit)
            else:
                scores = held.scores(unit)
            if mask is not None or texts:
                check = functools.partial(_texts_pass, held, eligible, None) if texts and eligible else None
                best = eligibility.best_passing(scores, limit, mask, check)
            else:
                best = np.argpartition(-scores, min(limit, len(scores) - 1))[:limit]
            found.extend((-float(scores[i]), position, int(held.row_of[i])) for i in best)
        found.sort()
        chosen = found[:limit]
        converted = _take(loaded, [(position, index) for _negative, position, index in chosen])
        return [
            {**row, "score": -negative} for row, (negative, _p, _i) in zip(converted, chosen, strict=True)
        ]

    @_bounded
    async def fts_search(
        self,
        terms: Sequence[str],
        corpora: Sequence[str],
        limit: int,
        eligible: EligibilityPort | None = None,
    ) -> list[ChunkRow]:
        """BM25 matches of any of ``terms`` among the chunks ``eligible`` lets through, best first; each row
        gains ``score`` = the BM25 score."""
        if not corpora or limit <= 0 or not terms:
            return []
        table = await self._fresh_table()
        if eligible is not None:
            return await self._fts_search_filtered(table, terms, corpora, limit, eligible)
        hits = self._lexical.search(terms, corpora, limit)
        if not hits:
            return []
        sizes = [await self.count_rows(corpus) for corpus in corpora]
        if sum(sizes) > self._in_memory_rows:
            found = (
                table.query()
                .where(sql.in_list("id", [i for i, _ in hits]))
                .select([*RESULT_COLUMNS, "ordinal"])
            )
            by_id: dict[str, ChunkRow] = {row["id"]: row for row in await found.to_list()}
            # A hit whose row a concurrent commit just removed is skipped, never invented.
            return [{**by_id[i], "score": score} for i, score in hits if i in by_id]
        loaded = [await self._in_memory(table, corpus) for corpus in corpora]
        places = []
        scores = []
        for row_id, score in hits:
            place = next(((p, held.ids[row_id]) for p, held in enumerate(loaded) if row_id in held.ids), None)
            if place is not None:  # a row committed after our snapshot is left for the next query
                places.append(place)
                scores.append(score)
        return [{**row, "score": score} for row, score in zip(_take(loaded, places), scores, strict=True)]

    def _scope(self, corpora: Sequence[str], loaded: list[_CorpusRows], eligible: EligibilityPort) -> Scope:
        """tantivy's scope for held corpora: each one's eligible files, and the text rules."""
        files = {}
        if eligible.filters_pages:
            for corpus, held in zip(corpora, loaded, strict=True):
                files[corpus] = held.pages.file_scope(corpus, eligible)
        return eligibility.lexical_scope(eligible, files)

    def _text_candidates(
        self, corpora: Sequence[str], loaded: list[_CorpusRows], eligible: EligibilityPort | None
    ) -> list[np.ndarray] | None:
        """Per held corpus, the rows the text rules may let through when BM25's index can name them
        cheaply (``LexicalIndex.text_candidates``); None: check candidates in score order instead."""
        if eligible is None or not eligible.filters_texts:
            return None
        ids = self._lexical.text_candidates(corpora, self._scope(corpora, loaded, eligible), TEXT_CANDIDATES)
        if ids is None:
            return None
        masks = []
        for held in loaded:
            mask = np.zeros(held.rows.num_rows, dtype=bool)
            rows = [index for index in map(held.ids.get, ids) if index is not None]
            mask[rows] = True
            masks.append(mask)
        return masks

    async def _fts_search_filtered(
        self, table: Any, terms: Sequence[str], corpora: Sequence[str], limit: int, eligible: EligibilityPort
    ) -> list[ChunkRow]:
        """tantivy matches only eligible files and skips excluded terms (storage/lexical.py ``Scope``);
        quality and the phrases' verbatim check are asked of its hits, with a larger fetch while too few
        pass and more hits remain."""
        in_memory = sum([await self.count_rows(corpus) for corpus in corpora]) <= self._in_memory_rows
        loaded = [await self._in_memory(table, corpus) for corpus in corpora] if in_memory else []
        masks = [held.mask(eligible) for held in loaded]
        every: list[eligibility.Pages | None] = [None] * len(corpora)
        if eligible.filters_pages:
            every = [held.pages for held in loaded] or [await self._pages(table, c) for c in corpora]
        files: dict[str, tuple[list[str] | None, list[str]]] = {}
        numbers: set[int] | None = None
        passing = total = 0
        for corpus, pages in zip(corpora, every, strict=True):
            if pages is None:
                continue
            files[corpus] = pages.file_scope(corpus, eligible)
            allowed = pages.by_number(corpus, eligible)
            if allowed is not None:
                numbers = (numbers or set()) | allowed
        if numbers is not None:
            # A corpus its scope restricts by name (or not at all) passes by number too.
            for corpus, pages in zip(corpora, every, strict=True):
                if pages is not None and pages.by_number(corpus, eligible) is None:
                    numbers |= {page_number(corpus, path) for path in pages.paths}
            for held, mask in zip(loaded, masks, strict=True):
                total += held.rows.num_rows
                passing += held.rows.num_rows if mask is None else int(mask.sum())
        scope = eligibility.lexical_scope(eligible, files)
        share = passing / total if total else 1.0
        # The hits tantivy gives pass the page rules already; the quality floor is checked here. Ask for
        # enough that ``limit`` pass it the first time (with a margin): the default floor drops a few
        # percent of a wiki's chunks, and a second search cost ~20% of a query.
        rows_in = sum(held.rows.num_rows for held in loaded)
        kept = sum(held.quality_passing(eligible.min_quality) for held in loaded)
        fetch = (
            limit
            if kept >= rows_in
            else min(math.ceil(limit * rows_in / max(kept, 1) * 1.2) + 8, 100 * limit)
        )
        while True:
            hits = self._lexical.search(terms, corpora, fetch, scope, numbers, share)
            if in_memory:
                places, scores = [], []
                for row_id, score in hits:
                    place = next(
                        ((p, held.ids[row_id]) for p, held in enumerate(loaded) if row_id in held.ids), None
                    )
                    mask = masks[place[0]] if place is not None else None
                    if place is not None and (mask is None or bool(mask[place[1]])):
                        places.append(place)
                        scores.append(score)
                rows: list[ChunkRow] = [
                    {**row, "score": s} for row, s in zip(_take(loaded, places), scores, strict=True)
                ]
            else:
                found = (
                    table.query()
                    .where(sql.in_list("id", [i for i, _ in hits]))
                    .select([*RESULT_COLUMNS, "ordinal"])
                )
                by_id: dict[str, ChunkRow] = {row["id"]: row for row in await found.to_list()}
                rows = [
                    {**by_id[i], "score": s}
                    for i, s in hits
                    if i in by_id
                    and _quality_passes(by_id[i], eligible.min_quality)
                    and (
                        not eligible.filters_pages
                        or (
                            eligible.page_passes(by_id[i]["path"], by_id[i]["fields"])
                            and eligible.mtime_passes(by_id[i].get("file_mtime_ns"))
                        )
                    )
                ]
            if eligible.filters_texts:
                rows = [row for row in rows if eligible.text_passes(row.get("text") or "")]
            if len(rows) >= limit or len(hits) < fetch:
                return rows[:limit]
            fetch *= 4

    async def _pages(self, table: Any, corpus: str) -> eligibility.Pages:
        """A corpus's pages past the in-memory bound (its path, frontmatter and mtime columns), until a
        commit."""
        pages = self._pages_cache.get(corpus)
        if pages is None:
            generation = self._generation
            rows = (
                await table.query()
                .where(f"corpus = {sql.literal(corpus)}")
                .select(["path", "fields", "file_mtime_ns"])
                .to_arrow()
            )
            pages = eligibility.Pages(rows)
            self._remember(self._pages_cache, corpus, pages, generation)
        return pages

    async def _vector_search_filtered(
        self, table: Any, query: Vector, corpora: Sequence[str], limit: int, eligible: EligibilityPort
    ) -> list[ChunkRow]:
        """Past the in-memory bound: LanceDB prefilters by corpus, file and quality (``sql_filter``); the
        text rules, and page rules too large to name in SQL, are asked of its rows in score order, with a
        larger fetch while too few pass."""
        has_quality = "quality" in (await table.schema()).names
        wheres = []
        checks: dict[str, tuple[eligibility.Pages, np.ndarray | None]] = {}
        for corpus in corpora:
            pages = await self._pages(table, corpus) if eligible.filters_pages else None
            if pages is None:
                # The quality floor is checked on the rows (below), not asked of LanceDB: as a prefilter it
                # read the quality of every row per query (at 1M rows ~100 ms of a ~130 ms search), and it
                # lets through nearly every chunk, so one fetch with a margin almost always suffices.
                where = f"corpus = {sql.literal(corpus)}"
            else:
                where, mask = eligibility.sql_filter(corpus, pages, eligible, has_quality)
                checks[corpus] = (pages, mask)
            wheres.append(f"({where})")
        allowed = {
            corpus: {pages.paths[i] for i in np.flatnonzero(mask)}
            for corpus, (pages, mask) in checks.items()
            if mask is not None
        }
        # As in vector_search: no prefilter when the corpora asked for are every row of the table.
        everything = not checks and await self._whole_table(corpora)
        floor = eligible.min_quality if has_quality else 0.0
        fetch = limit + limit // 4 + 8 if floor > 0.0 and not checks else limit
        while True:
            builder = ann.tune(await table.search(query, vector_column_name="vector")).distance_type("cosine")
            if not everything:
                builder = builder.where(" OR ".join(wheres))
            rows: list[dict[str, Any]] = (
                await builder.select([*RESULT_COLUMNS, "ordinal", "_distance"]).limit(fetch).to_list()
            )
            kept = [
                row
                for row in rows
                if (row["corpus"] not in allowed or row["path"] in allowed[row["corpus"]])
                and (row["corpus"] in checks or _quality_passes(cast("ChunkRow", row), floor))
                and (not eligible.filters_texts or eligible.text_passes(row["text"] or ""))
            ]
            if len(kept) >= limit or len(rows) < fetch:
                for row in kept:
                    row["score"] = 1.0 - float(row.pop("_distance"))
                return cast("list[ChunkRow]", kept[:limit])
            fetch *= 4

    @_bounded
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
        """For each row of ``queries``, the ``limit`` chunks of ``corpus`` nearest it by cosine similarity
        among those ``eligible`` lets through, leaving out the pages ``exclude_paths`` and the chunks
        ``exclude_ids``: best first, each row with ``score``. ``best_of``: one list instead, each chunk
        scored by its best query (the union of the per-query lists holds the same best ``limit``). A held
        corpus answers the queries with one product over its vectors per ``QUERY_BLOCK`` of them."""
        if limit <= 0 or not len(queries):
            return [] if best_of else [[] for _ in range(len(queries))]
        table = await self._fresh_table()
        units = np.asarray(queries, dtype=np.float32).reshape(len(queries), -1)
        units = units / np.maximum(np.linalg.norm(units, axis=1, keepdims=True), 1e-12)
        if await self.count_rows(corpus) > self._in_memory_rows:
            each = [
                await self._neighbours_in_table(unit, corpus, limit, eligible, exclude_paths, exclude_ids)
                for unit in units
            ]
            return [_best_of(each, limit)] if best_of else each
        held = await self._in_memory(table, corpus)
        if not len(held):
            return [[]] if best_of else [[] for _ in range(len(queries))]
        keep = np.ones(held.rows.num_rows, dtype=bool)  # scan order: a page's rows are one run
        for path in exclude_paths:
            low = bisect.bisect_left(held.paths, path)
            keep[low : bisect.bisect_right(held.paths, path, lo=low)] = False
        for row_id in exclude_ids:
            row = held.ids.get(row_id)
            if row is not None:
                keep[row] = False
        allowed = keep[held.row_of]
        mask = held.vector_mask(eligible)
        if mask is not None:
            allowed &= mask
        blocked = ~allowed
        columns: list[np.ndarray] = []
        best = None
        # A block of queries at a time: the scores of 1,000 seeds over 100k rows would be 400 MB.
        for first in range(0, len(units), QUERY_BLOCK):
            block = units[first : first + QUERY_BLOCK].T
            if len(held) > self._off_loop_rows:  # as in vector_search: memory-bound, off the loop
                scores = await asyncio.to_thread(held.scores, block)
            else:
                scores = held.scores(block)
            scores[blocked] = -np.inf
            if best_of:
                top = scores.max(axis=1)
                best = top if best is None else np.maximum(best, top)
            else:
                columns.extend(scores.T)
        if best is not None:
            columns = [best]
        places: list[tuple[int, int]] = []
        picked: list[list[tuple[float, int]]] = []
        passing = int(allowed.sum())
        for column in columns:
            chosen_at = (
                eligibility.best_passing(column, limit, None, None) if passing else np.empty(0, np.int64)
            )
            chosen_at = chosen_at[np.argsort(-column[chosen_at], kind="stable")]
            chosen = [(float(column[i]), int(held.row_of[i])) for i in chosen_at if column[i] > -np.inf]
            picked.append(chosen)
            places.extend((0, row) for _score, row in chosen)
        converted = iter(_take([held], places))
        return [[{**next(converted), "score": score} for score, _row in chosen] for chosen in picked]

    async def _neighbours_in_table(
        self,
        unit: Vector,
        corpus: str,
        limit: int,
        eligible: EligibilityPort | None,
        exclude_paths: Collection[str],
        exclude_ids: Collection[str],
    ) -> list[ChunkRow]:
        """``neighbours`` past the in-memory bound, one query: LanceDB's nearest rows, fetched in growing
        rounds until ``limit`` of them are not excluded."""
        paths, ids = set(exclude_paths), set(exclude_ids)
        fetch = limit + len(ids) + 8
        while True:
            rows = await self.vector_search(unit, [corpus], fetch, eligible)
            kept = [row for row in rows if row["path"] not in paths and row["id"] not in ids]
            if len(kept) >= limit or len(rows) < fetch:
                return kept[:limit]
            fetch *= 4

    @_bounded
    async def chunk_vectors(self, ids: Sequence[str], corpora: Sequence[str]) -> Vector:
        """The unit vectors of the chunks ``ids``, in that order (a zero row for one no longer stored)."""
        table = await self._fresh_table()
        out = np.zeros((len(ids), self._store.dim), dtype=np.float32)
        if not ids:
            return out
        sizes = [await self.count_rows(corpus) for corpus in corpora]
        if sum(sizes) <= self._in_memory_rows:
            loaded = [await self._in_memory(table, corpus) for corpus in corpora]
            for i, row_id in enumerate(ids):
                for held in loaded:
                    row = held.ids.get(row_id)
                    if row is not None:
                        out[i] = held.vectors(held.vector_of[row])
                        break
            return out
        found = await table.query().where(sql.in_list("id", list(ids))).select(["id", "vector"]).to_arrow()
        place = {row_id: i for i, row_id in enumerate(found["id"].to_pylist())}
        matrix = found["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = matrix.reshape(-1, self._store.dim).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        for i, row_id in enumerate(ids):
            at = place.get(row_id)
            if at is not None:
                out[i] = matrix[at]
        return out

    @_bounded
    async def page_rows(self, corpus: str, path: str) -> list[ChunkRow]:
        """Every chunk of one page by ordinal: the result columns and ``ordinal``."""
        table = await self._fresh_table()
        if await self.count_rows(corpus) <= self._in_memory_rows:
            held = await self._in_memory(table, corpus)
            low = bisect.bisect_left(held.paths, path)
            high = bisect.bisect_right(held.paths, path, lo=low)
            return cast("list[ChunkRow]", plain(held.rows.slice(low, high - low)).to_pylist())
        rows: list[ChunkRow] = (
            await table.query()
            .where(f"corpus = {sql.literal(corpus)} AND path = {sql.literal(path)}")
            .select([*RESULT_COLUMNS, "ordinal"])
            .to_list()
        )
        return sorted(rows, key=lambda row: row["ordinal"])

    @_bounded
    async def page_heads(self, corpus: str) -> list[ChunkRow]:
        """Each page's first chunk (ordinal 0), by path: its ``HEAD_COLUMNS``. The same list until the
        next commit (callers may cache what they derive from it by its identity; never change it).

        Read from the corpus's rows when searches hold them in memory (no I/O); otherwise one LanceDB
        query of those light columns, restricted to first chunks, once per commit."""
        table = await self._fresh_table()
        heads = self._heads.get(corpus)
        if heads is None:
            generation = self._generation
            held = self._vectors.get(corpus)
            if held is not None:  # in scan order (path, ordinal) already
                rows = held.rows
            else:
                rows = (
                    await table.query()
                    .where(f"corpus = {sql.literal(corpus)} AND ordinal = 0")
                    .select(HEAD_COLUMNS)
                    .to_arrow()
                )
            # Converting 10k pages' rows takes tens of milliseconds: off the loop, so pings go on.
            heads = await asyncio.to_thread(_heads_of, rows, held is None)
            self._remember(self._heads, corpus, heads, generation)
        return heads

    async def _whole_table(self, corpora: Sequence[str]) -> bool:
        """Whether ``corpora`` hold every row of the table (a prefilter on them would filter nothing)."""
        return sum([await self.count_rows(c) for c in corpora]) >= await self._table_rows()

    async def _table_rows(self) -> int:
        """Rows of the whole table (every corpus), cached until the next commit."""
        table = await self._fresh_table()
        count = self._counts.get(_ALL_CORPORA)
        if count is None:
            generation = self._generation
            count = int(await table.count_rows())
            self._remember(self._counts, _ALL_CORPORA, count, generation)
        return count

    @_bounded
    async def count_rows(self, corpus: str) -> int:
        """Rows of one corpus, cached until the next commit."""
        table = await self._fresh_table()
        count = self._counts.get(corpus)
        if count is None:
            generation = self._generation
            count = int(await table.count_rows(f"corpus = {sql.literal(corpus)}"))
            self._remember(self._counts, corpus, count, generation)
        return count

    async def preload(self, version: int) -> None:
        """Load the corpora held now as they are at ``version`` (a read-only store's next one, not yet
        swapped in: ``Store.follow``'s ``prepare``), on a handle of their own, while searches go on on the
        current version; the reader takes them up when it moves to ``version``. Without it the first
        search after a follow loaded them itself (0.2 s at 11k chunks, seconds at 100k)."""
        corpora = list(self._vectors)
        if not corpora:
            return
        lancedb = import_lancedb()
        location = self._store.location
        db = await lancedb.connect_async(
            location.connect_uri(), storage_options=location.storage_options(reads=True)
        )
        table = await db.open_table(TABLE)
        await table.checkout(version)
        staged = {corpus: await self._load(table, corpus) for corpus in corpora}
        self._staged = (version, staged)

    @_bounded
    async def corpora(self) -> list[str]:
        """The corpora (store keys) the table holds rows of, cached until the next commit: what a
        read-only daemon serves (daemon/read_only.py). Reads the corpus column only (~1 s at 1M rows)."""
        table = await self._fresh_table()
        known = self._corpora
        if known is None:
            generation = self._generation
            column = (await table.query().select(["corpus"]).to_arrow())["corpus"]
            known = sorted(str(key) for key in pc.unique(column).to_pylist() if key)
            if self._generation == generation:
                self._corpora = known
        return known

    @_bounded
    async def phrase_rows(
        self,
        corpora: Sequence[str],
        pattern: str,
        max_rows: int,
        eligible: EligibilityPort | None = None,
        runs: Sequence[Sequence[str]] = (),
    ) -> PhraseMatches:
        """Rows whose text matches ``pattern`` (RE2, case-insensitive), by corpus, path and ordinal:
        at most ``max_rows`` of them, among the rows ``eligible`` lets through. ``runs``: runs of index
        tokens every matching text holds (``analysis.phrase_runs``); past the in-memory bound only the
        rows holding them all are read."""
        table = await self._fresh_table()  # first: a commit since the last query empties the cache
        sizes = [await self.count_rows(corpus) for corpus in corpora]
        if sum(sizes) <= self._in_memory_rows:  # the rows ranked searches hold anyway: no second copy
            tables, masks = [], []
            for corpus in corpora:
                held = await self._in_memory(table, corpus)
                masks.append(held.mask(eligible))  # applied with the pattern: only matches are copied
                tables.append(held.rows.select(SCAN_COLUMNS))
            return await asyncio.to_thread(match_rows, tables, pattern, max_rows, False, masks)
        # Past the bound the corpus's text is streamed, never held: a copy of its scan columns was ~1 GB
        # at 1M rows. Each batch keeps only its matches, and the matches only up to ``max_rows`` of the
        # first in scan order, so at most a batch and ``max_rows`` rows are held at once.
        tables = []
        for corpus, size in zip(corpora, sizes, strict=True):
            pages = (
                await self._pages(table, corpus) if eligible is not None and eligible.filters_pages else None
            )
            # Only the rows holding the phrase's sure runs of tokens can match (BM25's index names them):
            # read those by id, unless they are too many to beat one pass over the table.
            ids = self._lexical.holding(runs, [corpus], size // NARROW_SHARE) if runs else None
            kept: list[Any] = []
            matches = 0
            more = False
            async for rows in self._scan_rows(table, corpus, ids):
                mask = eligibility.path_mask(rows, pages, eligible) if eligible is not None else None
                # Off the loop: the regex runs in C++ and releases the GIL, so pings go on meanwhile.
                found = await asyncio.to_thread(matching, rows, pattern, mask)
                if not found.num_rows:
                    continue
                kept.append(found)
                matches += found.num_rows
                if matches > max_rows:  # only the first ``max_rows`` in scan order can be returned
                    first = sort_scan_rows(pa.concat_tables(kept)).slice(0, max_rows)
                    kept, matches, more = [first.combine_chunks()], max_rows, True
            if kept:
                tables.append(sort_scan_rows(pa.concat_tables(kept)))
            if more:  # a later corpus's rows come after this one's in scan order: none would be returned
                return await asyncio.to_thread(match_rows, tables, pattern, max_rows, True)
        return await asyncio.to_thread(match_rows, tables, pattern, max_rows)

    async def _scan_rows(self, table: Any, corpus: str, ids: list[str] | None) -> AsyncIterator[Any]:
        """The scan columns of ``corpus``'s rows ``ids`` (None: every row), ``scan_batch`` rows at a time
        (Arrow tables, in no particular order)."""
        where = f"corpus = {sql.literal(corpus)}"
        if ids is None:
            stream = await (
                table.query().where(where).select(SCAN_COLUMNS).to_batches(max_batch_length=self._scan_batch)
            )
            async for batch in stream:
                yield pa.Table.from_batches([batch])
            return
        for start in range(0, len(ids), self._scan_batch):
            chosen = sql.in_list("id", ids[start : start + self._scan_batch])
            yield await table.query().where(f"{where} AND {chosen}").select(SCAN_COLUMNS).to_arrow()
