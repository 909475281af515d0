"""Through a real MCP client, what the tool pages promise: a directory named as a page is refused as a
directory by every page tool, ``read_markdown`` on a PDF gives the text the indexer extracted, page by
page, and ``list_corpora`` publishes the fields it returns."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.protocol.schemas import RESULTS
from support.files import pdf_bytes, write
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, mcp_session

WIKI = "repo:acme:wiki"
PAGE_ONE = "The lighthouse keeper logs every passing ship in the harbour register."
PAGE_TWO = "Fog signals sound twice a minute when visibility drops below one mile."


class World:
    def __init__(self, box: Sandbox, client: McpClient, acme: Path) -> None:
        self.box = box
        self.client = client
        self.acme = acme

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = self.client.call(tool, {"cwd": str(self.acme), **args})
        jsonschema.validate(result.structured_content, RESULTS[tool])
        return dict(result.structured_content)

    def error(self, tool: str, **args: Any) -> MCPError:
        with pytest.raises(MCPError) as info:
            self.client.call(tool, {"cwd": str(self.acme), **args})
        return info.value


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        acme = make_repo(
            box,
            "acme",
            '[[corpus]]\nname = "library"\npaths = ["library"]\nglobs = ["**/*.pdf", "**/*.md"]\n',
        )
        wiki = acme / ".hallouminate" / "wiki"
        write(wiki / "guides" / "setup.md", "# Setup\n\nRun make setup.\n")
        write(acme / "library" / "manuals" / "intro.md", "# Intro\n")
        (acme / "library" / "keeper.pdf").write_bytes(pdf_bytes([PAGE_ONE, PAGE_TWO], title="Keeper"))
        (acme / "library" / "scan.pdf").write_bytes(pdf_bytes(["", "Only the second page has text."]))
        (acme / "library" / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is no PDF at all\n")
        box.start_daemon()
        client = McpClient(box)
        try:
            yield World(box, client, acme)
        finally:
            client.close()


@pytest.mark.parametrize(
    ("tool", "corpus", "path"),
    [
        ("read_markdown", WIKI, "guides"),
        ("read_markdown", "library", "manuals"),
        ("add_markdown", WIKI, "guides"),
        ("add_markdown", "library", "manuals"),
        ("delete_markdown", WIKI, "guides"),
        ("delete_markdown", "library", "manuals"),
    ],
)
def test_a_directory_named_as_a_page_is_refused_as_a_directory(
    world: World, tool: str, corpus: str, path: str
) -> None:
    args: dict[str, Any] = {"corpus": corpus, "path": path}
    if tool == "add_markdown":
        args["content"] = "# Not a directory\n"
    before = sorted(p.relative_to(world.acme) for p in world.acme.rglob("*"))
    error = world.error(tool, **args)
    assert error.code == INVALID_PARAMS
    assert error.data.get("problem") == "directory", (error.message, error.data)
    assert "is a directory" in error.message and "list_tree" in error.message
    assert sorted(p.relative_to(world.acme) for p in world.acme.rglob("*")) == before, "nothing changed"


def test_read_markdown_on_a_pdf_gives_its_text_page_by_page(world: World) -> None:
    result = world.call("read_markdown", corpus="library", path="keeper.pdf")
    assert result["format"] == "pdf" and result["pages"] == 2
    assert result["bytes"] == (world.acme / "library" / "keeper.pdf").stat().st_size
    content = result["content"]
    one, two = content.index("## Page 1\n"), content.index("## Page 2\n")
    assert one == 0 < content.index("lighthouse keeper") < two < content.index("Fog signals")
    # Line numbers restart in each page: they are the lines `ground` reports for a PDF hit.
    numbered = world.call("read_markdown", corpus="library", path="keeper.pdf", line_numbers=True)
    sections = numbered["content"].split("## Page ")[1:]
    assert [s.split("\n\n", 1)[1].startswith("1: ") for s in sections] == [True, True]
    hit = world.call("ground", query="fog signals visibility", corpus="library", group_by="page")
    chunk = next(c for d in hit["docs"] if d["path"] == "keeper.pdf" for c in d["chunks"])
    assert chunk["page"] == 2
    page_two = sections[1].split("\n\n", 1)[1].splitlines()
    assert page_two[chunk["line_start"] - 1].startswith(f"{chunk['line_start']}: Fog signals")


def test_a_pdf_page_without_text_says_so_and_a_broken_pdf_is_a_clear_error(world: World) -> None:
    scan = world.call("read_markdown", corpus="library", path="scan.pdf")
    assert scan["pages"] == 2
    assert scan["content"].startswith("## Page 1\n\n_(no text could be extracted from this page)_\n")
    assert "Only the second page has text." in scan["content"]
    error = world.error("read_markdown", corpus="library", path="broken.pdf")
    assert error.code == INVALID_PARAMS and error.data["problem"] == "unreadable-pdf"
    assert "'broken.pdf' is a PDF whose text cannot be extracted" in error.message
    assert "UTF-8" not in error.message


def test_the_cli_prints_a_pdf_by_page(world: World) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hallouminate", "read", "library", "keeper.pdf"],
        cwd=world.acme,
        env=world.box.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("## Page 1\n") and "## Page 2\n" in out.stdout


async def test_list_corpora_publishes_and_returns_globs_exclude_and_warnings(world: World) -> None:
    async with mcp_session(world.box) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        result = await session.call_tool("list_corpora", {"cwd": str(world.acme)})
    published = tools["list_corpora"].output_schema
    assert published is not None and "warnings" in published["properties"]
    corpus_fields = published["properties"]["corpora"]["items"]["description"]
    assert "globs (array)" in corpus_fields and "exclude (array)" in corpus_fields
    listed = result.structured_content
    jsonschema.validate(listed, published)
    jsonschema.validate(listed, RESULTS["list_corpora"])
    assert listed["warnings"] == []
    library = next(c for c in listed["corpora"] if c["name"] == "library")
    assert (library["globs"], library["exclude"]) == (["**/*.pdf", "**/*.md"], [])
