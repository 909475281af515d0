"""Index-side ranking levers (issue 19; docs/adr/0050-granularity.md), scored in numpy on every labelled set.

Each set (eval, heldout, sample: bench/eval_ranking.py's) is indexed once through the product (Indexer,
Store, 128-token windows); the windows' stored vectors are kept, and each query's gated BM25 votes are
taken from the daemon's reader and ``LiteralEvidence`` (the rows that vote in ``ground``'s fusion). Every
other unit is then embedded once with the real model (vectors cached by text hash in
bench/out/granularity-vectors.npz, so a second run takes seconds) and each variant is scored in numpy:

- granularities: whole sections (heading-delimited, H1-H3, breadcrumb + the section's text, cut by the
  model at 256 tokens), pages (title + summary + headings; title + headings; title + summary), and windows
  of 64, 96 and 256 tokens cut by the product's chunker;
- how they combine with today's windows: per-chunk max or sum of cosines, file-level sums, extra RRF lists
  beside the dense and gated-BM25 lists (a section's or page's rank given to each of its windows);
- page-level aggregation: a page scores its best chunk plus a share of its second best;
- a bound: the monotone-combination oracle of ADR 0016 (the target ranks behind only the pages at least as
  good in every list and better in one), for sets of lists.

The product's fusion is reproduced (weighted RRF k 10, BM25 1.0 over the gated votes, files by their best
chunk); its baseline row is bench/eval_ranking.py's fused figures to within 0.003 MRR (0.803 vs 0.800 on
eval: the harness ranks BM25 votes by position, ``ground`` by tied scores, and applies no quality floor). File Recall@5 / MRR per set;
paraphrase MRR for eval and heldout. The held-out set is printed, never tuned on.

Usage: .venv/bin/python bench/eval_granularity.py [--no-cache]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import load_set
from hallouminate import xdg
from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.indexing.chunker import BREADCRUMB_SEP, chunk_markdown
from hallouminate.search.fusion import RRF_K
from hallouminate.search.literal import LiteralEvidence
from hallouminate.storage import Store
from hallouminate.storage.lexical import LEXICAL_COLUMNS, LexicalIndex
from hallouminate.storage.reader import AsyncReader
from hallouminate.storage.schema import TABLE

CACHE = Path(__file__).resolve().parent / "out" / "granularity-vectors.npz"
SETS = ("eval", "heldout", "sample")
ABSENT = -1e9
Scores = np.ndarray


class Vectors:
    """The model's vectors, cached by (kind, text hash)."""

    def __init__(self, embedder: Embedder, use_cache: bool) -> None:
        self.embedder = embedder
        self.use_cache = use_cache
        self.held: dict[str, np.ndarray] = {}
        if use_cache and CACHE.exists():
            with np.load(CACHE) as saved:
                self.held = {key: saved[key] for key in saved.files}

    def __call__(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        keys = [kind[0] + hashlib.sha1(text.encode()).hexdigest() for text in texts]
        todo = {key: text for key, text in zip(keys, texts, strict=True) if key not in self.held}
        if todo:
            if kind == "query":
                made = [self.embedder.embed_query(text) for text in todo.values()]
            else:
                made = list(self.embedder.embed_passages(list(todo.values())))
            self.held.update({key: np.asarray(v, np.float32) for key, v in zip(todo, made, strict=True)})
        if not keys:
            return np.zeros((0, self.embedder.dim), np.float32)
        return np.stack([self.held[key] for key in keys])

    def save(self) -> None:
        if self.use_cache:
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            np.savez(CACHE, **self.held)  # type: ignore[arg-type]


class LabelledSet:
    """One set indexed through the product, with every other granularity embedded."""

    def __init__(self, name: str, embed: Vectors) -> None:
        self.name = name
        wiki, self.queries = load_set(name)
        settings = load_baseline().settings
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "db", embed.embedder.dim)
            spec = CorpusSpec("eval", "custom", (wiki,), ("**/*.md",), (), None)
            Indexer(store, embed.embedder, settings).index_corpus(spec)
            store.optimize()
            # The stored rows with their vectors, read as any LanceDB client would (bench/_fill.py does too).
            table = lancedb.connect(str(Path(tmp) / "db")).open_table(TABLE).to_arrow()
            rows = sorted(table.to_pylist(), key=lambda r: (r["path"], r["ordinal"]))
            self.votes = asyncio.run(self._votes(AsyncReader(store), spec, settings.limit, embed))
        self.rows = rows
        self.windows = np.stack([np.asarray(r["vector"], np.float32) for r in rows])
        self.files = sorted({r["path"] for r in rows})
        self.file_ix = {f: i for i, f in enumerate(self.files)}
        self.row_file = np.array([self.file_ix[r["path"]] for r in rows])
        self.id_ix = {r["id"]: i for i, r in enumerate(rows)}
        self.gold = [self.file_ix.get(q["expected_file"], -1) for q in self.queries]
        self.kinds = [q["kind"] for q in self.queries]
        self.q = embed([q["query"] for q in self.queries], "query")
        # Sections: consecutive windows of a page under one heading path (the chunker's H1-H3 sections).
        sections: list[tuple[str, list[str], list[int]]] = []
        for i, row in enumerate(rows):
            path = list(row["heading_path"] or [])
            if sections and sections[-1][0] == row["path"] and sections[-1][1] == path:
                sections[-1][2].append(i)
            else:
                sections.append((row["path"], path, [i]))
        self.sec_file = np.array([self.file_ix[p] for p, _, _ in sections])
        self.sec_of = np.zeros(len(rows), int)
        texts = []
        for s, (_, path, members) in enumerate(sections):
            self.sec_of[members] = s
            body = "\n\n".join(rows[i]["text"] for i in members)
            texts.append(f"{BREADCRUMB_SEP.join(path)}\n\n{body}" if path else body)
        self.sections = embed(texts)
        self._section_bm25(sections, settings.limit)
        self.pages = {
            form: embed(self._page_texts(form))
            for form in ("title-summary-headings", "title-headings", "title-summary")
        }
        # Context in the embedded text: today's form rebuilt (a check of the rebuild), and new forms.
        self.context = {form: embed([_window_text(r, form) for r in rows]) for form in CONTEXT_FORMS}
        # Windows of other budgets, each credited to the 128-token window it overlaps most.
        self.fine: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        count = embed.embedder.count_tokens
        for budget in (64, 96, 256):
            texts, parents = [], []
            for f in self.files:
                mine = [i for i, r in enumerate(rows) if r["path"] == f]
                for c in chunk_markdown((wiki / f).read_text(), count, budget - 2).chunks:
                    texts.append(c.embed_text)
                    parents.append(max(mine, key=lambda i, c=c: _overlap(rows[i], c.line_start, c.line_end)))
            self.fine[budget] = (embed(texts), np.array(parents))

    async def _votes(
        self, reader: AsyncReader, spec: CorpusSpec, limit: int, embed: Vectors
    ) -> list[list[str]]:
        out = []
        for q in self.queries:
            terms = query_terms(q["query"])
            if not terms:
                out.append([])
                continue
            keyword = await reader.fts_search(terms, [spec.store_key], limit)
            vector = await reader.vector_search(embed([q["query"]], "query")[0], [spec.store_key], limit)
            out.append([r["id"] for r in LiteralEvidence(terms, [*vector, *keyword]).votes(keyword)])
        return out

    def _section_bm25(self, sections: list[tuple[str, list[str], list[int]]], limit: int) -> None:
        """BM25 over whole sections (the product's lexical index and gate, over section rows): each query's
        section hits, ungated and gated (candidates: the hits and the sections of the best dense windows)."""
        rows = [
            {
                "id": f"section {n}",
                "corpus": "eval",
                "path": path,
                "heading_path": heading,
                "text": "\n\n".join(self.rows[i]["text"] for i in members),
            }
            for n, (path, heading, members) in enumerate(sections)
        ]
        index = LexicalIndex()
        index.add(pa.Table.from_pylist([{k: r[k] for k in LEXICAL_COLUMNS} for r in rows]))
        by_id = {r["id"]: (n, r) for n, r in enumerate(rows)}
        self.sec_hits: list[list[int]] = []
        self.sec_votes: list[list[int]] = []
        for q in range(len(self.queries)):
            terms = query_terms(self.queries[q]["query"])
            hits = [by_id[i] for i, _ in index.search(terms, ["eval"], limit)] if terms else []
            self.sec_hits.append([n for n, _ in hits])
            if not hits:
                self.sec_votes.append([])
                continue
            near = {int(self.sec_of[i]) for i in np.argsort(-(self.windows @ self.q[q]))[:limit]}
            evidence = LiteralEvidence(terms, [*(r for _, r in hits), *(rows[n] for n in sorted(near))])
            voted = {r["id"] for r in evidence.votes([r for _, r in hits])}
            self.sec_votes.append([n for n, r in hits if r["id"] in voted])

    def section_bm25_on_windows(self, q: int, gated: bool) -> dict[int, int]:
        order = (self.sec_votes if gated else self.sec_hits)[q]
        rank = {n: r for r, n in enumerate(order, 1)}
        return {i: rank[int(u)] for i, u in enumerate(self.sec_of) if int(u) in rank}

    def _page_texts(self, form: str) -> list[str]:
        out = []
        for f in self.files:
            rows = [r for r in self.rows if r["path"] == f]
            title = next((r["heading_path"][0] for r in rows if r["heading_path"]), f)
            heads: list[str] = []
            for r in rows:
                heads.extend(h for h in (r["heading_path"] or [])[1:] if h not in heads)
            summary = rows[0]["summary"] or ""
            out.append(
                {
                    "title-summary-headings": f"{title}\n\n{summary}\n\n" + "; ".join(heads),
                    "title-headings": f"{title}: " + "; ".join(heads),
                    "title-summary": f"{title}\n\n{summary}",
                }[form]
            )
        return out

    # -- signals ---------------------------------------------------------------------------------------
    def nfiles(self) -> int:
        return len(self.files)

    def win(self, q: int) -> Scores:
        return self.windows @ self.q[q]

    def sec(self, q: int) -> Scores:
        return self.sections @ self.q[q]

    def page(self, q: int, form: str = "title-summary-headings") -> Scores:
        return self.pages[form] @ self.q[q]

    def fine_on_parents(self, q: int, budget: int) -> Scores:
        vectors, parents = self.fine[budget]
        out = np.full(len(self.rows), ABSENT)
        np.maximum.at(out, parents, vectors @ self.q[q])
        return out

    def fine_files(self, q: int, budget: int) -> Scores:
        vectors, parents = self.fine[budget]
        return self.per_file(vectors @ self.q[q], self.row_file[parents])

    def per_file(self, scores: Scores, owner: np.ndarray | None = None) -> Scores:
        out = np.full(self.nfiles(), ABSENT)
        np.maximum.at(out, self.row_file if owner is None else owner, scores)
        return out

    def bm25_ranks(self, q: int) -> dict[int, int]:
        return {self.id_ix[i]: r for r, i in enumerate(self.votes[q], 1) if i in self.id_ix}

    def bm25_files(self, q: int) -> Scores:
        out = np.full(self.nfiles(), ABSENT)
        for i, r in self.bm25_ranks(q).items():
            out[self.row_file[i]] = max(out[self.row_file[i]], -r)
        return out


CONTEXT_FORMS = ("breadcrumb-blank-body", "breadcrumb-blank-body-keywords", "path-breadcrumb-blank-body")


def _window_text(row: dict[str, Any], form: str) -> str:
    crumb = BREADCRUMB_SEP.join(row["heading_path"] or [])
    body = row["text"]
    if form == "breadcrumb-blank-body-keywords":
        body = f"{body}\n\nKeywords: {', '.join(row['keywords'] or [])}"
    if form == "path-breadcrumb-blank-body":
        words = row["path"].removesuffix(".md").replace("/", " / ").replace("-", " ").replace("_", " ")
        crumb = f"{words}: {crumb}"
    return f"{crumb}\n\n{body}" if crumb else body


def ranks(scores: Scores, limit: int | None = 50) -> dict[int, int]:
    """Shared ranks (1, 1, 3) of the best ``limit`` items; absent items are not ranked."""
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > ABSENT / 2]
    out: dict[int, int] = {}
    prev, rank = None, 0
    for pos, i in enumerate(order[:limit] if limit else order, 1):
        if prev is None or abs(prev - scores[i]) > 1e-6:
            rank = pos
        prev = float(scores[i])
        out[i] = rank
    return out


def rrf(lists: list[tuple[dict[int, int], float]]) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for ranked, weight in lists:
        for i, r in ranked.items():
            out[i] += weight / (RRF_K + r)
    return out


def chunk_fusion(
    s: LabelledSet,
    q: int,
    dense: Scores | None = None,
    extra: list[tuple[dict[int, int], float]] | None = None,
    lexical: dict[int, int] | None = None,
) -> Scores:
    """``ground``'s fusion over windows (dense ranks, gated BM25 ranks or ``lexical``, any extra lists on
    windows), files by their best chunk."""
    bm25 = s.bm25_ranks(q) if lexical is None else lexical
    fused = rrf([(ranks(s.win(q) if dense is None else dense), 1.0), (bm25, 1.0), *(extra or [])])
    out = np.full(s.nfiles(), ABSENT)
    for i, score in fused.items():
        out[s.row_file[i]] = max(out[s.row_file[i]], score)
    return out


def on_windows(s: LabelledSet, unit_ranks: dict[int, int], unit_of: np.ndarray) -> dict[int, int]:
    """A list over sections or pages given to their windows: each window takes its unit's rank."""
    return {i: unit_ranks[int(u)] for i, u in enumerate(unit_of) if int(u) in unit_ranks}


def best_plus(s: LabelledSet, chunk_scores: dict[int, float] | Scores, share: float) -> Scores:
    per: dict[int, list[float]] = defaultdict(list)
    items = enumerate(chunk_scores) if isinstance(chunk_scores, np.ndarray) else chunk_scores.items()
    for i, score in items:
        if score > ABSENT / 2:
            per[int(s.row_file[i])].append(float(score))
    out = np.full(s.nfiles(), ABSENT)
    for f, values in per.items():
        values.sort(reverse=True)
        out[f] = values[0] + share * (values[1] if len(values) > 1 else 0.0)
    return out


def file_rrf(s: LabelledSet, lists: list[Scores]) -> Scores:
    out = np.full(s.nfiles(), ABSENT)
    for i, score in rrf([(ranks(fs, None), 1.0) for fs in lists]).items():
        out[i] = score
    return out


def oracle(s: LabelledSet, q: int, lists: list[Scores]) -> Scores:
    """ADR 0016's bound: the target ranks behind only the pages at least as good in every list and better
    in one (no monotone combination of the lists can rank it higher)."""
    g = s.gold[q]
    at_least = np.ones(s.nfiles(), bool)
    better = np.zeros(s.nfiles(), bool)
    for fs in lists:
        at_least &= fs >= fs[g]
        better |= fs > fs[g]
    out = np.zeros(s.nfiles())
    out[at_least & better] = 2.0
    out[g] = 1.0
    return out


def metrics(s: LabelledSet, variant: Callable[[LabelledSet, int], Scores]) -> dict[str, tuple[float, float]]:
    got: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for q in range(len(s.queries)):
        fs, g = variant(s, q), s.gold[q]
        found = g >= 0 and fs[g] > ABSENT / 2
        rank = int(np.sum(fs > fs[g])) + 1 if found else 0
        hit = (float(found and rank <= 5), 1.0 / rank if found else 0.0)
        got["all"].append(hit)
        got[s.kinds[q]].append(hit)
    return {k: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v]))) for k, v in got.items()}


Variant = Callable[[LabelledSet, int], Scores]


def variants() -> list[tuple[str, Variant]]:
    dense: Variant = lambda s, q: s.per_file(s.win(q))  # noqa: E731
    out: list[tuple[str, Variant]] = [
        ("-- dense alone (files by their best unit)", dense),
        ("dense: 128-token windows (today)", dense),
        ("dense: sections", lambda s, q: s.per_file(s.sec(q), s.sec_file)),
    ]
    for form in ("title-summary-headings", "title-headings", "title-summary"):
        out.append((f"dense: page vector ({form})", lambda s, q, form=form: s.page(q, form)))
    for budget in (64, 96, 256):
        out.append((f"dense: {budget}-token windows", lambda s, q, b=budget: s.fine_files(q, b)))
        out.append(
            (
                f"dense: window = max(128, its {budget}-token windows)",
                lambda s, q, b=budget: s.per_file(np.maximum(s.win(q), s.fine_on_parents(q, b))),
            )
        )
    out.append(
        (
            "dense: window = max(window, section)",
            lambda s, q: s.per_file(np.maximum(s.win(q), s.sec(q)[s.sec_of])),
        )
    )
    for form in CONTEXT_FORMS:
        out.append(
            (f"dense: windows embedded as {form}", lambda s, q, f=form: s.per_file(s.context[f] @ s.q[q]))
        )
    for a in (0.3, 0.5, 1.0):
        out.append(
            (
                f"dense: window + {a} x section",
                lambda s, q, a=a: s.per_file(s.win(q) + a * s.sec(q)[s.sec_of]),
            )
        )
    for a in (0.1, 0.2, 0.3, 0.5):
        out.append((f"dense: best window + {a} x page vector", lambda s, q, a=a: dense(s, q) + a * s.page(q)))
    for a in (0.1, 0.3, 0.5):
        out.append(
            (
                f"dense: best window + {a} x best section",
                lambda s, q, a=a: dense(s, q) + a * s.per_file(s.sec(q), s.sec_file),
            )
        )
    out.append(
        (
            "dense: file RRF(windows, sections)",
            lambda s, q: file_rrf(s, [dense(s, q), s.per_file(s.sec(q), s.sec_file)]),
        )
    )
    out.append(("dense: file RRF(windows, pages)", lambda s, q: file_rrf(s, [dense(s, q), s.page(q)])))
    out.append(
        (
            "dense: file RRF(windows, sections, pages)",
            lambda s, q: file_rrf(s, [dense(s, q), s.per_file(s.sec(q), s.sec_file), s.page(q)]),
        )
    )
    for share in (0.1, 0.25):
        out.append(
            (f"dense: best + {share} x second best", lambda s, q, share=share: best_plus(s, s.win(q), share))
        )
    out.append(("-- fused with the gated BM25 votes (ground's RRF)", lambda s, q: chunk_fusion(s, q)))
    out.append(("fused: today", lambda s, q: chunk_fusion(s, q)))
    for w in (0.5, 1.0):
        out.append(
            (
                f"fused + section list on windows, w {w}",
                lambda s, q, w=w: chunk_fusion(s, q, extra=[(on_windows(s, ranks(s.sec(q)), s.sec_of), w)]),
            )
        )
        out.append(
            (
                f"fused + page list on windows, w {w}",
                lambda s, q, w=w: chunk_fusion(
                    s, q, extra=[(on_windows(s, ranks(s.page(q)), s.row_file), w)]
                ),
            )
        )
        out.append(
            (
                f"fused + section and page lists, w {w}",
                lambda s, q, w=w: chunk_fusion(
                    s,
                    q,
                    extra=[
                        (on_windows(s, ranks(s.sec(q)), s.sec_of), w),
                        (on_windows(s, ranks(s.page(q)), s.row_file), w),
                    ],
                ),
            )
        )
    for form in CONTEXT_FORMS[1:]:
        out.append(
            (
                f"fused, windows embedded as {form}",
                lambda s, q, f=form: chunk_fusion(s, q, s.context[f] @ s.q[q]),
            )
        )
    out.append(
        (
            "fused, BM25 over whole sections, gated",
            lambda s, q: chunk_fusion(s, q, lexical=s.section_bm25_on_windows(q, True)),
        )
    )
    out.append(
        (
            "fused, BM25 over whole sections, ungated",
            lambda s, q: chunk_fusion(s, q, lexical=s.section_bm25_on_windows(q, False)),
        )
    )
    out.append(
        (
            "fused, section vectors + BM25 over sections, gated",
            lambda s, q: chunk_fusion(s, q, s.sec(q)[s.sec_of], lexical=s.section_bm25_on_windows(q, True)),
        )
    )
    out.append(
        (
            "fused, section vectors + BM25 over sections, ungated",
            lambda s, q: chunk_fusion(s, q, s.sec(q)[s.sec_of], lexical=s.section_bm25_on_windows(q, False)),
        )
    )
    out.append(
        (
            "fused, dense = max(window, section)",
            lambda s, q: chunk_fusion(s, q, np.maximum(s.win(q), s.sec(q)[s.sec_of])),
        )
    )
    out.append(
        (
            "fused, dense = window + 0.5 x section",
            lambda s, q: chunk_fusion(s, q, s.win(q) + 0.5 * s.sec(q)[s.sec_of]),
        )
    )
    for budget in (64, 96):
        out.append(
            (
                f"fused, dense = max(window, its {budget}-token windows)",
                lambda s, q, b=budget: chunk_fusion(s, q, np.maximum(s.win(q), s.fine_on_parents(q, b))),
            )
        )
        out.append(
            (
                f"fused + {budget}-token windows' list on their windows, w 1.0",
                lambda s, q, b=budget: chunk_fusion(s, q, extra=[(ranks(s.fine_on_parents(q, b)), 1.0)]),
            )
        )
    for share in (0.1, 0.25, 0.5):
        out.append(
            (
                f"fused: best + {share} x second best",
                lambda s, q, share=share: best_plus(
                    s, rrf([(ranks(s.win(q)), 1.0), (s.bm25_ranks(q), 1.0)]), share
                ),
            )
        )
    out.append(
        (
            "fused: file RRF(windows, sections, BM25)",
            lambda s, q: file_rrf(s, [dense(s, q), s.per_file(s.sec(q), s.sec_file), s.bm25_files(q)]),
        )
    )
    out.append(("-- bounds: monotone-combination oracle (ADR 0016)", lambda s, q: chunk_fusion(s, q)))
    out.append(("oracle(windows, BM25)", lambda s, q: oracle(s, q, [dense(s, q), s.bm25_files(q)])))
    out.append(
        (
            "oracle(windows, sections, BM25)",
            lambda s, q: oracle(s, q, [dense(s, q), s.per_file(s.sec(q), s.sec_file), s.bm25_files(q)]),
        )
    )
    out.append(
        (
            "oracle(windows, 64-token windows, BM25)",
            lambda s, q: oracle(s, q, [dense(s, q), s.fine_files(q, 64), s.bm25_files(q)]),
        )
    )
    out.append(
        (
            "oracle(windows, sections, page, BM25)",
            lambda s, q: oracle(
                s, q, [dense(s, q), s.per_file(s.sec(q), s.sec_file), s.page(q), s.bm25_files(q)]
            ),
        )
    )
    out.append(
        (
            "oracle(windows 64/128/256, sections, 2 page forms, BM25)",
            lambda s, q: oracle(
                s,
                q,
                [
                    dense(s, q),
                    s.fine_files(q, 64),
                    s.fine_files(q, 256),
                    s.per_file(s.sec(q), s.sec_file),
                    s.page(q),
                    s.page(q, "title-headings"),
                    s.bm25_files(q),
                ],
            ),
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-cache", action="store_true", help="embed everything again, keep nothing")
    opts = parser.parse_args()
    settings = load_baseline().settings
    embed = Vectors(Embedder(xdg.default_model_cache(), settings.model_name), not opts.no_cache)
    sets = [LabelledSet(name, embed) for name in SETS]
    embed.save()
    print(f"model {embed.embedder.model_name}; file R@5 / MRR (paraphrase MRR)")
    print(f"{'variant':62s} {'eval':>22s} {'heldout':>22s} {'sample':>12s}")
    for label, variant in variants():
        if label.startswith("--"):
            print(label)
            continue
        cells = []
        for s in sets:
            m = metrics(s, variant)
            para = f" ({m['paraphrase'][1]:.3f})" if "paraphrase" in m else ""
            cells.append(f"{m['all'][0]:.3f} / {m['all'][1]:.3f}{para}")
        print(f"{label:62s} {cells[0]:>22s} {cells[1]:>22s} {cells[2]:>12s}", flush=True)


def _overlap(row: dict[str, Any], start: int, end: int) -> int:
    return min(row["line_end"], end) - max(row["line_start"], start)


if __name__ == "__main__":
    main()
