"""``ground``: the one search entry point. Ranked mode (here): hybrid retrieval (vector + BM25, fused by
weighted RRF) rolled up per file; ``match: "phrase"`` goes to phrase.py.

Each signal ranks the chunks of all requested corpora together, so a page that leads a weak corpus does
not outrank stronger pages of another. Files are ranked by their best chunk. The repository wiki of the
request's cwd (the priority corpus) wins score ties and keeps a few reserved slots in the top_files cut.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidArgument
from hallouminate.ports import ChunkRow, QueryEmbedder, ReaderPort
from hallouminate.protocol.kb_uri import doc_uri
from hallouminate.protocol.results import (
    ChunkedDoc,
    GroundChunk,
    GroundDoc,
    GroundResult,
    GroundWarning,
    RerankInfo,
)
from hallouminate.sandbox.formats import offered
from hallouminate.search import confidence
from hallouminate.search.assembly import (
    FileEntry,
    check_params,
    corpus_keys,
    cut,
    empty_keys,
    is_stale,
    not_indexed,
    rank_files,
)
from hallouminate.search.filters import Eligibility, parse_query
from hallouminate.search.fusion import RRF_K, best_possible, pool_size, rrf_ranks, tied_ranks
from hallouminate.search.literal import LiteralEvidence
from hallouminate.search.modes import Mode
from hallouminate.search.phrase import ground_phrase
from hallouminate.search.rerank import RerankStage, rerank
from hallouminate.search.snippet import TermFinder, make_snippet
from hallouminate.search.stages import Stages

# Chosen by measurement (bench/eval_ranking.py; docs/adr/0004, 0012 and 0016): the reference's BM25 2.0 /
# k 60 let weak keyword matches bury the right page on paraphrased questions. BM25 now votes only for
# chunks holding half the query's rarity-weighted wording (search/literal.py): such votes are genuine
# keyword matches, so one counts as much as meaning (at 0.5 the one page holding a query's rare word lost
# to a block of look-alike pages; the labelled sets are flat from 0.5 to 1.25).
BM25_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0

# Ranked mode's file entry: its candidate chunks as (score on 0..1, row).
RankedFile = FileEntry[tuple[float, ChunkRow]]


@dataclass
class _Plan:
    """One checked ranked query: what is computed before searching and used after."""

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
    model: str | None = None
    unindexed: list[confidence.RareWord] | None = None
    stages: Stages | None = None
    min_ratio: float | None = None
    # The store key whose documents carry a kb:// ``uri`` (the resources' corpus), if any.
    uri_key: str | None = None

    def finish(
        self,
        vector_rows: list[ChunkRow],
        keyword_rows: list[ChunkRow],
        empty: list[str],
        fusion: Fusion | None = None,
    ) -> GroundResult:
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
            empty_corpora=[self.display[key] for key in empty],
            started=self.started,
            model=self.model,
            unindexed=self.unindexed,
            stages=self.stages,
            fusion=fusion,
            min_ratio=self.min_ratio,
            uri_key=self.uri_key,
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
    check_params(
        query,
        corpora,
        top_files=top_files,
        chunks_per_file=chunks_per_file,
        limit=limit,
        snippet_chars=snippet_chars,
    )
    keys, display, priority_key = corpus_keys(corpora, priority_corpus)
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


async def ground(
    reader: ReaderPort,
    embed_query: QueryEmbedder,
    corpora: Sequence[CorpusSpec],
    query: str,
    **params: Any,
) -> GroundResult:
    """One query over ``corpora``: searches awaited on the caller's loop, the embedding as the caller does it
    (the daemon: off its loop, batched).

    ``params``: priority_corpus, top_files, chunks_per_file, limit, snippet_chars (all required); match,
    group_by, output, footnotes (optional, see ``search/modes.py``); model (optional: the embedding
    model's name, whose cosine scale ``low_confidence`` reads; search/confidence.py); min_confidence_ratio
    (optional: adds GrooveSeek's max/mean clause to ``low_confidence``; ``confidence.ratio_setting``); rerank (optional: a
    ``RerankStage`` re-scoring the best fused candidates; search/rerank.py); mmr, mmr_lambda,
    mmr_same_doc_penalty, parent, count_tokens (optional: the post-retrieval stages, search/stages.py);
    the filters (optional, ``search/filters.py`` ``PARAMS``), applied before retrieval; uri_corpus
    (optional: the corpus whose ranked hits carry their ``kb://doc/`` uri when on offer).

    The embedding runs first, alone: on two cores, overlapping it (it keeps both cores busy) with a
    search measured slower. The vector and BM25 searches then run together (2-4 ms saved).
    """
    mode = Mode.take(params)
    model = params.pop("model", None)
    min_ratio = confidence.ratio_setting(params.pop("min_confidence_ratio", None))
    if mode.phrase and min_ratio is not None:
        raise InvalidArgument(
            'min_confidence_ratio needs match "ranked": phrase mode is literal (low_confidence there means '
            "nothing holds the phrase); drop min_confidence_ratio, or drop match",
            {"param": "min_confidence_ratio"},
        )
    uri_corpus: str | None = params.pop("uri_corpus", None)
    stage: RerankStage | None = params.pop("rerank", None)
    stages = Stages.take(params, phrase=mode.phrase)
    # Phrase mode's query is one literal phrase: no query syntax there, the filters alone.
    syntax = None if mode.phrase or not isinstance(query, str) else parse_query(query)
    eligible = Eligibility.take(params, syntax)
    if mode.phrase:  # a literal scan: the query is not embedded
        # An exact lookup (a URL in a link list, a licence line) finds what it names: the quality floor
        # applies only when the caller sets one.
        scan = eligible if eligible.quality_set else dataclasses.replace(eligible, min_quality=0.0)
        found = await ground_phrase(reader, corpora, query, mode, eligible=scan, **params)
        return _with_filters(found, eligible)
    plan = _plan(corpora, query, **params)
    plan.model = model
    plan.stages = stages
    plan.min_ratio = min_ratio
    plan.uri_key = next((spec.store_key for spec in corpora if spec.name == uri_corpus), None)
    plan.chunks_per_file = mode.candidates_per_file(plan.chunks_per_file, plan.limit)
    # What is searched: the query without its "-term" groups and quote marks (search/filters.py).
    searched = syntax.text if syntax is not None else query
    plan.terms = query_terms(searched)
    # The post-fusion stages over-fetch: their pool is drawn from each signal.
    fetch = max(plan.limit, pool_size(plan.top_files)) if stage is not None or stages.mmr else plan.limit
    vector = await embed_query(searched)
    keyword_rows: list[ChunkRow]
    if plan.terms:
        # The two searches overlap well (each is mostly fixed per-query cost in LanceDB's runtime).
        vector_rows, keyword_rows, plan.unindexed = await asyncio.gather(
            reader.vector_search(vector, plan.keys, fetch, eligible),
            reader.fts_search(plan.terms, plan.keys, fetch, eligible),
            _unindexed(reader, plan.keys, confidence.rare_words(searched, plan.terms)),
        )
    else:
        vector_rows, keyword_rows = await reader.vector_search(vector, plan.keys, fetch, eligible), []
    empty = await empty_keys(reader, plan.keys)
    vector_rows, keyword_rows = mode.view(vector_rows), mode.view(keyword_rows)
    fusion = None
    if stage is not None:
        fusion = fuse(plan.terms, vector_rows, keyword_rows)
        reranked = await rerank(searched, fusion.scores, fusion.rows, stage, plan.top_files)
        fusion.scores, fusion.rerank = reranked.scores, reranked.info
        if reranked.warning is not None:
            fusion.warnings.append(reranked.warning)
    await stages.fetch_vectors(reader, [*vector_rows, *keyword_rows], plan.keys)
    result = mode.finish(plan.finish(vector_rows, keyword_rows, empty, fusion), params["chunks_per_file"])
    result = await stages.finish(reader, result, plan.terms)
    if syntax is not None and syntax.warnings:
        result["warnings"] = [*syntax.warnings, *result["warnings"]]
    result = _with_filters(result, eligible)
    result["took_ms"] = round((time.perf_counter() - plan.started) * 1000, 3)  # the stages' time too
    return result


def _with_filters(result: GroundResult, eligible: Eligibility) -> GroundResult:
    """``filter_applied``: the filters that took effect (absent when none did)."""
    applied = eligible.applied()
    if applied:
        result["filter_applied"] = applied
    return result


async def _unindexed(
    reader: ReaderPort, keys: list[str], rare: list[confidence.RareWord] | None
) -> list[confidence.RareWord] | None:
    """The rare words no chunk of ``keys`` holds in its text: one BM25 look-up each (most queries have
    none to look up; search/confidence.py). None: not looked for."""
    if rare is None:
        return None
    found = await asyncio.gather(*(reader.fts_search([word.term], keys, 1) for word in rare))
    return [word for word, rows in zip(rare, found, strict=True) if not rows]


@dataclass
class Fusion:
    """The fused candidates: chunk id -> fused score (``scale`` is the best possible), every row by id,
    the literal evidence, the warnings so far, and what a rerank stage did to the scores."""

    scores: dict[str, float]
    scale: float
    rows: dict[str, ChunkRow]
    evidence: LiteralEvidence | None
    warnings: list[GroundWarning]
    rerank: RerankInfo | None = None


def fuse(terms: list[str], vector_rows: list[ChunkRow], keyword_rows: list[ChunkRow]) -> Fusion:
    """Fuse the vector and BM25 candidate lists by weighted RRF (pure)."""
    warnings: list[GroundWarning] = []
    lists = [tied_ranks(vector_rows)]
    weights = [VECTOR_WEIGHT]
    evidence: LiteralEvidence | None = None
    rows: dict[str, ChunkRow] = {}
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
    return Fusion(fused, scale, rows, evidence, warnings)


def assemble(
    query: str,
    terms: list[str],
    vector_rows: list[ChunkRow],
    keyword_rows: list[ChunkRow],
    names: list[str],
    *,
    priority_corpus: str | None,
    top_files: int,
    chunks_per_file: int,
    snippet_chars: int,
    empty_corpora: list[str],
    started: float,
    display: dict[str, str] | None = None,
    model: str | None = None,
    unindexed: Sequence[confidence.RareWord] | None = None,
    stages: Stages | None = None,
    fusion: Fusion | None = None,
    min_ratio: float | None = None,
    uri_key: str | None = None,
) -> GroundResult:
    """Fuse the candidate lists (unless ``fusion`` is given: fused, then reranked), roll chunks up per
    file, cut, and shape the result (pure).

    ``names`` and ``priority_corpus`` are the store keys the rows carry; ``display`` maps them to the
    corpus names shown to callers. Documents of ``uri_key`` on offer as resources carry their ``uri``.
    """
    fusion = fusion or fuse(terms, vector_rows, keyword_rows)
    warnings, fused, evidence = fusion.warnings, fusion.scores, fusion.evidence
    files = _group(fusion.rows, fused, fusion.scale, evidence)
    priority = priority_corpus if priority_corpus in names and len(names) > 1 else None
    ranked = rank_files(files, priority_corpus)
    if stages is not None and stages.mmr is not None:
        ranked = _diversified(ranked, stages.diversify(fused, fusion.rows, top_files))
    chosen = cut(ranked, top_files, priority)
    finder = TermFinder(terms)
    docs: list[GroundDoc] = [
        _doc(_describe(f), terms, finder, chunks_per_file, snippet_chars, stages, uri_key) for f in chosen
    ]
    if display:
        for doc in docs:
            doc["corpus"] = display.get(doc["corpus"], doc["corpus"])
    warnings.extend(not_indexed(empty_corpora))
    signals = confidence.signals(vector_rows, evidence, model, unindexed)
    ours = not docs or confidence.is_low(signals, model)
    # GrooveSeek's ratio clause, only when the caller set min_confidence_ratio (docs/adr/0040).
    by_ratio = confidence.ratio_is_low(vector_rows, min_ratio)
    if min_ratio is not None:
        signals["min_confidence_ratio"] = min_ratio
    low = ours or by_ratio
    if low:
        warnings.append(confidence.warning(signals, ratio_only=not ours))
    result: GroundResult = {
        "query": query,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
        "stats": {"hits": len(fused)},
        "docs": docs,
        "warnings": warnings,
        "low_confidence": low,
        "confidence": signals,
    }
    if fusion.rerank is not None:
        result["rerank"] = fusion.rerank
    return result


def _group(
    rows: dict[str, ChunkRow],
    fused: dict[str, float],
    scale: float,
    evidence: LiteralEvidence | None = None,
) -> list[RankedFile]:
    files: dict[tuple[str, str], RankedFile] = {}
    shares = evidence.shares if evidence is not None else {}
    for chunk_id, raw in fused.items():
        row = rows[chunk_id]
        key = (row["corpus"], row["path"])
        entry = files.get(key)
        if entry is None:
            # Positional (a third cheaper than keywords, for every candidate file).
            entry = files[key] = FileEntry(key[0], key[1], 0.0, [], 0.0, "", "", 0, 0, [])
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


def _diversified(ranked: list[RankedFile], picked: dict[str, int]) -> list[RankedFile]:
    """Files in mmr's order: each where its first picked chunk was picked; files with no chunk in the
    pool after them, in score order (search/mmr.py)."""
    unpicked = len(picked)

    def first_pick(entry: RankedFile) -> int:
        return min((picked.get(row["id"], unpicked) for _score, row in entry.chunks), default=unpicked)

    return sorted(ranked, key=first_pick)  # stable: score order among the unpicked


def _describe(entry: RankedFile) -> RankedFile:
    """Fill a file's own fields from its first row: done only for the files shown, not every candidate's."""
    row = entry.chunks[0][1]
    entry.abs_path = row["abs_path"]
    entry.summary = row["summary"] or ""
    entry.size = int(row["file_size"])
    entry.mtime_ns = int(row["file_mtime_ns"])
    entry.keywords = list(row.get("keywords") or [])
    return entry


def _doc(
    entry: RankedFile,
    terms: list[str],
    finder: TermFinder,
    chunks_per_file: int,
    snippet_chars: int,
    stages: Stages | None = None,
    uri_key: str | None = None,
) -> ChunkedDoc:
    chunks = entry.chunks
    # One chunk (most files): nothing to order.
    best = (
        chunks
        if len(chunks) == 1 and chunks_per_file > 0
        else sorted(chunks, key=_chunk_order)[:chunks_per_file]
    )
    doc: ChunkedDoc = {
        "corpus": entry.corpus,
        "path": entry.path,
        "absolute_path": entry.abs_path,
        "score": round(entry.score, 4),
        "summary": entry.summary,
        "keywords": entry.keywords,
        "stale": is_stale(entry),
        "chunks": [_chunk(score, row, terms, finder, snippet_chars, stages) for score, row in best],
    }
    # The resources' own predicate (sandbox.formats.offered): a hit has a uri exactly when
    # resources/list counts its document and resources/read serves it.
    if uri_key is not None and entry.corpus == uri_key and offered(entry.path, entry.size):
        doc["uri"] = doc_uri(entry.path)
    return doc


def _chunk_order(scored: tuple[float, ChunkRow]) -> tuple[float, int]:
    return -scored[0], scored[1]["line_start"]


def _chunk(
    score: float,
    row: ChunkRow,
    terms: list[str],
    finder: TermFinder,
    snippet_chars: int,
    stages: Stages | None = None,
) -> GroundChunk:
    chunk: GroundChunk = {
        "heading_path": list(row["heading_path"] or []),
        "line_start": int(row["line_start"]),
        "line_end": int(row["line_end"]),
        "score": round(score, 4),
        "snippet": make_snippet(row["text"] or "", terms, snippet_chars, finder),
    }
    page = row.get("page")
    if page is not None:
        chunk["page"] = int(page)  # PDF chunks only: line numbers are within that page's text
    symbol_kind = row.get("symbol_kind")
    if symbol_kind:  # a definition in source code; absent (never null) on every other chunk
        chunk["symbol_kind"] = symbol_kind
    quality = row.get("quality")
    if quality is not None:  # scored at index time (ADR 0029); float32 in the store, so rounded
        chunk["quality"] = round(float(quality), 2)
    if stages is not None:
        stages.remember(row, chunk)
    return chunk
