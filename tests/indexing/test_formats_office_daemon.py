"""Word documents and slide decks through the real thing: a daemon indexes them with the real model, the
real MCP client asks ``ground`` (ranked, phrase, counts) and ``read_markdown`` opens what it cites.

One daemon for the module; both formats share it (each index costs seconds of embedding). Corrupt files
sit in the same corpus: they are skipped with their reasons and the rest is indexed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.office_files import Box, Slide, docx_bytes, pptx_bytes, with_member, zip_bomb

TABLE_PHRASE = "amber lighthouse protocol"
NOTES_PHRASE = "crimson okapi migration"

HANDBOOK = docx_bytes(
    [
        ("title", "Operations Handbook"),
        ("p", "How the platform team runs its services day to day."),
        ("h", 1, "Escalation"),
        ("p", "Every page goes to the primary first; the secondary takes it after fifteen minutes."),
        ("h", 2, "Contacts"),
        (
            "table",
            [
                ["Situation", "Procedure", "Owner"],
                ["storm warning", f"follow the {TABLE_PHRASE} before noon", "Harbour desk"],
                ["disk full", "rotate the logs", "Storage"],
            ],
        ),
        ("h", 1, "Releases"),
        ("p", "Releases ship on Tuesdays after the freeze lifts."),
    ],
    title="Ops Handbook",
)

DECK = pptx_bytes(
    [
        Slide("Welcome", boxes=[Box(1, 2, "Agenda for the quarterly review.")]),
        Slide(
            "Migration Plan",
            boxes=[Box(1, 2, "Move the archive to the new cluster.\nCut over in two waves.")],
            notes=f"Remind everyone that the {NOTES_PHRASE} starts on Monday.",
        ),
    ],
    title="Quarterly Review",
)


class World:
    def __init__(self, client: McpClient, repo: Path, report: dict[str, Any]) -> None:
        self.client = client
        self.repo = repo
        self.report = report

    def ground(self, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.repo), "corpus": "library", **args})
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        return result.structured_content

    def read(self, path: str) -> dict[str, Any]:
        args = {"cwd": str(self.repo), "corpus": "library", "path": path, "line_numbers": True}
        return self.client.call("read_markdown", args).structured_content


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache, "[indexing]\nchunk_tokens = 64\n") as box:
        repo = make_repo(
            box,
            "office",
            '[[corpus]]\nname = "library"\npaths = ["library"]\nglobs = ["**/*.docx", "**/*.pptx"]\n',
        )
        library = repo / "library"
        library.mkdir()
        (library / "handbook.docx").write_bytes(HANDBOOK)
        (library / "review.pptx").write_bytes(DECK)
        (library / "truncated.docx").write_bytes(HANDBOOK[: len(HANDBOOK) // 2])
        (library / "broken.pptx").write_bytes(with_member(DECK, "ppt/slides/slide1.xml", b"<p:sld><oops"))
        (library / "bomb.docx").write_bytes(zip_bomb("word/document.xml", 60 << 20))
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo), "corpus": "library"}).structured_content
            yield World(client, repo, report)
        finally:
            client.close()


def corpus_report(world: World) -> dict[str, Any]:
    (report,) = [c for c in world.report["corpora"] if c["corpus"] == "library"]
    return report


def test_corrupt_files_are_skipped_with_their_reasons_and_the_rest_is_indexed(world: World) -> None:
    report = corpus_report(world)
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}
    assert set(reasons) == {"truncated.docx", "broken.pptx", "bomb.docx"}, report
    assert "not a valid .docx file" in reasons["truncated.docx"]
    assert "broken .pptx file: XMLSyntaxError" in reasons["broken.pptx"]
    assert "max_decompressed_size" in reasons["bomb.docx"]
    assert report["files_upserted"] == 2


def numbered_lines(content: str, start: int, end: int) -> str:
    """Lines ``start``..``end`` of read_markdown's numbered content (the "N: " prefixes removed)."""
    by_number = {}
    for line in content.split("\n"):
        match = re.match(r"(\d+): ?(.*)", line)
        if match:
            by_number[int(match.group(1))] = match.group(2)
    return "\n".join(by_number[n] for n in range(start, end + 1))


def section(content: str, title: str) -> str:
    """The ``## <title>`` section of a multi-part read."""
    head = f"## {title}\n\n"
    at = content.index(head) + len(head)
    end = content.find("\n## ", at)
    return content[at : end if end >= 0 else len(content)]


def test_a_phrase_in_a_word_table_is_found_at_its_lines_and_read_there(world: World) -> None:
    result = world.ground(query=f"who follows the {TABLE_PHRASE}?")
    doc = result["docs"][0]
    assert doc["path"] == "handbook.docx"
    chunk = doc["chunks"][0]
    assert "page" not in chunk  # one unlabelled part
    assert chunk["heading_path"] == ["Ops Handbook", "Escalation", "Contacts"]
    read = world.read("handbook.docx")
    assert read["format"] == "docx" and read.get("pages") is None
    cited = numbered_lines(read["content"], chunk["line_start"], chunk["line_end"])
    assert f"storm warning | follow the {TABLE_PHRASE} before noon | Harbour desk" in cited


def test_a_phrase_in_speaker_notes_is_found_on_its_slide_and_read_there(world: World) -> None:
    result = world.ground(query=f"when does the {NOTES_PHRASE} start")
    doc = result["docs"][0]
    assert doc["path"] == "review.pptx"
    chunk = doc["chunks"][0]
    assert chunk["page"] == 2
    assert chunk["heading_path"] == ["Quarterly Review", "slide:2", "Migration Plan", "notes"]
    read = world.read("review.pptx")
    assert read["format"] == "pptx" and read["pages"] == 2
    slide = section(read["content"], "Slide 2: Migration Plan")
    cited = numbered_lines(slide, chunk["line_start"], chunk["line_end"])
    assert cited.startswith("Notes:\n") and NOTES_PHRASE in cited


@pytest.mark.parametrize(
    ("phrase", "path", "page"), [(TABLE_PHRASE, "handbook.docx", None), (NOTES_PHRASE, "review.pptx", 2)]
)
def test_phrase_mode_and_counts_find_both(world: World, phrase: str, path: str, page: int | None) -> None:
    found = world.ground(query=phrase, match="phrase")
    assert [d["path"] for d in found["docs"]] == [path]
    (chunk,) = found["docs"][0]["chunks"]
    assert chunk.get("page") == page and chunk["score"] == 1
    counts = world.ground(query=phrase, match="phrase", output="counts")
    assert [(d["path"], d["score"], d["coverage"]) for d in counts["docs"]] == [
        (path, 1, {"chunks": 1, "pages": 1 if page else None})
    ]
