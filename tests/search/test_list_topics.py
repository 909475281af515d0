"""``list_topics`` through a real MCP client, the real CLI and a daemon connection marked ``kb``, over a real
daemon, store and model: category/topic as the filters derive them (path segments, frontmatter overrides),
the ``children`` tree (cumulative counts; a frontmatter override still contributes its path's directories),
root, category-only and flat entries, ``last_updated`` and ``titles``, and a commit showing at once."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.client import connect_or_spawn
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, hm

# Every page's modification time (a page without a frontmatter date is dated by it).
MTIME = datetime(2023, 3, 4, 12, 0, tzinfo=UTC).timestamp()
PAGES = {
    # root: no category, no topic
    "index.md": "# Home\n\nThe start page of this wiki, linking everything else.\n",
    # root, frontmatter topic only
    "notes.md": "---\ntopic: misc\ndate: 2022-07-01\n---\n# Scratch notes\n\nLoose notes kept here.\n",
    # category-only (two segments)
    "guides/setup.md": "# Setup\n\nInstall the tools and clone the repository first.\n",
    # category-only, frontmatter category override
    "guides/intro.md": "---\ncategory: handbook\n---\n# Introduction\n\nWhat this handbook is for.\n",
    # a flat topic (pages directly in the topic directory)
    "ops/deploy/rollback.md": "---\ntitle: Rolling back\ndate: 2024-05-01\n---\n# Rollback\n\n"
    "Switch the load balancer back to the previous colour.\n",
    "ops/deploy/blue-green.md": "---\ndate: 2025-01-15\n---\n# Blue-green deploys\n\n"
    "Two identical environments, one live.\n",
    # a nested topic
    "ops/runbooks/oncall.md": "# On call\n\nWho answers the pager, and when.\n",
    "ops/runbooks/db/backup.md": "# Database backup\n\nNightly dumps go to the bucket.\n",
    "ops/runbooks/db/restore/point-in-time.md": "# Point-in-time restore\n\nReplay the WAL to a moment.\n",
    "ops/runbooks/network/dns.md": "Notes about the DNS records, with no heading at all in the page.\n",
    # frontmatter topic override: counted under ops/runbooks, contributes its own directory "tools"
    "ops/misc/tools/linters.md": "---\ntopic: runbooks\ndate: 2025-02-02\n---\n# Linters\n\n"
    "Run the linters before every release.\n",
    # frontmatter category override on a deep path: (ops, old), contributing "x"
    "archive/old/x/legacy.md": "---\ncategory: ops\n---\n# Legacy\n\nThe old way of doing things.\n",
}
EXPECTED: list[dict[str, Any]] = [
    {
        "category": None,
        "topic": None,
        "file_count": 1,
        "last_updated": "2023-03-04",
        "titles": ["Home"],
        "children": [],
    },
    {
        "category": None,
        "topic": "misc",
        "file_count": 1,
        "last_updated": "2022-07-01",
        "titles": ["Scratch notes"],
        "children": [],
    },
    {
        "category": "guides",
        "topic": None,
        "file_count": 1,
        "last_updated": "2023-03-04",
        "titles": ["Setup"],
        "children": [],
    },
    {
        "category": "handbook",
        "topic": None,
        "file_count": 1,
        "last_updated": "2023-03-04",
        "titles": ["Introduction"],
        "children": [],
    },
    {
        "category": "ops",
        "topic": "deploy",
        "file_count": 2,
        "last_updated": "2025-01-15",
        "titles": ["Blue-green deploys", "Rolling back"],
        "children": [],
    },
    {
        "category": "ops",
        "topic": "old",
        "file_count": 1,
        "last_updated": "2023-03-04",
        "titles": ["Legacy"],
        "children": [{"segment": "x", "file_count": 1, "children": []}],
    },
    {
        "category": "ops",
        "topic": "runbooks",
        "file_count": 5,
        "last_updated": "2025-02-02",
        # By path: misc/tools/linters.md sorts first; a page with no heading is titled by its file name.
        "titles": ["Linters", "Database backup", "Point-in-time restore", "dns", "On call"],
        "children": [
            {
                "segment": "db",
                "file_count": 2,
                "children": [{"segment": "restore", "file_count": 1, "children": []}],
            },
            {"segment": "network", "file_count": 1, "children": []},
            {"segment": "tools", "file_count": 1, "children": []},
        ],
    },
]


def write_pages(root: Path, pages: dict[str, str]) -> None:
    for rel, text in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (MTIME, MTIME))


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[tuple[Sandbox, McpClient, Path]]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "topics")
        write_pages(repo / ".hallouminate" / "wiki", PAGES)
        client = McpClient(box)
        try:
            client.call("index", {"cwd": str(repo)})
            yield box, client, repo
        finally:
            client.close()


def test_list_topics_groups_pages_as_the_filters_do_with_children_dates_and_titles(
    world: tuple[Sandbox, McpClient, Path],
) -> None:
    _, client, repo = world
    result = client.call("list_topics", {"cwd": str(repo)})
    assert not result.is_error, result.content
    assert result.structured_content == {"corpus": "repo:topics:wiki", "topics": EXPECTED}
    text = result.content[0].text
    assert "category ops  topic runbooks  5 documents  last updated 2025-02-02" in text
    assert "    restore/  (1)" in text  # db/restore, two levels below the topic


def test_every_listed_category_and_topic_is_a_value_the_ground_filters_accept(
    world: tuple[Sandbox, McpClient, Path],
) -> None:
    _, client, repo = world
    # The override page sits under ops/misc/ on disk, yet ground's topic filter finds it under runbooks:
    # both read the one rule (search/filters.py category_topic).
    found = client.call(
        "ground",
        {
            "cwd": str(repo),
            "query": "run the linters before a release",
            "category": "ops",
            "topic": "runbooks",
        },
    ).structured_content
    paths = {doc["path"] for doc in found["docs"]}
    assert "ops/misc/tools/linters.md" in paths
    assert paths <= {p for p in PAGES if p.startswith("ops/runbooks/")} | {"ops/misc/tools/linters.md"}


def test_a_commit_shows_in_list_topics_at_once(world: tuple[Sandbox, McpClient, Path]) -> None:
    _, client, repo = world
    wiki = repo / ".hallouminate" / "wiki"
    before = client.call("list_topics", {"cwd": str(repo)}).structured_content
    # A search first: the corpus's rows are then held in memory, and list_topics reads them there.
    client.call("ground", {"cwd": str(repo), "query": "database backup"})
    write_pages(
        wiki,
        {
            "ops/runbooks/db/replicas.md": "---\ndate: 2026-01-02\n---\n# Read replicas\n\n"
            "How the replicas follow the primary.\n"
        },
    )
    client.call("index", {"cwd": str(repo)})
    client.call("ground", {"cwd": str(repo), "query": "read replicas"})
    after = client.call("list_topics", {"cwd": str(repo)}).structured_content
    runbooks = next(t for t in after["topics"] if t["topic"] == "runbooks")
    assert runbooks["file_count"] == 6 and runbooks["last_updated"] == "2026-01-02"
    assert runbooks["children"][0] == {
        "segment": "db",
        "file_count": 3,
        "children": [{"segment": "restore", "file_count": 1, "children": []}],
    }
    assert "Read replicas" in runbooks["titles"]
    # Nothing else moved.
    assert [t for t in after["topics"] if t["topic"] != "runbooks"] == [
        t for t in before["topics"] if t["topic"] != "runbooks"
    ]
    (wiki / "ops" / "runbooks" / "db" / "replicas.md").unlink()
    client.call("index", {"cwd": str(repo)})
    again = client.call("list_topics", {"cwd": str(repo)}).structured_content
    assert again["topics"] == EXPECTED


def test_an_unknown_corpus_is_refused_naming_the_known_ones(world: tuple[Sandbox, McpClient, Path]) -> None:
    _, client, repo = world
    with pytest.raises(MCPError) as refused:
        client.call("list_topics", {"cwd": str(repo), "corpus": "nope"})
    assert refused.value.code == INVALID_PARAMS
    assert "unknown corpus 'nope'" in refused.value.message
    assert "repo:topics:wiki" in refused.value.message


def test_the_cli_prints_topics_as_text_and_as_json(world: tuple[Sandbox, McpClient, Path]) -> None:
    box, _, repo = world
    shown = hm(box, "topics", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "repo:topics:wiki: 7 topic entries"
    assert "category (none)  topic misc  1 document  last updated 2022-07-01" in shown.stdout
    assert "  titles: Blue-green deploys; Rolling back" in shown.stdout
    for flags in (["--json"], ["--format", "json"]):
        as_json = hm(box, "topics", *flags, "--corpus", "repo:topics:wiki", cwd=repo)
        assert as_json.returncode == 0, as_json.stderr
        assert json.loads(as_json.stdout)["topics"] == EXPECTED
    refused = hm(box, "topics", "--json", "--corpus", "nope", cwd=repo)
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"]["type"] == "not_found"


def test_a_kb_request_lists_the_topics_of_its_directory(
    world: tuple[Sandbox, McpClient, Path], tmp_path: Path
) -> None:
    box, _, _ = world
    kb = tmp_path / "kb"
    write_pages(
        kb,
        {
            "deploy/canary/steps.md": "---\ntitle: Canary steps\n---\nShip to one percent first.\n",
            "deploy/canary/metrics/latency.md": "# Latency\n\nWatch the p99 during a canary.\n",
            "readme.md": "# Read me\n\nThis knowledge base is about deploys.\n",
        },
    )

    async def run() -> dict[str, Any]:
        conn = await connect_or_spawn(box.socket)
        try:
            await conn.call("index", str(kb), {}, kb=True)
            result: dict[str, Any] = await conn.call("list_topics", str(kb), {}, kb=True)
            return result
        finally:
            await conn.close()

    assert asyncio.run(run()) == {
        "corpus": "kb",
        "topics": [
            {
                "category": None,
                "topic": None,
                "file_count": 1,
                "last_updated": "2023-03-04",
                "titles": ["Read me"],
                "children": [],
            },
            {
                "category": "deploy",
                "topic": "canary",
                "file_count": 2,
                "last_updated": "2023-03-04",
                "titles": ["Latency", "Canary steps"],
                "children": [{"segment": "metrics", "file_count": 1, "children": []}],
            },
        ],
    }
