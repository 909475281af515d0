"""What the daemon holds: the store, the embedder, per-corpus write locks; and the engine calls it makes.

Nothing that waits on a disk, the model or LanceDB runs on the event loop: config resolution (a scan of
up to 20,000 directories from above every repository), embedding, LanceDB calls, file reads and writes,
store checks and the start-up journal sweep run in worker threads, so the loop keeps answering (``ping``
during a long ``index`` or a worst-case resolve).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from hallouminate import __version__, analysis, testing_hooks, xdg
from hallouminate.config import (
    CorpusSpec,
    Resolved,
    Settings,
    Where,
    as_knowledge_base,
    corpus_for,
    load_baseline,
)
from hallouminate.config.cache import ResolveCache
from hallouminate.daemon import read_only
from hallouminate.daemon.dirwatch import DirectoryWatch
from hallouminate.daemon.known_repositories import KnownRepositories
from hallouminate.daemon.query_batcher import QueryBatcher, batcher_for
from hallouminate.daemon.resolving import Resolver
from hallouminate.daemon.watcher import CorpusWatcher
from hallouminate.errors import Bug, CallerError, Conflict, HallouminateError, InvalidArgument, NotFound
from hallouminate.protocol.arguments import (
    AddMarkdownArgs,
    BacklinksArgs,
    BestPracticeArgs,
    ConnectionGraphArgs,
    CorpusArgs,
    DeleteMarkdownArgs,
    GroundArgs,
    IndexArgs,
    ListFilesArgs,
    MoveMarkdownArgs,
    ReadMarkdownArgs,
)
from hallouminate.protocol.results import (
    AddMarkdownResult,
    BackgroundSource,
    BackgroundWork,
    BacklinksResult,
    BestPracticeResult,
    ConnectionGraphResult,
    CorpusStatsResult,
    DeleteMarkdownResult,
    GroundResult,
    IndexingState,
    IndexReport,
    IndexResult,
    ListCorporaResult,
    ListFilesResult,
    ListTopicsResult,
    ListTreeResult,
    MoveMarkdownResult,
    ProgressEvent,
    ReadMarkdownResult,
    RuntimeStatus,
    VectorIndexState,
    WriteWarning,
)

if TYPE_CHECKING:
    from hallouminate.embedding import Embedder
    from hallouminate.embedding.endpoint import EndpointEmbedder
    from hallouminate.indexing import Indexer
    from hallouminate.indexing.documents import FormatLimits
    from hallouminate.ports import ChunkRow, RerankerPort
    from hallouminate.protocol.arguments import GetDocumentArgs, SearchArgs, SearchRagArgs
    from hallouminate.protocol.results import (
        GetDocumentResult,
        GroundWarning,
        ReadResourceResult,
        ResourceGroupsResult,
        SearchRagResult,
        SearchResult,
    )
    from hallouminate.search.rerank import RerankStage
    from hallouminate.search.topics import TopicsCache
    from hallouminate.storage import Store
    from hallouminate.storage.lease import WriterLease
    from hallouminate.storage.location import StoreLocation
    from hallouminate.storage.reader import AsyncReader
    from hallouminate.storage.store import Mismatch
    from hallouminate.wiki.move import MoveOutcome
    from hallouminate.wiki.writes import WriteOutcome

log = logging.getLogger("hallouminate.daemon")

# A streaming request's events: "progress" of an index run is the only one.
Emit = Callable[[str, ProgressEvent], None]

# Threads for index runs: one run per corpus at a time holds one (the corpus lock), so this caps how
# many corpora index at once, not how long anything else waits.
INDEX_THREADS = 32
# What started a whole-corpus run: a client's index call, or the daemon itself.
RunKind = Literal["index"] | BackgroundSource
# A corpus whose catch-up failed is not caught up again by a request before this long (an index call or
# the watcher still runs at once).
CATCH_UP_RETRY_SECS = 60.0
# A reranker that failed to load is not loaded again by a request before this long (its error is repeated).
RELOAD_RETRY_SECS = 10.0


@dataclass(eq=False)
class _CorpusRun:
    """A whole-corpus index run in flight (an ``index`` call, a catch-up, a watcher's full pass).

    Searches never wait for it: they name it, with its counts, in their not-indexed warning. An ``index``
    of the same corpus arriving meanwhile follows its progress until it ends, then runs its own pass.
    """

    corpus: str  # its display name
    kind: RunKind  # said to a second index that waits for it
    number: int  # runs start in this order: a run started after a request arrived covers that request
    force: bool = False  # a rebuild: every file re-read and re-embedded
    task: asyncio.Task[IndexReport] | None = None
    last: ProgressEvent | None = None
    # Called from the index thread with each progress event (``Emit`` is safe to call from any thread).
    listeners: list[Callable[[ProgressEvent], None]] = field(default_factory=list)

    def progress(self, event: ProgressEvent) -> None:
        self.last = event
        testing_hooks.index_pause_point()  # inert outside the test suite
        for listener in tuple(self.listeners):  # a copy: the loop adds and removes listeners meanwhile
            listener(event)

    def state(self) -> IndexingState:
        last = self.last
        return {
            "files_done": last["done"] if last is not None else 0,
            "files_total": last["total"] if last is not None else None,
        }


class Runtime:
    def __init__(self, settings: Settings, lease: WriterLease | None = None) -> None:
        self.settings = settings
        self.version = __version__
        # The writer's lease on an object store (taken by daemon/server.py before serving), renewed by
        # ``_keep_lease``; None for a local store or a read-only daemon.
        self.lease = lease
        self._lease_lost: HallouminateError | None = None
        # Serving another daemon's store (daemon/read_only.py): no writes, no file walks, its commits followed.
        self.read_only = settings.store_mode == "read-only"
        self._followed_at: float | None = None
        self._store: Store | None = None
        self._embedder: Embedder | EndpointEmbedder | None = None
        self._indexer: Indexer | None = None
        self._reader: AsyncReader | None = None
        self._load_error: HallouminateError | None = None
        self._load_lock = threading.Lock()
        # Concurrent searches share model calls (daemon/query_batcher.py); rebuilt with the embedder.
        self._batcher: tuple[Any, QueryBatcher] | None = None
        # One rebuild at a time when the store directory was removed under us (see _store_ready).
        self._rebuild_lock = asyncio.Lock()
        self._loading: asyncio.Future[None] | None = None
        self._corpus_locks: dict[str, asyncio.Lock] = {}
        # Corpora whose files were compared with the store since this daemon started (catch-up done).
        self._caught_up: set[str] = set()
        # The whole-corpus run in flight per corpus (store key); searches report it and never wait for it.
        self._runs: dict[str, _CorpusRun] = {}
        self._run_numbers = itertools.count()
        # Single flight: the client `index` calls in progress per corpus (store key), by when each began
        # (monotonic). A second one is refused unless it asks to wait (ADR 0039); background runs are not
        # here: a client never fails because of the daemon's own work, it follows it as before.
        self._client_indexes: dict[str, list[float]] = {}
        self._catch_up_failed: dict[str, float] = {}  # store key -> when its last catch-up failed
        self._watcher: CorpusWatcher | None = None
        self._resolver = Resolver(ResolveCache(watch_factory=DirectoryWatch))
        self._known = KnownRepositories(xdg.state_home() / "known-repositories.json")
        self._background: set[asyncio.Task[None]] = set()
        self._background_runs: set[asyncio.Task[IndexReport]] = set()
        # Index runs (a whole corpus, or the files a write or the watcher changed) hold a thread for their
        # whole length. On asyncio's default pool (cpu + 4 threads: 6 on two cores), seven runs of other
        # corpora at once took every thread, and a write, a read or a query embedding queued behind them
        # for the length of a run (tests/reliability/test_load_writes.py). They get a pool of their own.
        self._index_pool = ThreadPoolExecutor(INDEX_THREADS, thread_name_prefix="hallouminate-index")
        # The reranker ([embeddings] reranker), loaded in the background at start; its model calls run one at
        # a time in a thread of their own (each keeps both cores busy), so a call that overran its time
        # budget delays only the reranks queued behind it (which then time out too), never a query
        # embedding, a read or a write in the default pool.
        self._reranker: RerankerPort | None = None
        self._reranker_load: asyncio.Task[RerankerPort] | None = None
        self._reranker_failed_at = 0.0
        self._rerank_pool = ThreadPoolExecutor(1, thread_name_prefix="hallouminate-rerank")
        # The approximate vector index's builds (minutes at 1M rows) hold a thread of their own too, one at
        # a time: never one that searches, writes or index runs wait for (storage/ann.py).
        self._ann_pool = ThreadPoolExecutor(1, thread_name_prefix="hallouminate-ann")
        self._ann_task: asyncio.Future[str | None] | None = None
        # Wiki writes: one at a time daemon-wide (so any temp file a sweep meets is stale), journalled.
        self._write_lock = asyncio.Lock()
        self._write_journal = xdg.state_home() / "pending-writes"
        # The start-up sweep of temp files a killed daemon left; writes wait for it (it must not meet
        # theirs), nothing else does.
        self._recovered: asyncio.Future[list[str]] | None = None
        # What the catch-up and the watcher indexed, by corpus (store key), since the last `index` result
        # for it: that result reports it, so an `index` after a restart does not just say "0 upserted".
        self._background_work: dict[str, dict[BackgroundSource, BackgroundWork]] = {}
        # What the watcher and the write tools re-embedded; `status` reports it (tests check that a file
        # written by a tool is not embedded a second time by the watcher).
        # list_topics' entries per corpus, until its next commit (search/topics.py).
        self._topics: TopicsCache | None = None
        self.counters: dict[str, int] = {
            "watcher_batches": 0,
            "watcher_files_upserted": 0,
            "write_files_upserted": 0,
        }

    # -- loading -----------------------------------------------------------------------------------
    def _load(self) -> None:
        with self._load_lock:
            if self._indexer is not None:
                return
            started = time.perf_counter()
            embedder = self._new_embedder()
            store = self._open_store(embedder)
            self._embedder, self._store = embedder, store
            self._reader = self._new_reader(store)
            self._indexer = self._new_indexer(store, embedder)
            log.info("model and store loaded in %.2f s", time.perf_counter() - started)

    def start_background_load(self) -> None:
        if not self.read_only:
            # Temp files of writes a killed daemon left half-done: swept before any write, in a thread
            # (one listing per recorded directory; a slow disk must not keep `ping` waiting); a move it
            # left half-done is finished (wiki/redo.py).
            self._recovered = asyncio.get_running_loop().run_in_executor(
                None, _recover_writes, self._write_journal
            )
            self._recovered.add_done_callback(_log_failed_sweep)
        # Loaded ahead of the first request so that it does not pay the start-up cost.
        self._loading = asyncio.get_running_loop().create_task(self._ensure_loaded())
        analysis.start_loading_english()  # low_confidence's word list (search/confidence.py), in a thread
        # Its failure is recorded and reported to requests; retrieve it so asyncio does not log it again.
        self._loading.add_done_callback(lambda task: task.cancelled() or task.exception())
        if self.lease is not None:
            self._spawn(self._keep_lease())
        if self.read_only:
            self._spawn(self._follow_writer())
        else:
            self._watcher = CorpusWatcher(self._refresh_paths, self._refresh_corpus)
            self._spawn(self._startup_catch_up())
        if self.settings.reranker:
            self._start_reranker_load()

    # -- a read-only daemon ------------------------------------------------------------------------
    async def _follow_writer(self) -> None:
        """Every ``[store] poll_interval_secs``: move to the writer's latest commit when it moved. The
        store builds the new version's state aside and swaps it in (Store.follow), so searches are answered
        from the old version until the new one is loaded."""
        while True:
            await asyncio.sleep(self.settings.store_poll_interval_secs)
            store = self._store
            if store is None:
                continue
            prepare = functools.partial(self._preload, asyncio.get_running_loop())
            try:
                moved = await asyncio.to_thread(store.follow, None, prepare)
            except asyncio.CancelledError:
                raise
            except HallouminateError as exc:
                log.warning("following the writer's commits: %s (trying again)", exc.message)
                continue
            except Exception:
                log.exception("following the writer's commits failed (trying again)")
                continue
            self._followed_at = time.time()
            if moved:
                log.info("followed the writer to version %s", store.version)

    async def _keep_lease(self) -> None:
        """Renew the writer's lease when a third of it has passed (``WriterLease.renew_if_due``). Lost
        (another writer took the store over: this one was paused past its lease), every later write is
        refused; searches still answer."""
        from hallouminate.storage.lease import LeaseLost

        assert self.lease is not None
        lease = self.lease
        while True:
            await asyncio.sleep(max(0.2, self.settings.store_lease_secs / 10))
            try:
                await asyncio.to_thread(lease.renew_if_due)
            except asyncio.CancelledError:
                raise
            except LeaseLost as exc:
                log.error("%s", exc.message)
                self._lease_lost = exc
                return
            except HallouminateError as exc:  # unreachable for now: the lease runs on, try again
                log.warning("renewing the writer lease: %s (trying again)", exc.message)

    def _preload(self, loop: asyncio.AbstractEventLoop, version: int) -> None:
        """``Store.follow``'s ``prepare``, in its thread before the swap: the reader loads the corpora it
        holds at the new version on the loop (searches go on meanwhile), so no search waits for that load.
        A failed preload leaves the load to the first search after the swap, as before."""
        reader = self._reader
        if reader is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(reader.preload(version), loop).result()
        except Exception as exc:
            log.warning("preloading version %d failed (%s): the next search loads it", version, exc)

    def _store_name(self) -> str:
        return self.settings.store_uri or str(self.settings.store_dir)

    async def _writer_name(self) -> str:
        """Who writes this store, for a read-only daemon's refusals: the lease's holder when the store has
        one (an object store: a read of the bucket, in a thread), else the daemon configured read-write."""
        holder = None
        if self.settings.store_uri is not None:
            from hallouminate.storage.lease import current_holder

            with contextlib.suppress(Exception):  # a refusal must not fail on the bucket: name it less
                holder = await asyncio.to_thread(current_holder, store_location(self.settings))
        return holder or 'the daemon that opens it with [store] mode = "read-write"'

    async def refuse_write(self, op: str) -> None:
        """A read-only daemon's refusal of ``op`` when it writes (-32602 naming the writer); a writer that
        lost its lease refuses them too."""
        if op not in read_only.WRITE_OPS:
            return
        if self.read_only:
            raise read_only.refusal(op, self._store_name(), await self._writer_name())
        if self._lease_lost is not None:
            raise self._lease_lost

    async def _store_resolved(self) -> Resolved:
        """A read-only daemon's answer to every resolve: this machine's settings, the store's corpora."""
        await self._ensure_loaded()
        assert self._reader is not None
        with self._store_faults():
            keys = await self._reader.corpora()
        return read_only.store_resolved(self.settings, keys)

    # -- the reranker ------------------------------------------------------------------------------
    def _start_reranker_load(self) -> asyncio.Task[RerankerPort]:
        assert self.settings.reranker is not None
        task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(_load_reranker, self.settings.model_cache_dir, self.settings.reranker)
        )

        def loaded(task: asyncio.Task[RerankerPort]) -> None:
            if task.cancelled():
                return
            exc = task.exception()  # retrieved here: a failure is reported to each request that reranks
            if exc is None:
                self._reranker = task.result()
                log.info("reranker %s loaded", self.settings.reranker)
            else:
                self._reranker_failed_at = time.monotonic()
                if isinstance(exc, HallouminateError):
                    log.error("reranker load failed: %s", exc.message)
                else:
                    log.error("reranker load failed", exc_info=exc)

        task.add_done_callback(loaded)
        self._reranker_load = task
        return task

    async def _rerank_stage(
        self, args: GroundArgs, settings: Settings
    ) -> tuple[RerankStage | None, GroundWarning | None]:
        """The rerank stage a ranked request gets (on by default when a cross-encoder is configured; the
        quality model only when asked), or None; and the warning for ``rerank: true`` with no reranker."""
        from hallouminate.embedding.reranker import on_by_default
        from hallouminate.search.rerank import RerankStage, not_configured

        wanted = args.get("rerank")
        if wanted is False or args.get("match") == "phrase":
            return None, None
        if not self.settings.reranker:  # daemon-wide: only the baseline sets [embeddings]
            return None, not_configured() if wanted else None
        if wanted is None and not on_by_default(self.settings.reranker):
            return None, None
        reranker = self._reranker
        if reranker is None:
            task = self._reranker_load
            # A failed load is retried by a later request (the user may have fixed the directory), but not
            # by every one: a hub that drops packets would cost each search the download's timeout.
            failed = task is not None and task.done() and (task.cancelled() or task.exception() is not None)
            if task is None or (failed and time.monotonic() - self._reranker_failed_at >= RELOAD_RETRY_SECS):
                task = self._start_reranker_load()
            reranker = await asyncio.shield(task)
        loop = asyncio.get_running_loop()
        model = reranker

        async def score(query: str, passages: list[str]) -> list[float]:
            return await loop.run_in_executor(
                self._rerank_pool, functools.partial(_rerank, model, query, passages)
            )

        return RerankStage(reranker.name, score, settings.rerank_budget_ms, reranker.fuse_weight), None

    def _spawn(self, job: Any) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _startup_catch_up(self) -> None:
        """Edits made while no daemon ran: catch up the baseline corpora and every repository served before."""
        if self._recovered is not None:
            # A move a killed daemon left half-done is finished first: the catch-up then indexes it whole.
            with contextlib.suppress(Exception):
                await asyncio.shield(self._recovered)
        roots: list[Path | None] = [None, *await asyncio.to_thread(self._known.roots)]
        for root in roots:
            try:
                if root is None:
                    resolved = await asyncio.to_thread(load_baseline)
                    self._register(resolved)
                else:
                    resolved = await self._resolve(Where(root))
                for spec in resolved.corpora.values():
                    run = self._catch_up(spec)
                    if run is not None and run.task is not None:
                        # One corpus at a time: start-up must not start every known corpus at once.
                        await asyncio.shield(run.task)
            except asyncio.CancelledError:
                raise
            except HallouminateError as exc:
                log.warning("start-up catch-up of %s skipped: %s", root or "the baseline", exc.message)
            except Exception:
                log.exception("start-up catch-up of %s failed", root or "the baseline")

    def _register(self, resolved: Resolved) -> None:
        """Watch every corpus a request showed us, and remember its repository for the next start."""
        if self._watcher is not None:
            for spec in resolved.corpora.values():
                self._watcher.watch(spec)
        if resolved.repository_name is not None:
            root = resolved.repositories.get(resolved.repository_name)
            if root is not None and not self._known.has(root):
                # A file written (rarely: only for a repository not seen before), in a thread.
                self._spawn(asyncio.to_thread(self._known.add, root))

    async def _refresh_paths(self, spec: CorpusSpec, paths: list[str]) -> None:
        await self._store_ready(rebuild=False)
        await self._vectors_ready()
        _, _, indexer = await self._engine()
        async with self._lock(spec.store_key):
            with self._store_faults():
                report = await self._run_index(indexer.index_paths, spec, paths)
            self._tally(spec.store_key, "watcher", report)
        self._maintain_ann()
        self.counters["watcher_batches"] += 1
        self.counters["watcher_files_upserted"] += report["files_upserted"]
        if report["files_upserted"] or report["files_deleted"]:
            log.info(
                "watcher: %s: %s", spec.name, {k: v for k, v in report.items() if k.startswith("files_")}
            )

    async def _refresh_corpus(self, spec: CorpusSpec) -> None:
        report = await self._index_corpus(spec, None, kind="watcher")
        self.counters["watcher_batches"] += 1
        self.counters["watcher_files_upserted"] += report["files_upserted"]

    async def _ensure_loaded(self) -> None:
        if self._indexer is not None:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if done.done():
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        def work() -> None:
            try:
                self._load()
            except BaseException as exc:
                loop.call_soon_threadsafe(settle, exc)
            else:
                loop.call_soon_threadsafe(settle, None)

        # A daemon thread, not the executor: a stop during the first load must not wait for it to finish.
        threading.Thread(target=work, name="hallouminate-load", daemon=True).start()
        try:
            await done
            self._load_error = None
            self._maintain_ann()  # a store past the threshold with no index (or a stale one) gets it now
        except HallouminateError as exc:
            self._load_error = exc
            log.error("load failed: %s", exc.message)
            raise
        except Exception as exc:
            log.exception("load failed")
            self._load_error = Bug(f"could not load the model or the store: {type(exc).__name__}: {exc}")
            raise self._load_error from exc

    async def _engine(self) -> tuple[Store, Embedder | EndpointEmbedder, Indexer]:
        # A failed load is retried on each request: the user may have run `hallouminate model install`.
        await self._ensure_loaded()
        assert self._store is not None and self._embedder is not None and self._indexer is not None
        return self._store, self._embedder, self._indexer

    async def _vectors_ready(self) -> None:
        """Refuse (``Conflict``) what would read or write vectors while the store holds vectors made
        otherwise than the configured embedder makes them: never mixed, never dropped silently."""
        store, _, _ = await self._engine()
        if store.mismatch is not None:
            raise self._mismatch_error(store.mismatch)

    def _refuse_mixed_write(self) -> None:
        """A write tool's refusal before it writes, when the loaded store refuses vectors: a file written
        but never indexed would be a worse answer. (Still loading: its re-index warns instead.)"""
        store = self._store
        if store is not None and store.mismatch is not None:
            raise self._mismatch_error(store.mismatch)

    def _mismatch_error(self, mismatch: Mismatch) -> Conflict:
        held = ", ".join(f"{k} {v}" for k, v in mismatch.held.items())
        configured = ", ".join(f"{k} {v}" for k, v in mismatch.configured.items())
        back = _going_back(mismatch)
        return Conflict(
            f"the store at {self._store_name()} holds vectors that cannot be mixed with the configured "
            f"embedder's ({'; '.join(mismatch.reasons)}): it holds {held}; configured is {configured}. "
            "Run `hallouminate index --rebuild` (the index tool's rebuild: true) to drop them and embed "
            "every corpus again with the configured model; "
            f"or go back: {back}, then restart the daemon (`hallouminate daemon stop`). Searches, index "
            "runs and writes are refused until then; reads and listings still answer.",
            {
                "problem": "store-mismatch",
                "store": {"held": mismatch.held, "configured": mismatch.configured},
                "reasons": list(mismatch.reasons),
                "fix": "hallouminate index --rebuild",
            },
        )

    async def _store_ready(self, *, rebuild: bool) -> None:
        """Refuse clearly when the store directory is gone or replaced, instead of a raw LanceDB error.

        A store removed under the running daemon is rebuilt (empty) by an index run (``rebuild``), which
        then re-embeds every file; searches and stats answer an error naming the fix until then, rather
        than empty results that look like a real answer.
        """
        from hallouminate.storage.faults import MISSING, problem_error, store_problem

        await self._engine()
        if self.settings.store_uri is not None:  # an object store: no directory to check or rebuild
            return
        problem = await asyncio.to_thread(store_problem, self.settings.store_dir)
        if problem is None:
            return
        if not rebuild or problem != MISSING or self.read_only:  # a follower never makes the store
            raise problem_error(self.settings.store_dir, problem)
        async with self._rebuild_lock:
            if await asyncio.to_thread(store_problem, self.settings.store_dir) == MISSING:
                log.warning("the store %s was removed; rebuilding it", self.settings.store_dir)
                await asyncio.to_thread(self._reopen_store)

    def _new_embedder(self) -> Embedder | EndpointEmbedder:
        """The configured provider's embedder: a local model, or an OpenAI-compatible endpoint."""
        s = self.settings
        if s.embedding_provider == "openai-compatible":
            from hallouminate.embedding.endpoint import EndpointEmbedder, default_tokenizer_dir

            # The layer checked that these are set with this provider.
            assert s.endpoint_base_url is not None and s.endpoint_dimensions is not None
            return EndpointEmbedder(
                base_url=s.endpoint_base_url,
                model=s.model_name,
                dimensions=s.endpoint_dimensions,
                api_key_env=s.endpoint_api_key_env,
                batch_size=s.endpoint_batch_size,
                timeout_secs=s.endpoint_timeout_secs,
                max_input_tokens=s.endpoint_max_input_tokens,
                max_retries=s.endpoint_max_retries,
                send_dimensions=s.endpoint_send_dimensions,
                tokenizer_dir=default_tokenizer_dir(s.model_cache_dir),
            )
        from hallouminate.embedding import Embedder

        return Embedder(s.model_cache_dir, s.model_name)

    def _open_store(self, embedder: Embedder | EndpointEmbedder) -> Store:
        from hallouminate.indexing.chunker import EMBED_TEXT_FORM
        from hallouminate.storage.store import ReadOnlyStore, Store

        # The budget the indexer cuts chunks to (the model reads no more): recorded with the table, so a
        # change of [indexing] chunk_tokens rebuilds it instead of leaving unchanged files cut the old way.
        chunk_tokens = min(self.settings.chunk_tokens, embedder.max_tokens)
        rows = testing_hooks.ann_rows()  # None outside the test suite
        kind = ReadOnlyStore if self.read_only else Store
        store = kind(
            store_location(self.settings),
            embedder.dim,
            model_name=embedder.model_name,  # the endpoint's says so: "openai-compatible:<model>"
            chunk_tokens=chunk_tokens,
            text_prep=f"{EMBED_TEXT_FORM}; {embedder.text_prep}",
            **({} if rows is None else {"ann_min_rows": rows}),
        )
        deadline = testing_hooks.read_deadline_secs()  # None outside the test suite
        if deadline is not None:
            store.read_deadline_secs = deadline
        if self.lease is not None:
            store.write_guard = self.lease.guard  # no commit unless this writer still holds the store
        return store

    def _format_limits(self) -> FormatLimits:
        """What a document reader may spend on one file: the [indexing] settings, for reads as for index
        runs, so a document that indexes also reads."""
        from hallouminate.indexing.indexer import format_limits

        return format_limits(self.settings)

    def _new_indexer(self, store: Store, embedder: Embedder | EndpointEmbedder) -> Indexer:
        from hallouminate.indexing import Indexer
        from hallouminate.indexing.problems import PROBLEMS_FILE, ProblemLog

        # The file problems index runs found, beside the store: they outlive the daemon, go with the store.
        return Indexer(store, embedder, self.settings, ProblemLog(self.settings.store_dir / PROBLEMS_FILE))

    def _new_reader(self, store: Store) -> AsyncReader:
        from hallouminate.storage.reader import AsyncReader

        rows = testing_hooks.ann_rows()  # None outside the test suite
        return AsyncReader(store) if rows is None else AsyncReader(store, in_memory_rows=rows)

    def _maintain_ann(self) -> None:
        """Build, retrain or refresh the approximate vector index in its own thread, if the store calls for
        it and no such work is running (Store.maintain_ann decides; it is a metadata read when nothing is
        due). Called after index runs and writes, and once the store is loaded."""
        store = self._store
        if store is None or store.mismatch is not None or self.read_only:  # the writer builds it
            return
        if self._ann_task is not None and not self._ann_task.done():
            return
        self._ann_task = asyncio.get_running_loop().run_in_executor(
            self._ann_pool, store.maintain_ann, testing_hooks.ann_pause_point
        )
        self._ann_task.add_done_callback(lambda task: task.cancelled() or task.exception())

    def _reopen_store(self) -> None:
        with self._load_lock:
            assert self._embedder is not None
            store = self._open_store(self._embedder)
            self._store, self._reader = store, self._new_reader(store)
            self._indexer = self._new_indexer(store, self._embedder)
            # Every corpus must be compared with the (now empty) store again before it is searched.
            self._caught_up.clear()

    @contextlib.contextmanager
    def _store_faults(self) -> Iterator[None]:
        """Turn a store failure we recognise (gone, read-only, disk full) into its cause and fix."""
        from hallouminate.storage.faults import explain

        try:
            yield
        except CallerError:
            raise  # the caller's mistake (its text may even quote "os error" back): never a store fault
        except Exception as exc:
            explained = explain(store_location(self.settings), exc)
            if explained is None:
                raise
            raise explained from exc

    def _lock(self, corpus: str) -> asyncio.Lock:
        return self._corpus_locks.setdefault(corpus, asyncio.Lock())

    async def _run_index(self, run: Callable[..., IndexReport], *args: Any) -> IndexReport:
        """An index run in the index pool, never in the default one that short work needs."""
        return await asyncio.get_running_loop().run_in_executor(
            self._index_pool, functools.partial(self._index_and_release, run, *args)
        )

    def _index_and_release(self, run: Callable[..., IndexReport], *args: Any) -> IndexReport:
        report = run(*args)
        if report.get("chunks_written") and self._embedder is not None:
            # The passage batches' tensors stay in the model's arena otherwise (~400 MB, ADR 0061).
            self._embedder.release_memory()
        return report

    # -- operations --------------------------------------------------------------------------------
    async def _resolve(self, where: Where) -> Resolved:
        if self.read_only:
            return await self._store_resolved()
        resolved = await self._resolver.resolve(where.cwd)
        if where.kb:
            resolved = as_knowledge_base(resolved, where)
        self._register(resolved)
        return resolved

    async def _index_corpus(
        self, spec: CorpusSpec, emit: Emit | None, *, kind: RunKind = "index", force: bool = False
    ) -> IndexReport:
        """A whole-corpus pass that sees every change made before this call.

        A run already going began before this call and may have passed a file changed since: the call
        follows its progress (events marked ``waiting``) until it ends, then runs its own pass. A run of
        the same kind started after this call covers it: its report is this call's (a client's ``index``
        never takes a catch-up's report: its own pass reports that catch-up's work as ``background``). A
        ``force`` call is covered only by a forced run; a forced run covers any call.
        """
        arrived = next(self._run_numbers)
        while True:
            run = self._runs.get(spec.store_key)
            if run is None:
                run = self._start_run(spec, kind, force=force)
            if run.number > arrived and run.kind == kind and (run.force or not force):
                return await self._follow(run, emit, waiting=False)
            with contextlib.suppress(Exception):  # its failure was its caller's; this call runs its own
                await self._follow(run, emit, waiting=True)

    async def _follow(self, run: _CorpusRun, emit: Emit | None, *, waiting: bool) -> IndexReport:
        assert run.task is not None
        listener = None
        if emit is not None:
            run_kind = run.kind

            def listener(event: ProgressEvent) -> None:
                emit("progress", {**event, "waiting_for": run_kind} if waiting else event)

            run.listeners.append(listener)
            if (
                waiting
            ):  # said at once, even before the run has listed its files: a silent wait reads as a hang
                listener(run.last or {"corpus": run.corpus, "done": 0, "total": 0, "path": None})
            elif run.last is not None:  # a run this call adopted, already under way
                listener(run.last)
        try:
            # Shielded: a caller going away (a closed CLI) must not stop a run others follow or rely on.
            return await asyncio.shield(run.task)
        finally:
            if listener is not None:
                run.listeners.remove(listener)

    def _start_run(self, spec: CorpusSpec, kind: RunKind, *, force: bool = False) -> _CorpusRun:
        run = _CorpusRun(spec.name, kind, next(self._run_numbers), force)
        self._runs[spec.store_key] = run
        run.task = asyncio.get_running_loop().create_task(self._whole_corpus(spec, run))

        def finished(task: asyncio.Task[IndexReport]) -> None:
            if self._runs.get(spec.store_key) is run:
                del self._runs[spec.store_key]
            # Retrieved here, so a catch-up nobody awaits is logged once, not as "never retrieved".
            if not task.cancelled() and (exc := task.exception()) is not None and kind == "catch-up":
                self._catch_up_failed[spec.store_key] = time.monotonic()
                if isinstance(exc, HallouminateError):
                    log.warning("%s of %s failed: %s", kind, spec.name, exc.message)
                else:
                    log.error("%s of %s failed", kind, spec.name, exc_info=exc)

        run.task.add_done_callback(finished)
        self._background_runs.add(run.task)
        run.task.add_done_callback(self._background_runs.discard)
        return run

    async def _whole_corpus(self, spec: CorpusSpec, run: _CorpusRun) -> IndexReport:
        await self._store_ready(rebuild=True)
        await self._vectors_ready()
        _, _, indexer = await self._engine()
        async with self._lock(spec.store_key):
            with self._store_faults():
                report = await self._run_index(
                    functools.partial(indexer.index_corpus, force=run.force), spec, run.progress
                )
            # Under the lock: no run of this corpus can end between this run and its report.
            if run.kind == "index":
                report["background"] = self._take_tally(spec.store_key)
            else:
                self._tally(spec.store_key, run.kind, report)
        self._caught_up.add(spec.store_key)
        self._maintain_ann()
        return report

    def _catch_up(self, spec: CorpusSpec) -> _CorpusRun | None:
        """The run bringing ``spec`` up to date, started in the background on first sight since start-up
        (edits made while no daemon ran); None when it is current (the watcher keeps it so)."""
        run = self._runs.get(spec.store_key)
        if run is None and spec.store_key not in self._caught_up:
            failed = self._catch_up_failed.get(spec.store_key)
            # A catch-up that failed (a read-only store, a full disk) is not retried by every search.
            if failed is not None and time.monotonic() - failed < CATCH_UP_RETRY_SECS:
                return None
            run = self._start_run(spec, "catch-up")
        return run

    def _indexing(self, specs: list[CorpusSpec]) -> dict[str, IndexingState]:
        """Corpora (by display name) a whole-corpus run is indexing now, with its counts; the catch-up of
        those never compared since start-up begins here."""
        states: dict[str, IndexingState] = {}
        for spec in specs:
            run = self._catch_up(spec)
            # Not named: the watcher's pass over a corpus already caught up. It follows edits made
            # moments ago (their hits say `stale`); naming it would put a warning on most searches made
            # while someone edits.
            if run is not None and not (run.kind == "watcher" and spec.store_key in self._caught_up):
                states[spec.name] = run.state()
        return states

    def _tally(self, corpus: str, by: BackgroundSource, report: IndexReport) -> None:
        """Add a run the daemon made on its own to what the next ``index`` of the corpus reports."""
        # Named in the log too, not only counted: no client sees this run's report.
        for bad in [*report.get("skipped", []), *report.get("frontmatter_errors", [])]:
            log.warning("%s: %s: %s: %s", by, report["corpus"], bad["path"], bad["reason"])
        if not (
            report["files_upserted"]
            or report["files_touched"]
            or report["files_deleted"]
            or report["files_skipped"]
        ):
            return  # nothing to tell: a watcher batch the write tools had already indexed, say
        now = int(time.time() * 1000)
        kept = self._background_work.setdefault(corpus, {})
        work = kept.setdefault(
            by,
            {
                "by": by,
                "runs": 0,
                "files_upserted": 0,
                "files_touched": 0,
                "files_deleted": 0,
                "files_skipped": 0,
                "chunks_written": 0,
                "first_ms": now,
                "last_ms": now,
            },
        )
        work["runs"] += 1
        work["files_upserted"] += report["files_upserted"]
        work["files_touched"] += report["files_touched"]
        work["files_deleted"] += report["files_deleted"]
        work["files_skipped"] += report["files_skipped"]
        work["chunks_written"] += report["chunks_written"]
        work["last_ms"] = now

    def _take_tally(self, corpus: str) -> list[BackgroundWork]:
        kept = self._background_work.pop(corpus, {})
        return [kept[by] for by in ("catch-up", "watcher") if by in kept]

    async def index(self, where: Where, args: IndexArgs, emit: Emit | None) -> IndexResult:
        started = time.perf_counter()
        resolved = await self._resolve(where)
        corpus = args.get("corpus")
        if corpus is not None:
            specs = [corpus_for(resolved, corpus)]
        else:
            specs = list(resolved.corpora.values())
            if not specs:
                raise _no_corpora(where.cwd)
        keys = self._claim_index(specs, wait=args.get("wait", False))
        try:
            force = args.get("force", False)
            rebuild = args.get("rebuild", False)
            if force or rebuild:
                await self._probe()  # before anything is emptied or re-embedded
            if rebuild:
                await self._rebuild()
            reports = [await self._index_corpus(spec, emit, force=force) for spec in specs]
        finally:
            for key, began in keys:
                self._client_indexes[key].remove(began)
                if not self._client_indexes[key]:
                    del self._client_indexes[key]
        return {"corpora": reports, "seconds": round(time.perf_counter() - started, 3), "warnings": []}

    async def _probe(self) -> None:
        """Embed one text before a forced run or a rebuild: an embedder that fails (an endpoint down, a
        wrong key) fails the call here, with the store untouched, not half-way through emptying it."""
        from hallouminate.embedding.endpoint import PROBE_TEXT

        _, embedder, _ = await self._engine()
        try:
            await asyncio.to_thread(embedder.embed_passages, [PROBE_TEXT])
        except HallouminateError as exc:
            raise exc.reworded(
                "the embedder failed a probe before re-embedding anything, so the index was left as it "
                f"is: {exc.message}"
            ) from exc

    async def _rebuild(self) -> None:
        """``index --rebuild``: drop every corpus's rows and make the table anew for the configured
        embedder (the way out of a store-mismatch refusal); the call then indexes its own corpora, and every
        other corpus known is caught up in the background (embedded again from its files)."""
        store, _, _ = await self._engine()
        # Runs in flight write the old table: let them end first (their failures are their callers').
        for run in list(self._runs.values()):
            if run.task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(run.task)
        async with self._rebuild_lock:
            held = store.mismatch
            with self._store_faults():
                await asyncio.to_thread(store.rebuild)
                await asyncio.to_thread(self._reopen_store)  # a new reader and indexer on the new table
            log.warning(
                "store rebuilt on request%s; every corpus is embedded again",
                f" (it held {held.held}, configured {held.configured})" if held is not None else "",
            )
        self._background_work.clear()
        self._catch_up_failed.clear()  # refused while mismatched: due again at once
        self._spawn(self._startup_catch_up())  # every other corpus the daemon knows: from its files

    def _claim_index(self, specs: list[CorpusSpec], *, wait: bool) -> list[tuple[str, float]]:
        """Record a client ``index`` of ``specs`` as running, or refuse it (``Conflict``) when another one
        of any of them is running and the caller did not ask to ``wait``. Check and claim happen with no
        await between them, so two calls arriving together cannot both pass."""
        now = time.monotonic()
        if not wait:
            for spec in specs:
                running = self._client_indexes.get(spec.store_key)
                if running:
                    secs = now - min(running)
                    raise Conflict(
                        f"an index of corpus {spec.name!r} is already running (started {secs:.1f} s ago "
                        "by another call); call again with wait: true (CLI: --wait) to wait for it and "
                        "then index, or later",
                        {"problem": "index-running", "corpus": spec.name, "running_secs": round(secs, 1)},
                    )
        claimed = [(spec.store_key, now) for spec in dict.fromkeys(specs)]
        for key, began in claimed:
            self._client_indexes.setdefault(key, []).append(began)
        return claimed

    async def ground(self, where: Where, args: GroundArgs) -> GroundResult:
        from hallouminate import search

        resolved = await self._resolve(where)
        corpus = args.get("corpus")
        if corpus is not None:
            specs = [corpus_for(resolved, corpus)]
        else:
            specs = list(resolved.corpora.values())
            if not specs:
                raise _no_corpora(where.cwd)
        _, embedder, _ = await self._engine()
        await self._store_ready(rebuild=False)
        await self._vectors_ready()
        # Answered from what is indexed now, never after an index run: the corpora being indexed (their
        # first catch-up since start-up begins here) are named in the not-indexed warning.
        indexing = self._indexing(specs)
        s = resolved.settings  # the request's own: its repository's [search] overrides the baseline
        assert self._reader is not None

        if self._batcher is None or self._batcher[0] is not embedder:
            self._batcher = (embedder, batcher_for(embedder))
        embed_query = self._batcher[1].embed
        stage, rerank_warning = await self._rerank_stage(args, s)

        with self._store_faults():
            result = await search.ground(
                self._reader,
                embed_query,
                specs,
                args["query"],
                priority_corpus=resolved.default_corpus,
                top_files=args.get("top_files", s.top_files),
                chunks_per_file=args.get("chunks_per_file", s.chunks_per_file),
                limit=args.get("limit", s.limit),
                snippet_chars=args.get("snippet_chars", s.snippet_chars),
                match=args.get("match"),
                group_by=args.get("group_by"),
                output=args.get("output"),
                footnotes=args.get("footnotes"),
                # The eligibility filters (search/filters.py): only those the caller sent.
                **{name: args[name] for name in search.FILTER_PARAMS if name in args},  # type: ignore[literal-required]
                model=embedder.model_name,  # low_confidence reads the model's cosine scale
                rerank=stage,
                mmr=args.get("mmr"),
                mmr_lambda=args.get("mmr_lambda"),
                mmr_same_doc_penalty=args.get("mmr_same_doc_penalty"),
                parent=args.get("parent"),
                min_confidence_ratio=args.get("min_confidence_ratio"),
                count_tokens=embedder.count_tokens,  # parent's unit: the tokens chunks were cut in
                uri_corpus=resolved.default_corpus,  # the kb:// resources' corpus (docs/mcp.md#resources)
            )
        if rerank_warning is not None:
            result["warnings"].append(rerank_warning)
        if indexing:
            result["warnings"] = search.with_indexing(result["warnings"], indexing)
        return result

    async def search(self, where: Where, args: SearchArgs) -> SearchResult:
        """The GrooveSeek face's search: ``ground`` with GrooveSeek's parameters, as flat chunk hits
        (search/hits.py)."""
        from hallouminate.search import hits

        resolved = await self._resolve(where)
        plan = hits.plan(args, resolved.settings.limit)
        if plan.nothing is not None:
            return hits.nothing(plan)
        result = await self.ground(where, plan.ground)
        assert self._reader is not None  # ground made the store ready
        keys = {spec.name: spec.store_key for spec in resolved.corpora.values()}
        with self._store_faults():
            return await hits.search_hits(self._reader, result, keys, plan.limit)

    async def search_rag(self, where: Where, args: SearchRagArgs) -> SearchRagResult:
        """The KuraDB face's retrieval (search/rag.py): one corpus of the scope, BM25 alone and/or vectors
        alone, through the reader ``ground`` uses; answered from what is indexed now, never after an index
        run (as ``ground``). An unknown corpus is KuraDB's ``invalid argument: "NAME" not exist``."""
        from hallouminate.protocol.limits import RAG_LIMIT, RAG_MODES
        from hallouminate.search.rag import retrieve

        resolved = await self._resolve(where)
        name = args["corpus"]
        spec = resolved.corpora.get(name)
        if spec is None:
            raise InvalidArgument(
                f"invalid argument: {json.dumps(name, ensure_ascii=False)} not exist",
                {"param": "db", "corpora": list(resolved.corpora)},
            )
        mode = args.get("mode")
        _, embedder, _ = await self._engine()
        await self._store_ready(rebuild=False)
        await self._vectors_ready()
        self._indexing([spec])  # its first catch-up since start-up begins here; never waited for
        if self._batcher is None or self._batcher[0] is not embedder:
            self._batcher = (embedder, batcher_for(embedder))
        assert self._reader is not None
        with self._store_faults():
            return await retrieve(
                self._reader,
                self._batcher[1].embed,
                spec.store_key,
                args["query"],
                modes=(mode,) if mode is not None else RAG_MODES,
                limit=args.get("limit", RAG_LIMIT.default or 1),
            )

    async def connection_graph(self, where: Where, args: ConnectionGraphArgs) -> ConnectionGraphResult:
        """``get_connection_graph`` over one corpus (search/graph.py): the reader's held vectors, and the
        links of each page walked, read from disk in a worker thread."""
        from hallouminate import browse, search

        spec = corpus_for(await self._resolve(where), args.get("corpus"))
        store, _, _ = await self._engine()
        await self._store_ready(rebuild=False)
        await self._vectors_ready()
        assert self._reader is not None
        indexed: list[set[str]] = []  # the corpus's indexed pages, read once, when first asked

        async def pages() -> set[str]:
            if not indexed:
                with self._store_faults():
                    indexed.append(set(await asyncio.to_thread(store.file_states, spec.store_key)))
            return indexed[0]

        async def links(path: str) -> list[str]:
            return await asyncio.to_thread(browse.page_links, spec, path, await pages())

        with self._store_faults():
            return await search.connection_graph(
                self._reader, spec.store_key, args, corpus_name=spec.name, links=links, pages=pages
            )

    async def list_corpora(self, where: Where) -> ListCorporaResult:
        from hallouminate import browse

        return browse.list_corpora(await self._resolve(where))

    async def browse(
        self, where: Where, op: str, args: CorpusArgs | ListFilesArgs | ReadMarkdownArgs | BacklinksArgs
    ) -> ListFilesResult | ListTreeResult | ReadMarkdownResult | BacklinksResult:
        """The filesystem read tools: no model or store needed, so they answer even while it loads."""
        from hallouminate import browse

        spec = corpus_for(await self._resolve(where), args.get("corpus"))
        if self.read_only:
            return await self._browse_index(spec, op, args)
        if op == "list_files":
            since = cast(ListFilesArgs, args).get("changed_since")
            return await asyncio.to_thread(browse.list_files, spec, since)
        if op == "list_tree":
            return await asyncio.to_thread(browse.list_tree, spec)
        # Each op's schema requires its path: the key tells the argument types apart.
        if op == "read_markdown" and "path" in args:
            return await asyncio.to_thread(
                browse.read_markdown,
                spec,
                args["path"],
                bool(args.get("line_numbers", False)),
                limits=self._format_limits(),
            )
        if op == "backlinks" and "path" in args:
            return await asyncio.to_thread(browse.backlinks, spec, args["path"])
        raise Bug(f"unknown read operation {op!r}")

    async def _browse_index(
        self, spec: CorpusSpec, op: str, args: CorpusArgs | ListFilesArgs | ReadMarkdownArgs | BacklinksArgs
    ) -> ListFilesResult | ReadMarkdownResult:
        """The read tools on a read-only daemon, from the index: the files are on the writer's machine."""
        from hallouminate.browse.document import not_indexed

        if op == "read_markdown" and "path" in args:
            assert self._reader is not None
            with self._store_faults():
                rows = await self._reader.page_rows(spec.store_key, args["path"])
            if not rows:
                raise not_indexed(spec.name, args["path"], indexing=False)
            return read_only.indexed_page(spec, args["path"], rows, bool(args.get("line_numbers", False)))
        if op == "list_files":
            since = cast(ListFilesArgs, args).get("changed_since")
            return await self._indexed_files(spec, since)
        raise read_only.files_refusal(op, self._store_name())

    async def _indexed_files(self, spec: CorpusSpec, changed_since: str | None) -> ListFilesResult:
        """``list_files`` on a read-only daemon: the indexed files, with the mtimes the writer recorded;
        ``absolute_path`` is empty (the files are on the writer's machine)."""
        from hallouminate.protocol import recency

        store, _, _ = await self._engine()
        with self._store_faults():
            states = await asyncio.to_thread(store.file_states, spec.store_key)
        since = None if changed_since is None else recency.since_ns(changed_since)
        result: ListFilesResult = {
            "corpus": spec.name,
            "files": [
                {"path": path, "absolute_path": ""}
                for path, state in sorted(states.items())
                if since is None or state.mtime_ns >= since
            ],
        }
        if changed_since is not None and since is not None:
            result["filter_applied"] = {
                "changed_since": changed_since,
                "changed_since_utc": recency.iso_utc(since),
            }
        return result

    async def get_best_practice(self, where: Where, args: BestPracticeArgs) -> BestPracticeResult:
        """The page ``[best_practice] path_templates`` names for ``target`` (browse/best_practice.py):
        a filesystem read, answered even while the model loads."""
        from hallouminate.browse.best_practice import best_practice, require_configured

        if self.read_only:
            raise read_only.files_refusal("get_best_practice", self._store_name())
        resolved = await self._resolve(where)
        templates = resolved.settings.best_practice_templates
        require_configured(templates)  # before the corpus: "not configured" is the news
        spec = corpus_for(resolved, args.get("corpus"))
        return await asyncio.to_thread(best_practice, spec, templates, args["target"], args.get("category"))

    async def corpus_stats(self, where: Where, corpus: str | None) -> CorpusStatsResult:
        from hallouminate import browse

        spec = corpus_for(await self._resolve(where), corpus)
        await self._store_ready(rebuild=False)
        store, _, indexer = await self._engine()
        indexing = self._indexing([spec]).get(spec.name)  # never waited for: reported
        with self._store_faults():
            states = await asyncio.to_thread(store.file_states, spec.store_key)
            count = await asyncio.to_thread(store.count_rows, spec.store_key)
        problems = indexer.problems.get(spec.store_key)
        result = await asyncio.to_thread(browse.corpus_stats, spec, states, count, problems)
        with self._store_faults():
            result["vector_index"] = await asyncio.to_thread(_vector_index, store)
        if indexing is not None:
            result["indexing"] = indexing
        return result

    async def list_topics(self, where: Where, corpus: str | None) -> ListTopicsResult:
        """The corpus's (category, topic) groups from its indexed pages, as of now (an index run in
        flight is reported, never waited for); computed again only after a commit."""
        from hallouminate.search.topics import TopicsCache, list_topics

        spec = corpus_for(await self._resolve(where), corpus)
        await self._store_ready(rebuild=False)
        await self._engine()
        indexing = self._indexing([spec]).get(spec.name)
        assert self._reader is not None
        with self._store_faults():
            heads = await self._reader.page_heads(spec.store_key)
        if self._topics is None:
            self._topics = TopicsCache()
        topics = self._topics.cached(spec.store_key, heads)
        if topics is None:
            # One pass over the pages after each commit (~10k pages at 100k chunks): off the loop.
            topics = await asyncio.to_thread(list_topics, heads)
            self._topics.keep(spec.store_key, heads, topics)
        result: ListTopicsResult = {"corpus": spec.name, "topics": topics}
        if indexing is not None:
            result["indexing"] = indexing
        return result

    # -- documents and the kb:// resources (browse/document.py, browse/resources.py) -----------------------
    async def get_document(self, where: Where, args: GetDocumentArgs) -> GetDocumentResult:
        from hallouminate.browse.document import check_document_name, read_document
        from hallouminate.protocol.kb_uri import doc_uri
        from hallouminate.sandbox import offered

        resolved = await self._resolve(where)
        spec = corpus_for(resolved, args.get("corpus"))
        path = args["path"]
        check_document_name(path)  # the string alone: before the index or the disk is asked anything
        row = await self._indexed_row(spec, path)
        document = await asyncio.to_thread(
            read_document, spec, path, row.get("fields"), self._format_limits()
        )
        # Offered or not on the recorded size, as resources/list and the hits judge it.
        if spec.name == resolved.default_corpus and offered(path, row.get("file_size")):
            document["uri"] = doc_uri(path)
        return document

    async def resource_groups(self, where: Where) -> ResourceGroupsResult:
        from hallouminate.browse.resources import groups

        resolved = await self._resolve(where)
        spec = _resource_corpus(resolved)
        if spec is None:
            return {"corpus": None, "groups": []}
        return {"corpus": spec.name, "groups": groups(await self._indexed_sizes(spec))}

    async def read_resource(self, where: Where, uri: str) -> ReadResourceResult:
        from hallouminate.browse.document import check_document_name, read_document
        from hallouminate.browse.resources import document_contents, resource_not_found, topic_listing
        from hallouminate.protocol import kb_uri
        from hallouminate.protocol.limits import DOCUMENT_TEXT_MAX_BYTES
        from hallouminate.sandbox import offered

        parsed = kb_uri.parse(uri)
        if parsed is None:
            raise resource_not_found(uri, "not a kb://doc/<path> or kb://topic/<prefix> URI")
        resolved = await self._resolve(where)
        spec = _resource_corpus(resolved)
        if spec is None:
            raise resource_not_found(uri, f"no default corpus is configured for {where.cwd}")
        kind, path = parsed
        if kind == "topic":
            return topic_listing(uri, path, await self._indexed_sizes(spec))
        try:
            check_document_name(path)
            row = await self._indexed_row(spec, path)
            if not offered(path, row.get("file_size")):
                raise resource_not_found(uri, "the document is larger than a read returns")
            document = await asyncio.to_thread(
                read_document, spec, path, row.get("fields"), self._format_limits()
            )
        except CallerError as exc:
            # Every refusal of a read is MCP's resource_not_found; its reason says which rule refused.
            if exc.data.get("problem") == "resource_not_found":
                raise
            raise resource_not_found(uri, exc.message) from None
        return document_contents(uri, document, DOCUMENT_TEXT_MAX_BYTES)

    async def _indexed_row(self, spec: CorpusSpec, path: str) -> ChunkRow:
        """The first stored row of the indexed document ``path`` (exact spelling), or ``not_indexed``."""
        from hallouminate.browse.document import not_indexed

        await self._store_ready(rebuild=False)
        # Starts the corpus's first catch-up if due; never waited for, but named in a miss.
        indexing = spec.name in self._indexing([spec])
        assert self._reader is not None
        with self._store_faults():
            rows = await self._reader.page_rows(spec.store_key, path)
        if not rows:
            raise not_indexed(spec.name, path, indexing=indexing)
        return rows[0]

    async def _indexed_sizes(self, spec: CorpusSpec) -> dict[str, int | None]:
        """Every indexed path of ``spec`` with the file size recorded when it was indexed."""
        await self._store_ready(rebuild=False)
        store, _, _ = await self._engine()
        self._indexing([spec])
        with self._store_faults():
            states = await asyncio.to_thread(store.file_states, spec.store_key)
        return {path: state.size for path, state in states.items()}

    async def write(
        self, where: Where, op: str, args: AddMarkdownArgs | DeleteMarkdownArgs
    ) -> AddMarkdownResult | DeleteMarkdownResult:
        """``add_markdown`` / ``delete_markdown``, then a re-index of the paths they changed.

        The corpus lock is held from the write to the end of the re-index: the watcher's refresh of the
        same files waits for it, then finds their stored size and mtime current and embeds nothing.
        """
        spec = corpus_for(await self._resolve(where), args["corpus"])
        self._refuse_mixed_write()
        if self._recovered is not None:
            # A failed sweep is logged once (start_background_load); each write sweeps its own directory.
            with contextlib.suppress(Exception):
                await asyncio.shield(self._recovered)
        async with self._lock(spec.store_key):
            async with self._write_lock:
                outcome = await asyncio.to_thread(_write_files, op, spec, args, self._write_journal)
            result = outcome.result.copy()
            report = await self._reindex_written(spec, op, outcome.reindex, result["warnings"])
            if report is not None:
                result["reindexed"] = list(outcome.reindex)
                if "deleted" not in result:  # an add_markdown result
                    result["chunks_written"] = report["chunks_written"]
        return result

    async def _reindex_written(
        self, spec: CorpusSpec, op: str, paths: list[str], warnings: list[WriteWarning]
    ) -> IndexReport | None:
        """Re-index the paths a write changed (the caller holds the corpus lock); None when it failed.

        The files are written by now: a failed re-index is a warning, not a failed call (a retry of a
        create would then be refused as "exists"), and so is a file the indexer skipped.
        """
        try:
            await self._store_ready(rebuild=False)
            await self._vectors_ready()
            _, _, indexer = await self._engine()
            with self._store_faults():
                report = await self._run_index(indexer.index_paths, spec, paths)
        except Exception as exc:
            if not isinstance(exc, HallouminateError):
                log.exception("re-indexing after %s failed", op)
            reason = exc.message if isinstance(exc, HallouminateError) else f"{type(exc).__name__}: {exc}"
            warnings.append(
                {
                    "code": "reindex-failed",
                    "message": f"the files were written but not re-indexed ({reason}); the watcher "
                    "or the index tool will catch up",
                }
            )
            return None
        self._maintain_ann()
        self.counters["write_files_upserted"] += report["files_upserted"]
        for skipped in report.get("skipped", []):
            warnings.append({"code": "reindex-skipped", "message": f"{skipped['path']}: {skipped['reason']}"})
        return report

    async def move_markdown(self, where: Where, args: MoveMarkdownArgs) -> MoveMarkdownResult:
        """``move_markdown`` (wiki/move.py), then a re-index of the old path (its rows go), the new one and
        every page it rewrote, under the corpus lock as ``write``: a following ground sees the new path."""
        spec = corpus_for(await self._resolve(where), args["corpus"])
        self._refuse_mixed_write()
        if self._recovered is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._recovered)
        async with self._lock(spec.store_key):
            async with self._write_lock:
                outcome = await asyncio.to_thread(_move_files, spec, args, self._write_journal)
            result = outcome.result.copy()
            report = await self._reindex_written(spec, "move_markdown", outcome.reindex, result["warnings"])
            if report is not None:
                result["reindexed"] = list(outcome.reindex)
                result["chunks_written"] = report["chunks_written"]
        return result

    def status(self) -> RuntimeStatus:
        watched = [str(root) for root in self._watcher.roots] if self._watcher is not None else []
        if self._indexer is not None:
            model = "loaded"
        elif self._load_error is not None:
            model = f"failed: {self._load_error.message}"
        else:
            model = "loading"
        result: RuntimeStatus = {
            "version": self.version,
            "pid": os.getpid(),
            "model": model,
            "model_name": self.settings.model_name,
            "model_cache_dir": str(self.settings.model_cache_dir),
            "store_dir": str(self.settings.store_dir),
            "watched_roots": watched,
            "indexing": [
                {"corpus": run.corpus, "kind": run.kind, **run.state()} for run in self._runs.values()
            ],
            "counters": {
                **self.counters,
                "discovery_scans": self._resolver.cache.discoveries,
                "resolves_shared": self._resolver.shared,
            },
            # Once loaded: every corpus the store holds problems for, whoever's repository it is.
            "file_problems": self._indexer.problems.all() if self._indexer is not None else {},
        }
        store = self._store
        if store is not None and store.mismatch is not None:
            error = self._mismatch_error(store.mismatch)
            result["store_mismatch"] = {
                "message": error.message,
                "held": store.mismatch.held,
                "configured": store.mismatch.configured,
                "fix": "hallouminate index --rebuild",
            }
        if store is not None and store.rebuilt is not None:
            result["store_rebuilt"] = store.rebuilt
        if store is not None:
            result["vector_index"] = _vector_index(store)
        result["store"] = self._store_name()
        result["store_mode"] = "read-only" if self.read_only else "read-write"
        if self.read_only and store is not None and store.version is not None:
            result["followed_version"] = store.version
            if self._followed_at is not None:
                result["followed_at"] = round(self._followed_at, 3)
        return result

    async def close(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
        if self.lease is not None and self._lease_lost is None:
            with contextlib.suppress(Exception):  # the next writer waits out the expiry instead
                await asyncio.to_thread(self.lease.release)
        if self._watcher is not None:
            await self._watcher.close()
        tasks = [*self._background, *self._background_runs]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # Runs still going (a stop during a long index) are not waited for: the process exits next.
        self._index_pool.shutdown(wait=False, cancel_futures=True)
        self._rerank_pool.shutdown(wait=False, cancel_futures=True)
        self._ann_pool.shutdown(wait=False, cancel_futures=True)  # a killed build leaves the old index
        self._resolver.close()


def _vector_index(store: Store) -> VectorIndexState:
    state = store.ann_state()
    return {
        "state": state.state,
        "rows_indexed": state.rows_indexed,
        "rows_unindexed": state.rows_unindexed,
    }


def _write_files(
    op: str, spec: CorpusSpec, args: AddMarkdownArgs | DeleteMarkdownArgs, journal_dir: Path
) -> WriteOutcome[AddMarkdownResult] | WriteOutcome[DeleteMarkdownResult]:
    # Imported in the worker thread: the Markdown stack costs ~0.7 s the first time.
    from hallouminate.wiki.journal import Journal
    from hallouminate.wiki.writes import add_markdown, delete_markdown

    journal = Journal(journal_dir)
    # The schemas: add_markdown requires content, delete_markdown refuses it.
    if op == "add_markdown" and "content" in args:
        return add_markdown(spec, args, journal)
    if op == "delete_markdown" and "content" not in args:
        return delete_markdown(spec, args["path"], journal)
    raise Bug(f"unknown write operation {op!r}")


def _move_files(spec: CorpusSpec, args: MoveMarkdownArgs, journal_dir: Path) -> MoveOutcome:
    from hallouminate.wiki.journal import Journal
    from hallouminate.wiki.move import move_markdown

    return move_markdown(spec, args, Journal(journal_dir))


def _recover_writes(journal_dir: Path) -> list[str]:
    """At start-up, before any write: sweep the temp files a killed daemon left, then finish the moves
    it left half-done (their redo records)."""
    from hallouminate.wiki.journal import Journal
    from hallouminate.wiki.redo import recover

    journal = Journal(journal_dir)
    return [*journal.recover(), *recover(journal)]


def _load_reranker(cache_dir: Path, name: str) -> RerankerPort:
    """The reranker ``[embeddings] reranker`` names: a provisioned bi-encoder, or a cross-encoder."""
    from hallouminate.embedding import reranker

    return reranker.load(cache_dir, name)


def _rerank(reranker: RerankerPort, query: str, passages: list[str]) -> list[float]:
    testing_hooks.rerank_pause_point()  # inert outside the test suite
    return reranker.score(query, passages)


def _log_failed_sweep(done: asyncio.Future[list[str]]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.error("sweeping the temp files of interrupted writes failed", exc_info=done.exception())


def _resource_corpus(resolved: Resolved) -> CorpusSpec | None:
    """The corpus a scope's kb:// resources serve: its default corpus (the repository's wiki, or ``kb``
    for a knowledge base), the one the read tools use without ``corpus``; None: no resources."""
    name = resolved.default_corpus
    return resolved.corpora.get(name) if name is not None else None


def _going_back(mismatch: Mismatch) -> str:
    """The configuration that makes vectors like the store's again (the other way out of a mismatch)."""
    steps = []
    model = mismatch.held.get("model", "unrecorded")
    if model != mismatch.configured.get("model"):
        if model.startswith("openai-compatible:"):
            steps.append(
                f'set [embeddings] provider = "openai-compatible" and model = "{model.split(":", 1)[1]}" '
                "(with its base_url and dimensions)"
            )
        elif model != "unrecorded":
            steps.append(f'set [embeddings] model = "{model}" (and no provider, or provider = "local")')
    if "chunk_tokens" in mismatch.held:
        steps.append(f"set [indexing] chunk_tokens = {mismatch.held['chunk_tokens']}")
    if "text_prep" in mismatch.held and not steps:
        steps.append("run the hallouminate release that built the store")
    return " and ".join(steps) or "restore the configuration the store was built with"


def _no_corpora(cwd: Path) -> NotFound:
    return NotFound(
        f"no corpus is configured for {cwd}: run `hallouminate init-repo NAME` in the repository, or add a "
        "[[corpus]] to the baseline config",
        {"corpora": []},
    )


def store_location(settings: Settings) -> StoreLocation:
    """Where the store is ([store] path or uri), with an object store's credentials, region and endpoint
    (config/credentials.py: the environment over [store] credentials_file)."""
    from hallouminate.config.credentials import store_credentials
    from hallouminate.storage.location import StoreLocation

    if settings.store_uri is None:
        return StoreLocation.local(settings.store_dir)
    found = store_credentials(settings)
    return StoreLocation(
        uri=settings.store_uri,
        endpoint=found.endpoint_url,
        region=found.region,
        access_key_id=found.access_key_id,
        secret_access_key=found.secret_access_key,
        session_token=found.session_token,
        credentials_from=found.sources.get("access_key_id"),
    )
