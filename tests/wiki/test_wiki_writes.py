"""add_markdown and delete_markdown through a real MCP client, a real daemon, store and model.

One daemon serves the module (``world``); each test works in its own repository.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hallouminate.client import connect_or_spawn
from support.path_attacks import snapshot
from support.sandbox import mcp_session
from support.wiki_world import World, call, problem, refused, temp_files, world

START = "<!-- HALLOUMINATE:INDEX-START -->"
END = "<!-- HALLOUMINATE:INDEX-END -->"


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        yield created


def repo_with(w: World, name: str, pages: dict[str, str]) -> tuple[str, str, Path]:
    """(cwd, corpus, wiki root) of a new repository whose wiki holds ``pages``."""
    repo = w.box.make_repo(name, wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    for rel, text in pages.items():
        (wiki / rel).parent.mkdir(parents=True, exist_ok=True)
        (wiki / rel).write_text(text)
    return str(repo), f"repo:{name}:wiki", wiki


async def paths_found(session, cwd: str, corpus: str, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = await call(session, "ground", cwd=cwd, corpus=corpus, query=query, top_files=5)
    return [doc["path"] for doc in result["docs"]]


async def snippets_of(session, cwd: str, corpus: str, query: str, path: str) -> str:  # type: ignore[no-untyped-def]
    result = await call(session, "ground", cwd=cwd, corpus=corpus, query=query, top_files=10)
    return " ".join(c["snippet"] for doc in result["docs"] if doc["path"] == path for c in doc["chunks"])


async def test_create_refuse_clobber_overwrite_and_search_sees_each_write(w: World) -> None:
    cwd, corpus, wiki = repo_with(w, "create", {})
    rel = "guides/setup-guide.md"
    page = wiki / rel
    first = "# Setup guide\n\nThe quizzical pangolin compiles the firmware.\n"
    async with mcp_session(w.box) as s:
        tools = {tool.name: tool for tool in (await s.list_tools()).tools}
        for name in ("add_markdown", "delete_markdown"):
            hints = tools[name].annotations
            assert hints.read_only_hint is False and hints.destructive_hint is True
            assert hints.idempotent_hint is False  # never resent to a respawned daemon
            assert {"cwd", "corpus", "path"} <= set(tools[name].input_schema["required"])
            assert tools[name].output_schema is not None
        created = await call(s, "add_markdown", cwd=cwd, corpus=corpus, path=rel, content=first)
        assert created["action"] == "created" and created["edit"] is None
        assert created["bytes"] == len(first.encode()) and page.read_bytes() == first.encode()
        assert created["absolute_path"] == str(page)
        assert created["index_files"] == [
            {"path": "guides/index.md", "action": "scaffolded"},
            {"path": "index.md", "action": "scaffolded"},
        ]
        assert created["reindexed"] == [rel, "guides/index.md", "index.md"]
        assert created["chunks_written"] >= 3 and created["warnings"] == []
        # Straight after the answer, no waiting: the new text is searchable.
        assert (await paths_found(s, cwd, corpus, "quizzical pangolin firmware"))[0] == rel
        read = await call(s, "read_markdown", cwd=cwd, corpus=corpus, path=rel)
        assert read["content"] == first

        clobber = await refused(s, "add_markdown", cwd=cwd, corpus=corpus, path=rel, content="# Other\n")
        assert problem(clobber) == "exists"
        assert "read_markdown" in clobber.message and "overwrite: true" in clobber.message
        assert page.read_bytes() == first.encode()

        os.chmod(page, 0o640)
        inode = page.stat().st_ino
        second = "# Setup guide\n\nThe melancholy axolotl calibrates the telescope.\n"
        replaced = await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path=rel, content=second, overwrite=True
        )
        assert replaced["action"] == "overwritten" and page.read_bytes() == second.encode()
        assert page.stat().st_mode & 0o777 == 0o640, "an overwrite keeps the file's mode"
        assert page.stat().st_ino != inode, "an overwrite renames a new file into place"
        assert replaced["reindexed"] == [rel] and replaced["index_files"] == []
        assert (await paths_found(s, cwd, corpus, "melancholy axolotl telescope"))[0] == rel
        assert "pangolin" not in await snippets_of(s, cwd, corpus, "quizzical pangolin firmware", rel)

        mtime = page.stat().st_mtime_ns
        same = await call(s, "add_markdown", cwd=cwd, corpus=corpus, path=rel, content=second, overwrite=True)
        assert same["action"] == "unchanged" and page.stat().st_mtime_ns == mtime

        # overwrite: true on a missing page simply creates it.
        fresh = await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="fresh.md", content="# Fresh\n", overwrite=True
        )
        assert fresh["action"] == "created"
    assert temp_files(wiki) == [] and list((w.state / "pending-writes").iterdir()) == []


RUNBOOK = """# Runbook

Intro line.

## Install

Install steps.

### Linux

Apt get.

## Notes

First note.

## Appendix

### Notes

Appendix notes.
"""


async def test_each_section_edit_and_its_errors(w: World) -> None:
    cwd, corpus, wiki = repo_with(w, "edits", {"runbook.md": RUNBOOK})
    page = wiki / "runbook.md"
    base = {"cwd": cwd, "corpus": corpus, "path": "runbook.md"}
    async with mcp_session(w.box) as s:
        prepended = await call(
            s, "add_markdown", **base, content="Read this first.", under_heading="Install", position="prepend"
        )
        assert prepended["action"] == "edited" and prepended["edit"] == "under_heading"
        assert prepended["changed_lines"] == {"start": 7, "end": 7}
        text = page.read_text()
        assert "## Install\n\nRead this first.\n\nInstall steps.\n" in text

        # Append goes to the end of the section, subsections included: right before the next '## '.
        appended = await call(s, "add_markdown", **base, content="Then reboot.\n", under_heading="## Install")
        assert "Apt get.\n\nThen reboot.\n\n## Notes\n" in page.read_text()
        assert appended["changed_lines"] == {"start": 15, "end": 15}

        ambiguous = await refused(s, "add_markdown", **base, content="x", under_heading="Notes")
        assert problem(ambiguous) == "heading-ambiguous" and ambiguous.data["lines"] == [17, 23]
        assert "prefix its level" in ambiguous.message
        await call(s, "add_markdown", **base, content="Nested note.", under_heading="Appendix > Notes")
        assert page.read_text().endswith("### Notes\n\nAppendix notes.\n\nNested note.\n")
        await call(s, "add_markdown", **base, content="Second note.", under_heading="## Notes")
        assert "First note.\n\nSecond note.\n\n## Appendix" in page.read_text()

        missing = await refused(s, "add_markdown", **base, content="x", under_heading="Uninstall")
        assert problem(missing) == "heading-not-found" and "## Install" in missing.message

        lines = page.read_text().split("\n")
        assert lines[2] == "Intro line."
        swapped = await call(
            s,
            "add_markdown",
            **base,
            content="Intro, rewritten.\nOn two lines.",
            replace_lines={"start": 3, "end": 3},
        )
        assert swapped["changed_lines"] == {"start": 3, "end": 4}
        assert page.read_text().split("\n")[2:5] == ["Intro, rewritten.", "On two lines.", ""]
        total = len(page.read_text().splitlines())
        out = await refused(
            s, "add_markdown", **base, content="x", replace_lines={"start": 5, "end": total + 1}
        )
        assert problem(out) == "range-out-of-bounds" and out.data["lines"] == total
        assert f"has {total} lines" in out.message
        backwards = await refused(
            s, "add_markdown", **base, content="x", replace_lines={"start": 4, "end": 2}
        )
        assert problem(backwards) == "range-reversed"

        await call(
            s, "add_markdown", **base, content="Apt-get the zygomorphic toolchain.", replace_match="Apt get."
        )
        assert "### Linux\n\nApt-get the zygomorphic toolchain.\n" in page.read_text()
        assert (await paths_found(s, cwd, corpus, "zygomorphic toolchain"))[0] == "runbook.md"
        absent = await refused(s, "add_markdown", **base, content="x", replace_match="no such text")
        assert problem(absent) == "match-not-found"
        several = await refused(s, "add_markdown", **base, content="x", replace_match="Notes")
        assert problem(several) == "match-not-unique" and several.data["count"] == 2

        before = page.read_bytes()
        two = await refused(
            s, "add_markdown", **base, content="x", replace_match="Intro", under_heading="Notes"
        )
        assert problem(two) == "several-edits"
        stray = await refused(s, "add_markdown", **base, content="x", position="append")
        assert problem(stray) == "position-without-heading"
        gone = await refused(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="nope/page.md", content="x", under_heading="A"
        )
        assert problem(gone) == "missing" and "does not exist" in gone.message
        assert not (wiki / "nope").exists(), "a refused edit creates no directory"
        assert page.read_bytes() == before, "a refused edit writes nothing"

        # A CRLF page keeps its line ends.
        (wiki / "crlf.md").write_bytes(b"# Crlf\r\n\r\n## A\r\n\r\nx\r\n")
        await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="crlf.md", content="y\nz", under_heading="A"
        )
        assert (wiki / "crlf.md").read_bytes() == b"# Crlf\r\n\r\n## A\r\n\r\nx\r\n\r\ny\r\nz\r\n"
    assert temp_files(wiki) == []


async def test_index_lists_are_scaffolded_updated_or_left_alone(w: World) -> None:
    root_index = (
        f"# Lists wiki\n\nIntro prose.\n\n{START}\n- [stale](./stale.md) - Stale\n{END}\n\nClosing prose.\n"
    )
    guides_index = "# Guides\n\nA hand-written list, no markers.\n"
    cwd, corpus, wiki = repo_with(
        w,
        "lists",
        {
            "index.md": root_index,
            "alpha.md": "# Alpha page\n\nAlpha.\n",
            "guides/index.md": guides_index,
            "guides/old.md": "# Old guide\n",
            "misc/loose.md": "# Loose\n",  # a directory without an index.md
        },
    )
    async with mcp_session(w.box) as s:
        await call(s, "index", cwd=cwd, corpus=corpus)
        made = await call(
            s,
            "add_markdown",
            cwd=cwd,
            corpus=corpus,
            path="ops/runbooks/restart.md",
            content="# Restart the service\n\nSteps.\n",
        )
        assert made["index_files"] == [
            {"path": "ops/runbooks/index.md", "action": "scaffolded"},
            {"path": "ops/index.md", "action": "scaffolded"},
            {"path": "index.md", "action": "updated"},
        ]
        assert made["reindexed"] == [
            "ops/runbooks/restart.md",
            "ops/runbooks/index.md",
            "ops/index.md",
            "index.md",
        ]
        runbooks = (wiki / "ops/runbooks/index.md").read_text()
        assert runbooks.startswith("# Runbooks\n")
        assert f"{START}\n- [restart](./restart.md) - Restart the service\n{END}\n" in runbooks
        assert (
            f"{START}\n- [runbooks/](./runbooks/index.md) - Runbooks\n{END}\n"
            in (wiki / "ops/index.md").read_text()
        )
        # Subdirectories first, then pages, each glossed with its H1; the prose around the markers is kept.
        assert (wiki / "index.md").read_text() == (
            f"# Lists wiki\n\nIntro prose.\n\n{START}\n"
            "- [guides/](./guides/index.md) - Guides\n"
            "- [misc/](./misc/)\n"
            "- [ops/](./ops/index.md) - Ops\n"
            "- [alpha](./alpha.md) - Alpha page\n"
            f"{END}\n\nClosing prose.\n"
        )
        stats = await call(s, "corpus_stats", cwd=cwd, corpus=corpus)
        assert stats["unindexed_files"] == 0, "the write re-indexed the index.md files it made"

        root_before = (wiki / "index.md").read_bytes()
        other = await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="guides/new-guide.md", content="# New guide\n"
        )
        assert other["index_files"] == [{"path": "guides/index.md", "action": "left-alone"}]
        assert (wiki / "guides/index.md").read_text() == guides_index, "no markers: not ours to edit"
        assert (wiki / "index.md").read_bytes() == root_before, "an unchanged list is not rewritten"
        assert other["reindexed"] == ["guides/new-guide.md"]
    assert temp_files(wiki) == []


LINTY = """---
title: [unclosed
---
Intro before the title.

# Title

### Too deep

An [empty]() link and an ![image]().

See [[setup]], [[missing-page]] and [[target]].

```mermaid
```
"""


async def test_lint_warnings_never_block_the_write(w: World) -> None:
    cwd, corpus, wiki = repo_with(
        w, "lint", {"one/setup.md": "# One\n", "two/setup.md": "# Two\n", "target.md": "# Target\n"}
    )
    async with mcp_session(w.box) as s:
        linted = await call(s, "add_markdown", cwd=cwd, corpus=corpus, path="Bad_Name.md", content=LINTY)
        assert linted["action"] == "created" and (wiki / "Bad_Name.md").read_text() == LINTY
        found = {(x["code"], x.get("line")) for x in linted["warnings"]}
        assert found == {
            ("frontmatter-malformed", 1),
            ("missing-title", 4),
            ("heading-jump", 8),
            ("empty-link", 10),
            ("empty-mermaid", 14),
            ("stem-not-kebab", None),
            ("wikilink-ambiguous", 12),
            ("wikilink-unresolved", 12),
        }
        assert sum(x["code"] == "empty-link" for x in linted["warnings"]) == 2  # the link and the image
        ambiguous = next(x for x in linted["warnings"] if x["code"] == "wikilink-ambiguous")
        assert "one/setup.md, two/setup.md" in ambiguous["message"] and "[[setup]]" in ambiguous["message"]
        assert "'bad-name.md'" in next(
            x["message"] for x in linted["warnings"] if x["code"] == "stem-not-kebab"
        )

        unclosed = await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="open.md", content="---\ntitle: x\n\n# Open\n"
        )
        assert "frontmatter-malformed" in {x["code"] for x in unclosed["warnings"]}

        clean = await call(
            s,
            "add_markdown",
            cwd=cwd,
            corpus=corpus,
            path="clean-page.md",
            content="---\nstatus: draft\n---\n# Clean page\n\n## Part\n\nSee [[target]] and [it](./target.md).\n",
        )
        assert clean["warnings"] == []


async def test_delete_prunes_the_rows_and_the_index_lists(w: World) -> None:
    cwd, corpus, wiki = repo_with(w, "delete", {})
    async with mcp_session(w.box) as s:
        await call(
            s, "add_markdown", cwd=cwd, corpus=corpus, path="guides/keep.md", content="# Keep\n\nKept.\n"
        )
        await call(
            s,
            "add_markdown",
            cwd=cwd,
            corpus=corpus,
            path="guides/drop.md",
            content="# Drop\n\nThe vermilion narwhal audits the ledger.\n",
        )
        assert "- [drop](./drop.md) - Drop" in (wiki / "guides/index.md").read_text()
        assert (await paths_found(s, cwd, corpus, "vermilion narwhal audits the ledger"))[
            0
        ] == "guides/drop.md"

        deleted = await call(s, "delete_markdown", cwd=cwd, corpus=corpus, path="guides/drop.md")
        assert deleted["deleted"] is True and not (wiki / "guides/drop.md").exists()
        assert deleted["index_files"] == [{"path": "guides/index.md", "action": "updated"}]
        assert deleted["reindexed"] == ["guides/drop.md", "guides/index.md"]
        listing = (wiki / "guides/index.md").read_text()
        assert "drop" not in listing and "- [keep](./keep.md) - Keep" in listing
        assert "guides/drop.md" not in await paths_found(
            s, cwd, corpus, "vermilion narwhal audits the ledger"
        )
        files = await call(s, "list_files", cwd=cwd, corpus=corpus)
        assert "guides/drop.md" not in [f["path"] for f in files["files"]]

        again = await refused(s, "delete_markdown", cwd=cwd, corpus=corpus, path="guides/drop.md")
        assert problem(again) == "missing" and "does not exist" in again.message
        assert "guides/keep.md" in again.message or "keep.md" in again.message  # the directory's entries
    assert temp_files(wiki) == []


async def test_corpus_rules_explicit_corpus_and_globs(w: World) -> None:
    cwd, _, wiki = repo_with(w, "rules", {"index.md": f"# Rules\n\n{START}\n{END}\n"})
    repo = Path(cwd)
    (repo / "docs").mkdir()
    (repo / "docs" / ".gitignore").write_text("private/\n")
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(
        layer.read_text()
        + '\n[[corpus]]\nname = "notes"\npaths = ["docs"]\nglobs = ["**/*.md", "logs/*.txt", "README"]\nexclude = ["drafts/"]\n'
        + '\n[[corpus]]\nname = "gone"\npaths = ["absent"]\n'
    )
    async with mcp_session(w.box) as s:
        nameless = await refused(s, "add_markdown", cwd=cwd, path="x.md", content="# X\n")
        assert "corpus" in nameless.message
        unknown = await refused(
            s, "add_markdown", cwd=cwd, corpus="repo:rulez:wiki", path="x.md", content="# X\n"
        )
        assert "repo:rules:wiki" in unknown.message
        no_root = await refused(s, "add_markdown", cwd=cwd, corpus="gone", path="x.md", content="# X\n")
        assert problem(no_root) == "no-root" and not (repo / "absent").exists()

        # A custom corpus: its globs decide (a .txt may be written), no index lists, no Markdown lint.
        log = await call(
            s, "add_markdown", cwd=cwd, corpus="notes", path="logs/today.txt", content="not markdown"
        )
        assert log["action"] == "created" and log["index_files"] == [] and log["warnings"] == []
        assert (repo / "docs/logs/today.txt").read_text() == "not markdown"
        # "Is this Markdown?" has one answer: the indexer parses a file without a suffix as Markdown, so
        # the lint reads it as Markdown too.
        readme = await call(s, "add_markdown", cwd=cwd, corpus="notes", path="README", content="Intro.\n")
        assert "missing-title" in {x["code"] for x in readme["warnings"]}
        page = await call(s, "add_markdown", cwd=cwd, corpus="notes", path="guide.md", content="# Guide\n")
        assert page["index_files"] == [] and not (repo / "docs/index.md").exists()
        for path in ("script.py", "logs/deep/today.txt", "drafts/wip.md", "private/key.md"):
            rule = await refused(s, "add_markdown", cwd=cwd, corpus="notes", path=path, content="x")
            assert problem(rule) == "not-in-corpus", path
            assert not (repo / "docs" / path).exists()
        # The wiki's index.md with markers is not touched by a write to another corpus.
        assert (wiki / "index.md").read_text() == f"# Rules\n\n{START}\n{END}\n"


async def test_a_multi_root_corpus_is_written_in_its_first_root_only(w: World) -> None:
    """Writes go to the first root; a later root is never changed, and a write that starts or stops
    hiding a later root's copy of the same path says so (the corpus shows the first root's copy)."""
    cwd, _, _ = repo_with(w, "multi", {})
    repo = Path(cwd)
    first, later = repo / "docs", repo / "more"
    (first / "guides").mkdir(parents=True)
    (first / "guides" / "keep.md").write_text("# Keep\n\nKept.\n")
    (later / "guides").mkdir(parents=True)
    old_shared = "# Shared\n\nThe saffron heron copy lives in the later root.\n"
    (later / "shared.md").write_text(old_shared)
    (later / "guides" / "only-later.md").write_text("# Only later\n\nThe cobalt lemur naps.\n")
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(
        layer.read_text()
        + '\n[[corpus]]\nname = "both"\npaths = ["docs", "more"]\n'
        + '\n[[corpus]]\nname = "first-gone"\npaths = ["absent", "more"]\n'
    )
    untouched = snapshot(later)
    base = {"cwd": cwd, "corpus": "both"}
    async with mcp_session(w.box) as s:
        # A new page: in the first root, readable and searchable at once.
        page = "# Fresh\n\nThe tangerine okapi sorts the mail.\n"
        made = await call(s, "add_markdown", **base, path="guides/fresh.md", content=page)
        assert made["action"] == "created" and made["warnings"] == []
        assert made["absolute_path"] == str(first / "guides" / "fresh.md")
        assert (first / "guides" / "fresh.md").read_text() == page
        assert made["index_files"] == [] and made["reindexed"] == ["guides/fresh.md"]
        assert (await call(s, "read_markdown", **base, path="guides/fresh.md"))["content"] == page
        assert (await paths_found(s, cwd, "both", "tangerine okapi sorts the mail"))[0] == "guides/fresh.md"

        # The path exists in a later root: it is a page of the corpus, so a create is refused...
        clash = await refused(s, "add_markdown", **base, path="shared.md", content="# Shared\n")
        assert problem(clash) == "exists" and clash.data["later_copy"] == str(later / "shared.md")
        assert str(later / "shared.md") in clash.message and "overwrite: true" in clash.message
        assert not (first / "shared.md").exists()
        # ...and an overwrite writes the first root's copy, which the corpus shows from then on.
        new_shared = "# Shared\n\nThe vermilion ibis copy lives in the first root.\n"
        shadowing = await call(
            s, "add_markdown", **base, path="shared.md", content=new_shared, overwrite=True
        )
        assert shadowing["action"] == "created" and shadowing["absolute_path"] == str(first / "shared.md")
        assert [x["code"] for x in shadowing["warnings"]] == ["shadows-later-copy"]
        assert str(later / "shared.md") in shadowing["warnings"][0]["message"]
        read = await call(s, "read_markdown", **base, path="shared.md")
        assert read["content"] == new_shared and read["absolute_path"] == str(first / "shared.md")
        assert (await paths_found(s, cwd, "both", "vermilion ibis copy first root"))[0] == "shared.md"
        assert "saffron" not in await snippets_of(s, cwd, "both", "saffron heron copy", "shared.md")
        listed = {f["path"]: f["absolute_path"] for f in (await call(s, "list_files", **base))["files"]}
        assert listed["shared.md"] == str(first / "shared.md")
        assert listed["guides/only-later.md"] == str(later / "guides" / "only-later.md")

        # A page only a later root holds is never edited or deleted there.
        edit = await refused(
            s, "add_markdown", **base, path="guides/only-later.md", content="x", replace_match="naps"
        )
        assert problem(edit) == "not-in-first-root" and "overwrite: true" in edit.message
        assert edit.data["later_copy"] == str(later / "guides" / "only-later.md")
        gone = await refused(s, "delete_markdown", **base, path="guides/only-later.md")
        assert problem(gone) == "not-in-first-root" and "nothing was deleted" in gone.message
        assert not (first / "guides" / "only-later.md").exists()
        # A plain miss lists the first root's files: the only ones a write can change.
        missing = await refused(s, "delete_markdown", **base, path="guides/nope.md")
        assert problem(missing) == "missing" and missing.data["entries"] == ["fresh.md", "keep.md"]

        # Deleting the first root's copy shows the later one again, in reads and in search.
        deleted = await call(s, "delete_markdown", **base, path="shared.md")
        assert deleted["deleted"] is True and not (first / "shared.md").exists()
        assert [x["code"] for x in deleted["warnings"]] == ["later-copy-shown"]
        assert deleted["reindexed"] == ["shared.md"]
        read = await call(s, "read_markdown", **base, path="shared.md")
        assert read["content"] == old_shared and read["absolute_path"] == str(later / "shared.md")
        assert (await paths_found(s, cwd, "both", "saffron heron copy later root"))[0] == "shared.md"
        assert "vermilion" not in await snippets_of(s, cwd, "both", "vermilion ibis copy", "shared.md")

        # The first root must exist: a write never falls back to a later one.
        no_first = await refused(
            s, "add_markdown", cwd=cwd, corpus="first-gone", path="x.md", content="# X\n"
        )
        assert problem(no_first) == "no-root" and "first root" in no_first.message
        assert not (repo / "absent").exists() and not (later / "x.md").exists()
    assert snapshot(later) == untouched, "a later root is never written"
    assert temp_files(first) == [] and temp_files(later) == []


async def status_counters() -> dict[str, int]:
    conn = await connect_or_spawn(spawn=False)
    try:
        return (await conn.call("status"))["counters"]
    finally:
        await conn.close()


async def wait_for(check, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_the_watcher_does_not_embed_a_written_file_a_second_time(w: World) -> None:
    cwd, corpus, wiki = repo_with(w, "watch", {"outside-edit.md": "# Outside edit\n\nFirst.\n"})
    async with mcp_session(w.box) as s:
        await call(s, "index", cwd=cwd, corpus=corpus)
        # Control: an edit made outside the tools is embedded by the watcher (so the watcher is live).
        start = await status_counters()
        (wiki / "outside-edit.md").write_text("# Outside edit\n\nSecond, edited by hand.\n")

        async def embedded_by_watcher() -> bool:
            return (await status_counters())["watcher_files_upserted"] > start["watcher_files_upserted"]

        await wait_for(embedded_by_watcher)
        await asyncio.sleep(0.6)  # let the watcher settle (debounce 250 ms)
        before = await status_counters()
        written = await call(
            s,
            "add_markdown",
            cwd=cwd,
            corpus=corpus,
            path="sub/written.md",
            content="# Written\n\nThe obsidian marmot guards the cache.\n",
        )
        assert written["chunks_written"] > 0
        after_write = await status_counters()
        assert after_write["write_files_upserted"] - before["write_files_upserted"] == len(
            written["reindexed"]
        )

        async def watcher_saw_it() -> bool:
            # The watcher's batch may have run before the answer came back (it waits on the write's lock).
            return (await status_counters())["watcher_batches"] > before["watcher_batches"]

        await wait_for(watcher_saw_it)
        await asyncio.sleep(0.8)  # any further batch of the same write
        settled = await status_counters()
        assert settled["watcher_files_upserted"] == before["watcher_files_upserted"], settled
        assert (await paths_found(s, cwd, corpus, "obsidian marmot guards the cache"))[0] == "sub/written.md"
