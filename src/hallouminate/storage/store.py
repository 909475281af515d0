"""The LanceDB store: one database (a directory, or a prefix of an object store), one ``chunks`` table, one
writer at a time.

Each file's rows are replaced in a single commit (merge_insert keyed on the row id, deleting the file's
leftover rows in the same operation), so a crash leaves every file either wholly old or wholly new.
Reads run concurrently with writes: a query sees one committed version. Searches read through the
daemon's ``AsyncReader`` (reader.py), on a handle of its own.

BM25 runs on an in-memory index derived from the table (``lexical.py``, ADR 0017): built here when the
store opens, updated after each of this store's commits.

A store opened ``read_only`` (a daemon serving a team store another daemon writes: ADR 0063) writes
nothing, ever, and follows the writer instead: ``follow`` builds the next version's state (a table handle
pinned to that version and its BM25 index) beside the one searches use, then swaps it in at once
(``view``), so searches never wait for a reload and always read vectors and BM25 of one version.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from hallouminate.errors import StoreFault
from hallouminate.ports import ChunkRow, ChunkWrite
from hallouminate.storage import allocator, ann, sql
from hallouminate.storage.faults import object_store_fault, pruned, table_dir, unreachable
from hallouminate.storage.lancedb_import import import_lancedb
from hallouminate.storage.lexical import BUILD_BATCH, LEXICAL_COLUMNS, LexicalIndex
from hallouminate.storage.location import StoreLocation
from hallouminate.storage.schema import (
    META_CHUNK_TOKENS,
    META_MODEL,
    META_TEXT_PREP,
    META_VERSION,
    OPTIONAL_KEYS,
    RESULT_COLUMNS,
    ROW_KEYS,
    SCHEMA_VERSION,
    STATE_COLUMNS,
    TABLE,
    build_table,
    chunk_schema,
)

log = logging.getLogger("hallouminate.storage")

# LanceDB's own FTS index, which stores before ADR 0017 built; dropped when such a store opens.
LEGACY_FTS_INDEX = "text_idx"
# Files per commit: keeps IN-lists short; each file is still replaced atomically.
FILES_PER_COMMIT = 256
# Every commit adds a fragment, which slows scans until compaction: compact after this many.
OPTIMIZE_COMMITS = 32
# Old versions are kept this long after an optimize: long enough for any in-flight read to finish, and
# for a read-only follower to load a version before it is pruned (ADR 0063).
KEEP_VERSIONS = timedelta(hours=1)
# On an object store, a read that has not answered in this long fails as ``StoreUnreachable`` (retryable):
# the object store's own timeouts and retries do not bound it (a frozen server held a query for minutes,
# ADR 0063). Long enough for a reader to load a large corpus over a cloud link.
READ_DEADLINE_SECS = 20.0
# Reads of an object store run in these threads, so that a caller can stop waiting for one.
READ_THREADS = 4

_T = TypeVar("_T")


# LanceDB stages each file it writes (data files, deletion files, index parts, transactions) as
# ".tmpXXXXXX" in the target's directory, then renames it into place. A writer killed in between leaves
# the staged file for good: neither reopening the table nor optimize's cleanup removes it, so every
# kill -9 mid-commit could leak up to a whole data file (tests/reliability/test_kill9_cycles.py).
_STAGED_NAME = re.compile(r"\.tmp[A-Za-z0-9]{6}")


def sweep_staged_files(path: Path) -> list[str]:
    """Remove the staged files a killed writer left in the store's tables; the paths removed.

    Called before the store is opened: only the daemon opens it for writing, and the daemon is a
    singleton that has not started writing yet, so no staged file found now belongs to a live writer.
    """
    removed: list[str] = []
    for table in path.glob("*.lance"):
        for directory, _dirs, names in os.walk(table):
            for name in names:
                if not _STAGED_NAME.fullmatch(name):
                    continue
                staged = os.path.join(directory, name)
                with contextlib.suppress(OSError):  # gone meanwhile, or not ours to remove: harmless
                    if stat.S_ISREG(os.lstat(staged).st_mode):
                        os.unlink(staged)
                        removed.append(staged)
    if removed:
        log.info("removed %d file(s) a killed writer left staged in the store: %s", len(removed), removed)
    return removed


class StoreReadOnly(StoreFault):
    """A write was asked of a store opened read-only (a daemon following another writer)."""


@dataclass(frozen=True)
class StoreView:
    """What searches read, as of one moment (``Store.view``): the store's generation, the table version
    to read (None: the latest, for the writer's own store), and the BM25 index of that version."""

    generation: int
    version: int | None
    lexical: LexicalIndex


@dataclass(frozen=True)
class Mismatch:
    """Why the table's vectors cannot be mixed with the configured embedder's: what the table records and
    what is configured (``model``, ``dimensions``, ``text_prep``, ``chunk_tokens``: those that differ,
    plus the model for context), and each difference in words."""

    held: dict[str, str]
    configured: dict[str, str]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class AnnState:
    """The approximate vector index (storage/ann.py): ``state`` none / building / ready; the rows it
    covers and those written since (LanceDB scans these exactly until the next refresh)."""

    state: Literal["none", "building", "ready"]
    rows_indexed: int
    rows_unindexed: int


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    content_hash: str
    indexed_at_ms: int


class Store:
    """The writer's store (and, as ``ReadOnlyStore``, a follower's). ``write_guard``: called before every
    commit, under the write lock, raising to refuse it: the writer's lease on an object store
    (``WriterLease.guard``), set once the lease is held (which must be before the store opens: opening may
    create or rebuild the table)."""

    # Whether this store never writes: ``ReadOnlyStore``.
    read_only: ClassVar[bool] = False
    write_guard: Callable[[], None] | None = None

    def __init__(
        self,
        location: Path | StoreLocation,
        dim: int,
        *,
        model_name: str | None = None,
        chunk_tokens: int | None = None,
        text_prep: str | None = None,
        ann_min_rows: int = ann.MIN_ROWS,
        read_deadline_secs: float = READ_DEADLINE_SECS,
    ) -> None:
        """``location``: a directory (a plain path) or a ``StoreLocation``.
        ``ann_min_rows``: rows from which ``maintain_ann`` builds the approximate index.
        ``read_deadline_secs``: on an object store, how long a read may take before it fails as
        ``StoreUnreachable``.

        ``model_name``, ``chunk_tokens`` (the budget chunks are cut to) and ``text_prep``, when given,
        are recorded in a new table and checked against an existing one, as is the dimension.

        A table made otherwise (another model, dimension or chunk size: a configuration change, which the
        user may undo) is never dropped here: it is opened as it is, and ``mismatch`` says how it differs;
        reads that need no vector still work, and every write is refused until ``rebuild``
        (docs/adr/0054-embedding-endpoint.md). A table of another SCHEMA_VERSION, or of the same model with
        texts prepared otherwise (both changed by a release, not by configuration), is rebuilt at once,
        logged and kept in ``rebuilt``.
        """
        # The Rust core logs deprecation WARNs on stderr for every projection without _distance.
        os.environ.setdefault("LANCEDB_LOG", "error")
        lancedb = import_lancedb()

        self.location = location if isinstance(location, StoreLocation) else StoreLocation.local(location)
        # The store's directory; None for an object store.
        self.path: Path | None = self.location.directory
        read_only = self.read_only
        self.read_deadline_secs = read_deadline_secs
        # Object store reads run here, so a caller stops waiting at the deadline (the read itself goes on
        # until the object store's own timeouts end it).
        self._io = None if self.path is not None else ThreadPoolExecutor(READ_THREADS, "store-read")
        # follow() and latest_version(): one at a time.
        self._follow_lock = threading.RLock()
        self._probe: Any = None  # a handle that only looks for the latest version (latest_version)
        self.dim = dim
        self._schema = chunk_schema(dim, model_name, chunk_tokens, text_prep)
        self._text_prep = text_prep
        self._model_name = model_name
        self._chunk_tokens = chunk_tokens
        self.mismatch: Mismatch | None = None
        # Why the table was dropped and made anew when it opened (a schema version change), or None.
        self.rebuilt: str | None = None
        # Reentrant: a read under it (file_states) may follow the writer (a pruned version), which swaps
        # the state under it.
        self._write_lock = threading.RLock()
        self._commits_since_optimize = 0
        self._ann_min_rows = ann_min_rows
        # One build of the approximate index at a time; compaction waits for it (its rewrite of fragments
        # would make the build's commit conflict). Writes do not: they append, which the build allows.
        self._ann_lock = threading.Lock()
        self._ann_building = False
        # Rows the index was trained on (refreshes fold rows in without training, so the index's own count
        # grows past it). Not stored: after a restart it is the rows the index covers when first seen.
        self._ann_trained_rows: int | None = None
        # Bumped after every commit, so readers on other handles know to move to the latest version.
        self.generation = 0
        # Each corpus's file states as ``file_states`` last read them, kept in step with this store's own
        # writes (the daemon is the only writer): a no-op re-index at 1M chunks read the first rows of its
        # 136k files from the table on every call (~0.6 s of its 2.6 s; ADR 0061).
        self._states: dict[str, dict[str, FileState]] = {}
        try:
            if self.path is not None and read_only and not table_dir(self.path).is_dir():
                raise self._not_indexed()  # checked first: connecting would make the directory
            if self.path is not None and not read_only:
                self.path.mkdir(parents=True, exist_ok=True)
                # A local disk only: LanceDB stages files there and renames them into place; on an object
                # store it PUTs each object whole (a commit is the manifest's create-if-absent), so a killed
                # writer leaves no staged file under the table's prefix, only unreferenced objects that
                # optimize's cleanup removes.
                sweep_staged_files(self.path)
            self._db = self._read(
                lambda: lancedb.connect(
                    self.location.connect_uri(),
                    storage_options=self.location.storage_options(reads=read_only),
                ),
                follow_pruned=False,
            )
            self._table = self._read(self._open_table, follow_pruned=False, bounded=False)
            if read_only:
                # Pinned: a read-only store reads this version until follow() moves it.
                self._table = self._read(self._pinned, follow_pruned=False)
        except OSError as exc:
            raise StoreFault(f"cannot open the store at {self.location}: {exc}") from exc
        started = time.perf_counter()
        self.lexical = self._read(lambda: _lexical_of(self._table), follow_pruned=False, bounded=False)
        allocator.release()  # the text read to build the index is freed: give it back (ADR 0057)
        if self.lexical.num_docs():
            log.info(
                "BM25 index of %d chunks built in %.2f s",
                self.lexical.num_docs(),
                time.perf_counter() - started,
            )
        self._view = StoreView(0, int(self._table.version) if read_only else None, self.lexical)

    # -- opening -------------------------------------------------------------------------------------
    def _open_table(self) -> Any:
        try:
            table = self._db.open_table(TABLE)
        except (FileNotFoundError, ValueError) as exc:
            # On an object store a ValueError may also be a request that failed: only "not found" is absence.
            if self.path is None and "not found" not in str(exc).lower():
                raise
            table = None
        if table is None and self.read_only:
            raise self._not_indexed()
        if table is not None:
            version = (table.schema.metadata or {}).get(META_VERSION, b"").decode()
            if version != SCHEMA_VERSION and self.read_only:
                raise self._other_release(version)
            if version != SCHEMA_VERSION:
                # Our own layout changed: no configuration takes the old one back, and nothing reads it.
                # The store is derived data: rebuilt now (the next index run re-embeds every file), loudly.
                return self._made_anew(
                    f"the store's schema version {version or 'unknown'} is not this release's {SCHEMA_VERSION}"
                )
            mismatch = self._incompatible(table.schema)
            if (
                mismatch is not None
                and not self.read_only  # a follower never rebuilds: it reports the mismatch
                and set(mismatch.held) == {"model", "text_prep"}
                and mismatch.held["model"] == mismatch.configured["model"]
            ):
                # Same model, same dimension, texts prepared otherwise: no configuration changes that (the
                # chunker's form and a model's prefixes are ours), so this release changed it, like a schema
                # version, and there is no going back to choose: rebuilt now, loudly.
                return self._made_anew(
                    f"this release prepares texts as {self._text_prep!r} before embedding, the store's vectors "
                    f"were made of texts prepared as {mismatch.held['text_prep']!r}"
                )
            self.mismatch = mismatch
            if self.mismatch is not None:
                log.warning(
                    "the store at %s refuses to mix vectors: %s",
                    self.location,
                    "; ".join(self.mismatch.reasons),
                )
            elif not self.read_only and any(idx.name == LEGACY_FTS_INDEX for idx in table.list_indices()):
                table.drop_index(LEGACY_FTS_INDEX)  # unused since ADR 0017; optimize would keep it up
            return table
        return self._db.create_table(TABLE, schema=self._schema)

    def _made_anew(self, why: str) -> Any:
        """Drop the table for a change this release made (nothing to go back to), loudly: logged, and kept
        in ``rebuilt`` for `status`."""
        self.rebuilt = (
            f"{why}: its table was dropped and made anew; every file is embedded again by the next index run "
            "of its corpus"
        )
        log.warning("%s (%s)", self.rebuilt, self.location)
        self._db.drop_table(TABLE)
        return self._db.create_table(TABLE, schema=self._schema)

    def _incompatible(self, schema: pa.Schema) -> Mismatch | None:
        """How the table's vectors differ from those the configured embedder makes, or None."""
        meta = schema.metadata or {}
        held: dict[str, str] = {}
        configured: dict[str, str] = {}
        reasons: list[str] = []
        vector = schema.field("vector").type if "vector" in schema.names else None
        stored_dim = vector.list_size if isinstance(vector, pa.FixedSizeListType) else None
        if stored_dim != self.dim:
            held["dimensions"], configured["dimensions"] = str(stored_dim or vector), str(self.dim)
            reasons.append(
                f"its vectors have {stored_dim or vector} dimensions, the embedder makes {self.dim}"
            )
        stored_model = meta.get(META_MODEL, b"").decode()
        if self._model_name and stored_model and stored_model != self._model_name:
            reasons.append(
                f"its vectors were made by {stored_model}, the configured model is {self._model_name}"
            )
        stored_prep = meta.get(META_TEXT_PREP, b"").decode()
        if self._text_prep and stored_prep and stored_prep != self._text_prep:
            held["text_prep"], configured["text_prep"] = stored_prep, self._text_prep
            reasons.append(
                f"its texts were prepared as {stored_prep!r} before embedding, now {self._text_prep!r}"
            )
        stored_tokens = meta.get(META_CHUNK_TOKENS, b"").decode()
        # A table written before this was recorded (or by a tool that does not say) is taken as is.
        if self._chunk_tokens and stored_tokens and stored_tokens != str(self._chunk_tokens):
            held["chunk_tokens"], configured["chunk_tokens"] = stored_tokens, str(self._chunk_tokens)
            reasons.append(
                f"its chunks were cut at {stored_tokens} tokens, [indexing] chunk_tokens now gives "
                f"{self._chunk_tokens}"
            )
        if not reasons:
            return None
        # The model always: it is what a user recognises, and what "going back" sets.
        held = {"model": stored_model or "unrecorded", **held}
        configured = {"model": self._model_name or "unrecorded", **configured}
        return Mismatch(held, configured, tuple(reasons))

    def _not_indexed(self) -> StoreFault:
        return StoreFault(
            f"the index store {self.location} holds no index yet: its writer has not indexed anything into "
            "it. Start the writing daemon on this store (not read-only) and index, then start this one again",
            {"store": self.location.describe(), "problem": "store-not-indexed"},
        )

    def _other_release(self, version: str) -> StoreFault:
        return StoreFault(
            f"the index store {self.location} was written by a release with store schema "
            f"{version or 'unknown'}, this one reads {SCHEMA_VERSION}: run the same release as its writer",
            {"store": self.location.describe(), "problem": "store-other-release"},
        )

    def _pinned(self) -> Any:
        """The table handle, checked out at its version: a read-only store never moves unless told to."""
        self._table.checkout(self._table.version)
        return self._table

    def _writable(self) -> None:
        """Refuse a write of a read-only store (the daemon refuses first, naming the writer)."""
        if self.read_only:
            raise StoreReadOnly(
                f"the index store {self.location} is opened read-only: this daemon follows another writer's "
                "commits and writes nothing (write through the daemon that writes this store)",
                {"store": self.location.describe(), "problem": "store-opened-read-only"},
            )

    def _guard(self) -> None:
        """Before a commit (under the write lock): the write guard (the writer's lease) may refuse it."""
        self._writable()
        if self.write_guard is not None:
            self.write_guard()

    def rebuild(self) -> None:
        """Drop the table and make it anew for the configured embedder (``index --rebuild``): every row
        goes; the caller re-embeds every corpus. The only way a mismatched table is emptied."""
        self._writable()
        with self._write_lock:
            self._guard()
            self._db.drop_table(TABLE)
            self._table = self._db.create_table(TABLE, schema=self._schema)
            self.mismatch = None
            self.lexical = LexicalIndex()
            self._states.clear()
            self._commits_since_optimize = 0
            self.generation += 1
        log.warning("the store at %s was dropped and made anew (a rebuild)", self.location)

    def _refuse_mixing(self) -> None:
        # The daemon refuses first, with the command that fixes it; this keeps any other writer honest.
        if self.mismatch is not None:
            raise StoreFault(
                f"the store at {self.location} holds vectors made otherwise ({'; '.join(self.mismatch.reasons)}): "
                "it refuses writes until it is rebuilt (`hallouminate index --rebuild`)",
                {"problem": "store-mismatch"},
            )

    # -- writes --------------------------------------------------------------------------------------
    def replace_files(self, corpus: str, files: Mapping[str, Sequence[ChunkWrite]]) -> None:
        """Replace all rows of each listed file, each file in one commit; an empty list deletes it."""
        self._writable()
        self._refuse_mixing()
        items = list(files.items())
        for start in range(0, len(items), FILES_PER_COMMIT):
            group = dict(items[start : start + FILES_PER_COMMIT])
            with self._write_lock:
                # Files with no row yet are appended: a merge that may delete rows joins against the whole
                # table (1.2 s a commit at 100k rows, 2.4 s at 300k, growing with it), an append does not
                # (0.02-0.2 s). The BM25 index mirrors the table's files, so it says which are new.
                fresh = {p: rows for p, rows in group.items() if not self.lexical.has_file(corpus, p)}
                known = {p: rows for p, rows in group.items() if p not in fresh}
                for part, append in ((known, False), (fresh, True)):
                    if part:
                        self._write_files(corpus, part, append)
            self.generation += 1

    def _write_files(self, corpus: str, files: Mapping[str, Sequence[ChunkWrite]], append: bool) -> None:
        """One commit replacing every row of ``files`` (``append``: none of them has a row yet)."""
        self._guard()
        table = build_table(self._schema, corpus, files)
        try:
            if append:
                if table.num_rows:
                    self._table.add(table)
            elif table.num_rows == 0:
                self._table.delete(sql.corpus_files(corpus, files))
            else:
                (
                    self._table.merge_insert("id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .when_not_matched_by_source_delete(sql.corpus_files(corpus, files))
                    .execute(table)
                )
        except Exception as exc:
            raise StoreFault(
                f"writing {len(files)} file(s) of {corpus!r} to the store failed: {exc}"
            ) from exc
        self.lexical.replace_files(corpus, files, table)
        self._note_states(corpus, files, table)
        self._commits_since_optimize += 1

    def delete_files(self, corpus: str, paths: Iterable[str]) -> None:
        self._writable()
        self._refuse_mixing()
        paths = list(paths)
        for start in range(0, len(paths), FILES_PER_COMMIT):
            predicate = sql.corpus_files(corpus, paths[start : start + FILES_PER_COMMIT])
            with self._write_lock:
                self._guard()
                self._table.delete(predicate)
                self.lexical.replace_files(corpus, paths[start : start + FILES_PER_COMMIT], None)
                self._note_states(corpus, paths[start : start + FILES_PER_COMMIT], None)
                self._commits_since_optimize += 1
            self.generation += 1

    def delete_corpus(self, corpus: str) -> None:
        self._writable()
        self._refuse_mixing()
        with self._write_lock:
            self._guard()
            self._table.delete(f"corpus = {sql.literal(corpus)}")
            self.lexical.delete_corpus(corpus)
            self._states.pop(corpus, None)
            self._commits_since_optimize += 1
            self.generation += 1

    def update_stats(self, corpus: str, path: str, size: int, mtime_ns: int) -> None:
        self.update_stats_many(corpus, {path: (size, mtime_ns)})

    def update_stats_many(self, corpus: str, stats: Mapping[str, tuple[int, int]]) -> None:
        """Record new size/mtime for files whose content did not change (one commit per group)."""
        self._writable()
        self._refuse_mixing()
        items = list(stats.items())
        for start in range(0, len(items), FILES_PER_COMMIT):
            group = items[start : start + FILES_PER_COMMIT]
            source = pa.table(
                {
                    "corpus": pa.array([corpus] * len(group), pa.string()),
                    "path": pa.array([p for p, _ in group], pa.string()),
                    "file_size": pa.array([s for _, (s, _) in group], pa.int64()),
                    "file_mtime_ns": pa.array([m for _, (_, m) in group], pa.int64()),
                }
            )
            with self._write_lock:
                self._guard()
                # A partial-column merge keyed on (corpus, path) updates every chunk row of each file.
                self._table.merge_insert(["corpus", "path"]).when_matched_update_all().execute(source)
                kept = self._states.get(corpus)
                if kept is not None:
                    for path, (size, mtime_ns) in group:
                        if path in kept:  # the merge touches only files with rows, as here
                            kept[path] = dataclasses.replace(kept[path], size=size, mtime_ns=mtime_ns)
                self._commits_since_optimize += 1
            self.generation += 1

    # -- maintenance ---------------------------------------------------------------------------------
    def maybe_optimize(self) -> bool:
        """Compact once enough commits have piled up; True when it ran. Not while the approximate index is
        being built (the next run's call compacts): an index run must not wait minutes for it."""
        self._writable()
        if self._commits_since_optimize < OPTIMIZE_COMMITS:
            return False
        if not self._ann_lock.acquire(blocking=False):
            return False
        try:
            self._optimize()
        finally:
            self._ann_lock.release()
        return True

    def optimize(self) -> None:
        """Compact small fragments, fold rows written since into the approximate index (if any), prune
        old versions."""
        self._writable()
        with self._ann_lock:
            self._optimize()

    def _optimize(self) -> None:
        with self._write_lock:
            self._guard()
            started = time.perf_counter()
            self._table.optimize(cleanup_older_than=KEEP_VERSIONS)
            self._commits_since_optimize = 0
            self.generation += 1
            log.info("store optimized in %.2f s", time.perf_counter() - started)

    # -- the approximate vector index (storage/ann.py) ----------------------------------------------
    def _ann_stats(self) -> Any:
        if not any(idx.name == ann.INDEX_NAME for idx in self._table.list_indices()):
            return None
        return self._table.index_stats(ann.INDEX_NAME)

    def ann_state(self) -> AnnState:
        """The approximate index's state now (a metadata read: no row is scanned)."""
        stats = self._ann_stats()
        if self._ann_building:
            state: Literal["none", "building", "ready"] = "building"
        else:
            state = "none" if stats is None else "ready"
        if stats is None:
            return AnnState(state, 0, self.count_rows() if state == "building" else 0)
        return AnnState(state, int(stats.num_indexed_rows), int(stats.num_unindexed_rows))

    def maintain_ann(self, pause: Callable[[], None] | None = None) -> str | None:
        """Build, retrain or refresh the approximate index when the table calls for it; what was done, or
        None. Long at 1M rows (minutes): run it in a worker thread. Searches never wait for it (the
        reader has its own handle and moves to the new index when it is committed); writes neither (a
        build commits beside appends and deletes); compaction does (``maybe_optimize`` skips meanwhile).

        A build writes its files first and commits last: a process killed meanwhile leaves the old index
        (or none) and unreferenced files that optimize's cleanup removes. ``pause``: a test hook, called
        once the build has begun."""
        self._writable()
        if not self._ann_lock.acquire(blocking=False):
            return None  # a build is running: it sees these rows or the next call does
        try:
            rows = self.count_rows()
            stats = self._ann_stats()
            if stats is None:
                if rows < self._ann_min_rows:
                    return None
                action = "built"
            elif (self._ann_trained_rows or int(stats.num_indexed_rows)) * ann.RETRAIN_GROWTH <= rows:
                action = "retrained"
            elif int(stats.num_unindexed_rows) >= ann.REFRESH_ROWS:
                action = "refreshed"
            else:
                if self._ann_trained_rows is None:
                    self._ann_trained_rows = int(stats.num_indexed_rows)
                return None
            self._ann_building = True
            started = time.perf_counter()
            if pause is not None:
                pause()
            if action == "refreshed":
                # optimize folds the new rows into the index (its partitions unchanged) and compacts.
                self._optimize()
            else:
                self._guard()
                self._table.create_index(
                    "vector", config=ann.index_config(rows, self.dim), replace=True, name=ann.INDEX_NAME
                )
                for column, config in ann.scalar_configs():  # seconds at 1M rows, beside the vector index's
                    self._table.create_index(column, config=config, replace=True)
                self._ann_trained_rows = rows
                # Readers move to the version that has the index at their next query.
                self.generation += 1
            log.info(
                "approximate vector index %s over %d rows in %.1f s",
                action,
                rows,
                time.perf_counter() - started,
            )
            return action
        except StoreFault:
            raise  # the write guard refused (the writer's lease is lost): the caller must know
        except Exception as exc:  # the store stays as it was; the next index run tries again
            log.warning("building the approximate vector index failed: %s", exc)
            return None
        finally:
            self._ann_building = False
            self._ann_lock.release()

    # -- reads ---------------------------------------------------------------------------------------
    def file_states(self, corpus: str) -> dict[str, FileState]:
        """Each file of ``corpus`` as last indexed: the caller's own copy (~5 ms at 136k files)."""
        with self._write_lock:  # read at one version: no write of this store lands in between
            kept = self._states.get(corpus)
            if kept is None:
                kept = self._states[corpus] = self._read_states(corpus)
            return dict(kept)

    def _note_states(self, corpus: str, paths: Iterable[str], table: pa.Table | None) -> None:
        """After a commit (under the write lock): ``paths`` now hold ``table``'s rows (None: none)."""
        kept = self._states.get(corpus)
        if kept is None:
            return
        for path in paths:
            kept.pop(path, None)
        if table is not None and table.num_rows:
            firsts = table.filter(pc.equal(table["ordinal"], 0)).select(STATE_COLUMNS)
            kept.update(_states_of(firsts))

    def _read_states(self, corpus: str) -> dict[str, FileState]:
        # Each file's first chunk only: its rows share these columns (written and updated per file), and
        # a no-op re-index reads them for every file (100k rows: 0.43 s for every row, 0.10 s for these).
        rows = self._read(
            lambda: (
                self._table.search()
                .where(f"corpus = {sql.literal(corpus)} AND ordinal = 0")
                .select(STATE_COLUMNS)
                .limit(None)
                .to_arrow()
            )
        )
        return _states_of(rows)

    def file_rows(self, corpus: str, path: str) -> list[ChunkRow]:
        """Every row of one file in chunk order, without vectors."""
        rows: list[ChunkRow] = self._read(
            lambda: (
                self._table.search()
                .where(sql.corpus_files(corpus, [path]))
                .select([*RESULT_COLUMNS, "ordinal"])
                .limit(None)
                .to_list()
            )
        )
        return sorted(rows, key=lambda row: row["ordinal"])

    def file_writes(self, corpus: str, path: str) -> list[ChunkWrite]:
        """Every row of one file as ``replace_files`` takes it (vectors included), in chunk order; the
        store's own columns (id, corpus, path, ordinal, indexed_at_ms) left out."""
        rows = self._read(
            lambda: (
                self._table.search()
                .where(sql.corpus_files(corpus, [path]))
                .select([*ROW_KEYS, *OPTIONAL_KEYS, "ordinal"])
                .limit(None)
                .to_list()
            )
        )
        rows.sort(key=lambda row: row["ordinal"])
        writes: list[ChunkWrite] = []
        for row in rows:
            del row["ordinal"]
            row.pop("_distance", None)
            row["vector"] = list(row["vector"])
            writes.append(row)  # the columns ChunkWrite names
        return writes

    def count_rows(self, corpus: str | None = None) -> int:
        where = f"corpus = {sql.literal(corpus)}" if corpus is not None else None
        return int(self._read(lambda: self._table.count_rows(where)))

    # -- following the writer (read-only stores) -----------------------------------------------------
    def view(self) -> StoreView:
        """What searches read now: one object, swapped whole by ``follow`` (the reader moves to exactly
        its version, with its BM25 index). The writer's own store reads the latest version."""
        if self.read_only:
            return self._view
        return StoreView(self.generation, None, self.lexical)

    @property
    def version(self) -> int | None:
        """The table version a read-only store serves (None for the writer's store: the latest)."""
        return self._view.version if self.read_only else None

    def latest_version(self) -> int:
        """The version of the table's latest commit: on an object store one listing of its versions (and a
        read of the new manifest when it moved); the state searches use does not move."""
        with self._follow_lock:

            def probe() -> int:
                if self._probe is None:
                    self._probe = self._db.open_table(TABLE)
                else:
                    self._probe.checkout_latest()
                return int(self._probe.version)

            return self._read(probe, follow_pruned=False)

    def follow(
        self, pause: Callable[[], None] | None = None, prepare: Callable[[int], None] | None = None
    ) -> bool:
        """Move a read-only store to the writer's latest commit; True when it moved. The new state (a table
        handle pinned to that version and a BM25 index built from it) is built aside while searches go on
        on the old one, then swapped in at once and ``generation`` bumped; a reader (``AsyncReader``)
        moves to that version at its next query. ``prepare(version)``, when given, runs after the build
        and before the swap (the daemon loads its reader's held corpora at that version there: the first
        search after the swap finds them loaded). A version pruned meanwhile (its files gone): the latest
        again, once. A writer's own store has nothing to follow (False). ``pause``: a test hook, called
        mid-build (the new handle open, its BM25 index not built yet)."""
        if not self.read_only:
            return False
        with self._follow_lock:
            for attempt in (0, 1):
                latest = self.latest_version()
                if latest == self._view.version:
                    return False
                started = time.perf_counter()
                try:
                    table, lexical, mismatch = self._read(
                        functools.partial(self._build, latest, pause), follow_pruned=False, bounded=False
                    )
                except Exception as exc:
                    if attempt == 0 and pruned(exc):
                        continue  # pruned while we built it: the latest again
                    raise
                break
            if prepare is not None:
                prepare(latest)
            view = StoreView(self._view.generation + 1, latest, lexical)
            with self._write_lock:
                self._table, self.lexical, self.mismatch = table, lexical, mismatch
                self._states.clear()
                self._view = view
                self.generation = view.generation
            allocator.release()  # the old state's text and index go with the last search holding them
            log.info(
                "followed the writer to version %d of %s in %.2f s (%d chunks)",
                latest,
                self.location,
                time.perf_counter() - started,
                lexical.num_docs(),
            )
            return True

    def _build(
        self, version: int, pause: Callable[[], None] | None
    ) -> tuple[Any, LexicalIndex, Mismatch | None]:
        """A handle pinned to ``version`` and its BM25 index, built aside of the state in use."""
        table = self._db.open_table(TABLE)
        table.checkout(version)
        held = (table.schema.metadata or {}).get(META_VERSION, b"").decode()
        if held != SCHEMA_VERSION:
            raise self._other_release(held)
        mismatch = self._incompatible(table.schema)
        if pause is not None:
            pause()
        return table, _lexical_of(table), mismatch

    # -- reads of an object store: bounded, and explained ---------------------------------------------
    def _read(
        self,
        read: Callable[[], _T],
        *,
        follow_pruned: bool = True,
        bounded: bool = True,
    ) -> _T:
        """``read()``, on an object store in a worker thread given up after the read deadline
        (``StoreUnreachable``), its failures explained (``faults.object_store_fault``); a read-only store
        whose version was pruned moves to the latest and reads again, once (``follow_pruned``).
        ``bounded``: False for work that may take long (opening, a follow's build); the object store's
        own timeouts end it then. A local store reads directly, its errors as they are."""
        if self._io is None and not self.read_only:
            return read()
        for attempt in (0, 1):
            try:
                if self._io is None or not bounded:
                    return read()
                future = self._io.submit(read)
                try:
                    return future.result(timeout=self.read_deadline_secs)
                except TimeoutError:
                    future.cancel()
                    raise unreachable(
                        self.location, f"no answer within the {self.read_deadline_secs:g} s read deadline"
                    ) from None
            except StoreFault:
                raise
            except Exception as exc:
                if attempt == 0 and follow_pruned and self.read_only and pruned(exc):
                    log.warning("the version %s read was pruned under it: following the writer", self.version)
                    self.follow()
                    continue
                fault = object_store_fault(self.location, exc) if self.path is None else None
                if fault is None:
                    raise
                raise fault from exc
        raise AssertionError("unreachable")  # the loop returns or raises


def _lexical_of(table: Any) -> LexicalIndex:
    """The BM25 index of a table handle's rows (its version). Streamed: the whole table's text read at
    once was ~500 MB at 1M rows, on top of the index."""
    lexical = LexicalIndex()
    lexical.add_batches(table.search().select(LEXICAL_COLUMNS).limit(None).to_batches(BUILD_BATCH))
    return lexical


def _states_of(rows: pa.Table) -> dict[str, FileState]:
    """``FileState`` by path from rows of ``STATE_COLUMNS`` (a file's first row wins)."""
    states: dict[str, FileState] = {}
    columns = [rows.column(name).to_pylist() for name in STATE_COLUMNS]
    for path, size, mtime, digest, at in zip(*columns, strict=True):
        if path not in states:
            states[path] = FileState(int(size), int(mtime), str(digest), int(at))
    return states


class ReadOnlyStore(Store):
    """A store opened read-only: a daemon serving a store another daemon writes (ADR 0063). It never
    creates, drops, rebuilds or writes the table: every write method raises ``StoreReadOnly``, and a store
    with no table yet is an error saying its writer has indexed nothing into it. It reads the version it
    opened until ``follow`` moves it to the writer's latest commit. Same arguments as ``Store``."""

    read_only = True
