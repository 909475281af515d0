"""What the daemon holds: the store, the embedder, per-corpus write locks; and the engine calls it makes.

Blocking engine work (embedding, LanceDB) runs in worker threads so the event loop keeps answering,
e.g. ``ping`` during a long ``index``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hallouminate import __version__
from hallouminate.config import CorpusSpec, Resolved, Settings, corpus_for, resolve
from hallouminate.errors import HallouminateError, Internal, InvalidParams

if TYPE_CHECKING:
    from hallouminate.embedding import Embedder
    from hallouminate.indexing import Indexer
    from hallouminate.storage import Store
    from hallouminate.storage.reader import AsyncReader

log = logging.getLogger("hallouminate.daemon")

Emit = Callable[[str, dict[str, Any]], None]


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.version = __version__
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._indexer: Indexer | None = None
        self._reader: AsyncReader | None = None
        self._load_error: HallouminateError | None = None
        self._load_lock = threading.Lock()
        self._loading: asyncio.Future[None] | None = None
        self._corpus_locks: dict[str, asyncio.Lock] = {}
        # Corpora whose files were compared with the store since this daemon started (catch-up done).
        self._caught_up: set[str] = set()

    # -- loading -----------------------------------------------------------------------------------
    def _load(self) -> None:
        with self._load_lock:
            if self._indexer is not None:
                return
            from hallouminate.embedding import Embedder
            from hallouminate.indexing import Indexer
            from hallouminate.storage import Store
            from hallouminate.storage.reader import AsyncReader

            started = time.perf_counter()
            embedder = Embedder(self.settings.model_cache_dir, self.settings.model_name)
            store = Store(self.settings.store_dir, embedder.dim, model_name=self.settings.model_name)
            self._embedder, self._store = embedder, store
            self._reader = AsyncReader(store)
            self._indexer = Indexer(store, embedder, self.settings)
            log.info("model and store loaded in %.2f s", time.perf_counter() - started)

    def start_background_load(self) -> None:
        # Loaded ahead of the first request so that it does not pay the start-up cost.
        self._loading = asyncio.get_running_loop().create_task(self._ensure_loaded())
        # Its failure is recorded and reported to requests; retrieve it so asyncio does not log it again.
        self._loading.add_done_callback(lambda task: task.cancelled() or task.exception())

    async def _ensure_loaded(self) -> None:
        if self._indexer is not None:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def work() -> None:
            try:
                self._load()
            except BaseException as exc:
                # Bound now: the name `exc` is unset when the except block ends.
                loop.call_soon_threadsafe(lambda error=exc: done.done() or done.set_exception(error))
            else:
                loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))

        # A daemon thread, not the executor: a stop during the first load must not wait for it to finish.
        threading.Thread(target=work, name="hallouminate-load", daemon=True).start()
        try:
            await done
            self._load_error = None
        except HallouminateError as exc:
            self._load_error = exc
            log.error("load failed: %s", exc.message)
            raise
        except Exception as exc:
            log.exception("load failed")
            self._load_error = Internal(f"could not load the model or the store: {type(exc).__name__}: {exc}")
            raise self._load_error from exc

    async def _engine(self) -> tuple[Store, Embedder, Indexer]:
        # A failed load is retried on each request: the user may have run `hallouminate model install`.
        await self._ensure_loaded()
        assert self._store is not None and self._embedder is not None and self._indexer is not None
        return self._store, self._embedder, self._indexer

    def _lock(self, corpus: str) -> asyncio.Lock:
        return self._corpus_locks.setdefault(corpus, asyncio.Lock())

    # -- operations --------------------------------------------------------------------------------
    def _resolve(self, cwd: Path) -> Resolved:
        return resolve(cwd)

    async def _index_corpus(self, spec: CorpusSpec, emit: Emit | None) -> dict[str, Any]:
        _, _, indexer = await self._engine()
        progress = None
        if emit is not None:

            def progress(data: dict[str, Any]) -> None:
                emit("progress", data)

        async with self._lock(spec.name):
            report = await asyncio.to_thread(indexer.index_corpus, spec, progress)
        self._caught_up.add(spec.name)
        return report

    async def index(self, cwd: Path, corpus: str | None, emit: Emit | None) -> dict[str, Any]:
        started = time.perf_counter()
        resolved = self._resolve(cwd)
        if corpus is not None:
            specs = [corpus_for(resolved, corpus)]
        else:
            specs = list(resolved.corpora.values())
            if not specs:
                raise _no_corpora(cwd)
        reports = [await self._index_corpus(spec, emit) for spec in specs]
        return {"corpora": reports, "seconds": round(time.perf_counter() - started, 3), "warnings": []}

    async def ground(self, cwd: Path, args: dict[str, Any]) -> dict[str, Any]:
        from hallouminate.search import ground_async

        resolved = self._resolve(cwd)
        corpus = args.get("corpus")
        if corpus is not None:
            specs = [corpus_for(resolved, corpus)]
        else:
            specs = list(resolved.corpora.values())
            if not specs:
                raise _no_corpora(cwd)
        _, embedder, _ = await self._engine()
        # First sight of a corpus since start: bring it up to date with edits made while we were down.
        for spec in specs:
            if spec.name not in self._caught_up:
                await self._index_corpus(spec, None)
        s = self.settings
        assert self._reader is not None

        async def embed_query(text: str) -> Any:
            return await asyncio.to_thread(embedder.embed_query, text)

        return await ground_async(
            self._reader,
            embed_query,
            specs,
            args["query"],
            priority_corpus=resolved.default_corpus,
            top_files=args.get("top_files", s.top_files),
            chunks_per_file=args.get("chunks_per_file", s.chunks_per_file),
            limit=args.get("limit", s.limit),
            snippet_chars=args.get("snippet_chars", s.snippet_chars),
        )

    def status(self) -> dict[str, Any]:
        if self._indexer is not None:
            model = "loaded"
        elif self._load_error is not None:
            model = f"failed: {self._load_error.message}"
        else:
            model = "loading"
        return {
            "version": self.version,
            "pid": os.getpid(),
            "model": model,
            "model_name": self.settings.model_name,
            "model_cache_dir": str(self.settings.model_cache_dir),
            "store_dir": str(self.settings.store_dir),
        }

    async def close(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()


def _no_corpora(cwd: Path) -> InvalidParams:
    return InvalidParams(
        f"no corpus is configured for {cwd}: run `hallouminate init-repo NAME` in the repository, or add a "
        "[[corpus]] to the baseline config",
        {"corpora": []},
    )
