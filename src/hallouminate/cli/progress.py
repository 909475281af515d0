"""Progress for long daemon work: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

    from hallouminate.protocol.results import ProgressEvent


class IndexProgress:
    """Receives the daemon's progress events for ``index`` and shows them."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._bar: tqdm[Any] | None = None
        self._corpus: str | None = None
        self._last_line = 0.0

    def __call__(self, event: ProgressEvent) -> None:
        corpus, done, total = event.get("corpus"), int(event.get("done", 0)), int(event.get("total", 0))
        if self.tty:
            from tqdm import tqdm

            if self._bar is None or corpus != self._corpus:
                self.close()
                self._bar = tqdm(total=total, desc=str(corpus), unit="file", file=self.stream, leave=True)
                self._corpus = corpus
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
            return
        now = time.monotonic()
        # Plain lines are rate-limited so a log is not flooded, but the last one always shows.
        if corpus != self._corpus or done >= total or now - self._last_line >= 1.0:
            self._corpus = corpus
            self._last_line = now
            print(f"indexing {corpus}: {done}/{total} files", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
