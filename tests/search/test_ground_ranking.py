"""The ranking rules of ADR 0012, pinned: the literal gate on BM25, shared ranks and deterministic ties,
queries without content words (the gate's rarity weights of ADR 0016: test_literal_rarity.py). The
matcher and the rank arithmetic are tested as pure functions; the heading/path part of the gate on a real
store and model; the rest through a real MCP client, the real shim and a real daemon indexing with the
default configuration (128-token chunks).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.analysis import query_terms
from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search.fusion import best_possible, rrf_ranks, tied_ranks
from hallouminate.search.literal import TermMatcher, chunk_coverage, lexical_votes
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.files import write
from support.ground import RESULT_SCHEMA, SETTINGS
from support.mcp_world import McpClient, make_repo, module_sandbox

WIKI = "repo:acme:wiki"

LOST_LAPTOP = (
    "# Lost or stolen computers\n\nReport a missing notebook computer to the IT help desk at once, so that "
    "it can be locked and wiped remotely before anyone reads its disk.\n"
)
ZEPPELIN = (
    "# Zeppelin museum\n\nThe zeppelin museum in Friedrichshafen opens daily. Zeppelin models, zeppelin "
    "photographs and a full-size zeppelin gondola fill the main hall.\n"
)
CHANGE_WINDOW = (
    "# Change windows\n\nRoutine changes go out from Tuesday to Thursday. Open the window with "
    "`relctl window --open CHG-4471` before starting, and close it when done.\n"
)
DEPLOY_FREEZE = (
    "# Deploy freezes\n\nNo production deploys between 20 December and 2 January; an emergency fix needs "
    "the duty manager's approval.\n"
)
TWIN = "# Harbour crane\n\nThe harbour crane lifts shipping containers of up to forty tonnes onto the quay.\n"


# -- the literal signal (pure) ---------------------------------------------------------------------------
def test_coverage_counts_distinct_tokens_as_bm25_reads_them() -> None:
    matcher = TermMatcher(query_terms("Configuring backups: backup retention"))
    # "configuring" -> "configur", "backups"/"backup" -> one token, "retention": three distinct tokens.
    assert matcher.terms == ["configur", "backup", "retent"]
    assert matcher.coverage(["We configured nightly backups."]) == pytest.approx(2 / 3)
    assert matcher.coverage(["reconfigured", "a backup"]) == pytest.approx(1 / 3)  # "reconfigur" is another
    assert matcher.coverage(["", "Retention", "ops/configuration-backups.md"]) == 1.0


def test_words_are_whole_tokens_not_prefixes() -> None:
    matcher = TermMatcher(query_terms("pg-core-b go"))
    assert matcher.terms == ["pg", "core", "b", "go"]
    # "pgbouncer" holds neither "pg" nor "b", "backup" not "b"; "going" is "go", as BM25 reads it.
    assert matcher.coverage(["pgbouncer core backup going"]) == pytest.approx(2 / 4)
    assert matcher.coverage(["pg-core-b: go"]) == 1.0


def test_coverage_is_the_share_of_distinct_terms_found() -> None:
    matcher = TermMatcher(query_terms("alpha bravo charlie delta"))
    for text, share in [("alpha", 0.25), ("alpha bravo", 0.5), ("delta charlie bravo", 0.75), ("", 0.0)]:
        assert matcher.coverage([text]) == share
    assert TermMatcher([]).coverage(["anything"]) == 0.0 and TermMatcher([]).found(["x"]) == ()


def test_only_rows_holding_half_the_query_vote() -> None:
    rows = [
        {"id": "a", "text": "alpha only", "heading_path": [], "path": "a.md", "score": 9.0},
        {"id": "b", "text": "alpha", "heading_path": ["Bravo"], "path": "b.md", "score": 5.0},
        {"id": "c", "text": "nothing", "heading_path": [], "path": "alpha/charlie.md", "score": 1.0},
    ]
    # a: one word of three; b: one in its text, one in its breadcrumb; c: two in its path.
    # (The gate takes the query's terms: "charlie" is "charli".)
    assert [r["id"] for r in lexical_votes(query_terms("alpha bravo charlie"), rows)] == ["b", "c"]
    # Every row holds "alpha", so it tells them apart no better than a stop word: "bravo" carries the query,
    # and a and c, holding only "alpha", no longer make half of it (ADR 0016; before, all three voted).
    assert [r["id"] for r in lexical_votes(query_terms("alpha bravo"), rows)] == ["b"]
    assert lexical_votes([], rows) == []


# -- shared ranks (pure) ---------------------------------------------------------------------------------
def test_equal_scores_share_a_rank_and_list_by_id() -> None:
    rows = [{"id": i, "score": s} for i, s in [("d", 0.5), ("c", 0.9), ("b", 0.5), ("a", 0.9), ("e", 0.1)]]
    assert tied_ranks(rows) == [("a", 1), ("c", 1), ("b", 3), ("d", 3), ("e", 5)]
    assert tied_ranks([{"id": "y"}, {"id": "x"}]) == [("y", 1), ("x", 2)]  # no scores: given order
    fused = rrf_ranks([tied_ranks(rows)], [1.0], k=10)
    assert fused["a"] == fused["c"] == best_possible([1.0], k=10) and fused["b"] == fused["d"]


# -- the gate on real BM25 rows: heading breadcrumbs and file paths count -----------------------------------
async def test_heading_and_path_words_count_towards_the_gate(tmp_path: Path, embedder: Embedder) -> None:
    store = Store(tmp_path / "db", embedder.dim)
    wiki = tmp_path / "wiki"
    filler = " ".join(f"Step {n} of the routine is written down in the shared binder." for n in range(12))
    write(
        wiki / "ops" / "quartz-lantern.md",
        f"# Quartz lantern\n\n## Refuelling\n\n{filler}\n\nUse paraffin.\n",
    )
    write(wiki / "kitchen.md", "# Kitchen\n\nThe paraffin stove is not used indoors.\n")
    spec = CorpusSpec("w", "custom", (wiki,), ("**/*.md",), (), None)
    settings = replace(SETTINGS, chunk_tokens=64, max_file_bytes=1 << 20)
    Indexer(store, embedder, settings).index_corpus(spec)
    terms = query_terms("quartz lantern paraffin")
    rows = await AsyncReader(store).fts_search(terms, [spec.store_key], 50)
    lantern = next(r for r in rows if r["path"] == "ops/quartz-lantern.md" and "paraffin" in r["text"])
    # Its text holds one word of three; its breadcrumb and path hold the other two.
    assert "quartz" not in lantern["text"].lower() and lantern["heading_path"][0] == "Quartz lantern"
    assert chunk_coverage(TermMatcher(terms), lantern) == 1.0
    voters = {(r["path"], r["line_start"]) for r in lexical_votes(terms, rows)}
    assert ("ops/quartz-lantern.md", lantern["line_start"]) in voters
    assert all(path != "kitchen.md" for path, _ in voters)  # "paraffin" alone: one word of three


# -- through the daemon ----------------------------------------------------------------------------------


class World:
    def __init__(self, client: McpClient, acme: Path) -> None:
        self.client = client
        self.acme = acme

    def ground(self, query: str, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.acme), "query": query, **args})
        assert not result.is_error, result
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        return result.structured_content


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:  # default [indexing]: 128-token chunks
        acme = make_repo(box, "acme", '[[corpus]]\nname = "notes"\npaths = ["notes"]\n')
        wiki, notes = acme / ".hallouminate" / "wiki", acme / "notes"
        write(wiki / "lost-laptop.md", LOST_LAPTOP)
        write(wiki / "zeppelin.md", ZEPPELIN)
        write(wiki / "change-window.md", CHANGE_WINDOW)
        write(wiki / "deploy-freeze.md", DEPLOY_FREEZE)
        write(wiki / "twin-b.md", TWIN)
        write(wiki / "twin-a.md", TWIN)
        write(notes / "twin-a.md", TWIN)
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(acme)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(client, acme)
        finally:
            client.close()


def _paths(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(doc["corpus"], doc["path"]) for doc in result["docs"]]


def test_an_incidental_word_match_does_not_vote(world: World) -> None:
    # BM25 ranks the zeppelin page first (its rarest query word, four times), but it holds one content
    # word of five, so only meaning ranks: the laptop page is first in the one signal that voted.
    result = world.ground("my laptop was stolen during a zeppelin trip, whom do I tell?", corpus=WIKI)
    assert result["docs"][0]["path"] == "lost-laptop.md"
    assert result["docs"][0]["score"] == 1.0
    assert result["warnings"] == []


def test_a_keyword_match_votes(world: World) -> None:
    result = world.ground("relctl CHG-4471", corpus=WIKI)
    assert result["docs"][0]["path"] == "change-window.md"
    assert result["docs"][0]["score"] == 1.0  # first by meaning and by words
    snippet = result["docs"][0]["chunks"][0]["snippet"]
    assert "relctl" in snippet and "CHG-4471" in snippet


def test_equal_pages_tie_and_list_the_same_way_every_time(world: World) -> None:
    first = world.ground("harbour crane lifting shipping containers", top_files=3)
    twins = [(WIKI, "twin-a.md"), (WIKI, "twin-b.md"), ("notes", "twin-a.md")]
    # Equal evidence, equal scores; then the priority corpus (the cwd's wiki), corpus name, path.
    assert _paths(first) == twins
    assert len({doc["score"] for doc in first["docs"]}) == 1
    for _ in range(3):
        again = world.ground("harbour crane lifting shipping containers", top_files=3)
        assert [(d["path"], d["score"], d["chunks"]) for d in again["docs"]] == [
            (d["path"], d["score"], d["chunks"]) for d in first["docs"]
        ]


@pytest.mark.parametrize("query", ["how is it?", "?!", "— … ?", "and the of"])
def test_a_query_without_content_words_ranks_by_meaning(world: World, query: str) -> None:
    result = world.ground(query)
    # A question asking nothing is no strong match for any page either (low_confidence, ADR 0025).
    assert [w["code"] for w in result["warnings"]] == ["vector-only", "weak-match"]
    assert result["docs"] and result["docs"][0]["score"] == 1.0
