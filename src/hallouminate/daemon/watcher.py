"""Keep every known corpus current: watch its roots and re-index what changes, after a short debounce.

Repository wikis are the common case and are watched like any other corpus. A root that disappears is
polled until it comes back, then caught up in full. Watching holds no connection, so it never keeps the
daemon from its idle exit.

A watch is on a directory, not a path: when the root is removed or renamed away, the kernel reports it once
(watchfiles: the root itself ``deleted``) and the watch then goes silent or follows the moved directory,
without an error, even if a new directory appears at the path at once. So that report, or the path naming
another directory than the one watched (checked after each batch and every ``ROOT_CHECK_MS`` without one),
ends the watch: it is armed again on whatever is at the path, and a full pass catches up what happened
meanwhile. The report is needed: a directory removed and made again at once often gets the freed inode
number back (ext4 does), so (st_dev, st_ino) alone would see no change; without the report (a process
still inside the old directory delays it) the old directory is alive and its number not reusable.

The stats it makes run in worker threads. Arming a root's recursive watch (watchfiles walks the whole
tree) still holds the interpreter lock for the walk, wherever it runs: ~0.4 s for 10,000 directories
measured, once per root when it is first watched (and again when it is replaced).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.errors import HallouminateError

log = logging.getLogger("hallouminate.daemon")

# Events are gathered for this long after the last one (an editor's save is several events).
DEBOUNCE_MS = 250
# How often a missing root is looked for.
ROOT_POLL_SECS = 1.0
# A root whose watch cannot be armed (watchfiles raised) is tried again after a pause doubling up to this:
# each try walks the whole tree.
MAX_RETRY_SECS = 60.0
# How often, with no events, a watched root's path is checked to still name the directory watched.
ROOT_CHECK_MS = 1000
# Above this many changed paths in one batch, a full (change-gated) pass is cheaper and surer.
MAX_PATHS_PER_BATCH = 200

OnPaths = Callable[[CorpusSpec, list[str]], Awaitable[None]]
OnCorpus = Callable[[CorpusSpec], Awaitable[None]]
Identity = tuple[int, int]


def _identity(root: Path) -> Identity | None:
    """The directory at ``root`` now (device, inode), or None when there is none."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _any_directory(root: Path, rels: list[str]) -> bool:
    return any((root / rel).is_dir() for rel in rels)


def _relative(root: Path, changed: str) -> str | None:
    try:
        rel = Path(changed).relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    # Version-control internals and editors' hidden scratch files are not content.
    if not parts or any(part.startswith(".") and part != ".hallouminate" for part in parts):
        return None
    return rel.as_posix()


class CorpusWatcher:
    def __init__(self, on_paths: OnPaths, on_corpus: OnCorpus) -> None:
        self._on_paths = on_paths
        self._on_corpus = on_corpus
        self._specs: dict[str, CorpusSpec] = {}
        self._tasks: dict[Path, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()

    @property
    def roots(self) -> list[Path]:
        return sorted(self._tasks)

    def watch(self, spec: CorpusSpec) -> None:
        """Start watching the roots of ``spec`` (idempotent; a changed spec replaces the old one)."""
        self._specs[spec.store_key] = spec
        for root in spec.roots:
            if root not in self._tasks and not self._stop.is_set():
                self._tasks[root] = asyncio.get_running_loop().create_task(self._watch_root(root))

    def _specs_for(self, root: Path) -> list[CorpusSpec]:
        return [spec for spec in self._specs.values() if root in spec.roots]

    async def _watch_root(self, root: Path) -> None:
        from watchfiles import Change, awatch

        # Set while the root is gone or after it was replaced: a full pass is due once it is watched again
        # (not at the first watch: the start-up catch-up or the request that showed us the corpus covers it).
        catch_up = False
        failure = ""
        retry = ROOT_POLL_SECS
        while not self._stop.is_set():
            armed = await asyncio.to_thread(_identity, root)
            if armed is None:
                catch_up = True
                await self._pause(ROOT_POLL_SECS)
                continue
            try:
                watching = awatch(
                    root,
                    stop_event=self._stop,
                    debounce=DEBOUNCE_MS,
                    step=50,
                    recursive=True,
                    rust_timeout=ROOT_CHECK_MS,
                    yield_on_timeout=True,  # an empty batch every ROOT_CHECK_MS without events
                )
                # Closed on leaving the loop: watchfiles' thread and inotify descriptor go now, not when
                # the generator is collected.
                async with contextlib.aclosing(watching):
                    async for changes in watching:
                        failure, retry = "", ROOT_POLL_SECS
                        lost = any(
                            change == Change.deleted and Path(path) == root for change, path in changes
                        )
                        now = await asyncio.to_thread(_identity, root)
                        if lost or now != armed:
                            log.info("%s was removed or replaced; watching what is there now", root)
                            catch_up = True
                            if now is None:  # gone: its files leave search now, not when it is back
                                await self._dispatch(root, {path for _, path in changes})
                            break
                        if catch_up:
                            # Something yielded, so the new watch is armed: a pass now misses nothing.
                            catch_up = False
                            for spec in self._specs_for(root):
                                await self._guarded(self._on_corpus(spec), spec)
                        else:
                            await self._dispatch(root, {path for _, path in changes})
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                if str(exc) != failure:  # said once, not at every retry
                    log.info("watching %s stopped (%s); trying again", root, exc)
                failure = str(exc)
                catch_up = True
                await self._pause(retry)
                retry = min(retry * 2, MAX_RETRY_SECS)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _dispatch(self, root: Path, changed: set[str]) -> None:
        rels = sorted({rel for path in changed if (rel := _relative(root, path)) is not None})
        if not rels:
            return
        # A changed directory (a rename or removal of a folder) does not list the files inside it.
        whole = len(rels) > MAX_PATHS_PER_BATCH or await asyncio.to_thread(_any_directory, root, rels)
        for spec in self._specs_for(root):
            if whole:
                await self._guarded(self._on_corpus(spec), spec)
            else:
                await self._guarded(self._on_paths(spec, rels), spec)

    async def _guarded(self, job: Awaitable[None], spec: CorpusSpec) -> None:
        try:
            await job
        except asyncio.CancelledError:
            raise
        except HallouminateError as exc:  # explained (a store refusing to mix vectors, an endpoint down)
            log.warning("re-indexing %s after a change failed: %s", spec.name, exc.message)
        except Exception:  # one failed refresh must not end the watch
            log.exception("re-indexing %s after a change failed", spec.name)

    async def close(self) -> None:
        self._stop.set()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
