"""move_markdown through a real MCP client (and ``hallouminate mv``), a real daemon, store and model: the
page moves, every link to it is rewritten (wikilinks by path and by stem, aliases, headings and embeds
kept; relative Markdown links with their anchors; reference definitions), the moved page's own relative
links are re-aimed, the index.md lists follow, a following ground sees the new path only, and the
refusals leave everything as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.path_attacks import snapshot
from support.sandbox import hm, mcp_session
from support.wiki_world import World, call, problem, refused, temp_files, world

START = "<!-- HALLOUMINATE:INDEX-START -->"
END = "<!-- HALLOUMINATE:INDEX-END -->"

SETUP = (
    "# Setup\n\nThe zebra cobbler configures the bellows before dawn.\n\n"
    "Back to [the intro](../intro.md#start), [[intro]], [this page](setup.md#top) and [up](../).\n"
)
INTRO = (
    "# Intro\n\n"
    "Read [[setup]], [[guides/setup|the setup]], [[/guides/setup.md#Install]] and ![[setup#Steps|s]].\n"
    "Also [the guide](guides/setup.md#install-steps), [dot](./guides/setup.md) and [ref][r].\n"
    "Untouched: [[intro]], [elsewhere](other/notes.md), [web](https://example.com/guides/setup.md).\n\n"
    "`[[setup]]` and `[x](guides/setup.md)` in code stay.\n\n"
    "```\n[[setup]]\n[x](guides/setup.md)\n```\n\n"
    "| page | link |\n|---|---|\n| setup | [[setup\\|Setup]] |\n\n"
    "[r]: ./guides/setup.md#ref\n"
)
NOTES = "# Notes\n\nSee [setup](../guides/setup.md) and [[setup|Setup page]].\n"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


async def wiki_with(s, w: World, name: str, pages: dict[str, str]) -> tuple[str, str, Path]:  # type: ignore[no-untyped-def]
    """A repository whose wiki holds ``pages``, written with add_markdown (so its index.md lists exist)."""
    repo = w.box.make_repo(name, wiki=None)
    cwd, corpus = str(repo), f"repo:{name}:wiki"
    for rel, text in pages.items():
        await call(s, "add_markdown", cwd=cwd, corpus=corpus, path=rel, content=text)
    return cwd, corpus, repo / ".hallouminate" / "wiki"


def listed(index_text: str) -> str:
    return index_text.split(START, 1)[1].split(END, 1)[0]


async def test_a_move_rewrites_every_link_kind_keeps_anchors_and_lists_and_search_follows(w: World) -> None:
    async with mcp_session(w.box) as s:
        tool = {t.name: t for t in (await s.list_tools()).tools}["move_markdown"]
        assert tool.annotations.destructive_hint is True and tool.annotations.read_only_hint is False
        assert {"cwd", "corpus", "from", "to"} <= set(tool.input_schema["required"])
        cwd, corpus, wiki = await wiki_with(
            s, w, "links", {"guides/setup.md": SETUP, "intro.md": INTRO, "other/notes.md": NOTES}
        )
        assert "./setup.md" in listed((wiki / "guides/index.md").read_text())
        found = await call(s, "ground", cwd=cwd, corpus=corpus, query="zebra cobbler bellows")
        assert found["docs"][0]["path"] == "guides/setup.md"

        new = "howto/install/setup-guide.md"
        moved = await call(
            s, "move_markdown", cwd=cwd, corpus=corpus, **{"from": "guides/setup.md", "to": new}
        )

        assert not (wiki / "guides/setup.md").exists()
        assert (wiki / new).read_text() == SETUP.replace(
            "[the intro](../intro.md#start), [[intro]], [this page](setup.md#top) and [up](../)",
            "[the intro](../../intro.md#start), [[intro]], [this page](setup-guide.md#top) and [up](../../)",
        )
        assert (wiki / "intro.md").read_text() == INTRO.replace(
            "Read [[setup]], [[guides/setup|the setup]], [[/guides/setup.md#Install]] and ![[setup#Steps|s]].",
            "Read [[setup-guide]], [[howto/install/setup-guide|the setup]], "
            "[[/howto/install/setup-guide.md#Install]] and ![[setup-guide#Steps|s]].",
        ).replace(
            "Also [the guide](guides/setup.md#install-steps), [dot](./guides/setup.md)",
            "Also [the guide](howto/install/setup-guide.md#install-steps), [dot](./howto/install/setup-guide.md)",
        ).replace("| [[setup\\|Setup]] |", "| [[setup-guide\\|Setup]] |").replace(
            "[r]: ./guides/setup.md#ref", "[r]: ./howto/install/setup-guide.md#ref"
        )
        assert (wiki / "other/notes.md").read_text() == (
            "# Notes\n\nSee [setup](../howto/install/setup-guide.md) and [[setup-guide|Setup page]].\n"
        )
        assert moved["from"] == "guides/setup.md" and moved["to"] == new
        assert moved["absolute_path"] == str(wiki / new)
        assert moved["rewritten"] == [
            {"path": new, "links": 3},
            {"path": "intro.md", "links": 8},
            {"path": "other/notes.md", "links": 2},
        ]
        assert moved["links_rewritten"] == 13 and moved["warnings"] == []

        # The lists: the old directory stops listing it, the new ones are scaffolded, the root lists them.
        assert moved["index_files"] == [
            {"path": "howto/install/index.md", "action": "scaffolded"},
            {"path": "guides/index.md", "action": "updated"},
            {"path": "howto/index.md", "action": "scaffolded"},
            {"path": "index.md", "action": "updated"},
        ]
        assert "setup" not in listed((wiki / "guides/index.md").read_text())
        assert "- [setup-guide](./setup-guide.md) - Setup" in listed(
            (wiki / "howto/install/index.md").read_text()
        )
        assert "- [install/](./install/index.md)" in listed((wiki / "howto/index.md").read_text())
        assert "- [howto/](./howto/index.md)" in listed((wiki / "index.md").read_text())
        assert temp_files(wiki) == []
        assert set(moved["reindexed"]) >= {"guides/setup.md", new, "intro.md", "other/notes.md", "index.md"}
        assert moved["chunks_written"] > 0

        # Straight after the answer: search and backlinks know the new path only.
        found = await call(s, "ground", cwd=cwd, corpus=corpus, query="zebra cobbler bellows", top_files=10)
        paths = [doc["path"] for doc in found["docs"]]
        assert paths[0] == new and "guides/setup.md" not in paths
        links = await call(s, "backlinks", cwd=cwd, corpus=corpus, path=new)
        assert links["backlinks"] == ["intro.md", "other/notes.md"]
        files = await call(s, "list_files", cwd=cwd, corpus=corpus)
        assert "guides/setup.md" not in [f["path"] for f in files["files"]]


async def test_bare_stems_that_would_collide_become_paths_and_ambiguous_ones_are_left(w: World) -> None:
    async with mcp_session(w.box) as s:
        cwd, corpus, wiki = await wiki_with(
            s,
            w,
            "stems",
            {
                "a/deploy.md": "# Deploy A\n\nAlpha deploy.\n",
                "b/deploy.md": "# Deploy B\n\nBeta deploy.\n",
                "b/runbook.md": "# Runbook\n\nSteps.\n",
                "c/runbook.md": "# Other runbook\n\nMore steps.\n",
                "links.md": "# Links\n\n[[deploy]] and [[a/deploy]] and [[runbook]] and [[b/runbook|rb]].\n",
            },
        )
        # a/deploy -> x/deploy: [[deploy]] names both deploy pages; it is left as written, with a warning.
        moved = await call(
            s, "move_markdown", cwd=cwd, corpus=corpus, **{"from": "a/deploy.md", "to": "x/deploy.md"}
        )
        text = (wiki / "links.md").read_text()
        assert "[[deploy]] and [[x/deploy]]" in text
        assert [(x["code"], x["path"], x.get("line")) for x in moved["warnings"]] == [
            ("ambiguous-link", "links.md", 3)
        ]
        # b/runbook -> notes/steps.md, where "steps" names no other page; [[b/runbook|rb]] keeps its alias.
        moved = await call(
            s, "move_markdown", cwd=cwd, corpus=corpus, **{"from": "b/runbook.md", "to": "notes/c-runbook.md"}
        )
        assert "[[runbook]] and [[notes/c-runbook|rb]]" in (wiki / "links.md").read_text()


async def test_refusals_change_nothing(w: World) -> None:
    async with mcp_session(w.box) as s:
        cwd, corpus, wiki = await wiki_with(
            s, w, "refuse", {"one.md": "# One\n\n[[two]]\n", "two.md": "# Two\n\nText.\n"}
        )
        before = snapshot(wiki)
        base = {"cwd": cwd, "corpus": corpus}
        exists = await refused(s, "move_markdown", **base, **{"from": "two.md", "to": "one.md"})
        assert problem(exists) == "exists" and "already exists" in exists.message
        missing = await refused(s, "move_markdown", **base, **{"from": "three.md", "to": "four.md"})
        assert problem(missing) == "missing" and "three.md" in missing.message
        for bad in ("../escape.md", "/abs.md", ".git/x.md", "a//b.md"):
            await refused(s, "move_markdown", **base, **{"from": "two.md", "to": bad})
            await refused(s, "move_markdown", **base, **{"from": bad, "to": "new.md"})
        not_page = await refused(s, "move_markdown", **base, **{"from": "two.md", "to": "two.txt"})
        assert problem(not_page) == "not-markdown"
        same = await refused(s, "move_markdown", **base, **{"from": "two.md", "to": "two.md"})
        assert problem(same) == "same-path"
        outside = w.box.root / "outside"
        outside.mkdir()
        (wiki / "link").symlink_to(outside)
        await refused(s, "move_markdown", **base, **{"from": "two.md", "to": "link/two.md"})
        (wiki / "link").unlink()
        assert snapshot(wiki) == before and list(outside.iterdir()) == []


async def test_the_cli_moves_and_reports_and_refuses_with_exit_2(w: World) -> None:
    async with mcp_session(w.box) as s:
        cwd, corpus, wiki = await wiki_with(
            s,
            w,
            "cli",
            {"old-name.md": "# Old\n\nQuartz lantern.\n", "ref.md": "# Ref\n\n[old](old-name.md)\n"},
        )
    done = hm(
        w.box, "mv", "old-name.md", "new/name.md", "--corpus", corpus, "--format", "json", cwd=Path(cwd)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["to"] == "new/name.md" and result["rewritten"] == [{"path": "ref.md", "links": 1}]
    assert (wiki / "ref.md").read_text() == "# Ref\n\n[old](new/name.md)\n"
    text = hm(w.box, "mv", "new/name.md", "final.md", "--corpus", corpus, cwd=Path(cwd))
    assert text.returncode == 0 and "moved new/name.md -> final.md" in text.stdout
    assert "ref.md (1)" in text.stdout
    taken = hm(w.box, "mv", "final.md", "ref.md", "--corpus", corpus, cwd=Path(cwd))
    assert taken.returncode == 2 and "already exists" in taken.stderr
    assert (wiki / "final.md").exists() and (wiki / "ref.md").read_text() == "# Ref\n\n[old](final.md)\n"


async def test_a_multi_root_corpus_moves_in_its_first_root_and_names_what_it_cannot_rewrite(w: World) -> None:
    """A custom corpus (no index.md lists) with two roots: the page moves within the first root; a later
    root's copy of `to` refuses the move; a later root's page linking to it is named, never written."""
    repo = w.box.make_repo("multi", wiki=None)
    first, later = repo / "docs", repo / "more"
    first.mkdir()
    later.mkdir()
    (first / "plan.md").write_text("# Plan\n\nThe violet walrus drafts the plan.\n")
    (first / "uses.md").write_text("# Uses\n\n[plan](plan.md)\n")
    # [[plan]] would still name the moved page (its stem is unchanged); the relative link would not.
    (later / "elsewhere.md").write_text("# Elsewhere\n\nSee [[plan]] and [the plan](plan.md).\n")
    (later / "taken.md").write_text("# Taken\n")
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(layer.read_text() + '\n[[corpus]]\nname = "both"\npaths = ["docs", "more"]\n')
    untouched = snapshot(later)
    base = {"cwd": str(repo), "corpus": "both"}
    async with mcp_session(w.box) as s:
        taken = await refused(s, "move_markdown", **base, **{"from": "plan.md", "to": "taken.md"})
        assert problem(taken) == "exists" and str(later / "taken.md") in taken.message
        only_later = await refused(s, "move_markdown", **base, **{"from": "elsewhere.md", "to": "x.md"})
        assert problem(only_later) == "not-in-first-root"
        moved = await call(s, "move_markdown", **base, **{"from": "plan.md", "to": "plans/plan.md"})
        assert (first / "plans/plan.md").exists() and not (first / "plan.md").exists()
        assert (first / "uses.md").read_text() == "# Uses\n\n[plan](plans/plan.md)\n"
        assert moved["index_files"] == []
        assert [(x["code"], x["path"]) for x in moved["warnings"]] == [("link-not-rewritten", "elsewhere.md")]
        found = await call(s, "ground", **base, query="violet walrus drafts the plan", top_files=10)
        paths = [doc["path"] for doc in found["docs"]]
        assert paths[0] == "plans/plan.md" and "plan.md" not in paths
    assert snapshot(later) == untouched
