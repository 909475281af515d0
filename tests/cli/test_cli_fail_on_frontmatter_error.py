"""`[indexing] fail_on_frontmatter_error = true` (GrooveSeek's rule), through a real daemon: an index run
that leaves frontmatter unparsed reports an `error` beside its counters and still indexes the files; the
CLI prints the report and exits 1, the MCP `index` tool and the GrooveSeek face's `rebuild_index` return the
report with the `error` key (no JSON-RPC error). Without the setting, the same corpus has no `error`
(tests/shim/test_grooveseek_face.py checks the face's exact keys)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from support.files import write
from support.sandbox import Sandbox, hm, mcp_session, private_world

BROKEN = (
    "---\ntitle: [unclosed\n---\n# Harbour log\n\nThe lighthouse keeper logs every ship in the harbour.\n"
)
FIXED = (
    "---\ntitle: Harbour log\n---\n# Harbour log\n\nThe lighthouse keeper logs every ship in the harbour.\n"
)
GOOD = "# Fog\n\nFog signals sound twice a minute.\n"


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    with private_world(
        model_cache,
        prefix="hm-fm-",
        baseline_extra="[indexing]\nfail_on_frontmatter_error = true\n",
        in_process=False,
    ) as box:
        yield box


def _repo(world: Sandbox, name: str) -> Path:
    repo = world.make_repo(name, wiki=None)
    write(repo / ".hallouminate" / "wiki" / "harbour.md", BROKEN)
    write(repo / ".hallouminate" / "wiki" / "fog.md", GOOD)
    return repo


def test_the_cli_prints_the_report_with_the_error_and_exits_1(world: Sandbox) -> None:
    repo = _repo(world, "cliproj")
    run = hm(world, "index", cwd=repo)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "repo:cliproj:wiki: 2 upserted" in run.stdout  # the report first: the files are indexed
    assert (
        "  error: 1 file of corpus 'repo:cliproj:wiki' has frontmatter that does not parse (indexed as plain "
        "text; `problems` names them): fix the frontmatter, or set [indexing] fail_on_frontmatter_error = "
        "false to index such files without an error\n"
    ) in run.stdout

    again = hm(world, "index", "--format", "json", cwd=repo)
    assert again.returncode == 1, again.stderr
    (report,) = json.loads(again.stdout)["corpora"]
    assert report["frontmatter_unparsed"] == 1 and report["error"].startswith("1 file of corpus")
    assert [p["path"] for p in report["problems"] if p["problem"] == "frontmatter" and p["indexed"]] == [
        "harbour.md"
    ]
    found = hm(world, "ground", "lighthouse keeper logs every ship", "--format", "json", cwd=repo)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["docs"][0]["path"] == "harbour.md"  # indexed all the same

    write(repo / ".hallouminate" / "wiki" / "harbour.md", FIXED)
    fixed = hm(world, "index", "--format", "json", cwd=repo)
    assert fixed.returncode == 0, fixed.stderr
    (report,) = json.loads(fixed.stdout)["corpora"]
    assert report["frontmatter_unparsed"] == 0 and "error" not in report


async def test_the_index_tool_returns_the_report_with_the_error(world: Sandbox) -> None:
    repo = _repo(world, "mcpproj")
    async with mcp_session(world, cwd=repo) as session:
        result = await session.call_tool("index", {"cwd": str(repo)})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    (report,) = result.structured_content["corpora"]
    assert report["frontmatter_unparsed"] == 1 and report["files_upserted"] == 2
    assert report["error"].startswith(
        "1 file of corpus 'repo:mcpproj:wiki' has frontmatter that does not parse"
    )


async def test_the_grooveseek_rebuild_index_carries_the_error_beside_its_counters(world: Sandbox) -> None:
    kb = world.root / "kb"
    write(kb / "harbour.md", BROKEN)
    write(kb / "fog.md", GOOD)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hallouminate", "serve", "--dialect", "grooveseek", "--kb-path", str(kb)],
        env=world.env,
    )
    async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
        await session.initialize()
        result = await session.call_tool("rebuild_index", {})
    assert not result.is_error, result.content
    counters = result.structured_content
    assert counters is not None
    assert (counters["updated"], counters["frontmatter_unparsed"], counters["total_documents"]) == (2, 1, 2)
    assert counters["error"].startswith("1 file of corpus 'kb' has frontmatter that does not parse")
    shutil.rmtree(kb)
