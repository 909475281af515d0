"""``ground``: hybrid retrieval (vector + BM25, fused by weighted RRF) rolled up per file.

Each signal ranks the chunks of all requested corpora together, so a page that leads a weak corpus does
not outrank stronger pages of another. Files are ranked by their best chunk. The repository wiki of the
request's cwd (the priority corpus) wins score ties and keeps a few reserved slots in the top_files cut.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidParams
from hallouminate.indexing.ports import AsyncReaderPort, EmbedderPort, StorePort
from hallouminate.search.fusion import RRF_K, best_possible, rrf_ranks, tied_ranks
from hallouminate.search.literal import LiteralEvidence
from hallouminate.search.modes import Mode
from hallouminate.search.snippet import TermFinder, make_snippet

# Chosen by measurement (bench/eval_ranking.py; docs/adr/0004, 0012 and 0016): the reference's BM25 2.0 /
# k 60 let weak keyword matches bury the right page on paraphrased questions. BM25 now votes only for
# chunks holding half the query's rarity-weighted wording (search/literal.py): such votes are genuine
# keyword matches, so one counts as much as meaning (at 0.5 the one page holding a query's rare word lost
# to a block of look-alike pages; the labelled sets are flat from 0.5 to 1.25).
BM25_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
MAX_QUERY_CHARS = 4096
# Inclusive bounds of the numeric parameters.
BOUNDS = {
    "top_files": (1, 1000),
    "chunks_per_file": (1, 100),
    "limit": (1, 1000),
    "snippet_chars": (16, 10_000),
}


@dataclass
class _Plan:
    """One checked query: what both the sync and the async paths compute before and after searching."""

    query: str
    terms: list[str]
    keys: list[str]
    display: dict[str, str]
    priority_key: str | None
    top_files: int
    chunks_per_file: int
    limit: int
    snippet_chars: int
    started: float

    def finish(
        self, vector_rows: list[dict[str, Any]], keyword_rows: list[dict[str, Any]], empty_keys: list[str]
    ) -> dict[str, Any]:
        return assemble(
            self.query,
            self.terms,
            vector_rows,
            keyword_rows,
            self.keys,
            priority_corpus=self.priority_key,
            display=self.display,
            top_files=self.top_files,
            chunks_per_file=self.chunks_per_file,
            snippet_chars=self.snippet_chars,
            empty_corpora=[self.display[key] for key in empty_keys],
            started=self.started,
        )


def _plan(
    corpora: Sequence[CorpusSpec],
    query: str,
    *,
    priority_corpus: str | None,
    top_files: int,
    chunks_per_file: int,
    limit: int,
    snippet_chars: int,
) -> _Plan:
    started = time.perf_counter()
    _check_params(
        query,
        corpora,
        top_files=top_files,
        chunks_per_file=chunks_per_file,
        limit=limit,
        snippet_chars=snippet_chars,
    )
    keys, display, priority_key = _keys(corpora, priority_corpus)
    return _Plan(
        query,
        query_terms(query),
        keys,
        display,
        priority_key,
        top_files,
        chunks_per_file,
        limit,
        snippet_chars,
        started,
    )


def ground(
    store: StorePort,
    embedder: EmbedderPort,
    corpora: Sequence[CorpusSpec],
    query: str,
    **params: Any,
) -> dict[str, Any]:
    """The whole query through the synchronous store API (used in-process: tests, benchmarks).

    ``params``: priority_corpus, top_files, chunks_per_file, limit, snippet_chars (all required); match,
    group_by, output (optional, see ``search/modes.py``).
    """
    mode = Mode.take(params)
    if mode.phrase:
        from hallouminate.search.phrase import ground_phrase  # it imports this module

        return ground_phrase(store, corpora, query, mode, **params)
    plan = _plan(corpora, query, **params)
    mode.widen(plan)
    vector_rows = store.vector_search(embedder.embed_query(query), plan.keys, plan.limit)
    keyword_rows = store.fts_search(plan.terms, plan.keys, plan.limit) if plan.terms else []
    count = getattr(store, "count_rows", None)
    empty = [key for key in plan.keys if count is not None and count(key) == 0]
    vector_rows, keyword_rows = mode.view(vector_rows), mode.view(keyword_rows)
    return mode.finish(plan.finish(vector_rows, keyword_rows, empty), params["chunks_per_file"])


async def ground_async(
    reader: AsyncReaderPort,
    embed_query: Callable[[str], Awaitable[Any]],
    corpora: Sequence[CorpusSpec],
    query: str,
    **params: Any,
) -> dict[str, Any]:
    """The same query for the daemon: searches awaited on its loop, the embedding off it.

    The embedding runs first, alone: on two cores, overlapping it (it keeps both cores busy) with a
    search measured slower. The vector and BM25 searches then run together (2-4 ms saved).
    """
    mode = Mode.take(params)
    if mode.phrase:  # a literal scan: the query is not embedded
        from hallouminate.search.phrase import ground_phrase_async  # it imports this module

        return await ground_phrase_async(reader, corpora, query, mode, **params)
    plan = _plan(corpora, query, **params)
    mode.widen(plan)
    vector = await embed_query(query)
    if plan.terms:
        # The two searches overlap well (each is mostly fixed per-query cost in LanceDB's runtime).
        vector_rows, keyword_rows = await asyncio.gather(
            reader.vector_search(vector, plan.keys, plan.limit),
            reader.fts_search(plan.terms, plan.keys, plan.limit),
        )
    else:
        vector_rows, keyword_rows = await reader.vector_search(vector, plan.keys, plan.limit), []
    empty = [key for key in plan.keys if await reader.count_rows(key) == 0]
    vector_rows, keyword_rows = mode.view(vector_rows), mode.view(keyword_rows)
    return mode.finish(plan.finish(vector_rows, keyword_rows, empty), params["chunks_per_file"])


def assemble(
    query: str,
    terms: list[str],
    vector_rows: list[dict[str, Any]],
    keyword_rows: list[dict[str, Any]],
    names: list[str],
    *,
    priority_corpus: str | None,
    top_files: int,
    chunks_per_file: int,
    snippet_chars: int,
    empty_corpora: list[str],
    started: float,
    display: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Fuse the candidate lists, roll chunks up per file, cut, and shape the result (pure).

    ``names`` and ``priority_corpus`` are the store keys the rows carry; ``display`` maps them to the
    corpus names shown to callers.
    """
    warnings: list[dict[str, str]] = []
    lists = [tied_ranks(vector_rows)]
    weights = [VECTOR_WEIGHT]
    evidence: LiteralEvidence | None = None
    rows: dict[str, dict[str, Any]] = {}
    if terms:
        # BM25 votes only for chunks holding at least half of the query's wording, words weighted by
        # their rarity among the rows both searches returned (search/literal.py).
        evidence = LiteralEvidence(terms, [*vector_rows, *keyword_rows])
        rows = evidence.rows  # every row by id, first occurrence kept: as built below otherwise
        lists.append(tied_ranks(evidence.votes(keyword_rows)))
        weights.append(BM25_WEIGHT)
    else:
        warnings.append(
            {
                "code": "vector-only",
                "message": "the query has no searchable words (only stop words or punctuation); "
                "results are ranked by meaning alone",
            }
        )
    fused = rrf_ranks(lists, weights, RRF_K)
    # Scores are reported on 0..1: 1.0 means first in every signal that returned anything.
    scale = best_possible([w for w, ranked in zip(weights, lists, strict=True) if ranked], RRF_K) or 1.0
    if evidence is None:
        for row in [*vector_rows, *keyword_rows]:
            rows.setdefault(row["id"], row)

    files = _group(rows, fused, scale, evidence)
    priority = priority_corpus if priority_corpus in names and len(names) > 1 else None
    ranked = _rank(files, priority_corpus)
    chosen = _cut(ranked, top_files, priority)
    finder = TermFinder(terms)
    docs = [_doc(_describe(f), terms, finder, chunks_per_file, snippet_chars) for f in chosen]
    if display:
        for doc in docs:
            doc["corpus"] = display.get(doc["corpus"], doc["corpus"])
    warnings.extend(_unindexed(empty_corpora))
    return {
        "query": query,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
        "stats": {"hits": len(fused)},
        "docs": docs,
        "warnings": warnings,
    }


def _keys(
    corpora: Sequence[CorpusSpec], priority: str | None
) -> tuple[list[str], dict[str, str], str | None]:
    """Store keys to search (one per distinct corpus), their display names, and the priority's key.

    Rows are stored under ``store_key`` (name + roots) so two checkouts of one repository never mix.
    """
    display = {spec.store_key: spec.name for spec in corpora}
    keys = list(display)
    priority_key = next((spec.store_key for spec in corpora if spec.name == priority), None)
    return keys, display, priority_key


def _check_params(query: str, corpora: Sequence[CorpusSpec], **numbers: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InvalidParams("query must not be empty", {"param": "query"})
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidParams(
            f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}", {"param": "query"}
        )
    if not corpora:
        raise InvalidParams("no corpus to search", {"corpora": []})
    for name, value in numbers.items():
        low, high = BOUNDS[name]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise InvalidParams(
                f"{name} must be an integer from {low} to {high}, got {value!r}", {"param": name}
            )


@dataclass(slots=True)
class _File:
    corpus: str
    path: str
    # A file's own fields: _group leaves them empty and ``_describe`` fills them for the files shown.
    abs_path: str = ""
    summary: str = ""
    size: int = 0
    mtime_ns: int = 0
    score: float = 0.0
    chunks: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    # The rarity-weighted share of the query's words its best-scoring chunk holds: settles score ties.
    literal: float = 0.0


def _group(
    rows: dict[str, dict[str, Any]],
    fused: dict[str, float],
    scale: float,
    evidence: LiteralEvidence | None = None,
) -> list[_File]:
    files: dict[tuple[str, str], _File] = {}
    shares = evidence.shares if evidence is not None else {}
    for chunk_id, raw in fused.items():
        row = rows[chunk_id]
        key = (row["corpus"], row["path"])
        entry = files.get(key)
        if entry is None:
            # Positional (a third cheaper than keywords, for every candidate file).
            entry = files[key] = _File(key[0], key[1], "", "", 0, 0, 0.0, [], [], 0.0)
        score = raw / scale
        entry.chunks.append((score, row))
        # The literal share only settles ties, so it is looked up only when this chunk may lead its file.
        if score >= entry.score:
            literal = shares.get(chunk_id)
            if literal is None:
                literal = evidence.coverage(row) if evidence is not None else 0.0
            if score > entry.score or literal > entry.literal:
                entry.score, entry.literal = score, literal
    return list(files.values())


def _rank(files: list[_File], priority: str | None) -> list[_File]:
    # Ties: the priority corpus first, then the page holding more of the query's wording (a keyword hit
    # tied with a page only close in meaning), then corpus and path, so equal scores always list the same
    # way. Phrase mode ranks its own file type (no literal share: every hit holds the phrase) with this.
    return sorted(
        files,
        key=lambda f: (-f.score, f.corpus != priority, -getattr(f, "literal", 0.0), f.corpus, f.path),
    )


def reserved_slots(top_files: int) -> int:
    return max(1, top_files // 4)


def _cut(ranked: list[_File], top_files: int, priority: str | None) -> list[_File]:
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


def _describe(entry: _File) -> _File:
    """Fill a file's own fields from its first row: done only for the files shown, not every candidate's."""
    row = entry.chunks[0][1]
    entry.abs_path = row["abs_path"]
    entry.summary = row["summary"] or ""
    entry.size = int(row["file_size"])
    entry.mtime_ns = int(row["file_mtime_ns"])
    entry.keywords = list(row.get("keywords") or [])
    return entry


def _doc(
    entry: _File, terms: list[str], finder: TermFinder, chunks_per_file: int, snippet_chars: int
) -> dict[str, Any]:
    chunks = entry.chunks
    # One chunk (most files): nothing to order.
    best = (
        chunks
        if len(chunks) == 1 and chunks_per_file > 0
        else sorted(chunks, key=_chunk_order)[:chunks_per_file]
    )
    return {
        "corpus": entry.corpus,
        "path": entry.path,
        "absolute_path": entry.abs_path,
        "score": round(entry.score, 4),
        "summary": entry.summary,
        "keywords": entry.keywords,
        "stale": _stale(entry),
        "chunks": [_chunk(score, row, terms, finder, snippet_chars) for score, row in best],
    }


def _chunk_order(scored: tuple[float, dict[str, Any]]) -> tuple[float, int]:
    return -scored[0], scored[1]["line_start"]


def _chunk(
    score: float, row: dict[str, Any], terms: list[str], finder: TermFinder, snippet_chars: int
) -> dict[str, Any]:
    chunk = {
        "heading_path": list(row["heading_path"] or []),
        "line_start": int(row["line_start"]),
        "line_end": int(row["line_end"]),
        "score": round(score, 4),
        "snippet": make_snippet(row["text"] or "", terms, snippet_chars, finder),
    }
    if row.get("page") is not None:
        chunk["page"] = int(row["page"])  # PDF chunks only: line numbers are within that page's text
    return chunk


def _stale(entry: _File) -> bool:
    """The file on disk differs (size or mtime) from what was indexed, or is gone."""
    try:
        st = os.stat(entry.abs_path)
    except OSError:
        return True
    return st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns


def _unindexed(empty: list[str]) -> list[dict[str, str]]:
    if not empty:
        return []
    return [
        {
            "code": "not-indexed",
            "message": f"corpus {', '.join(repr(n) for n in empty)} has nothing indexed yet: run "
            "`hallouminate index` (or the index tool) after adding pages",
        }
    ]
