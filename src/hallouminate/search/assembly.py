"""What ranked mode (ground.py) and phrase mode (phrase.py) share in turning hits into a result (domain).

The request's checks and store keys, the file entry both roll their hits up into, the ranking and the
``top_files`` cut with the priority corpus's reserved slots, the stale check and the not-indexed warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidArgument, NotFound
from hallouminate.ports import ReaderPort
from hallouminate.protocol import limits
from hallouminate.protocol.results import GroundWarning, IndexingState, UnindexedCorpus

# The published bounds (protocol/limits.py): the schema, the config and the engine read one table.
MAX_QUERY_CHARS = limits.QUERY_CHARS.high
# Inclusive bounds of the numeric parameters.
BOUNDS = {bound.name: (bound.low, bound.high) for bound in limits.SEARCH_SETTINGS}

C = TypeVar("C")
F = TypeVar("F", bound="FileEntry[Any]")


def check_params(query: str, corpora: Sequence[CorpusSpec], **numbers: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("query must not be empty", {"param": "query"})
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(
            f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}", {"param": "query"}
        )
    if not corpora:
        raise NotFound("no corpus to search", {"corpora": []})
    for name, value in numbers.items():
        low, high = BOUNDS[name]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise InvalidArgument(
                f"{name} must be an integer from {low} to {high}, got {value!r}", {"param": name}
            )


def corpus_keys(
    corpora: Sequence[CorpusSpec], priority: str | None
) -> tuple[list[str], dict[str, str], str | None]:
    """Store keys to search (one per distinct corpus), their display names, and the priority's key.

    Rows are stored under ``store_key`` (name + roots) so two checkouts of one repository never mix.
    """
    display = {spec.store_key: spec.name for spec in corpora}
    keys = list(display)
    priority_key = next((spec.store_key for spec in corpora if spec.name == priority), None)
    return keys, display, priority_key


@dataclass(slots=True)
class FileEntry(Generic[C]):
    """A file's hits, ``chunks`` of the mode's own kind: ranked mode's (score, row), phrase mode's
    (occurrences, row index)."""

    corpus: str
    path: str
    score: float = 0.0
    chunks: list[C] = field(default_factory=list)
    # Ranked mode: the rarity-weighted share of the query's words its best-scoring chunk holds, which
    # settles score ties. Phrase mode leaves it at 0 (every hit holds the whole phrase).
    literal: float = 0.0
    # A file's own fields: left empty while ranking, filled for the files shown.
    abs_path: str = ""
    summary: str = ""
    size: int = 0
    mtime_ns: int = 0
    keywords: list[str] = field(default_factory=list)


def rank_files(files: list[F], priority: str | None) -> list[F]:
    # Ties: the priority corpus first, then the page holding more of the query's wording (a keyword hit
    # tied with a page only close in meaning), then corpus and path, so equal scores always list the same
    # way.
    return sorted(files, key=lambda f: (-f.score, f.corpus != priority, -f.literal, f.corpus, f.path))


def reserved_slots(top_files: int) -> int:
    return max(1, top_files // 4)


def cut(ranked: list[F], top_files: int, priority: str | None) -> list[F]:
    """The first ``top_files``, with up to ``reserved_slots`` kept for the priority corpus' best pages."""
    chosen = ranked[:top_files]
    if priority is None:
        return chosen
    want = min(reserved_slots(top_files), sum(1 for f in ranked if f.corpus == priority))
    have = sum(1 for f in chosen if f.corpus == priority)
    if have >= want:
        return chosen
    extra = [f for f in ranked[top_files:] if f.corpus == priority][: want - have]
    # Drop the weakest non-priority pages to make room, then restore the score order.
    keep = list(chosen)
    for _ in extra:
        weakest = max(i for i, f in enumerate(keep) if f.corpus != priority)
        keep.pop(weakest)
    order = {id(f): i for i, f in enumerate(ranked)}
    return sorted([*keep, *extra], key=lambda f: order[id(f)])


def is_stale(entry: FileEntry[Any]) -> bool:
    """The file on disk differs (size or mtime) from what was indexed, or is gone."""
    try:
        st = os.stat(entry.abs_path)
    except OSError:
        return True
    return st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns


async def empty_keys(reader: ReaderPort, keys: list[str]) -> list[str]:
    """The store keys with no row: named in the not-indexed warning."""
    return [key for key in keys if await reader.count_rows(key) == 0]


def not_indexed(empty: list[str], indexing: Mapping[str, IndexingState] | None = None) -> list[GroundWarning]:
    """The not-indexed warning: the corpora searched with no row yet (``empty``), and those an index run
    is bringing up to date now (``indexing``, by name: the answer did not wait for it), with its counts."""
    indexing = indexing or {}
    names = [*empty, *(name for name in indexing if name not in empty)]
    if not names:
        return []
    corpora: list[UnindexedCorpus] = []
    parts: list[str] = []
    for name in names:
        entry: UnindexedCorpus = {"corpus": name, "empty": name in empty, "indexing": name in indexing}
        state = indexing.get(name)
        if state is None:
            parts.append(
                f"corpus {name!r} has nothing indexed yet: run `hallouminate index` (or the "
                "index tool) after adding pages"
            )
        else:
            entry["files_done"], entry["files_total"] = state["files_done"], state["files_total"]
            total = "?" if state["files_total"] is None else str(state["files_total"])
            counts = f"{state['files_done']}/{total} files compared"
            if name in empty:
                parts.append(
                    f"corpus {name!r} has nothing indexed yet and is being indexed now "
                    f"({counts}): search again when it is done"
                )
            else:
                parts.append(
                    f"corpus {name!r} is being indexed now ({counts}): this answer comes from "
                    "what was indexed before, and may miss or misrank pages changed since"
                )
        corpora.append(entry)
    return [{"code": "not-indexed", "message": "; ".join(parts), "corpora": corpora}]


def with_indexing(
    warnings: list[GroundWarning], indexing: Mapping[str, IndexingState]
) -> list[GroundWarning]:
    """``warnings`` with the not-indexed warning also naming the corpora being indexed now."""
    empty: list[str] = []
    kept: list[GroundWarning] = []
    for warning in warnings:
        if warning["code"] == "not-indexed":
            empty.extend(c["corpus"] for c in warning.get("corpora", []) if c["empty"])
        else:
            kept.append(warning)
    return [*kept, *not_indexed(empty, indexing)]
