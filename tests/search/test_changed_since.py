"""``changed_since`` on ground and list_files, through a real MCP client and the CLI, over a real daemon:
each accepted form (ISO date, ISO datetime, durations in hours, days and weeks) keeps exactly the files
whose modification time is at or after it, whatever their frontmatter says; filter_applied echoes it and
the instant it named; a bad value is -32602 (CLI exit 2) naming the accepted forms.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from support.sandbox import hm, mcp_session
from support.wiki_world import World, call, refused, world

DAY = 86400
NOW = time.time()
# Each page: its age in seconds (set with os.utime) and a frontmatter date that disagrees on purpose.
PAGES = {
    "ancient.md": (400 * DAY, "2026-12-01", "The ancient page about copper kettles."),
    "month.md": (20 * DAY, "2020-01-01", "The month-old page about copper kettles."),
    "week.md": (3 * DAY, "2020-01-01", "The days-old page about copper kettles."),
    "hour.md": (3600, "2020-01-01", "The hour-old page about copper kettles."),
}
QUERY = "copper kettles page"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


@pytest.fixture(scope="module")
def repo(w: World) -> Path:
    repo = w.box.make_repo("recent", wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    for rel, (age, date, text) in PAGES.items():
        page = wiki / rel
        page.write_text(f"---\ndate: {date}\n---\n# {rel}\n\n{text}\n")
        os.utime(page, (NOW - age, NOW - age))
    return repo


def iso(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_ground_and_list_files_keep_the_files_changed_since_each_form(w: World, repo: Path) -> None:
    base = {"cwd": str(repo), "corpus": "repo:recent:wiki"}
    cases = {
        "2h": {"hour.md"},
        "12h": {"hour.md"},
        "7d": {"hour.md", "week.md"},
        "2w": {"hour.md", "week.md"},
        "30d": {"hour.md", "week.md", "month.md"},
        iso(5 * DAY): {"hour.md", "week.md"},
        iso(5 * DAY).replace("Z", "+00:00"): {"hour.md", "week.md"},
        iso(2 * 3600)[:-1]: {"hour.md"},  # no zone: UTC
        iso(30 * DAY)[:10]: {"hour.md", "week.md", "month.md"},  # an ISO date: midnight UTC
        "1990-01-01": set(PAGES),
        "2999-01-01": set(),
    }
    async with mcp_session(w.box) as s:
        await call(s, "index", **base)
        unfiltered = await call(s, "ground", **base, query=QUERY, top_files=10)
        assert {d["path"] for d in unfiltered["docs"]} == set(PAGES)
        assert "filter_applied" not in unfiltered
        for value, expected in cases.items():
            found = await call(s, "ground", **base, query=QUERY, top_files=10, changed_since=value)
            assert {d["path"] for d in found["docs"]} == expected, value
            applied = found["filter_applied"]
            assert applied["changed_since"] == value
            assert applied["changed_since_utc"].endswith("Z") and len(applied["changed_since_utc"]) == 20
            # Phrase mode filters the same way.
            counted = await call(
                s, "ground", **base, query="copper kettles", match="phrase", top_files=10, changed_since=value
            )
            assert {d["path"] for d in counted["docs"]} == expected, value
            listed = await call(s, "list_files", **base, changed_since=value)
            assert {f["path"] for f in listed["files"]} == expected, value
            assert listed["filter_applied"]["changed_since"] == value
        # With another filter: AND-ed (the frontmatter date says 2020 for every recent page).
        both = await call(s, "ground", **base, query=QUERY, changed_since="30d", date_from="2026-01-01")
        assert both["docs"] == [] and set(both["filter_applied"]) >= {"changed_since", "date_from"}
        assert {f["path"] for f in (await call(s, "list_files", **base))["files"]} == set(PAGES)
        assert "filter_applied" not in await call(s, "list_files", **base)

        for bad in ("yesterday", "7", "7x", "-7d", "7 days", "2026-13-45", "2026/01/01", "99999999d"):
            for tool, extra in (("ground", {"query": QUERY}), ("list_files", {})):
                error = await refused(s, tool, **base, **extra, changed_since=bad)
                assert "changed_since" in error.message, (tool, bad, error.message)
                assert "ISO date" in error.message or "days" in error.message, error.message


def test_the_cli_flags_filter_and_a_bad_value_exits_2(w: World, repo: Path) -> None:
    ground = hm(w.box, "ground", QUERY, "--changed-since", "7d", "--format", "json", cwd=repo)
    assert ground.returncode == 0, ground.stderr
    result = json.loads(ground.stdout)
    assert {d["path"] for d in result["docs"]} == {"hour.md", "week.md"}
    assert result["filter_applied"]["changed_since"] == "7d"
    files = hm(w.box, "files", "--changed-since", "12h", cwd=repo)
    assert files.returncode == 0 and files.stdout.split() == ["hour.md"]
    listed = hm(w.box, "files", "--format", "json", cwd=repo)
    assert {f["path"] for f in json.loads(listed.stdout)["files"]} == set(PAGES)
    for command in (["ground", QUERY], ["files"]):
        bad = hm(w.box, *command, "--changed-since", "last week", cwd=repo)
        assert bad.returncode == 2, bad.stderr
        assert "changed_since" in bad.stderr and "ISO date" in bad.stderr
