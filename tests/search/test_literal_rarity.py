"""ADR 0016, pinned: the literal gate weighs a query's words by how rare they are among the candidates, a
gated BM25 vote counts as much as meaning, and files tied on score list the one holding more of the query
first.

The weights, the gate and the tie are tested as pure functions on rows shaped as the store returns them;
the whole ranking on a real store and the real model, with the case that motivated the change: a wiki of
look-alike runbooks, one of which holds the identifier the query asks for.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_ground_hybrid import SETTINGS, run_ground

from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search.assembly import FileEntry, rank_files
from hallouminate.search.ground import assemble
from hallouminate.search.literal import MIN_COVERAGE, LiteralEvidence, TermMatcher, rarity_weights
from hallouminate.storage import Store


def _row(
    chunk_id: str, text: str, path: str, heading: list[str] | None = None, score: float = 1.0
) -> dict[str, Any]:
    """A stored chunk row as the searches return it (the result columns and a score)."""
    return {
        "id": chunk_id,
        "corpus": "wiki",
        "path": path,
        "abs_path": f"/nonexistent/{path}",
        "heading_path": heading or [],
        "line_start": 1,
        "line_end": 3,
        "text": text,
        "summary": "",
        "file_size": len(text),
        "file_mtime_ns": 0,
        "keywords": [],
        "score": score,
    }


# -- rarity weights (pure) -------------------------------------------------------------------------------
def test_a_word_every_candidate_holds_weighs_little_and_a_rare_one_much() -> None:
    # Four candidates: the first stem is in all of them, the second in one.
    found = [(True, True), (True, False), (True, False), (True, False)]
    common, rare = rarity_weights(found, 2)
    # BM25's IDF over the candidates: ln(1 + (n - df + 0.5) / (df + 0.5)).
    assert common == pytest.approx(math.log(1 + 0.5 / 4.5))
    assert rare == pytest.approx(math.log(1 + 3.5 / 1.5))
    assert rare > 10 * common


def test_a_word_no_candidate_holds_weighs_as_the_rarest_found_one() -> None:
    found = [(True, False, False), (True, True, False), (False, False, False)]
    weights = rarity_weights(found, 3)
    assert weights[2] == weights[1] == max(weights)  # absent: no heavier than the rarest word found
    assert rarity_weights([(False, False)], 2) == [1.0, 1.0]  # nothing found: all weigh the same
    assert rarity_weights([], 2) == [1.0, 1.0]


# -- the gate (pure) -------------------------------------------------------------------------------------
LOOK_ALIKES = [
    _row(f"r{i}", f"To restart the {svc} service, drain its traffic first.", f"runbooks/restart-{svc}.md")
    for i, svc in enumerate(["billing", "ledger", "notifier", "checkout", "payouts", "search", "catalog"])
]
KEYTAB = _row(
    "k",
    "If the restart stalls on a Kerberos error, renew the keytab with kinit.",
    "runbooks/restart-refunds.md",
    ["Restarting refunds", "Expired keytab"],
)


def test_the_common_half_of_a_query_no_longer_opens_the_gate() -> None:
    terms = query_terms("restart the service keytab")
    evidence = LiteralEvidence(terms, [*LOOK_ALIKES, KEYTAB])
    # Unweighted, every look-alike holds two words of three and would vote.
    assert TermMatcher(terms).coverage([LOOK_ALIKES[0]["text"]]) == pytest.approx(2 / 3)
    # Weighted, "restart" and "service" are in nearly every candidate and "keytab" in one.
    assert all(evidence.coverage(row) < MIN_COVERAGE for row in LOOK_ALIKES)
    assert evidence.coverage(KEYTAB) >= MIN_COVERAGE
    assert [row["id"] for row in evidence.votes([KEYTAB, *LOOK_ALIKES])] == ["k"]


def test_words_no_candidate_holds_keep_the_gate_shut() -> None:
    # A paraphrase: one incidental rare word matches, the question's own words match nothing.
    terms = query_terms("my laptop was stolen during a zeppelin trip")
    museum = _row("z", "The zeppelin museum opens daily.", "zeppelin.md")
    evidence = LiteralEvidence(terms, [museum, *LOOK_ALIKES])
    assert evidence.coverage(museum) == pytest.approx(1 / 4)
    assert evidence.votes([museum]) == []


def test_a_row_outside_the_candidates_is_measured_on_demand() -> None:
    evidence = LiteralEvidence(query_terms("restart keytab"), LOOK_ALIKES)
    assert evidence.coverage(KEYTAB) == 1.0
    assert LiteralEvidence([], LOOK_ALIKES).coverage(KEYTAB) == 0.0  # no content words: nothing to hold


def test_rows_are_scanned_together_as_each_alone() -> None:
    matcher = TermMatcher(query_terms("pg core b configuring configs"))
    assert matcher.terms == ["pg", "core", "b", "configur", "config"]
    rows = [
        _row("1", "pg-core-b", "a.md"),
        _row("2", "configs: pgbouncer", "b.md", ["Core"]),
        _row("3", "İİİ configuration", "c.md"),  # "İ" lower-cases to two characters: later offsets move
        _row("4", "", "configuring/b.md"),
        _row("5", "reconfigured xpg", "d.md"),
    ]
    # Words are tokens, as BM25 reads them: "configuration" is "configur" and not "config", "pgbouncer"
    # is neither "pg" nor "b" (a prefix matched both before ADR 0019).
    assert matcher.found_in_rows(rows) == [
        (True, True, True, False, False),
        (False, True, True, False, True),
        (False, False, False, True, False),
        (False, False, True, True, False),
        (False, False, False, False, False),
    ]
    assert matcher.found_in_rows(rows) == [
        matcher.found([r["text"], " ".join(r["heading_path"]), r["path"]]) for r in rows
    ]


def test_the_gate_reads_words_as_bm25_does() -> None:
    # Issue 13: BM25 matched "running jobs" in "how to run the job", while the gate looked for "runn" and
    # "jobs", found neither, and the true hit lost its vote. Both read words with one analyser now.
    terms = query_terms("running jobs")
    hit = _row("j", "How to run the job again after a failure.", "ops/rerun.md")
    other = _row("o", "Nightly backups finish before six.", "ops/backups.md")
    evidence = LiteralEvidence(terms, [hit, other])
    assert evidence.coverage(hit) == 1.0 and evidence.coverage(other) == 0.0
    assert [row["id"] for row in evidence.votes([hit, other])] == ["j"]
    # "set this up" also holds where the page writes "setup".
    setup = _row("s", "Keep the troubleshooting page at hand for the first setup.", "guides/start.md")
    assert LiteralEvidence(query_terms("first steps to set this up"), [setup]).coverage(setup) > MIN_COVERAGE


# -- ties and weights in the fusion (pure) ---------------------------------------------------------------
def _file(corpus: str, path: str, score: float, literal: float) -> FileEntry[Any]:
    return FileEntry(corpus, path, score, literal=literal, abs_path=f"/{path}")


def test_a_tie_goes_to_the_page_holding_more_of_the_query() -> None:
    files = [
        _file("wiki", "a.md", 0.5, 0.1),
        _file("wiki", "z.md", 0.5, 0.9),
        _file("docs", "b.md", 0.5, 1.0),
    ]
    # The priority corpus still wins ties first; then the query's wording, then corpus and path.
    assert [f.path for f in rank_files(files, "wiki")] == ["z.md", "a.md", "b.md"]
    assert [f.path for f in rank_files(files, None)] == ["b.md", "z.md", "a.md"]


def test_a_keyword_hit_counts_as_much_as_meaning() -> None:
    # Meaning puts a look-alike first; BM25 finds the page with the identifier, which meaning missed.
    near = _row("near", "To restart the billing service, drain its traffic first.", "restart-billing.md")
    hit = _row(
        "hit", "Runbook RB-4456: renew the keytab before the restart.", "restart-refunds.md", score=7.5
    )
    terms = query_terms("RB-4456")
    result = assemble(
        "RB-4456",
        terms,
        [near],
        [hit],
        ["wiki"],
        priority_corpus=None,
        top_files=5,
        chunks_per_file=1,
        snippet_chars=80,
        empty_corpora=[],
        started=time.perf_counter(),
    )
    # Each is first in one signal of equal weight: equal scores, and the tie goes to the keyword hit.
    assert [(d["path"], d["score"]) for d in result["docs"]] == [
        ("restart-refunds.md", 0.5),
        ("restart-billing.md", 0.5),
    ]


# -- the whole ranking on a real store -------------------------------------------------------------------
SERVICES = ["billing", "ledger", "notifier", "checkout", "payouts", "search", "catalog", "pricing", "refunds"]
SERVICES += ["invoices", "shipping", "returns", "reviews", "wishlist", "loyalty", "coupons", "inventory"]


def _runbook(number: int, service: str) -> str:
    return (
        f"# Restarting {service}\n\nRunbook RB-{number}. To restart the {service} service, drain its traffic, "
        "run the restart command and wait until the health checks pass.\n\n## After the restart\n\nWatch the "
        "error rate for ten minutes and page the owner if it rises.\n"
    )


@pytest.fixture(scope="module")
def runbooks(
    tmp_path_factory: pytest.TempPathFactory, model_cache: Path
) -> tuple[Store, Embedder, CorpusSpec]:
    """Look-alike runbooks, each with its own identifier (RB-4400, RB-4407, ...)."""
    root = tmp_path_factory.mktemp("runbooks")
    wiki = root / "wiki" / "runbooks"
    wiki.mkdir(parents=True)
    for i, service in enumerate(SERVICES):
        (wiki / f"restart-{service}.md").write_text(_runbook(4400 + 7 * i, service))
    embedder = Embedder(model_cache)
    store = Store(root / "db", embedder.dim)
    spec = CorpusSpec("wiki", "custom", (root / "wiki",), ("**/*.md",), (), None)
    Indexer(store, embedder, replace(SETTINGS, chunk_tokens=128)).index_corpus(spec)
    store.optimize()
    return store, embedder, spec


@pytest.mark.parametrize(
    "query", ["RB-4456", "4456", "restart RB-4456", "how do I restart the service of runbook RB-4456?"]
)
async def test_the_runbook_holding_the_queried_id_ranks_first(
    runbooks: tuple[Store, Embedder, CorpusSpec], query: str
) -> None:
    # Meaning cannot tell look-alike runbooks apart, and every one holds "rb", "restart", "runbook" and
    # "service": before ADR 0016 they all voted, and RB-4456 (refunds) ranked 10th (2nd for "4456", where
    # its one BM25 vote, at half the weight of meaning, lost to the first look-alike by meaning).
    store, embedder, spec = runbooks
    result = await run_ground(
        store,
        embedder,
        [spec],
        query,
        priority_corpus=spec.name,
        top_files=10,
        chunks_per_file=1,
        limit=50,
        snippet_chars=120,
    )
    docs = result["docs"]
    assert docs[0]["path"] == "runbooks/restart-refunds.md"
    assert docs[0]["score"] > docs[1]["score"]
    assert "RB-4456" in docs[0]["chunks"][0]["snippet"]
