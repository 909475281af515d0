"""``footnotes``: include (default), exclude or only the footnote definitions a chunk carries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from hallouminate.search.footnotes import split_notes, view
from support.files import write
from support.mcp_world import McpClient, make_repo, module_sandbox

PAGE = """# Glacier Survey

## Findings

The marmot colony doubled since the last count.[^census] Meltwater reached the lower valley.[^gauge]

[^census]: Zygomatic field census of 2019, volume four.
[^gauge]: River gauge telemetry, station nine.
    Continued: readings every fifteen minutes.

## Method

Counts were taken at dawn from three ridges.
"""


def test_split_notes_separates_definitions_and_their_continuations() -> None:
    body, notes = split_notes(
        "Text one.[^a]\n\nMore text.\n\n[^a]: Source A.\n\n    Continued note.\n\nTrailing body."
    )
    assert body == "Text one.[^a]\n\nMore text.\n\nTrailing body."
    assert notes == "[^a]: Source A.\n\n    Continued note."
    assert view("plain text", "exclude") == "plain text" and view("plain text", "only") == ""
    assert view("[^x]: only a note", "include") == "[^x]: only a note"


@dataclass
class World:
    repo: Path
    client: McpClient

    def ground(self, **arguments: Any) -> dict[str, Any]:
        return self.client.call("ground", {"cwd": str(self.repo), **arguments}).structured_content


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "survey")
        write(repo / ".hallouminate" / "wiki" / "glacier.md", PAGE)
        write(repo / ".hallouminate" / "wiki" / "other.md", "# Other\n\nNothing about rivers here.\n")
        client = McpClient(box)
        try:
            client.call("index", {"cwd": str(repo)})
            yield World(repo, client)
        finally:
            client.close()


def _snippets(result: dict[str, Any]) -> list[str]:
    return [chunk["snippet"] for doc in result["docs"] for chunk in doc["chunks"]]


def test_by_default_a_note_is_found_and_shown_with_the_sentence_citing_it(world: World) -> None:
    found = world.ground(query="zygomatic field census", match="phrase")
    assert found["docs"][0]["path"] == "glacier.md" and found["docs"][0]["score"] == 1
    ranked = world.ground(query="river gauge telemetry station", top_files=1, chunks_per_file=1)
    assert ranked["docs"][0]["path"] == "glacier.md"


def test_exclude_ignores_the_definitions(world: World) -> None:
    assert world.ground(query="zygomatic field census", match="phrase", footnotes="exclude")["docs"] == []
    body = world.ground(query="marmot colony doubled", match="phrase", footnotes="exclude")
    assert body["docs"][0]["path"] == "glacier.md"
    ranked = world.ground(query="marmot colony doubled meltwater", footnotes="exclude")
    assert all("Zygomatic" not in snippet for snippet in _snippets(ranked))


def test_only_searches_and_shows_the_definitions(world: World) -> None:
    assert world.ground(query="marmot colony", match="phrase", footnotes="only")["docs"] == []
    notes = world.ground(query="station nine", match="phrase", footnotes="only")
    assert notes["docs"][0]["path"] == "glacier.md"
    assert notes["docs"][0]["chunks"][0]["snippet"].startswith("[^")
    ranked = world.ground(query="where do the river readings come from", footnotes="only")
    snippets = _snippets(ranked)
    assert snippets and all(s.startswith("[^") for s in snippets)
    assert {doc["path"] for doc in ranked["docs"]} == {"glacier.md"}  # other.md has no notes


def test_an_unknown_footnotes_value_is_refused(world: World) -> None:
    with pytest.raises(MCPError) as refused:
        world.ground(query="marmot", footnotes="sometimes")
    assert refused.value.error.code == -32602 and "footnotes" in refused.value.error.message
