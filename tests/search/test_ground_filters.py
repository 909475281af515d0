"""``ground``'s eligibility filters and query syntax (issue 15) through a real MCP client, the real shim, a
real daemon and the real CLI: each filter alone and combined, path globs, tags, dates, frontmatter fields
and their bounds, the topic override, "-term" exclusions, quoted phrases, and a selective filter filling
``top_files`` from pages an unfiltered candidate pool would never reach.

One daemon and one index for the whole module: a corpus ``notes`` of small pages with frontmatter.
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

from support.files import write
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, hm


def _page(front: str, body: str) -> str:
    return f"---\n{front}---\n\n{body}\n" if front else f"{body}\n"


PAGES = {
    "guides/deploy/rollout.md": _page(
        "tags: [ops, deploy]\ndate: 2026-03-01\nstatus: published\nowner: [ana, bo]\n",
        "# Rollout\n\nA rolling deployment of the lantern service replaces instances one batch at a time.",
    ),
    "guides/deploy/canary.md": _page(
        "tags: [ops]\ndate: 2026-05-10\nstatus: draft\ntopic: release\n",
        "# Canary\n\nA canary deployment of the lantern service sends a slice of traffic to the new build.",
    ),
    "guides/setup/install.md": _page(
        "tags: [setup]\nstatus: published\n",
        "# Install\n\nInstall the lantern service before its first deployment: the deployment is rolling.",
    ),
    "reference/api/endpoints.md": _page(
        "tags: [api, deploy]\ndate: 2025-12-31\nstatus: published\n",
        "# Endpoints\n\nThe deployment API of the lantern service lists every rollout and its state.",
    ),
    "drafts/ideas.md": _page(
        "tags: [ops, deploy]\ndate: 2026-04-01\nstatus: draft\ncategory: guides\n",
        "# Ideas\n\nBlue-green deployment for the lantern service, maybe, some day.",
    ),
    "readme.md": _page("", "# Readme\n\nThe lantern service handbook: deployment, setup, reference."),
}
# Many strong matches for QUESTION in bulk/, a few weak ones in rare/: with a small candidate pool the
# unfiltered search never reaches rare/, a filter on it must still fill top_files from it.
# A stub of two low chunks (indexing/quality.py): a one-line fragment under 30 characters (0.1) and a short
# link list (0.0). (A page of one short chunk is the whole page and keeps a full score.)
STUB = "stubs/lantern.md"
QUESTION = "harbour crane maintenance schedule"
BULK = 40
RARE = 3


def _bulk(n: int) -> str:
    return (
        f"# Crane {n}\n\nThe harbour crane maintenance schedule for crane {n}: grease the harbour crane "
        "weekly, inspect the crane cables monthly, follow the maintenance schedule.\n"
    )


def _rare(n: int) -> str:
    return f"# Yard note {n}\n\nNote {n}: cranes at the harbour get serviced now and then.\n"


class World:
    def __init__(self, client: McpClient, box: Sandbox, repo: Path) -> None:
        self.client = client
        self.box = box
        self.repo = repo

    def ground(self, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.repo), "corpus": "notes", **args})
        assert not result.is_error, result.content
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        content: dict[str, Any] = result.structured_content
        return content

    def paths(self, **args: Any) -> list[str]:
        return [doc["path"] for doc in self.ground(**args)["docs"]]

    def error(self, **args: Any) -> MCPError:
        with pytest.raises(MCPError) as info:
            self.client.call("ground", {"cwd": str(self.repo), "corpus": "notes", **args})
        assert info.value.code == INVALID_PARAMS, info.value
        return info.value

    def cli(self, *args: str) -> Any:
        return hm(self.box, "ground", *args, "--corpus", "notes", cwd=self.repo)

    def cli_paths(self, *args: str) -> list[str]:
        done = self.cli(*args, "--format", "json")
        assert done.returncode == 0, done.stderr
        return [doc["path"] for doc in json.loads(done.stdout)["docs"]]


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "acme", '[[corpus]]\nname = "notes"\npaths = ["notes"]\n')
        notes = repo / "notes"
        for path, text in PAGES.items():
            write(notes / path, text)
        for n in range(BULK):
            write(notes / "bulk" / f"crane{n}.md", _bulk(n))
        for n in range(RARE):
            write(notes / "rare" / f"yard{n}.md", _rare(n))
        write(notes / STUB, "Lantern service deployment.\n\n# See\n\n[Home](index.md)\n")
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}).structured_content
            assert all(c["files_skipped"] == 0 for c in report["corpora"]), report
            yield World(client, box, repo)
        finally:
            client.close()


LANTERN = "lantern service deployment"
DEPLOY_PAGES = {p for p in PAGES if p != "readme.md"}


# -- each filter alone ---------------------------------------------------------------------------------
def test_no_filter_reports_none_applied(world: World) -> None:
    result = world.ground(query=LANTERN, top_files=20)
    assert "filter_applied" not in result
    assert set(PAGES) <= {doc["path"] for doc in result["docs"]}


def test_category_is_the_first_segment_or_the_frontmatter_category(world: World) -> None:
    result = world.ground(query=LANTERN, top_files=20, category="guides")
    # drafts/ideas.md says category: guides in its frontmatter; readme.md (one segment) has none.
    assert {doc["path"] for doc in result["docs"]} == {
        "guides/deploy/rollout.md",
        "guides/deploy/canary.md",
        "guides/setup/install.md",
        "drafts/ideas.md",
    }
    assert result["filter_applied"] == {"category": "guides"}


def test_topic_is_the_second_segment_and_the_frontmatter_topic_overrides_it(world: World) -> None:
    # canary.md sits in guides/deploy/ but says topic: release.
    assert set(world.paths(query=LANTERN, top_files=20, topic="deploy")) == {"guides/deploy/rollout.md"}
    assert set(world.paths(query=LANTERN, top_files=20, topic="release")) == {"guides/deploy/canary.md"}
    # A path of two segments has no topic.
    assert world.paths(query=LANTERN, top_files=20, topic="ideas.md") == []


def test_path_globs_include_exclude_and_both(world: World) -> None:
    assert set(world.paths(query=LANTERN, top_files=20, path_globs=["guides/**"])) == {
        "guides/deploy/rollout.md",
        "guides/deploy/canary.md",
        "guides/setup/install.md",
    }
    # * stays within a segment: *.md matches only the root page.
    assert world.paths(query=LANTERN, top_files=20, path_globs=["*.md"]) == ["readme.md"]
    only_excluded = set(world.paths(query=LANTERN, top_files=60, path_globs=["!guides/**", "!bulk/**"]))
    assert only_excluded >= {"reference/api/endpoints.md", "drafts/ideas.md", "readme.md"}
    assert not any(p.startswith(("guides/", "bulk/")) for p in only_excluded)
    both = world.ground(query=LANTERN, top_files=20, path_globs=["guides/**", "!**/canary.md"])
    assert {doc["path"] for doc in both["docs"]} == {"guides/deploy/rollout.md", "guides/setup/install.md"}
    assert both["filter_applied"] == {"path_globs": ["guides/**", "!**/canary.md"]}


def test_an_empty_path_globs_list_is_refused(world: World) -> None:
    error = world.error(query=LANTERN, path_globs=[])
    assert "path_globs" in str(error)


def test_tags_any_all_and_both(world: World) -> None:
    any_ = set(world.paths(query=LANTERN, top_files=20, tags_any=["setup", "api"]))
    assert any_ == {"guides/setup/install.md", "reference/api/endpoints.md"}
    all_ = set(world.paths(query=LANTERN, top_files=20, tags_all=["ops", "deploy"]))
    assert all_ == {"guides/deploy/rollout.md", "drafts/ideas.md"}
    both = world.ground(query=LANTERN, top_files=20, tags_any=["api", "ops"], tags_all=["deploy"])
    assert {doc["path"] for doc in both["docs"]} == {
        "guides/deploy/rollout.md",
        "drafts/ideas.md",
        "reference/api/endpoints.md",
    }
    assert both["filter_applied"] == {"tags_any": ["api", "ops"], "tags_all": ["deploy"]}


def test_dates_are_inclusive_and_undated_pages_are_dropped(world: World) -> None:
    since = set(world.paths(query=LANTERN, top_files=60, date_from="2026-03-01"))
    assert since == {"guides/deploy/rollout.md", "guides/deploy/canary.md", "drafts/ideas.md"}
    until = set(world.paths(query=LANTERN, top_files=60, date_to="2026-03-01"))
    assert until == {"guides/deploy/rollout.md", "reference/api/endpoints.md"}
    window = world.ground(query=LANTERN, top_files=60, date_from="2026-03-02", date_to="2026-04-30")
    assert [doc["path"] for doc in window["docs"]] == ["drafts/ideas.md"]
    # install.md and readme.md (no date) never pass a date filter.
    assert not {"guides/setup/install.md", "readme.md"} & (since | until)
    assert world.error(query=LANTERN, date_from="1 March 2026")


def test_fields_and_fields_not(world: World) -> None:
    published = set(world.paths(query=LANTERN, top_files=20, fields={"status": ["published"]}))
    assert published == {"guides/deploy/rollout.md", "guides/setup/install.md", "reference/api/endpoints.md"}
    # A list value passes when one of its items is wanted.
    assert world.paths(query=LANTERN, top_files=20, fields={"owner": ["bo"]}) == ["guides/deploy/rollout.md"]
    not_draft = set(world.paths(query=LANTERN, top_files=60, fields_not={"status": ["draft"]}))
    assert not {"guides/deploy/canary.md", "drafts/ideas.md"} & not_draft
    assert {"readme.md", "guides/deploy/rollout.md"} <= not_draft  # a page without the key passes


def test_fields_bounds_are_refused(world: World) -> None:
    assert "fields" in str(world.error(query=LANTERN, fields={"status": [f"v{i}" for i in range(65)]}))
    # 600 characters pass the schema's length, 1,800 bytes do not pass the engine's byte bound.
    error = world.error(query=LANTERN, fields_not={"status": ["€" * 600]})
    assert "1024" in str(error) and "fields_not" in str(error)
    assert world.ground(query=LANTERN, fields={"status": ["x" * 1024]})["docs"] == []


def test_min_quality_drops_low_quality_chunks_by_default(world: World) -> None:
    assert STUB not in world.paths(query=LANTERN, top_files=60)  # default floor 0.3
    assert STUB in world.paths(query=LANTERN, top_files=60, include_low_quality=True)
    assert STUB in world.paths(query=LANTERN, top_files=60, min_quality=0.05)
    strict = world.ground(query=LANTERN, top_files=60, min_quality=0.9)
    assert all(chunk["quality"] >= 0.9 for doc in strict["docs"] for chunk in doc["chunks"])
    assert STUB not in {doc["path"] for doc in strict["docs"]}


def test_min_quality_is_checked_and_echoed_when_set(world: World) -> None:
    result = world.ground(query=LANTERN, top_files=20, min_quality=0.5)
    assert result["filter_applied"] == {"min_quality": 0.5}
    low = world.ground(query=LANTERN, top_files=20, include_low_quality=True)
    assert low["filter_applied"] == {"min_quality": 0.0, "include_low_quality": True}
    world.error(query=LANTERN, min_quality=1.5)


# -- combined --------------------------------------------------------------------------------------------
def test_filters_combine_with_and(world: World) -> None:
    result = world.ground(
        query=LANTERN,
        top_files=20,
        category="guides",
        tags_any=["ops"],
        date_from="2026-01-01",
        fields_not={"status": ["draft"]},
        path_globs=["**/*.md"],
    )
    assert [doc["path"] for doc in result["docs"]] == ["guides/deploy/rollout.md"]
    assert result["filter_applied"] == {
        "category": "guides",
        "date_from": "2026-01-01",
        "path_globs": ["**/*.md"],
        "tags_any": ["ops"],
        "fields_not": {"status": ["draft"]},
    }


def test_a_selective_filter_fills_top_files_from_pages_outside_the_unfiltered_pool(world: World) -> None:
    # limit 5 candidates per signal: unfiltered, bulk/ takes every one of them.
    unfiltered = world.paths(query=QUESTION, limit=5, top_files=RARE)
    assert unfiltered and all(p.startswith("bulk/") for p in unfiltered)
    filtered = world.ground(query=QUESTION, limit=5, top_files=RARE, path_globs=["rare/**"])
    assert sorted(doc["path"] for doc in filtered["docs"]) == [f"rare/yard{n}.md" for n in range(RARE)]
    assert sorted(world.paths(query=QUESTION, limit=5, top_files=RARE, category="rare")) == [
        f"rare/yard{n}.md" for n in range(RARE)
    ]


# -- query syntax ---------------------------------------------------------------------------------------
def test_a_negated_term_of_three_characters_excludes_chunks_holding_it(world: World) -> None:
    # Every page is a candidate (50 pages of one chunk, limit 50), so exactly the excluded one goes.
    plain = set(world.paths(query=LANTERN, top_files=60))
    assert "reference/api/endpoints.md" in plain
    result = world.ground(query=f"{LANTERN} -api", top_files=60)
    assert {doc["path"] for doc in result["docs"]} == plain - {"reference/api/endpoints.md"}
    assert result["filter_applied"] == {"excluded_terms": ["api"]}
    assert not any(w["code"] == "negation-too-short" for w in result["warnings"])
    # By the analyser's tokens, like BM25: "-canaries" excludes the page that says "canary".
    assert "guides/deploy/canary.md" not in world.paths(query=f"{LANTERN} -canaries", top_files=20)


def test_a_negated_term_under_three_characters_excludes_nothing_and_warns(world: World) -> None:
    plain = world.ground(query=LANTERN, top_files=20)
    short = world.ground(query=f"{LANTERN} -ap", top_files=20)
    assert [d["path"] for d in short["docs"]] == [d["path"] for d in plain["docs"]]
    warning = next(w for w in short["warnings"] if w["code"] == "negation-too-short")
    assert "-ap" in warning["message"] and "3 characters" in warning["message"]
    assert "filter_applied" not in short


def test_a_query_of_exclusions_alone_is_refused(world: World) -> None:
    assert "only excluded terms" in str(world.error(query="-lantern -service"))


def test_a_quoted_phrase_must_match_verbatim(world: World) -> None:
    # install.md holds "deployment is rolling": the words, not the phrase.
    result = world.ground(query='"rolling deployment" lantern', top_files=20)
    assert [doc["path"] for doc in result["docs"]] == ["guides/deploy/rollout.md"]
    assert result["filter_applied"] == {"phrases": ["rolling deployment"]}
    # Case-insensitive and any whitespace run, as phrase mode.
    assert world.paths(query='"ROLLING   Deployment"', top_files=20) == ["guides/deploy/rollout.md"]


def test_phrase_mode_takes_the_filters_too(world: World) -> None:
    found = world.ground(query="lantern service", match="phrase", top_files=20, tags_any=["setup"])
    assert [doc["path"] for doc in found["docs"]] == ["guides/setup/install.md"]
    assert found["filter_applied"] == {"tags_any": ["setup"]}


# -- the CLI ----------------------------------------------------------------------------------------------
def test_cli_flags_map_to_the_filters(world: World) -> None:
    assert set(world.cli_paths(LANTERN, "--category", "guides", "--topic", "deploy")) == {
        "guides/deploy/rollout.md"
    }
    assert set(world.cli_paths(LANTERN, "--path-glob", "guides/**", "--path-glob", "!**/canary.md")) == {
        "guides/deploy/rollout.md",
        "guides/setup/install.md",
    }
    assert set(world.cli_paths(LANTERN, "--tag", "setup", "--tag", "api")) == {
        "guides/setup/install.md",
        "reference/api/endpoints.md",
    }
    assert set(world.cli_paths(LANTERN, "--tag", "ops", "--tag", "deploy", "--all-tags")) == {
        "guides/deploy/rollout.md",
        "drafts/ideas.md",
    }
    assert world.cli_paths(LANTERN, "--since", "2026-03-02", "--until", "2026-04-30") == ["drafts/ideas.md"]
    assert world.cli_paths(LANTERN, "--field", "owner=bo") == ["guides/deploy/rollout.md"]
    not_draft = set(world.cli_paths(LANTERN, "--not-field", "status=draft", "--top-files", "60"))
    assert not {"guides/deploy/canary.md", "drafts/ideas.md"} & not_draft
    done = world.cli(LANTERN, "--min-quality", "0.4", "--format", "json")
    assert json.loads(done.stdout)["filter_applied"] == {"min_quality": 0.4}
    done = world.cli(LANTERN, "--include-low-quality", "--format", "json")
    assert json.loads(done.stdout)["filter_applied"]["include_low_quality"] is True
    assert STUB not in world.cli_paths(LANTERN, "--top-files", "60")
    assert STUB in world.cli_paths(LANTERN, "--top-files", "60", "--include-low-quality")
    assert STUB in world.cli_paths(LANTERN, "--top-files", "60", "--min-quality", "0.05")


def test_cli_query_syntax(world: World) -> None:
    plain = set(world.cli_paths(LANTERN, "--top-files", "60"))
    assert set(world.cli_paths(*LANTERN.split(), "-api", "--top-files", "60")) == plain - {
        "reference/api/endpoints.md"
    }
    assert world.cli_paths('"rolling deployment"', "lantern") == ["guides/deploy/rollout.md"]
    short = world.cli(*LANTERN.split(), "-ap", "--format", "json")
    assert any(w["code"] == "negation-too-short" for w in json.loads(short.stdout)["warnings"])


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--since", "March"], "--since"),
        (["--until", "2026-3-1"], "--until"),
        (["--field", "status"], "--field"),
        (["--not-field", "=draft"], "--not-field"),
        (["--min-quality", "2"], "--min-quality"),
        (["--all-tags"], "--all-tags"),
        (["--path-glob", ""], "--path-glob"),
    ],
)
def test_cli_bad_values_name_the_flag(world: World, args: list[str], named: str) -> None:
    done = world.cli(LANTERN, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert named in done.stderr
