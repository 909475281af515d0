"""Progress for long daemon work: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

    from hallouminate.protocol.results import ProgressEvent


class IndexProgress:
    """Receives the daemon's progress events for ``index`` and shows them.

    Events marked ``waiting_for`` are those of a run of the corpus that was already going (another
    ``index``, the daemon's catch-up or its watcher): said once, then shown as that run's bar.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._bar: tqdm[Any] | None = None
        self._corpus: str | None = None
        self._last_line = 0.0

    def __call__(self, event: ProgressEvent) -> None:
        corpus, done, total = event.get("corpus"), int(event.get("done", 0)), int(event.get("total", 0))
        waiting = event.get("waiting_for")
        # One segment per corpus and phase: the run waited for, then this call's own pass.
        segment = f"{corpus} (running {waiting})" if waiting else str(corpus)
        if waiting and segment != self._corpus:
            self.close()
            print(
                f"an index run of {corpus} ({_STARTED_BY.get(waiting, waiting)}) is already going: waiting "
                "for it, then checking the corpus again",
                file=self.stream,
                flush=True,
            )
        if self.tty:
            from tqdm import tqdm

            if self._bar is None or segment != self._corpus:
                self.close()
                self._bar = tqdm(total=total, desc=segment, unit="file", file=self.stream, leave=True)
                self._corpus = segment
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
            return
        now = time.monotonic()
        # Plain lines are rate-limited so a log is not flooded, but the last one always shows.
        if segment != self._corpus or done >= total or now - self._last_line >= 1.0:
            self._corpus = segment
            self._last_line = now
            print(f"indexing {segment}: {done}/{total} files", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


_STARTED_BY = {
    "index": "another index call",
    "catch-up": "the daemon's catch-up of edits made while it was not running",
    "watcher": "the daemon's watcher, after many files changed",
}
