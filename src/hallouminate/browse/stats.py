"""``corpus_stats``: index health of one corpus, from plain data the daemon reads out of the store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from hallouminate.config import CorpusSpec
from hallouminate.indexing.walker import walk_corpus
from hallouminate.protocol.results import CorpusStatsResult, FileProblem


class IndexedFile(Protocol):
    """What the stats need of a stored file state (``storage.FileState`` has it; read-only, as it is)."""

    @property
    def indexed_at_ms(self) -> int: ...


def corpus_stats(
    spec: CorpusSpec,
    states: Mapping[str, IndexedFile],
    chunk_count: int,
    problems: Mapping[str, FileProblem] | None = None,
) -> CorpusStatsResult:
    """``{corpus, indexed_files, total_chunks, last_indexed_ms, unindexed_files, skipped_files, problems}``.

    ``states`` maps each corpus-relative path that has rows to its state, ``chunk_count`` is the corpus'
    row count, ``problems`` the file problems index runs recorded. ``last_indexed_ms`` is the newest
    ``indexed_at_ms`` and ``first_indexed_ms`` the oldest (null when nothing is indexed); ``skipped_files`` counts the files on disk that the
    last run to read them skipped (binary, empty, too large, ...: indexing again cannot help);
    ``unindexed_files`` the other files on disk (as ``list_files`` sees them) that have no rows yet.
    ``problems`` names every recorded problem of a file still on disk.
    """
    on_disk = {rel for rel, _ in walk_corpus(spec)}
    recorded = [problem for path, problem in sorted((problems or {}).items()) if path in on_disk]
    skipped = {problem["path"] for problem in recorded if not problem["indexed"]}
    return {
        "corpus": spec.name,
        "indexed_files": len(states),
        "total_chunks": chunk_count,
        "last_indexed_ms": max((s.indexed_at_ms for s in states.values()), default=None),
        "first_indexed_ms": min((s.indexed_at_ms for s in states.values()), default=None),
        "unindexed_files": sum(1 for rel in on_disk if rel not in states and rel not in skipped),
        "skipped_files": len(skipped),
        "problems": recorded,
    }
