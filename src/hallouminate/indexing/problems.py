"""The per-file problems index runs found (a frontmatter error, a binary or empty page, ...), kept on disk.

Every index run (the ``index`` tool or CLI, a write's re-index, the watcher, the catch-up) goes through the
indexer, which records here what it found in each file it read and clears what it read clean. A file the
change gate does not read again (same size and mtime as stored) keeps its entry: that is why the entries
are kept at all, rather than recomputed (a page with broken frontmatter has rows, so nothing reads it again
until it changes). Skipped files have no rows, so every whole-corpus run reads them again anyway.

The file lives in the store directory beside the table (``file-problems.json``): it goes with the store
when the store is removed, and survives a daemon restart. It is written before the rows of the files it
describes are committed, so a crash in between leaves a file that the next run reads again (its rows are
not current), never a current file with its problem forgotten. JSON, rewritten whole (atomically): it holds
problems only, a few entries per corpus as a rule.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from hallouminate.protocol.results import FileProblem

log = logging.getLogger("hallouminate.indexing")

PROBLEMS_FILE = "file-problems.json"
_FORMAT = 1


class ProblemLog:
    """The recorded problems of every corpus, by store key then path; thread-safe (runs of different
    corpora record at once). Without a path (an indexer outside the daemon), kept in memory only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._corpora: dict[str, dict[str, FileProblem]] = self._read()

    def _read(self) -> dict[str, dict[str, FileProblem]]:
        if self.path is None:
            return {}
        try:
            raw: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # Lost entries come back for skipped files at the next run; a frontmatter error at its next edit.
            log.warning("ignoring the file problems recorded in %s: %s", self.path, exc)
            return {}
        if (
            not isinstance(raw, dict)
            or raw.get("format") != _FORMAT
            or not isinstance(raw.get("corpora"), dict)
        ):
            log.warning(
                "ignoring the file problems recorded in %s: not a format this version reads", self.path
            )
            return {}
        return cast(dict[str, dict[str, FileProblem]], raw["corpora"])

    def get(self, corpus: str) -> dict[str, FileProblem]:
        with self._lock:
            return dict(self._corpora.get(corpus, {}))

    def all(self) -> dict[str, list[FileProblem]]:
        with self._lock:
            return {
                corpus: [entries[path] for path in sorted(entries)]
                for corpus, entries in sorted(self._corpora.items())
                if entries
            }

    def update(self, corpus: str, found: Mapping[str, FileProblem], cleared: Iterable[str]) -> None:
        """Record ``found`` and forget ``cleared`` (files read clean, or gone); written only on a change."""
        with self._lock:
            entries = self._corpora.setdefault(corpus, {})
            before = dict(entries)
            for path in cleared:
                entries.pop(path, None)
            entries.update(found)
            if not entries:
                del self._corpora[corpus]
            if entries != before:
                self._write()

    def _write(self) -> None:
        if self.path is None:
            return
        data = json.dumps({"format": _FORMAT, "corpora": self._corpora}, ensure_ascii=False, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".file-problems.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(data)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            # The index itself is fine; only the report of its problems is not kept past this daemon.
            log.warning("could not record file problems in %s: %s", self.path, exc)
