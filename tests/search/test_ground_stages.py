"""ground's post-retrieval stages through a real MCP client, the real shim and a real daemon, and through
the real CLI (issue 15): ``mmr`` (diversity measured on near-duplicate pages; bounds refused), ``parent``
(both kinds of expansion, exact ``expanded_from``, score and order unchanged) and ``match_spans`` (byte
offsets round-trip on ASCII and on Japanese pages with frontmatter; at most 100).

One daemon and one index for the module (the default 128-token chunks).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.analysis import analyze, query_terms, term_tokens
from support.files import write
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, hm

# -- mmr: five copies of one page (each a little reworded), and five other pages on the same question -----
DUPLICATE = (
    "# Descaling the kettle\n\nTo descale the kettle, dissolve two spoons of citric acid in a full kettle of "
    "water, boil it, leave it for twenty minutes, then rinse the kettle twice{end}\n"
)
ENDS = [".", " with cold water.", " and boil fresh water once.", " before use.", " thoroughly."]
OTHERS = {
    "vinegar": "# Vinegar\n\nDescaling a kettle with white vinegar: half vinegar, half water, boil and rinse.\n",
    "hard-water": "# Hard water\n\nKettles scale faster in hard-water areas, where limescale builds on the "
    "element within weeks; descale them monthly.\n",
    "filter": "# Filter jugs\n\nA filter jug keeps limescale out of the kettle, so it needs descaling less "
    "often.\n",
    "element": "# Heating element\n\nCitric acid also cleans the kettle's heating element: scrub the scale "
    "off the coil once it has soaked.\n",
    "coffee": "# Coffee machine\n\nDescale the coffee machine with citric acid too, running the solution "
    "through the brew cycle.\n",
}
MMR_QUERY = "descaling a kettle with citric acid"

# -- parent ---------------------------------------------------------------------------------------------
HANDOVER = [
    "The outgoing engineer writes the handover note before nine, listing every open incident, the state "
    "of each mitigation, the dashboards worth watching and anyone waiting on an answer from the rota.",
    "The incoming engineer reads the handover note, acknowledges it in the channel, and confirms the "
    "pager is routed to their phone by sending a test page through the paging tool before the shift.",
    "Incidents still open at handover stay with the outgoing engineer until the incoming one has read "
    "their timeline, so nobody picks up a live incident without the context of what was already tried.",
    "Handover ends when both engineers have signed the note; the signed note is filed in the rota "
    "folder and linked from the weekly operations review so that patterns across weeks can be seen.",
]
ROTA = (
    "# Rota\n\nThe on-call rota rotates weekly.\n\n## Handover\n\n"
    + "\n\n".join(HANDOVER)
    + "\n\n## Escalation\n\nUnanswered pages escalate to the secondary after fifteen minutes.\n"
)
PAGER = "# Pager\n\nThe pager batteries are swapped every Monday.\n\n## Spares\n\nSpare pagers live in the blue cabinet.\n"


def _manual() -> str:
    """A page of well over 2,000 tokens whose one short section is about the fuse."""
    sections = [
        f"## Part {n}\n\n"
        + " ".join(
            f"Assembly step {n}.{k} fastens bracket {k} of panel {n} with two screws." for k in range(8)
        )
        for n in range(1, 21)
    ]
    sections.insert(10, "## Fuse\n\nThe plug fuse is rated thirteen amps.")
    return "# Manual\n\n" + "\n\n".join(sections) + "\n"


# -- match_spans ----------------------------------------------------------------------------------------
BREWING = "# Brewing\n\nRunning the brew: the kettle runs hot, Kettles boil over. RUN it twice.\n"
JAPANESE = (
    "---\ntitle: 湯沸かしの手入れ\ntags: [kettle]\n---\n# 湯沸かしの手入れ\n\n"
    "毎週、ケトル（kettle）を洗います。「湯垢」は、クエン酸で落とします。\n\n"
    "湯垢が残ったら、もう一度 kettle を沸かします。\n"
)
TEA = "# Tea log\n\n" + " ".join(["tea"] * 110) + "\n"


class World:
    def __init__(self, box: Sandbox, client: McpClient, repo: Path) -> None:
        self.box = box
        self.client = client
        self.repo = repo
        self.wiki = repo / ".hallouminate" / "wiki"

    def ground(self, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.repo), **args})
        assert not result.is_error, result
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        content: dict[str, Any] = result.structured_content
        return content

    def cli(self, *args: str) -> Any:
        return hm(self.box, "ground", *args, cwd=self.repo)


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "acme")
        wiki = repo / ".hallouminate" / "wiki"
        for n, end in enumerate(ENDS, start=1):
            write(wiki / "mmr" / f"descale-{n}.md", DUPLICATE.format(end=end))
        for name, text in OTHERS.items():
            write(wiki / "mmr" / f"{name}.md", text)
        write(wiki / "rota.md", ROTA)
        write(wiki / "pager.md", PAGER)
        write(wiki / "manual.md", _manual())
        write(wiki / "brewing.md", BREWING)
        write(wiki / "ja" / "yuaka.md", JAPANESE)
        write(wiki / "tea.md", TEA)
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(box, client, repo)
        finally:
            client.close()


def _group(path: str) -> str:
    """The page a result is a copy of: the five descale-N pages are one."""
    name = path.rsplit("/", 1)[-1]
    return "descale" if name.startswith("descale-") else name


def _chunks(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(doc["path"], chunk) for doc in result["docs"] for chunk in doc["chunks"]]


def _lines(world: World, path: str, start: int, end: int) -> str:
    """Lines ``start``..``end`` of a page as read_markdown gives them (1-based, frontmatter counted)."""
    return "\n".join((world.wiki / path).read_text().split("\n")[start - 1 : end])


# -- mmr ------------------------------------------------------------------------------------------------


def test_mmr_puts_more_distinct_pages_in_the_top_five(world: World) -> None:
    plain = world.ground(query=MMR_QUERY, top_files=5)
    diverse = world.ground(query=MMR_QUERY, top_files=5, mmr=True)
    plain_pages = {_group(doc["path"]) for doc in plain["docs"]}
    diverse_pages = {_group(doc["path"]) for doc in diverse["docs"]}
    # Measured: without mmr the five copies fill the top five.
    assert len(plain_pages) < len(diverse_pages), (plain_pages, diverse_pages)
    assert "mmr" not in plain
    assert diverse["mmr"] == {"lambda": 0.7, "same_doc_penalty": 0.0, "pool": 50}
    # The best page stays first, and scores still mean relevance: the fused score of the file.
    assert diverse["docs"][0]["path"] == plain["docs"][0]["path"]


def test_mmr_lambda_one_is_the_plain_ranking(world: World) -> None:
    plain = world.ground(query=MMR_QUERY, top_files=8)
    same = world.ground(query=MMR_QUERY, top_files=8, mmr=True, mmr_lambda=1)
    assert [d["path"] for d in same["docs"]] == [d["path"] for d in plain["docs"]]
    assert [d["score"] for d in same["docs"]] == [d["score"] for d in plain["docs"]]


@pytest.mark.parametrize(
    ("param", "value"),
    [("mmr_lambda", 1.5), ("mmr_lambda", -0.1), ("mmr_same_doc_penalty", 2), ("mmr_lambda", "high")],
)
def test_mmr_weights_out_of_range_are_refused(world: World, param: str, value: Any) -> None:
    with pytest.raises(MCPError) as info:
        world.client.call("ground", {"cwd": str(world.repo), "query": MMR_QUERY, "mmr": True, param: value})
    assert info.value.error.code == INVALID_PARAMS
    assert param in info.value.error.message


@pytest.mark.parametrize(("flag", "value"), [("--mmr-lambda", "1.5"), ("--mmr-same-doc-penalty", "-1")])
def test_cli_refuses_mmr_weights_out_of_range_naming_the_flag(world: World, flag: str, value: str) -> None:
    done = world.cli("--mmr", flag, value, MMR_QUERY)
    assert done.returncode == 2, done
    assert flag in done.stderr and "0<=x<=1" in done.stderr, done.stderr


def test_mmr_and_parent_are_ranked_mode_only(world: World) -> None:
    for param in ("mmr", "parent"):
        with pytest.raises(MCPError) as info:
            world.client.call(
                "ground", {"cwd": str(world.repo), "query": "kettle", "match": "phrase", param: True}
            )
        assert info.value.error.code == INVALID_PARAMS
        assert f'{param} needs match "ranked"' in info.value.error.message


# -- parent ---------------------------------------------------------------------------------------------


def test_parent_grows_a_chunk_to_its_siblings_under_the_same_heading(world: World) -> None:
    query = "incoming engineer acknowledges the handover note and sends a test page"
    plain = world.ground(query=query, top_files=3)
    grown = world.ground(query=query, top_files=3, parent=True)
    path, chunk = _chunks(grown)[0]
    assert path == "rota.md"
    assert chunk["heading_path"] == ["Rota", "Handover"]
    # The rota's chunks: 0 the title and its line, 1-2 the handover section (its heading and two paragraphs
    # each), 3 the escalation. The hit is one of 1-2; it grows to both, not past its heading.
    assert chunk["expanded_from"] == {"kind": "adjacent", "from_index": 1, "to_index": 2}
    assert chunk["text"] == "## Handover\n\n" + "\n\n".join(HANDOVER)
    assert (chunk["line_start"], chunk["line_end"]) == (5, 13)
    assert chunk["text"] == _lines(world, path, chunk["line_start"], chunk["line_end"])
    assert grown["parent"]["expanded"] == sum(len(doc["chunks"]) for doc in grown["docs"])
    assert grown["parent"]["short_tokens"] == 100 and grown["parent"]["max_tokens"] == 2000
    _same_ranking(plain, grown)


def test_parent_grows_a_short_chunk_to_its_whole_page(world: World) -> None:
    query = "when are the pager batteries swapped"
    plain = world.ground(query=query, top_files=3)
    grown = world.ground(query=query, top_files=3, parent=True)
    path, chunk = _chunks(grown)[0]
    assert path == "pager.md"
    assert chunk["expanded_from"] == {"kind": "whole_document", "total_chunks": 2}
    assert (chunk["line_start"], chunk["line_end"]) == (1, 7)
    assert chunk["text"] == PAGER.rstrip("\n")
    _same_ranking(plain, grown)


def test_parent_keeps_a_short_chunk_of_a_long_page_under_the_bound(world: World) -> None:
    # The fuse section is short, but its page is far over 2,000 tokens: it grows to its siblings, and it
    # has none.
    grown = world.ground(query="plug fuse rated amps", top_files=1, chunks_per_file=1, parent=True)
    path, chunk = _chunks(grown)[0]
    assert (path, chunk["heading_path"]) == ("manual.md", ["Manual", "Fuse"])
    assert chunk["expanded_from"]["kind"] == "adjacent"
    assert chunk["expanded_from"]["from_index"] == chunk["expanded_from"]["to_index"]
    assert chunk["text"] == "## Fuse\n\nThe plug fuse is rated thirteen amps."


def _same_ranking(plain: dict[str, Any], grown: dict[str, Any]) -> None:
    """Score and order unchanged: the same files and chunks in the same order with the same scores."""
    assert [(d["path"], d["score"]) for d in grown["docs"]] == [
        (d["path"], d["score"]) for d in plain["docs"]
    ]
    for before, after in zip(_chunks(plain), _chunks(grown), strict=True):
        assert after[1]["score"] == before[1]["score"]
        assert after[1]["heading_path"] == before[1]["heading_path"]
        assert after[1]["snippet"] == before[1]["snippet"]
        assert (
            after[1]["line_start"] <= before[1]["line_start"] <= before[1]["line_end"] <= after[1]["line_end"]
        )
    assert "parent" not in plain and all(
        "expanded_from" not in c and "text" not in c for _, c in _chunks(plain)
    )


def test_cli_mmr_and_parent_flags(world: World) -> None:
    done = world.cli("--mmr", "--mmr-lambda", "0.5", "--parent", "--format", "json", MMR_QUERY)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    jsonschema.validate(result, RESULT_SCHEMA)
    assert result["mmr"] == {"lambda": 0.5, "same_doc_penalty": 0.0, "pool": 50}
    assert result["parent"]["expanded"] >= 1
    assert all("expanded_from" in chunk for _, chunk in _chunks(result))
    outline = world.cli("--parent", "when are the pager batteries swapped")
    assert outline.returncode == 0, outline.stderr
    assert "Spare pagers live in the blue cabinet." in outline.stdout  # the expanded text is shown


# -- match_spans ----------------------------------------------------------------------------------------


def _quoted(world: World, path: str, chunk: dict[str, Any]) -> list[str]:
    """Each span sliced out of the chunk's text (the page's lines line_start..line_end) as UTF-8 bytes."""
    text = chunk.get("text") or _lines(world, path, chunk["line_start"], chunk["line_end"])
    data = text.encode("utf-8")
    return [data[span["start"] : span["end"]].decode("utf-8") for span in chunk["match_spans"]]


def test_spans_quote_the_query_words_in_ascii_text_stemmed_forms_included(world: World) -> None:
    result = world.ground(query="run kettle", top_files=1)
    path, chunk = _chunks(result)[0]
    assert path == "brewing.md"
    assert _quoted(world, path, chunk) == ["Running", "kettle", "runs", "Kettles", "RUN"]
    # The same words in parent's expanded text (the whole page: offsets into ``text``).
    grown = world.ground(query="run kettle", top_files=1, parent=True)
    path, chunk = _chunks(grown)[0]
    assert chunk["expanded_from"]["kind"] == "whole_document"
    assert _quoted(world, path, chunk) == ["Running", "kettle", "runs", "Kettles", "RUN"]


def test_spans_round_trip_on_a_japanese_page_with_frontmatter(world: World) -> None:
    query = "湯垢 kettle"
    result = world.ground(query=query, top_files=1)
    path, chunk = _chunks(result)[0]
    assert path == "ja/yuaka.md"
    assert chunk["line_start"] > 4  # after the frontmatter, which line numbers count
    quoted = _quoted(world, path, chunk)
    # The analyser reads Japanese runs as character bigrams (ADR 0053), as BM25 does: "湯垢" is found inside
    # "湯垢が残ったら" too, with no separator around it.
    assert quoted == ["kettle", "湯垢", "湯垢", "kettle"]
    wanted = set(term_tokens(query_terms(query)))
    assert all(
        analyze(word) == [token] and token in wanted
        for word, token in zip(quoted, ["kettl", "湯垢", "湯垢", "kettl"], strict=True)
    )
    # Offsets are bytes, not characters: the first "湯垢" starts past the three-byte characters before it.
    text = _lines(world, path, chunk["line_start"], chunk["line_end"])
    first = next(span for span, word in zip(chunk["match_spans"], quoted, strict=True) if word == "湯垢")
    assert first["start"] == len(text[: text.index("湯垢")].encode("utf-8")) != text.index("湯垢")


def test_spans_are_capped_at_one_hundred(world: World) -> None:
    result = world.ground(query="tea", top_files=1)
    path, chunk = _chunks(result)[0]
    assert path == "tea.md"
    assert len(chunk["match_spans"]) == 100  # of the 110 in the chunk: the first hundred
    # The chunk's text starts with its heading line, "# Tea log".
    assert _quoted(world, path, chunk) == ["Tea"] + ["tea"] * 99
    assert chunk["match_spans"][:2] == [{"start": 2, "end": 5}, {"start": 11, "end": 14}]


def test_spans_are_absent_when_the_query_has_no_searchable_word(world: World) -> None:
    result = world.ground(query="how do I do it", top_files=3)
    assert result["docs"]
    assert all("match_spans" not in chunk for _, chunk in _chunks(result))
