"""`ground` latency with each stage on, as a ratio to plain `ground` in the same run, at 10k and 100k chunks.

A synthetic corpus is written straight to a real store (the product's ``Store``: LanceDB plus the in-memory
BM25 index) and searched in-process through the product's ``ground`` over the daemon's ``AsyncReader``, as
the daemon serves it. Pages are ``catNN/topNN/pageN.md`` with frontmatter (tags, date, status, owner) and
chunks of words drawn from a Zipf vocabulary; vectors are random unit vectors of the model's dimension
(the matrix product costs what it costs with real ones). Queries are embedded once each by the real model
and the embeddings reused: the figures are the search alone, without the query embedding (a constant
~5-10 ms per call that would only shrink every ratio).

``STAGES`` maps a stage name to the ``ground`` parameters it adds to a query (a callable may rewrite the
query itself): add a stage there and it is measured and reported with the others. Each round runs every
stage once in a shuffled order on the same query, so load drifts hit all stages alike.

Stores are kept in ``bench/out/ground_stages/`` and reused when their chunk count matches (building 100k
chunks takes a few minutes; ``--rebuild`` forces it).

Usage: .venv/bin/python bench/ground_stages.py [--chunks 10000 100000] [--rounds 60] [--seed 7]
       [--markdown docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, percentile

CHUNKS_PER_PAGE = 10
WORDS_PER_CHUNK = 60
VOCABULARY = 6000
CATEGORIES = 100  # category "cat00" holds 1% of the pages: a selective filter
TOPICS = 10
TAGS = 50
OWNERS = 100
STATUSES = ("published", "published", "published", "draft", "archived")
# A word every page's text draws often (negated: excludes most chunks) and one it rarely draws.
SEARCH_LIMIT = 50
MARK_START = "<!-- ground_stages:start -->"
MARK_END = "<!-- ground_stages:end -->"

Stage = dict[str, Any] | Callable[[str], dict[str, Any]]
# name -> the ground parameters a stage adds ("query" rewrites the query). Plain is the baseline.
STAGES: dict[str, Stage] = {
    "plain": {},
    "category (1%)": {"category": "cat00"},
    "path_globs (50%)": {"path_globs": [f"cat{i:02d}/**" for i in range(50)]},
    "topic (10%)": {"topic": "top3"},
    "path_globs (1%)": {"path_globs": ["cat01/**"]},
    "path_globs (broad, !1%)": {"path_globs": ["!cat01/**"]},
    "tags_any (~4%)": {"tags_any": ["tag07"]},
    "tags_any (broad)": {"tags_any": [f"tag{i:02d}" for i in range(40)]},
    "tags_all (~0.1%)": {"tags_all": ["tag07", "tag08"]},
    "date (1 month)": {"date_from": "2024-03-01", "date_to": "2024-03-31"},
    "date (broad)": {"date_from": "2020-02-01"},
    "fields (1%)": {"fields": {"owner": ["owner03"]}},
    "fields_not (broad)": {"fields_not": {"status": ["archived"]}},
    "combined (selective)": {
        "category": "cat02",
        "tags_any": ["tag01", "tag02", "tag03"],
        "date_from": "2021-01-01",
    },
    "min_quality 0.5": {"min_quality": 0.5},
    "include_low_quality": {"include_low_quality": True},
    "negation (common word)": lambda q: {"query": f"{q} -{_word(0)}"},
    "negation (rare word)": lambda q: {"query": f"{q} -{_word(VOCABULARY - 1)}"},
    "quoted phrase": lambda q: {"query": f'"{" ".join(q.split()[:2])}" {" ".join(q.split()[2:])}'},
    # The post-retrieval stages (search/stages.py). Rerank needs a cross-encoder, none of which can be
    # installed here: bench/rerank.py measures it with a stand-in of the same size.
    "mmr": {"mmr": True},
    "mmr (same-doc penalty 0.3)": {"mmr": True, "mmr_same_doc_penalty": 0.3},
    "parent": {"parent": True},
}

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "di", "fa", "gu", "he"]


def _word(rank: int) -> str:
    """The vocabulary's word of Zipf rank ``rank`` (0 = the commonest): letters only, so one token each."""
    out = []
    n = rank + 1
    while n:
        n, digit = divmod(n, len(_SYLLABLES))
        out.append(_SYLLABLES[digit])
    return "w" + "".join(out) + "x"


def _page_rows(
    rng: random.Random, index: int, dim: int, np: Any, draw: Callable[[int], list[int]]
) -> tuple[str, list[dict[str, Any]]]:
    category = f"cat{rng.randrange(CATEGORIES):02d}"
    path = f"{category}/top{rng.randrange(TOPICS)}/page{index}.md"
    tags = sorted({f"tag{rng.randrange(TAGS):02d}" for _ in range(2)})
    date = f"{rng.randrange(2020, 2026)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    front = json.dumps(
        {
            "tags": tags,
            "date": date,
            "status": rng.choice(STATUSES),
            "owner": f"owner{rng.randrange(OWNERS):02d}",
        }
    )
    vectors = np.random.default_rng(index).standard_normal((CHUNKS_PER_PAGE, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = []
    for k in range(CHUNKS_PER_PAGE):
        text = " ".join(_word(r) for r in draw(WORDS_PER_CHUNK))
        rows.append(
            {
                "abs_path": f"/bench/{path}",
                "heading_path": [f"Page {index}", f"Section {k}"],
                "line_start": 1 + 5 * k,
                "line_end": 5 + 5 * k,
                "text": text,
                "summary": f"Page {index}",
                "content_hash": f"h{index}",
                "file_size": 5000,
                "file_mtime_ns": 1,
                "vector": vectors[k],
                "fields": front,
                # A page's last chunk scores low (as a lone heading would): the default floor drops 10%.
                "quality": 0.1 if k == CHUNKS_PER_PAGE - 1 else 1.0,
            }
        )
    return path, rows


def bench_spec() -> Any:
    from hallouminate.config import CorpusSpec

    return CorpusSpec("bench", "custom", (Path("/bench"),), ("**/*.md",), (), None)


def _marker(chunks: int, dim: int) -> dict[str, Any]:
    from hallouminate.storage.schema import SCHEMA_VERSION

    return {"chunks": chunks, "dim": dim, "schema": SCHEMA_VERSION}


def build_store(path: Path, chunks: int, dim: int, seed: int, rebuild: bool) -> Any:
    import numpy as np

    from hallouminate.storage import Store

    marker = path / "chunks.json"
    if not rebuild and marker.exists() and json.loads(marker.read_text()) == _marker(chunks, dim):
        return Store(path / "db", dim)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    store = Store(path / "db", dim)
    rng = random.Random(seed)
    weights = np.array([1.0 / (r + 1) for r in range(VOCABULARY)])
    cumulative = np.cumsum(weights / weights.sum())
    nrng = np.random.default_rng(seed)

    def draw(n: int) -> list[int]:
        return np.searchsorted(cumulative, nrng.random(n)).tolist()  # type: ignore[no-any-return]

    pages = chunks // CHUNKS_PER_PAGE
    started = time.perf_counter()
    batch: dict[str, list[dict[str, Any]]] = {}
    for index in range(pages):
        page, rows = _page_rows(rng, index, dim, np, draw)
        batch[page] = rows
        if len(batch) == 512 or index == pages - 1:
            store.replace_files(bench_spec().store_key, batch)  # type: ignore[arg-type]
            batch = {}
            print(
                f"  built {index + 1}/{pages} pages ({time.perf_counter() - started:.0f} s)", file=sys.stderr
            )
    store.optimize()
    marker.write_text(json.dumps(_marker(chunks, dim)))
    return store


def queries(seed: int, n: int) -> list[str]:
    """Queries of four mid-frequency words (ranks 20-400): each matches many chunks, as real ones do."""
    rng = random.Random(seed + 1)
    return [" ".join(_word(rng.randrange(20, 400)) for _ in range(4)) for _ in range(n)]


def stage_params(stage: Stage, query: str) -> dict[str, Any]:
    params = stage(query) if callable(stage) else dict(stage)
    params.setdefault("query", query)
    return params


async def measure(store: Any, embedder: Any, chunks: int, rounds: int, seed: int) -> dict[str, Any]:
    from hallouminate.search import ground
    from hallouminate.storage.reader import AsyncReader

    reader = AsyncReader(store)
    spec = bench_spec()
    embedded: dict[str, Any] = {}

    async def embed(text: str) -> Any:
        if text not in embedded:
            embedded[text] = embedder.embed_query(text)
        return embedded[text]

    qs = queries(seed, rounds)
    times: dict[str, list[float]] = {name: [] for name in STAGES}
    hits: dict[str, list[int]] = {name: [] for name in STAGES}
    rng = random.Random(seed)

    async def once(name: str, query: str) -> float:
        params = stage_params(STAGES[name], query)
        text = params.pop("query")
        if params.get("parent"):
            params["count_tokens"] = embedder.count_tokens  # as the daemon passes it
        started = time.perf_counter()
        result = await ground(
            reader,
            embed,
            [spec],
            text,
            priority_corpus=None,
            top_files=10,
            chunks_per_file=3,
            limit=SEARCH_LIMIT,
            snippet_chars=240,
            **params,
        )
        took = time.perf_counter() - started
        hits[name].append(len(result["docs"]))
        return took

    # Warm-up: loads the corpus into memory, the masks' first computation, every query's embedding.
    for query in qs:
        for name in STAGES:
            await once(name, query)
    for name in times:
        hits[name].clear()
    for query in qs:
        order = list(STAGES)
        rng.shuffle(order)
        for name in order:
            times[name].append(await once(name, query))
    plain = percentile(times["plain"], 50)
    plain95 = percentile(times["plain"], 95)
    return {
        "chunks": chunks,
        "rounds": rounds,
        "stages": {
            name: {
                "p50_ms": round(percentile(t, 50) * 1000, 2),
                "p95_ms": round(percentile(t, 95) * 1000, 2),
                "ratio_p50": round(percentile(t, 50) / plain, 3),
                "ratio_p95": round(percentile(t, 95) / plain95, 3),
                "mean_docs": round(statistics.mean(hits[name]), 1),
            }
            for name, t in times.items()
        },
    }


def table(runs: list[dict[str, Any]]) -> str:
    sizes = [f"{r['chunks'] // 1000}k" for r in runs]
    head = "| stage | " + " | ".join(f"{k} p50 ms | ratio | p95 ms | ratio | docs" for k in sizes) + " |"
    rule = "| --- | " + " | ".join("---: | ---: | ---: | ---: | ---:" for _ in runs) + " |"
    lines = [head, rule]
    for name in STAGES:
        cells = []
        for r in runs:
            s = r["stages"].get(name)
            cells.append(
                "- | - | - | - | -"
                if s is None
                else f"{s['p50_ms']:.1f} | {s['ratio_p50']:.2f} | {s['p95_ms']:.1f} | {s['ratio_p95']:.2f} | "
                f"{s['mean_docs']:g}"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(path: Path, runs: list[dict[str, Any]], note: str) -> None:
    text = path.read_text()
    block = f"{MARK_START}\n{note}\n\n{table(runs)}\n{MARK_END}"
    if MARK_START in text:
        before, rest = text.split(MARK_START, 1)
        text = before + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## ground with each stage on (bench/ground_stages.py)\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--markdown", type=Path, help="Write the table into this file (between markers).")
    parser.add_argument("--report", action="store_true", help="Only re-render the last run's figures.")
    opts = parser.parse_args()
    out = OUT / "ground_stages.json"
    if opts.report:
        saved = json.loads(out.read_text())
        print(table(saved["runs"]))
        if opts.markdown:
            write_markdown(opts.markdown, saved["runs"], saved["note"])
        return

    from hallouminate import xdg
    from hallouminate.embedding import Embedder

    embedder = Embedder(xdg.default_model_cache())
    runs = []
    for chunks in opts.chunks:
        print(f"corpus of {chunks:,} chunks", file=sys.stderr)
        store = build_store(
            OUT / "ground_stages" / str(chunks), chunks, embedder.dim, opts.seed, opts.rebuild
        )
        runs.append(asyncio.run(measure(store, embedder, chunks, opts.rounds, opts.seed)))
    note = (
        f"`ground` in-process over the daemon's reader, search only (query embeddings reused); "
        f"{opts.rounds} rounds, each stage once per round in shuffled order; limit {SEARCH_LIMIT}, "
        f"top_files 10; ratios to plain in the same run; docs = mean files returned (a filter or phrase "
        f"nothing matches returns fewer). Every page's last chunk has quality 0.1, so every stage but "
        f"`min_quality 0.5` runs under the default floor 0.3, which drops 10% of the chunks. "
        f"{time.strftime('%Y-%m-%d')}, 2 cores."
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"note": note, "runs": runs}, indent=2))
    print(note)
    print(table(runs))
    if opts.markdown:
        write_markdown(opts.markdown, runs, note)


if __name__ == "__main__":
    main()
