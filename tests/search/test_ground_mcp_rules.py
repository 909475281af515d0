"""``ground``'s rules through a real MCP client, the real shim and a real daemon (issue 5, acceptance 1).

Union attribution, priority ties and reserved slots, pinning; phrase mode case by case; pages; counts;
truncation warnings; rejected combinations and bounds. One daemon and one index for the whole module
(``mcp_world``); chunks are small (``chunk_tokens = 64``) so that text and PDF pages split.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fpdf import FPDF
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from support.files import write
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox

WIKI = "repo:acme:wiki"
CORPORA = {WIKI, "notes", "library"}
WORDS = [f"w{i}" for i in range(1, 121)]  # log.txt: every pair of neighbours occurs exactly once

PHRASES_MD = """# Phrase Guide

Intro paragraph with the Canonical URL https://example.com/a_b%20c?x=1&y="q" here.

## Tax **Abatement**

The tax rebate rules live here. Stop words: to be or not to be.
Percent and underscore: 100% of snake_case names; "quoted words" and it's done.

## Whitespace

alpha\tbeta   gamma and delta\u00a0epsilon.
The wrapped phrase starts here and
continues on the next line.
"""
# What a LIKE pattern or a word-level match would wrongly take for the phrases above.
WILDCARDS_MD = "# Wildcards\n\nA snakeXcase name, 100 percent sure, a_bX20c, 1000% and ALPHA-BETA.\n"
STRADDLE_MD = """# Straddle

The first section ends with alpha omega

## Second Part

bravo charlie opens the second section.
"""
SERVICE_JSON = '{"service": {"name": "billing", "owner": "Lighthouse Keeper guild"}}\n'


def _page_words(number: int, spots: list[int]) -> str:
    words = [f"p{number}w{k}" for k in range(80)]
    for at in spots:
        words[at] = "lighthouse keeper"
    return " ".join(words)


def _guide_pdf() -> bytes:
    """Three pages: "lighthouse keeper" once on page 1, three times far apart on page 2, never on 3."""
    pdf = FPDF()
    pdf.set_title("Field Guide")
    pdf.set_font("Helvetica", size=11)
    for number, spots in ((1, [30]), (2, [5, 40, 75]), (3, [])):
        pdf.add_page()
        pdf.multi_cell(0, 5, _page_words(number, spots))
    return bytes(pdf.output())


class World:
    def __init__(self, client: McpClient, acme: Path, bare: Path) -> None:
        self.client = client
        self.acme = acme
        self.bare = bare  # a repository whose wiki is empty

    def call(self, **args: Any) -> Any:
        result = self.client.call("ground", {"cwd": str(self.acme), **args})
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        return result

    def ground(self, **args: Any) -> dict[str, Any]:
        return self.call(**args).structured_content

    def phrase(self, query: str, **args: Any) -> dict[str, Any]:
        return self.ground(query=query, match="phrase", **args)

    def error(self, **args: Any) -> MCPError:
        with pytest.raises(MCPError) as info:
            self.client.call("ground", {"cwd": str(self.acme), **args})
        return info.value


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache, "[indexing]\nchunk_tokens = 64\n") as box:
        acme = make_repo(
            box,
            "acme",
            '[[corpus]]\nname = "notes"\npaths = ["notes"]\n\n'
            '[[corpus]]\nname = "library"\npaths = ["library"]\n'
            'globs = ["**/*.txt", "**/*.json", "**/*.pdf"]\n',
        )
        wiki, notes, library = acme / ".hallouminate" / "wiki", acme / "notes", acme / "library"
        write(wiki / "phrases.md", PHRASES_MD)
        write(wiki / "straddle.md", STRADDLE_MD)
        write(wiki / "tie.md", "# Tie\n\nThe quartz lantern protocol is described here.\n")
        write(wiki / "slot-a.md", "# Slot A\n\nThe copper kettle rule, once.\n")
        write(wiki / "slot-b.md", "# Slot B\n\nThe copper kettle rule, once more.\n")
        write(notes / "tie.md", "# Tie\n\nThe quartz lantern protocol is also described here.\n")
        for n in range(1, 6):
            write(
                notes / f"slot{n}.md",
                f"# Slot {n}\n\ncopper kettle rule, copper kettle rule, copper kettle rule.\n",
            )
        write(
            notes / "oncall.md",
            "# On-call\n\nThe on-call rota rotates weekly. Pages go to the pager tool; an unanswered page "
            "escalates to the secondary after fifteen minutes.\n",
        )
        write(notes / "wildcards.md", WILDCARDS_MD)
        write(library / "log.txt", "\n".join(" ".join(WORDS[i : i + 10]) for i in range(0, 120, 10)) + "\n")
        write(library / "service.json", SERVICE_JSON)
        (library / "guide.pdf").write_bytes(_guide_pdf())
        bare = make_repo(box, "bare")
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(acme)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(client, acme, bare)
        finally:
            client.close()


def _paths(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(doc["corpus"], doc["path"]) for doc in result["docs"]]


def _bounds(result: dict[str, Any]) -> list[str]:
    return [b for w in result["warnings"] if w["code"] == "phrase-truncated" for b in w["bounds"]]


# -- corpus scoping --------------------------------------------------------------------------------------
def test_ranked_union_fuses_every_corpus_and_attributes_each_hit(world: World) -> None:
    found = world.call(query="who gets paged when the on-call rota escalates", top_files=10)
    result = found.structured_content
    corpora = {doc["corpus"] for doc in result["docs"]}
    assert "notes" in corpora and len(corpora) >= 2 and corpora <= CORPORA
    assert ("notes", "oncall.md") in _paths(result)
    for doc in result["docs"]:
        assert doc["chunks"] and all(chunk["corpus"] == doc["corpus"] for chunk in doc["chunks"])
    # The outline names the corpus of each file when the result spans several.
    assert "[notes] oncall.md  (" in found.content[0].text


def test_ranked_pinned_corpus_searches_only_it(world: World) -> None:
    result = world.ground(query="who gets paged when the on-call rota escalates", corpus="notes")
    assert result["docs"] and {doc["corpus"] for doc in result["docs"]} == {"notes"}
    assert result["docs"][0]["path"] == "oncall.md"
    assert "[notes]" not in world.call(query="on-call rota", corpus="notes").content[0].text


def test_ranked_reserved_slot_keeps_the_repository_wiki_in_the_cut(world: World) -> None:
    # max(1, top_files // 4) slots are the priority corpus's: with one slot, the wiki's best page takes
    # it although a notes page ranks first.
    unpinned = world.ground(query="who gets paged when the on-call rota escalates", top_files=10)
    assert unpinned["docs"][0]["corpus"] != WIKI
    one = world.ground(query="who gets paged when the on-call rota escalates", top_files=1)
    assert [doc["corpus"] for doc in one["docs"]] == [WIKI]
    four = world.ground(query="who gets paged when the on-call rota escalates", top_files=4)
    assert sum(doc["corpus"] == WIKI for doc in four["docs"]) >= 1 and len(four["docs"]) == 4


def test_phrase_union_priority_wins_score_ties(world: World) -> None:
    # Both pages hold the phrase once: the repository wiki comes first although "notes" sorts before it.
    result = world.phrase("quartz lantern protocol")
    assert _paths(result) == [(WIKI, "tie.md"), ("notes", "tie.md")]
    assert [doc["score"] for doc in result["docs"]] == [1, 1]
    assert [c["corpus"] for doc in result["docs"] for c in doc["chunks"]] == [WIKI, "notes"]
    # And in the candidate pool: with room for one chunk, the wiki's is kept.
    assert _paths(world.phrase("quartz lantern protocol", limit=1)) == [(WIKI, "tie.md")]
    text = world.call(query="quartz lantern protocol", match="phrase").content[0].text
    assert f"[{WIKI}] tie.md  (1)" in text and "[notes] tie.md  (1)" in text


def test_phrase_reserved_slots_and_pinning(world: World) -> None:
    # notes: five pages with the phrase 3 times; the wiki: two pages with it once.
    four = world.phrase("copper kettle rule", top_files=4)
    assert _paths(four) == [("notes", f"slot{n}.md") for n in (1, 2, 3)] + [(WIKI, "slot-a.md")]
    assert [doc["score"] for doc in four["docs"]] == [3, 3, 3, 1]
    assert _bounds(four) == ["top_files"]
    eight = world.phrase("copper kettle rule", top_files=8)  # two reserved slots, room for all seven
    assert len(eight["docs"]) == 7 and _paths(eight)[-2:] == [(WIKI, "slot-a.md"), (WIKI, "slot-b.md")]
    assert eight["warnings"] == []
    pinned = world.phrase("copper kettle rule", corpus="notes", top_files=4)
    assert {doc["corpus"] for doc in pinned["docs"]} == {"notes"} and len(pinned["docs"]) == 4
    assert world.phrase("copper kettle rule", corpus=WIKI)["stats"] == {"hits": 2, "occurrences": 2}


# -- phrase semantics ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "where"),
    [
        ("CANONICAL url", "Phrase Guide"),  # case-insensitive
        ('https://example.com/a_b%20c?x=1&y="q"', "Phrase Guide"),  # punctuation, quotes, % and _
        ("a_b%20c", "Phrase Guide"),  # not a LIKE pattern: a_bX20c in notes does not match
        ("snake_case", "Tax Abatement"),  # _ is not a wildcard: snakeXcase does not match
        ("100%", "Tax Abatement"),  # % is not a wildcard: "100 percent" does not match
        ("to be or not to be", "Tax Abatement"),  # stop words only
        ('"quoted words"', "Tax Abatement"),
        ("it's", "Tax Abatement"),
        ("alpha beta gamma", "Whitespace"),  # text: a tab and a run of spaces; not ALPHA-BETA
        ("alpha \t beta\n\ngamma", "Whitespace"),  # any whitespace run in the query too
        ("delta epsilon", "Whitespace"),  # text: a non-breaking space
        ("delta\u00a0epsilon", "Whitespace"),
        ("starts here and continues on", "Whitespace"),  # across a hard line break
        ("  rebate rules  ", "Tax Abatement"),  # the query's outer whitespace is ignored
        ("rebat", "Tax Abatement"),  # a literal substring, not a word match
    ],
)
def test_phrase_matches_literally(world: World, query: str, where: str) -> None:
    result = world.phrase(query)
    assert result["stats"] == {"hits": 1, "occurrences": 1}, result
    assert _paths(result) == [(WIKI, "phrases.md")]
    (chunk,) = result["docs"][0]["chunks"]
    assert chunk["heading_path"][-1] == where and chunk["score"] == 1
    assert result["docs"][0]["score"] == 1 and result["warnings"] == []
    # The snippet shows the occurrence (whitespace collapsed).
    shown = " ".join(query.split()).lower()
    assert shown in chunk["snippet"].lower().replace("\u00a0", " ")


@pytest.mark.parametrize(
    "query",
    [
        "1_%",  # as a LIKE pattern it would match "100% ..."
        'it"s',
        "Tax Abatement",  # the heading has markup: **Abatement**; the breadcrumb is not searched
        "Phrase Guide > Whitespace",  # a breadcrumb
        "Phrase Guide - Intro",  # the summary
        "Field Guide",  # the PDF's title: only in its breadcrumb
        "page:2",  # a PDF breadcrumb
        "tax refund",  # a paraphrase: no vectors, no BM25
        "alpha omega ## Second Part bravo",  # straddles two Markdown chunks, which do not overlap
    ],
)
def test_phrase_does_not_match(world: World, query: str) -> None:
    found = world.call(query=query, match="phrase")
    assert found.structured_content["docs"] == [] and found.structured_content["stats"]["hits"] == 0
    assert found.structured_content["warnings"] == []
    assert "no matches" in found.content[0].text


def test_phrase_matches_chunk_bodies_only(world: World) -> None:
    # "Phrase Guide" is in every breadcrumb of the page but in the text of its first chunk only.
    result = world.phrase("Phrase Guide")
    assert result["stats"] == {"hits": 1, "occurrences": 1}
    assert [c["heading_path"] for c in result["docs"][0]["chunks"]] == [["Phrase Guide"]]
    # Each side of the Markdown split matches on its own.
    assert _paths(world.phrase("alpha omega")) == [(WIKI, "straddle.md")]
    assert _paths(world.phrase("## Second Part bravo charlie")) == [(WIKI, "straddle.md")]


def _log_chunks(world: World) -> list[list[str]]:
    """log.txt's chunks as word lists, in file order: every chunk holds a "w", and a 4000-character
    snippet is a whole chunk."""
    listing = world.phrase("w", corpus="library", chunks_per_file=20, snippet_chars=4000)
    log = next(doc for doc in listing["docs"] if doc["path"] == "log.txt")
    return sorted((c["snippet"].split() for c in log["chunks"]), key=lambda words: WORDS.index(words[0]))


def test_phrase_across_overlapped_text_splits_counts_once(world: World) -> None:
    chunks = _log_chunks(world)
    assert len(chunks) >= 3 and chunks[0][0] == "w1" and chunks[-1][-1] == "w120"
    for before, after in pairwise(chunks):
        # Each chunk repeats the last words of the one before.
        shared = [word for word in after if word in before]
        assert len(shared) >= 2 and after[: len(shared)] == before[-len(shared) :], (before, after)
        probes = [
            # Wholly in the repeated words: in both chunks, counted once, in the earlier one.
            (f"{shared[0]} {shared[1]}", before),
            # Across the split point: whole only in the later chunk, thanks to the overlap.
            (f"{before[-1]} {WORDS[WORDS.index(before[-1]) + 1]}", after),
        ]
        for query, holder in probes:
            result = world.phrase(query, corpus="library", snippet_chars=4000)
            assert result["stats"] == {"hits": 1, "occurrences": 1}, (query, result["stats"])
            (doc,) = result["docs"]
            assert doc["path"] == "log.txt" and doc["score"] == 1
            assert doc["chunks"][0]["snippet"].split() == holder, query
    # Every "w" of the file counted once, though the overlaps repeat some.
    counts = world.phrase("w", corpus="library", output="counts")
    log = next(doc for doc in counts["docs"] if doc["path"] == "log.txt")
    assert log["score"] == 120 and log["coverage"]["chunks"] == len(chunks)


def test_phrase_result_and_outline(world: World) -> None:
    found = world.call(query="starts here and continues on", match="phrase", snippet_chars=60)
    result = found.structured_content
    (doc,) = result["docs"]
    (chunk,) = doc["chunks"]
    assert doc["summary"].startswith("Phrase Guide - Intro") and doc["stale"] is False
    assert doc["absolute_path"] == str(world.acme / ".hallouminate" / "wiki" / "phrases.md")
    lines = Path(doc["absolute_path"]).read_text().split("\n")
    assert lines[chunk["line_start"] - 1] == "## Whitespace"
    assert "starts here and continues on" in chunk["snippet"] and len(chunk["snippet"]) <= 60
    text = found.content[0].text.split("\n")
    assert text[0].startswith("starts here and continues on  ") and text[0].endswith(" 1 hit  1 occurrence")
    assert "phrases.md  (1)" in text
    assert f"  L{chunk['line_start']}-{chunk['line_end']}  Phrase Guide > Whitespace  (1)" in text
    assert any(line.strip() == chunk["snippet"] for line in text)


def test_phrase_ranks_files_and_chunks_by_occurrences(world: World) -> None:
    result = world.phrase("lighthouse keeper", corpus="library", chunks_per_file=10)
    assert _paths(result) == [("library", "guide.pdf"), ("library", "service.json")]
    guide, service = result["docs"]
    assert guide["score"] == 4 and [c["score"] for c in guide["chunks"]] == [1, 1, 1, 1]
    assert sorted(c["page"] for c in guide["chunks"]) == [1, 2, 2, 2]
    assert service["score"] == 1 and "page" not in service["chunks"][0]
    assert result["stats"] == {"hits": 5, "occurrences": 5} and result["warnings"] == []


# -- pages -----------------------------------------------------------------------------------------------
def test_phrase_group_by_page(world: World) -> None:
    result = world.phrase("lighthouse keeper", corpus="library", group_by="page", chunks_per_file=5)
    guide, service = result["docs"]
    assert {c["page"]: c["chunk_count"] for c in guide["chunks"]} == {1: 1, 2: 3}
    assert all(c["heading_path"] == ["Field Guide", f"page:{c['page']}"] for c in guide["chunks"])
    assert guide["score"] == 4 and result["warnings"] == []
    # A chunk without a page stays a single entry.
    (json_chunk,) = service["chunks"]
    assert "chunk_count" not in json_chunk and "page" not in json_chunk
    # chunks_per_file caps pages.
    capped = world.phrase("lighthouse keeper", corpus="library", group_by="page", chunks_per_file=1)
    assert len(capped["docs"][0]["chunks"]) == 1 and _bounds(capped) == ["chunks_per_file"]
    text = (
        world.call(query="lighthouse keeper", match="phrase", corpus="library", group_by="page")
        .content[0]
        .text
    )
    assert "Field Guide > page:2  (1)  [3 on this page]" in text


def test_ranked_group_by_page_keeps_the_best_chunk_of_each_page(world: World) -> None:
    query = "lighthouse keeper of page two"
    flat = world.ground(query=query, corpus="library", limit=10, chunks_per_file=20)
    grouped = world.ground(query=query, corpus="library", limit=10, chunks_per_file=20, group_by="page")
    pdf_flat = next(d for d in flat["docs"] if d["path"] == "guide.pdf")["chunks"]
    pdf_grouped = next(d for d in grouped["docs"] if d["path"] == "guide.pdf")["chunks"]
    pages = sorted({c["page"] for c in pdf_flat})
    assert sorted(c["page"] for c in pdf_grouped) == pages  # one entry per page
    for entry in pdf_grouped:
        on_page = [c for c in pdf_flat if c["page"] == entry["page"]]
        assert entry["chunk_count"] == len(on_page)
        best = max(on_page, key=lambda c: c["score"])
        assert (entry["score"], entry["line_start"]) == (best["score"], best["line_start"])
    for doc in grouped["docs"]:
        if doc["path"] != "guide.pdf":
            assert all("chunk_count" not in c for c in doc["chunks"])
    one = world.ground(query=query, corpus="library", limit=10, chunks_per_file=1, group_by="page")
    top = next(d for d in one["docs"] if d["path"] == "guide.pdf")["chunks"]
    assert len(top) == 1 and top[0]["page"] == max(pdf_grouped, key=lambda c: c["score"])["page"]


# -- counts ----------------------------------------------------------------------------------------------
def test_counts_shape_and_what_they_ignore(world: World) -> None:
    found = world.call(
        query="lighthouse keeper",
        match="phrase",
        output="counts",
        corpus="library",
        top_files=1,
        chunks_per_file=1,
        limit=1,
    )
    result = found.structured_content
    assert result["warnings"] == [] and result["stats"] == {"hits": 5, "occurrences": 5}
    guide, service = result["docs"]
    assert set(guide) == {"corpus", "path", "absolute_path", "score", "stale", "coverage"}
    assert (guide["path"], guide["score"], guide["coverage"]) == ("guide.pdf", 4, {"chunks": 4, "pages": 2})
    assert (service["path"], service["score"], service["coverage"]) == (
        "service.json",
        1,
        {"chunks": 1, "pages": None},
    )
    assert guide["corpus"] == "library" and guide["absolute_path"].endswith("/library/guide.pdf")
    text = found.content[0].text
    assert "guide.pdf  (4)\n  4 chunks on 2 pages" in text and "service.json  (1)\n  1 chunk\n" in text + "\n"
    union = world.phrase("quartz lantern protocol", output="counts")
    assert _paths(union) == [(WIKI, "tie.md"), ("notes", "tie.md")]
    assert all(doc["coverage"] == {"chunks": 1, "pages": None} for doc in union["docs"])
    grouped = world.phrase("lighthouse keeper", output="counts", corpus="library", group_by="page")
    assert grouped["docs"] == result["docs"]


def test_phrase_over_a_corpus_with_nothing_indexed_says_so(world: World) -> None:
    for output in ({}, {"output": "counts"}):
        arguments = {"cwd": str(world.bare), "query": "anything", "match": "phrase", **output}
        result = world.client.call("ground", arguments).structured_content
        jsonschema.validate(result, RESULT_SCHEMA)
        assert result["docs"] == [] and result["stats"] == {"hits": 0, "occurrences": 0}
        assert [w["code"] for w in result["warnings"]] == ["not-indexed"]
        assert "repo:bare:wiki" in result["warnings"][0]["message"]


# -- truncation warnings ---------------------------------------------------------------------------------
def test_each_bound_that_cuts_a_phrase_result_is_named(world: World) -> None:
    limited = world.phrase("copper kettle rule", limit=2)
    assert _bounds(limited) == ["limit"] and len(limited["docs"]) == 2
    (warning,) = limited["warnings"]
    assert "limit=2" in warning["message"] and "7 matching chunks" in warning["message"]
    assert "Do not conclude absence or uniqueness" in warning["message"]
    per_file = world.phrase("lighthouse keeper", corpus="library", chunks_per_file=3)
    assert _bounds(per_file) == ["chunks_per_file"] and len(per_file["docs"][0]["chunks"]) == 3
    everything = world.phrase("copper kettle rule", limit=3, top_files=1, chunks_per_file=1)
    assert _bounds(everything) == ["limit", "top_files"]
    text = world.call(query="copper kettle rule", match="phrase", top_files=2).content[0].text
    assert "warning [phrase-truncated]: " in text and "top_files=2" in text


# -- rejected combinations and bounds --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"query": "   ", "match": "phrase"}, ["query", "512", "whitespace"]),
        ({"query": "x" * 513, "match": "phrase"}, ["query", "513", "512"]),
        ({"query": "x", "output": "counts"}, ["output", 'match "phrase"']),
        ({"query": "x", "output": "counts", "match": "ranked"}, ["output", 'match "phrase"']),
        ({"query": "x", "match": "exact"}, ["match", "phrase"]),
        ({"query": "x", "group_by": "chapter"}, ["group_by", "page"]),
        ({"query": "x", "output": "docs"}, ["output", "counts"]),
        ({"query": "x", "match": "phrase", "top_files": 101}, ["top_files", "100"]),
        ({"query": "x", "match": "phrase", "chunks_per_file": 0}, ["chunks_per_file", "1"]),
        ({"query": "x", "match": "phrase", "limit": 1001}, ["limit", "1000"]),
        ({"query": "x", "match": "phrase", "snippet_chars": 19}, ["snippet_chars", "20"]),
        ({"query": "", "match": "phrase"}, ["query", "1"]),
    ],
)
def test_rejected_combinations_and_bounds(world: World, args: dict[str, Any], fragments: list[str]) -> None:
    error = world.error(**args)
    assert error.code == INVALID_PARAMS
    for fragment in fragments:
        assert fragment in error.message, error.message


def test_phrase_query_of_512_characters_is_accepted(world: World) -> None:
    assert world.phrase("x" * 512)["docs"] == []
