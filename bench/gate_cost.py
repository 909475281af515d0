"""The cost of the literal gate and the snippets per query, alone (no daemon, no search in the timing).

Indexes the labelled sets' wikis (bench/eval_ranking.py's sets) in a temp store with the real model, runs
each query's two searches once, then times, on those rows, what ``assemble`` spends on the query's words:

- gate: ``LiteralEvidence`` over every candidate row (vector and BM25 rows) and its BM25 votes;
- snippets: ``TermFinder`` and ``make_snippet`` for the chunks a default ``ground`` shows (the first
  ``top_files`` files' ``chunks_per_file`` chunks, in vector order: the same number of chunks);
- assemble: the whole of ``assemble`` (fusion, roll-up, cut, gate, snippets), for scale.

Each query is timed once ("first": what the query costs before anything it reads is cached, the queries
run in order as a freshly started daemon would) and then ``--repeat`` times, keeping the best (noise on a
busy machine only adds); the figures are the median and the mean over queries, in microseconds. The rows are timed as stored (these
wikis are ASCII) and in two rewritten forms, to price the paths a non-ASCII text takes: ``typographic``
(curly quotes and apostrophes, em dashes, a non-breaking space: punctuation only) and ``accented`` (each
chunk also holds accented letters, "Café naïve déjà vu").

Usage: .venv/bin/python bench/gate_cost.py [--set eval|heldout|sample|all] [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import CORPUS, load_set
from hallouminate import xdg
from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search.ground import assemble
from hallouminate.search.literal import LiteralEvidence
from hallouminate.search.snippet import TermFinder, make_snippet
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

Rows = list[dict[str, Any]]


def typographic(text: str) -> str:
    return (
        text.replace("'", "\u2019")
        .replace('"', "\u201d")
        .replace(" - ", " \u2014 ")
        .replace(". ", ".\xa0", 1)
    )


def accented(text: str) -> str:
    return f"{text}\nCaf\u00e9 na\u00efve d\u00e9j\u00e0 vu."


VARIANTS: dict[str, Callable[[str], str]] = {
    "ascii": lambda text: text,
    "typographic": typographic,
    "accented": accented,
}


def rewrite(rows: Rows, change: Callable[[str], str]) -> Rows:
    return [{**row, "text": change(row["text"] or "")} for row in rows]


def shown(rows: Rows, top_files: int, chunks_per_file: int) -> Rows:
    """The chunks a ground of these rows would show: per file in first-seen order, a few chunks each."""
    per_file: dict[str, Rows] = {}
    for row in rows:
        chunks = per_file.setdefault(row["path"], [])
        if len(per_file) <= top_files and len(chunks) < chunks_per_file:
            chunks.append(row)
    return [row for chunks in list(per_file.values())[:top_files] for row in chunks]


def best_of(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best * 1e6


async def _searches(
    store: Store, embedder: Embedder, spec: CorpusSpec, queries: list[dict[str, Any]], limit: int
) -> list[tuple[str, list[str], Rows, Rows]]:
    """Each query's two candidate lists, read as the daemon reads them (its AsyncReader)."""
    reader = AsyncReader(store)
    out = []
    for q in queries:
        terms = query_terms(q["query"])
        vector_rows = await reader.vector_search(embedder.embed_query(q["query"]), [spec.store_key], limit)
        keyword_rows = await reader.fts_search(terms, [spec.store_key], limit) if terms else []
        out.append((q["query"], terms, vector_rows, keyword_rows))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=("eval", "heldout", "sample", "all"), default="all")
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    names = ("eval", "heldout", "sample") if opts.set == "all" else (opts.set,)
    cases: list[tuple[str, list[str], Rows, Rows]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            wiki, queries = load_set(name)
            store = Store(Path(tmp) / name, embedder.dim)
            spec = CorpusSpec(CORPUS, "custom", (wiki,), ("**/*.md",), (), None)
            Indexer(store, embedder, settings).index_corpus(spec)
            cases.extend(asyncio.run(_searches(store, embedder, spec, queries, settings.limit)))
    print(
        f"{len(cases)} queries ({', '.join(names)}), limit {settings.limit}, top_files {settings.top_files}, "
        f"chunks_per_file {settings.chunks_per_file}, snippet_chars {settings.snippet_chars}; best of "
        f"{opts.repeat}, microseconds per query"
    )
    print(f"{'rows':12s} {'part':15s} {'median':>8s} {'mean':>8s}")
    for variant, change in VARIANTS.items():
        timings: dict[str, list[float]] = {}
        for part in ("gate", "snippets", "assemble"):
            timings[f"{part} first"], timings[part] = [], []
        for query, words, vector_rows, keyword_rows in cases:
            vector_rows, keyword_rows = rewrite(vector_rows, change), rewrite(keyword_rows, change)
            to_show = shown(vector_rows, settings.top_files, settings.chunks_per_file)

            def gate(
                words: list[str] = words, vector_rows: Rows = vector_rows, keyword_rows: Rows = keyword_rows
            ) -> object:
                return (
                    LiteralEvidence(words, [*vector_rows, *keyword_rows]).votes(keyword_rows) if words else []
                )

            def snippets(words: list[str] = words, to_show: Rows = to_show) -> object:
                finder = TermFinder(words)
                return [
                    make_snippet(row["text"] or "", words, settings.snippet_chars, finder) for row in to_show
                ]

            def whole(
                query: str = query,
                words: list[str] = words,
                vector_rows: Rows = vector_rows,
                keyword_rows: Rows = keyword_rows,
            ) -> object:
                return assemble(
                    query,
                    words,
                    vector_rows,
                    keyword_rows,
                    [CORPUS],
                    priority_corpus=None,
                    top_files=settings.top_files,
                    chunks_per_file=settings.chunks_per_file,
                    snippet_chars=settings.snippet_chars,
                    empty_corpora=[],
                    started=time.perf_counter(),
                )

            for part, work in (("gate", gate), ("snippets", snippets), ("assemble", whole)):
                # The first run pays for anything cached across queries (as a daemon's first queries do).
                timings[f"{part} first"].append(best_of(1, work))
                timings[part].append(best_of(opts.repeat, work))
        for part, values in timings.items():
            print(f"{variant:12s} {part:15s} {statistics.median(values):8.1f} {statistics.mean(values):8.1f}")


if __name__ == "__main__":
    main()
