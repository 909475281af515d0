"""The read tools through a real MCP client and a real daemon: corpus rules and the path sandbox."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from support.sandbox import SMALL_WIKI, Sandbox, mcp_session, private_world

ATTACKS = [
    "/etc/passwd",
    "../x.md",
    "a/../../x.md",
    "./a.md",
    "a//b.md",
    "a/./b.md",
    "a\u0000.md",
    "",
    "linked-file.md",
    "linked-dir/secret.md",
    "escape.md",
]


def plant_symlinks(wiki: Path, outside: Path) -> None:
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("# Secret\n\nTOP-SECRET-CONTENT\n")
    (wiki / "linked-file.md").symlink_to(wiki / "overview.md")
    (wiki / "linked-dir").symlink_to(outside, target_is_directory=True)
    (wiki / "escape.md").symlink_to(outside / "secret.md")


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world (daemon, warm shim host) for the tests that leave the baseline config alone, each in
    repositories and directories of its own; ``sample`` holds a few pages of the sample wiki."""
    with private_world(model_cache, prefix="hm-rt-", in_process=False) as box:
        box.make_repo(pages=SMALL_WIKI)
        yield box


async def test_the_read_tools_answer_for_the_repository_wiki(world: Sandbox) -> None:
    repo = world.root / "sample"
    cwd = str(repo)
    async with mcp_session(world) as session:
        corpora = (await session.call_tool("list_corpora", {"cwd": cwd})).structured_content
        assert corpora["default_corpus"] == "repo:sample:wiki"
        assert [(c["name"], c["kind"], c["repository"]) for c in corpora["corpora"]] == [
            ("repo:sample:wiki", "wiki", "sample")
        ]

        files = (await session.call_tool("list_files", {"cwd": cwd})).structured_content
        paths = [f["path"] for f in files["files"]]
        assert "architecture.md" in paths and "guides/getting-started.md" in paths

        tree = (await session.call_tool("list_tree", {"cwd": cwd})).structured_content["tree"]
        assert [d["path"] for d in tree["subdirs"]] == ["guides"]
        assert "guides/getting-started.md" in [f["path"] for f in tree["subdirs"][0]["files"]]

        page = (
            await session.call_tool("read_markdown", {"cwd": cwd, "path": "architecture.md"})
        ).structured_content
        on_disk = (repo / ".hallouminate" / "wiki" / "architecture.md").read_bytes()
        assert page["content"].encode() == on_disk and page["bytes"] == len(on_disk)
        numbered = await session.call_tool(
            "read_markdown", {"cwd": cwd, "path": "architecture.md", "line_numbers": True}
        )
        assert numbered.structured_content["content"].startswith("1: # ")

        await session.call_tool("index", {"cwd": cwd})
        stats = (await session.call_tool("corpus_stats", {"cwd": cwd})).structured_content
        assert stats["indexed_files"] == len(paths) and stats["unindexed_files"] == 0
        assert stats["total_chunks"] >= stats["indexed_files"] and stats["last_indexed_ms"] > 0

        links = (
            await session.call_tool("backlinks", {"cwd": cwd, "path": "architecture.md"})
        ).structured_content
        assert links["backlinks"], "the sample wiki links to its architecture page"
        assert "architecture.md" not in links["backlinks"]


async def test_every_path_attack_is_refused_by_read_and_backlinks(world: Sandbox) -> None:
    repo = world.make_repo("attacked", pages=SMALL_WIKI)
    plant_symlinks(repo / ".hallouminate" / "wiki", world.root / "outside")
    async with mcp_session(world) as session:
        for tool in ("read_markdown", "backlinks"):
            for attack in ATTACKS:
                with pytest.raises(MCPError) as info:
                    await session.call_tool(tool, {"cwd": str(repo), "path": attack})
                assert info.value.code == INVALID_PARAMS, (tool, attack)
                assert "TOP-SECRET" not in info.value.message and "root:" not in info.value.message


async def test_a_miss_names_the_nearest_directory_and_close_names(world: Sandbox) -> None:
    repo = world.root / "sample"
    async with mcp_session(world) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("read_markdown", {"cwd": str(repo), "path": "guides/getting-startd.md"})
    assert info.value.code == INVALID_PARAMS
    assert "does not exist" in info.value.message
    assert "guides/getting-started.md" in info.value.message


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def test_siblings_and_a_worktree_each_see_only_their_own_wiki(world: Sandbox) -> None:
    empty = None
    one = world.make_repo("one", wiki=empty)
    two = world.make_repo("two", wiki=empty)
    (one / ".hallouminate" / "wiki" / "alpha.md").write_text("# Alpha\n\nThe saffron albatross lives here.\n")
    (two / ".hallouminate" / "wiki" / "beta.md").write_text("# Beta\n\nThe saffron albatross is elsewhere.\n")
    git("init", "-q", "-b", "main", cwd=one)
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", cwd=one)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init", cwd=one)
    worktree = world.root / "one-wt"
    git("worktree", "add", "-q", str(worktree), cwd=one)
    (worktree / ".hallouminate" / "wiki" / "gamma.md").write_text(
        "# Gamma\n\nThe saffron albatross, worktree copy.\n"
    )
    async with mcp_session(world) as session:
        seen = {}
        for checkout in (one, two, worktree):
            await session.call_tool("index", {"cwd": str(checkout)})  # a search would not wait for it
            found = await session.call_tool("ground", {"cwd": str(checkout), "query": "saffron albatross"})
            seen[checkout.name] = sorted(doc["path"] for doc in found.structured_content["docs"])
            listed = await session.call_tool("list_files", {"cwd": str(checkout)})
            assert sorted(f["path"] for f in listed.structured_content["files"]) == seen[checkout.name]
    assert seen == {"one": ["alpha.md"], "two": ["beta.md"], "one-wt": ["alpha.md", "gamma.md"]}


async def test_globs_are_resolved_from_each_root(sandbox: Sandbox) -> None:
    roots = [sandbox.root / "docs-a", sandbox.root / "docs-b"]
    for root, word in zip(roots, ("north", "south"), strict=True):
        (root / "guides" / "deep").mkdir(parents=True)
        (root / "guides" / "deep" / f"{word}.md").write_text(f"# {word}\n\nThe {word} guide.\n")
        (root / f"{word}-top.md").write_text(f"# top {word}\n\nNot under guides.\n")
    sandbox.write_config(
        sandbox.config_file.read_text()
        + '\n[[corpus]]\nname = "docs"\npaths = ["'
        + '", "'.join(map(str, roots))
        + '"]\nglobs = ["guides/**/*.md"]\n'
    )
    elsewhere = sandbox.root / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(sandbox) as session:
        listed = await session.call_tool("list_files", {"cwd": str(elsewhere), "corpus": "docs"})
    assert sorted(f["path"] for f in listed.structured_content["files"]) == [
        "guides/deep/north.md",
        "guides/deep/south.md",
    ]


async def test_outside_every_repository_a_corpus_must_be_named(world: Sandbox) -> None:
    elsewhere = world.root / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(world) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("list_files", {"cwd": str(elsewhere)})
    assert info.value.code == INVALID_PARAMS and "corpus" in info.value.message


async def test_repositories_below_cwd_are_discovered_within_depth_honouring_gitignore(
    world: Sandbox,
) -> None:
    top = world.root / "projects"
    shallow = top / "a"
    deep = top / "b" / "c" / "d" / "e" / "f"
    ignored = top / "vendor-repo"
    for path, name in ((shallow, "shallow"), (deep, "deep"), (ignored, "ignored")):
        (path / ".hallouminate" / "wiki").mkdir(parents=True)
        (path / ".hallouminate" / "config.toml").write_text(f'[[repository]]\nname = "{name}"\npath = "."\n')
    (top / ".gitignore").write_text("vendor-repo/\n")
    async with mcp_session(world) as session:
        names = {
            c["name"]
            for c in (await session.call_tool("list_corpora", {"cwd": str(top)})).structured_content[
                "corpora"
            ]
        }
    assert names == {"repo:shallow:wiki"}


async def test_a_scalar_set_differently_by_two_layers_names_both(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo()
    sandbox.write_config(sandbox.config_file.read_text() + "\n[search]\ntop_files = 5\n")
    repo_config = repo / ".hallouminate" / "config.toml"
    repo_config.write_text(repo_config.read_text() + "\n[search]\ntop_files = 7\n")
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("list_files", {"cwd": str(repo)})
    message = info.value.message
    assert info.value.code == INVALID_PARAMS
    assert "5" in message and "7" in message
    assert str(sandbox.config_file) in message and str(repo_config) in message


def test_cli_corpora_and_read(world: Sandbox) -> None:
    repo = world.root / "sample"

    def hm(*args: str) -> subprocess.CompletedProcess[str]:
        import sys

        return subprocess.run(
            [sys.executable, "-m", "hallouminate", *args],
            env=world.env,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
        )

    listed = hm("corpora")
    assert listed.returncode == 0, listed.stderr
    assert "repo:sample:wiki" in listed.stdout
    read = hm("read", "repo:sample:wiki", "overview.md")
    assert read.returncode == 0, read.stderr
    assert read.stdout == (repo / ".hallouminate" / "wiki" / "overview.md").read_text()
    refused = hm("read", "repo:sample:wiki", "../config.toml")
    assert refused.returncode == 2 and ".." in refused.stderr
    assert os.path.exists(repo / ".hallouminate" / "config.toml")


async def test_corpus_stats_names_the_problems_the_watcher_found_and_counts_skips(world: Sandbox) -> None:
    repo = world.make_repo("troubled", pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "blob.md").write_bytes(b"\x00\x01\x02 not a page")
    (wiki / "empty.md").write_text("")
    cwd = str(repo)
    async with mcp_session(world) as session:
        await session.call_tool("index", {"cwd": cwd})
        stats = (await session.call_tool("corpus_stats", {"cwd": cwd})).structured_content
        assert (stats["unindexed_files"], stats["skipped_files"]) == (0, 2)
        assert {(p["path"], p["problem"]) for p in stats["problems"]} == {
            ("blob.md", "binary"),
            ("empty.md", "empty"),
        }

        # Written while the daemon runs: the watcher indexes it, and the tool names its problem.
        (wiki / "broken.md").write_text("---\ntags: [open\n---\n# Broken\n\nBody.\n")
        started = time.monotonic()
        while True:
            result = await session.call_tool("corpus_stats", {"cwd": cwd})
            named = {p["path"]: p for p in result.structured_content["problems"]}
            # The problem is recorded just before the rows are committed: wait for both.
            if "broken.md" in named and result.structured_content["unindexed_files"] == 0:
                break
            assert time.monotonic() - started < 90, "the watcher never indexed broken.md"
            await asyncio.sleep(0.2)
        assert named["broken.md"]["problem"] == "frontmatter" and named["broken.md"]["indexed"] is True
        text = result.content[0].text
        assert "skipped_files: 2" in text and "unindexed_files: 0" in text
        assert "broken.md: frontmatter (indexed as text): frontmatter is not valid YAML" in text
        assert "blob.md: binary (skipped)" in text and "empty.md: empty (skipped): an empty file" in text
