"""Progress for long daemon work: a bar on a terminal, plain lines otherwise; both with a rate and an ETA."""

from __future__ import annotations

import shutil
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

    The measure is the bytes of the files the run reads when the events carry them (files differ in size,
    and unchanged ones cost nothing, so a count of files makes a poor ETA); files otherwise.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._bar: tqdm[Any] | None = None
        self._bar_unit = ""
        self._corpus: str | None = None
        self._last_line = 0.0
        self._rate = _Rate()

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
        bytes_total = int(event.get("bytes_total", 0))
        by_bytes = bytes_total > 0
        now = time.monotonic()
        if segment != self._corpus:
            self._rate = _Rate()
        if self.tty:
            self._show_bar(segment, event, done, total, by_bytes)
            return
        measured_done, measured_total = (
            (int(event.get("bytes_done", 0)), bytes_total) if by_bytes else (done, total)
        )
        rate, eta = self._rate.update(now, measured_done, measured_total)
        # Plain lines are rate-limited so a log is not flooded, but the last one always shows.
        if segment != self._corpus or done >= total or now - self._last_line >= 1.0:
            self._corpus = segment
            self._last_line = now
            line = f"indexing {segment}: {done}/{total} files"
            if by_bytes:
                line += f", {_size(measured_done)}/{_size(measured_total)} read"
                if "chunks_done" in event:
                    line += f", {event['chunks_done']} chunks"
                speed = f"{_size(rate)}/s" if rate is not None else "rate unknown yet"
            else:
                speed = f"{rate:.1f} files/s" if rate is not None else "rate unknown yet"
            print(f"{line}, {speed}, ETA {_clock(eta)}", file=self.stream, flush=True)

    def _show_bar(self, segment: str, event: ProgressEvent, done: int, total: int, by_bytes: bool) -> None:
        from tqdm import tqdm

        unit = "B" if by_bytes else "file"
        if self._bar is None or segment != self._corpus or unit != self._bar_unit:
            self.close()
            # tqdm shows the rate and the ETA (remaining at the smoothed rate) itself. The size is given:
            # tqdm reads a terminal that reports none (a fresh pty: 0 x 0) as 0 rows and draws nothing;
            # shutil falls back to $COLUMNS and $LINES, then 80 x 24.
            size = shutil.get_terminal_size()
            self._bar = tqdm(
                ncols=size.columns,
                nrows=size.lines,
                total=int(event.get("bytes_total", 0)) if by_bytes else total,
                desc=segment,
                unit=unit,
                unit_scale=by_bytes,
                file=self.stream,
                leave=True,
            )
            self._bar_unit = unit
            self._corpus = segment
        if by_bytes:
            self._bar.total = int(event.get("bytes_total", 0))
            self._bar.n = int(event.get("bytes_done", 0))
            self._bar.set_postfix_str(f"{done}/{total} files", refresh=False)
        else:
            self._bar.total = total
            self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class _Rate:
    """Rate since the first event of a segment, and the time left at that rate."""

    def __init__(self) -> None:
        self.first: tuple[float, int] | None = None

    def update(self, now: float, done: int, total: int) -> tuple[float | None, float | None]:
        if self.first is None:
            self.first = (now, done)
            return None, None
        elapsed, progressed = now - self.first[0], done - self.first[1]
        if elapsed <= 0 or progressed <= 0:
            return None, None
        rate = progressed / elapsed
        return rate, max(0, total - done) / rate


def _size(n_bytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "unknown yet"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


_STARTED_BY = {
    "index": "another index call",
    "catch-up": "the daemon's catch-up of edits made while it was not running",
    "watcher": "the daemon's watcher, after many files changed",
}
