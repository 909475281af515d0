"""BM25 over the chunks' text, held in memory by tantivy (docs/adr/0017-lexical-index-in-memory.md).

The store's table is the source of truth; this index is derived from it. The ``Store`` builds it from
the table when it opens and updates it after each commit of its own, so a crash (which loses the
memory) can never leave the two out of step: the next start rebuilds it.

Measured on 2 cores: LanceDB's built-in FTS cost ~1.8 ms per query on an 85-row table (its fixed
per-query cost) and ~5 ms with the corpus filter and result columns; tantivy answers in ~0.05 ms there
and ~0.15 ms on 100k chunks with the corpus filter.

Text is analysed by the one analyser of search (``analysis.py``, ADR 0019): split on non-alphanumerics,
drop tokens of 40 bytes or more, lower-case, fold to ASCII, drop stop words, stem (English Snowball).
A search looks up the tokens that analyser gave the query, so BM25, the literal gate, snippets and
keywords agree on what a word matches.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import tantivy

from hallouminate.analysis import build_analyzer, cjk_spaced, term_tokens

ANALYZER = "hallouminate_en"
# What the index reads of a row.
LEXICAL_COLUMNS = ["id", "corpus", "path", "text"]
# Rows added per batch when the index is built from the table (bounds the text held at once).
BUILD_BATCH = 4096
# The writer's indexing memory before it flushes a segment; tantivy's floor is 15 MB per thread.
WRITER_HEAP_BYTES = 32_000_000
# A filtered search's first fetch of hits to check against its files, at most (then larger while short).
FETCH_MAX = 20_000


def file_key(corpus: str, path: str) -> str:
    # JSON keeps the two parts unambiguous whatever characters names and paths contain (as row ids do).
    return json.dumps([corpus, path], ensure_ascii=False)


@dataclass(frozen=True)
class Scope:
    """What a filtered BM25 search may match, applied inside tantivy (never to a fixed pool of hits): per
    corpus of ``files``, only its files in ``files_in`` (None: any) and none of ``files_out`` (file keys,
    ``file_key``); no
    chunk holding all tokens of any group of ``exclude``; only chunks holding every token of ``require``."""

    files: Mapping[str, tuple[Sequence[str] | None, Sequence[str]]] = field(default_factory=dict)
    exclude: Sequence[Sequence[str]] = ()
    # Each quoted phrase as the analyser's tokens, consecutive in a chunk (a phrase query).
    require: Sequence[Sequence[str]] = field(default=())


def page_number(corpus: str, path: str) -> int:
    """A file's number in the index's ``page`` fast field: 63 bits of a hash of its key (a collision
    between two files of one store, ~n^2 / 2^64, would only let one through a filter meant for the
    other's pages; the hits' rows are checked against the filter's mask all the same)."""
    digest = hashlib.blake2b(file_key(corpus, path).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class _Snapshot:
    """The index as of one commit: its searcher, and per set of corpora whether they hold every chunk."""

    searcher: tantivy.Searcher
    covers: dict[frozenset[str], bool] = field(default_factory=dict)


class LexicalIndex:
    """Chunks by id, searchable by BM25 within a set of corpora. Thread-safe: one writer at a time,
    searches on immutable snapshots."""

    def __init__(self) -> None:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("id", stored=True, tokenizer_name="raw")
        builder.add_text_field("corpus", stored=False, tokenizer_name="raw")
        builder.add_text_field("file", stored=False, tokenizer_name="raw")
        builder.add_text_field("text", stored=False, tokenizer_name=ANALYZER)
        # The file's number (``page_number``), read in bulk for a filtered search's hits.
        builder.add_unsigned_field("page", stored=False, indexed=False, fast=True)
        self._schema = builder.build()
        self._index = tantivy.Index(self._schema)  # no path: in memory
        self._index.register_tokenizer(ANALYZER, build_analyzer())
        self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        self._lock = threading.Lock()
        # Replaced after each commit (under the lock), never changed: a search reads one consistent pair.
        self._snapshot = _Snapshot(self._index.searcher())

    # -- writes (each commits, then the next search sees it) -----------------------------------------
    def add(self, rows: pa.Table) -> None:
        """Index ``rows`` (columns id, corpus, path, text), in batches, in one commit."""
        with self._lock:
            self._add(rows)
            self._commit()

    def add_batches(self, batches: Iterable[pa.RecordBatch]) -> None:
        """Index a stream of batches (columns as ``add``) in one commit, holding one batch at a time."""
        with self._lock:
            for batch in batches:
                self._add(pa.Table.from_batches([batch]))
            self._commit()

    def replace_files(self, corpus: str, paths: Iterable[str], rows: pa.Table | None) -> None:
        """Every chunk of ``paths`` becomes ``rows`` (None or no rows: the files are deleted)."""
        with self._lock:
            for path in paths:
                self._writer.delete_documents_by_term("file", file_key(corpus, path))
            if rows is not None:
                self._add(rows)
            self._commit()

    def delete_corpus(self, corpus: str) -> None:
        with self._lock:
            self._writer.delete_documents_by_term("corpus", corpus)
            self._commit()

    def _add(self, rows: pa.Table) -> None:
        for batch in rows.select(LEXICAL_COLUMNS).to_batches(BUILD_BATCH):
            ids, corpora, paths, texts = (batch.column(i).to_pylist() for i in range(4))
            for row_id, corpus, path, text in zip(ids, corpora, paths, texts, strict=True):
                document = tantivy.Document(
                    id=row_id, corpus=corpus, file=file_key(corpus, path), text=cjk_spaced(text or "")
                )
                document.add_unsigned("page", page_number(corpus, path))  # typed: a keyword int is an i64
                self._writer.add_document(document)

    def _commit(self) -> None:
        self._writer.commit()
        self._index.reload()
        self._snapshot = _Snapshot(self._index.searcher())

    # -- reads ---------------------------------------------------------------------------------------
    def search(
        self,
        terms: Sequence[str],
        corpora: Sequence[str],
        limit: int,
        scope: Scope | None = None,
        pages: Container[int] | None = None,
        share: float = 1.0,
    ) -> list[tuple[str, float]]:
        """(row id, BM25 score) of the best ``limit`` chunks of ``corpora`` holding any token of ``terms``
        (``analysis.query_terms``: tokens, looked up as they are, not analysed again), within ``scope``,
        and of a file whose ``page_number`` is in ``pages`` (None: any).

        ``pages`` is checked on the hits by the ``page`` fast field, in bulk (no stored document read for
        a hit left out); ``share`` (the fraction of chunks expected to pass) sizes the first fetch, and a
        fetch four times larger follows while too few pass and more hits remain."""
        tokens = term_tokens(terms)
        if not tokens or not corpora or limit <= 0:
            return []
        text = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", t)) for t in tokens]
        )
        within = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, self._corpus_query(c, scope)) for c in corpora]
        )
        snapshot = self._snapshot
        searcher = snapshot.searcher
        clauses = [(tantivy.Occur.Must, text)]
        # The corpus clause filters without scoring (a constant 0 adds nothing to any chunk's BM25). When the
        # corpora hold every chunk and the scope names no files, it filters nothing and costs 3x the query
        # (1M chunks: 36 -> 12 ms p50): left out.
        files = scope.files if scope is not None else {}
        narrowed = any(
            files.get(c, (None, ()))[0] is not None or files.get(c, (None, ()))[1] for c in corpora
        )
        if narrowed or not self._covers(snapshot, corpora):
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(within, 0.0)))
        if scope is not None:
            clauses.extend(self._scope_clauses(scope))
        query = tantivy.Query.boolean_query(clauses)
        if pages is None:
            hits = searcher.search(query, limit).hits
            return [(searcher.doc(address)["id"][0], float(score)) for score, address in hits]
        fetch = max(limit, min(int(limit / max(share, 1e-4) * 1.5), FETCH_MAX))
        while True:
            hits = searcher.search(query, fetch, count=False).hits
            numbers = searcher.fast_field_values("page", [address for _, address in hits])
            kept = [(score, address) for (score, address), n in zip(hits, numbers, strict=True) if n in pages]
            if len(kept) >= limit or len(hits) < fetch:
                return [(searcher.doc(address)["id"][0], float(score)) for score, address in kept[:limit]]
            fetch *= 4

    def _covers(self, snapshot: _Snapshot, corpora: Sequence[str]) -> bool:
        """Whether ``corpora`` hold every live chunk of ``snapshot`` (counted once per commit)."""
        key = frozenset(corpora)
        covers = snapshot.covers.get(key)
        if covers is None:
            within = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "corpus", c)) for c in key]
            )
            found: Any = snapshot.searcher.search(within, 1, count=True)  # ``count``: not in tantivy's stubs
            held = found.count
            covers = snapshot.covers[key] = int(held or 0) >= int(snapshot.searcher.num_docs)
        return covers

    def _corpus_query(self, corpus: str, scope: Scope | None) -> tantivy.Query:
        """A corpus's chunks, within its file set when the scope restricts it (a file set is one term-set
        query: cheap at any size)."""
        query = tantivy.Query.term_query(self._schema, "corpus", corpus)
        files_in, files_out = scope.files.get(corpus, (None, ())) if scope is not None else (None, ())
        if files_in is None and not files_out:
            return query
        clauses = [(tantivy.Occur.Must, query)]
        if files_in is not None:
            files = tantivy.Query.term_set_query(self._schema, "file", list(files_in))
            clauses.append((tantivy.Occur.Must, files))
        if files_out:
            files = tantivy.Query.term_set_query(self._schema, "file", list(files_out))
            clauses.append((tantivy.Occur.MustNot, files))
        return tantivy.Query.boolean_query(clauses)

    def _scope_clauses(self, scope: Scope) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        """The text rules' clauses, none of them scoring."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for group in scope.exclude:
            held = [(tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "text", t)) for t in group]
            clauses.append((tantivy.Occur.MustNot, tantivy.Query.boolean_query(held)))
        for tokens in scope.require:
            required = (
                tantivy.Query.phrase_query(self._schema, "text", list(tokens))
                if len(tokens) > 1
                else tantivy.Query.term_query(self._schema, "text", tokens[0])
            )
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(required, 0.0)))
        return clauses

    def text_candidates(self, corpora: Sequence[str], scope: Scope, cap: int) -> list[str] | None:
        """Ids of the chunks of ``corpora`` the scope's text rules let through (none of its excluded
        terms; its phrases' words consecutive), or None when that may be more than ``cap`` chunks.

        The bound comes from document frequencies alone (no search): a chunk holding a phrase holds each
        of its tokens, and at most the chunks not holding an excluded token pass. A vector search then
        ranks only these (excluding a word nearly every chunk holds, or a rare phrase, would otherwise
        mean checking the text of most of the corpus); past ``cap`` passing chunks are dense enough to be
        found by checking candidates in score order."""
        searcher = self._index.searcher()
        bound = int(searcher.num_docs)
        for group in scope.exclude:
            if len(group) == 1:
                bound = min(bound, bound - int(searcher.doc_freq("text", group[0])))
        for tokens in scope.require:
            bound = min([bound, *(int(searcher.doc_freq("text", t)) for t in tokens)])
        if bound > cap:
            return None
        if bound <= 0:
            return []
        within = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, self._corpus_query(c, scope)) for c in corpora]
        )
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, within), *self._scope_clauses(scope)])
        hits = searcher.search(query, bound, count=False).hits
        return [searcher.doc(address)["id"][0] for _score, address in hits]

    def holding(self, runs: Sequence[Sequence[str]], corpora: Sequence[str], cap: int) -> list[str] | None:
        """Ids of the chunks of ``corpora`` holding each of ``runs`` (index tokens, looked up as they are,
        each run's at consecutive positions), or None when they are more than ``cap`` chunks (a scan of
        every row is then as cheap)."""
        if not any(runs) or not corpora:
            return None
        within = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "corpus", c)) for c in corpora]
        )
        held = [
            (
                tantivy.Occur.Must,
                tantivy.Query.phrase_query(self._schema, "text", list(run))
                if len(run) > 1
                else tantivy.Query.term_query(self._schema, "text", run[0]),
            )
            for run in runs
            if run
        ]
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, within), *held])
        searcher = self._index.searcher()
        hits = searcher.search(query, cap + 1, count=False).hits
        if len(hits) > cap:
            return None
        return [searcher.doc(address)["id"][0] for _score, address in hits]

    def has_file(self, corpus: str, path: str) -> bool:
        """Whether any chunk of the file may be indexed. Never False for an indexed file; may be True for a
        deleted one until tantivy merges its segments (document frequencies count deleted documents)."""
        return int(self._index.searcher().doc_freq("file", file_key(corpus, path))) > 0

    def num_docs(self) -> int:
        return int(self._index.searcher().num_docs)
