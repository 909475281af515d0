"""The GrooveSeek face's ``search`` (domain): GrooveSeek's parameters mapped onto ``ground``, and ground's
ranked files turned into GrooveSeek's flat list of chunk hits. No search of its own: ``ground`` ranks.

Mapping (docs/grooveseek-face.md, "search"): ``limit`` (default 5, clamped silently to 1-1000) chunks are
drawn from the best ``min(limit, 100)`` files, each contributing at most its ``chunks_per_file`` best
chunks (``[search] chunks_per_file``, 3 by default), each signal drawing ``max(limit, [search] limit)``
candidates. Hits are ranked by their chunk's score; ties keep ground's order (file rank, then the file's
own chunk order), so the first hit of each page lists pages exactly in ground's order, and an evaluation
reading pages from the hits scores what it scores on ``ground`` (docs/evaluation.md, "The GrooveSeek
face"). With ``mmr`` the pages are in mmr's order: hits take each page's best chunk in that order, then
each page's second, and so on (the diversity mmr chose is kept at the head of the list).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, cast

from hallouminate.errors import InvalidArgument
from hallouminate.ports import ChunkRow, ReaderPort
from hallouminate.protocol import limits
from hallouminate.protocol.arguments import GroundArgs, SearchArgs
from hallouminate.protocol.results import (
    ChunkedDoc,
    FilterApplied,
    GroundChunk,
    GroundResult,
    SearchHit,
    SearchResult,
)
from hallouminate.search.filters import category_topic, frontmatter, frontmatter_strings

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Passed to ground unchanged: the same names and meanings on both faces.
_SAME = (
    "corpus",
    "category",
    "topic",
    "path_globs",
    "tags_any",
    "tags_all",
    "fields",
    "fields_not",
    "include_low_quality",
    "rerank",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
)


@dataclass(frozen=True)
class SearchPlan:
    """One face search, checked: the ``ground`` request, how many hits to keep, and whether a filter
    already excludes every document (GrooveSeek's dates compare as strings: one that is not YYYY-MM-DD,
    or a from after a to, matches nothing; the search then does not run)."""

    ground: GroundArgs
    limit: int
    nothing: FilterApplied | None = None


def plan(args: SearchArgs, candidates: int) -> SearchPlan:
    """Map GrooveSeek's ``search`` arguments onto ``ground``'s; ``candidates``: the configured candidates
    per signal (``[search] limit``), the least each signal draws."""
    query = args["query"]
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > limits.GROOVESEEK_QUERY_BYTES:
        raise InvalidArgument(
            f"query is {size} bytes of UTF-8; the limit is {limits.GROOVESEEK_QUERY_BYTES}: shorten it",
            {"param": "query", "bytes": size, "limit": limits.GROOVESEEK_QUERY_BYTES},
        )
    bound = limits.GROOVESEEK_LIMIT
    asked = args.get("limit")
    limit = bound.default if asked is None else min(max(int(asked), bound.low), bound.high)
    assert limit is not None  # the range has a default
    ground: dict[str, Any] = {
        "query": query,
        "top_files": min(limit, limits.TOP_FILES.high),
        "limit": min(max(limit, candidates), limits.LIMIT.high),
        "min_confidence_ratio": args.get("min_confidence_ratio", limits.MIN_CONFIDENCE_RATIO_DEFAULT),
    }
    for name in _SAME:
        if name in args:
            ground[name] = args[name]  # type: ignore[literal-required]
    if args.get("parent_retriever"):
        ground["parent"] = True
    quality = args.get("min_quality")
    if quality is not None:
        # GrooveSeek clamps it to 0-1; a non-finite one is its default.
        value = float(quality)
        ground["min_quality"] = min(max(value, 0.0), 1.0) if math.isfinite(value) else None
        if ground["min_quality"] is None:
            del ground["min_quality"]
    date_from, date_to = args.get("date_from"), args.get("date_to")
    for name in ("date_from", "date_to"):
        if name in args:
            ground[name] = args[name]  # type: ignore[literal-required]
    dates = {k: v for k, v in (("date_from", date_from), ("date_to", date_to)) if v is not None}
    if any(not _DATE.fullmatch(d) for d in dates.values()) or (date_from and date_to and date_from > date_to):
        return SearchPlan(cast(GroundArgs, ground), limit, cast(FilterApplied, dates))
    return SearchPlan(cast(GroundArgs, ground), limit)


def nothing(plan: SearchPlan) -> SearchResult:
    """The answer when a date filter excludes every document: no hit, and low confidence (nothing found)."""
    return {"results": [], "low_confidence": True, "filter_applied": plan.nothing or {}}


async def search_hits(
    reader: ReaderPort, result: GroundResult, store_keys: Mapping[str, str], limit: int
) -> SearchResult:
    """``result``'s chunks as GrooveSeek's flat hits, the best ``limit``; ``store_keys``: corpus display
    name -> store key (each shown page's rows are read for its frontmatter and chunk texts)."""
    docs = [doc for doc in result["docs"] if "chunks" in doc]
    flat = [(i, j, chunk) for i, doc in enumerate(docs) for j, chunk in enumerate(doc["chunks"])]
    if "mmr" in result:
        flat.sort(key=lambda entry: (entry[1], entry[0]))  # each page's best chunk in mmr's page order first
    else:
        flat.sort(key=lambda entry: -entry[2]["score"])  # stable: ground's order among equal scores
    pages: dict[int, list[ChunkRow]] = {}
    hits: list[SearchHit] = []
    for i, _j, chunk in flat[:limit]:
        doc = docs[i]
        if i not in pages:
            key = store_keys.get(doc["corpus"], doc["corpus"])
            pages[i] = await reader.page_rows(key, doc["path"])
        hits.append(_hit(doc, chunk, pages[i]))
    return {
        "results": hits,
        "low_confidence": bool(result.get("low_confidence", not hits)),
        "filter_applied": result.get("filter_applied") or cast(FilterApplied, {}),
    }


def _hit(doc: ChunkedDoc, chunk: GroundChunk, rows: list[ChunkRow]) -> SearchHit:
    front = frontmatter(rows[0].get("fields") if rows else None)
    path = doc["path"]
    _category, topic = category_topic(path, front)
    heading_path = chunk["heading_path"]
    hit: SearchHit = {
        "score": chunk["score"],
        "path": path,
        "title": page_title(path, front, rows),
        "heading": heading_path[-1] if heading_path else None,
        "heading_path": list(heading_path),
        "topic": topic,
        "date": _date(front.get("date")),
        "tags": list(frontmatter_strings(front.get("tags"))),
        "content": chunk.get("text", _stored_text(chunk, rows)),
    }
    if "match_spans" in chunk:
        hit["match_spans"] = chunk["match_spans"]
    if "expanded_from" in chunk:
        hit["expanded_from"] = chunk["expanded_from"]
    if "symbol_kind" in chunk:  # GrooveSeek's source-code keys: on a definition's chunk, absent elsewhere
        hit["start_line"] = chunk["line_start"]
        hit["end_line"] = chunk["line_end"]
        hit["symbol_kind"] = chunk["symbol_kind"]
    uri = cast(Mapping[str, Any], doc).get("uri")  # ranked hits' kb:// link, when the doc carries one
    if isinstance(uri, str):
        hit["uri"] = uri
    return hit


def page_title(path: str, front: Mapping[str, Any], rows: list[ChunkRow]) -> str:
    """A page's title: its frontmatter ``title``, else its first heading, else its file name's stem."""
    title = front.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    first = (rows[0].get("heading_path") or []) if rows else []
    if first:
        return first[0]
    return PurePosixPath(path).stem


def _date(raw: Any) -> str | None:
    if raw is None or isinstance(raw, bool):
        return None
    return raw if isinstance(raw, str) else str(raw)


def _stored_text(chunk: GroundChunk, rows: list[ChunkRow]) -> str:
    """The chunk's whole stored text: the page's row with its lines (and PDF page). A commit between the
    search and this read may have re-cut the page: the snippet is then what is left to show."""
    for row in rows:
        if (
            row["line_start"] == chunk["line_start"]
            and row["line_end"] == chunk["line_end"]
            and row.get("page") == chunk.get("page")
        ):
            return row.get("text") or ""
    return chunk["snippet"]
