"""walk_corpus honours .gitignore (nested too), .ignore and .git/info/exclude, in time linear in the files."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.indexing.walker import walk_corpus, why_not_listed
from support.files import touch

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def spec(*roots: Path, globs: tuple[str, ...] = ("**/*.md",), exclude: tuple[str, ...] = ()) -> CorpusSpec:
    return CorpusSpec("c", "custom", tuple(roots), globs, exclude, None)


def rels(s: CorpusSpec) -> list[str]:
    return [rel for rel, _ in walk_corpus(s)]


def test_gitignore_nested_and_negated(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for rel in ["a.md", "build/out.md", "sub/keep.md", "sub/tmp.md", "sub/deeper/tmp.md", "sub/x/y.md"]:
        touch(root / rel)
    touch(root / ".gitignore", "build/\n# a comment\n*.tmp\n")
    # A nested .gitignore: relative to its own directory, and it can re-include.
    touch(root / "sub" / ".gitignore", "tmp.md\nx/\n")
    touch(root / "sub" / "deeper" / ".gitignore", "!tmp.md\n")
    assert rels(spec(root)) == ["a.md", "sub/deeper/tmp.md", "sub/keep.md"]


def test_dot_ignore_overrides_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for rel in ["keep.md", "drop.md", "private/p.md"]:
        touch(root / rel)
    touch(root / ".gitignore", "*.md\n")
    touch(root / ".ignore", "!keep.md\n!private/\n!p.md\nprivate/\n")
    assert rels(spec(root)) == ["keep.md"]


def test_info_exclude_and_ancestor_gitignore_up_to_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    wiki = repo / ".hallouminate" / "wiki"
    for rel in ["page.md", "drafts/d.md", "scratch.md", "notes/n.md"]:
        touch(wiki / rel)
    git(repo, "init", "-q")
    # Rules above the walked root apply (paths relative to their own directory)...
    touch(repo / ".gitignore", "drafts/\n.hallouminate/wiki/notes/\n")
    touch(repo / ".git" / "info" / "exclude", "scratch.md\n")
    # ...but one matching the root itself (or a directory on the way) must not hide the whole corpus.
    touch(repo / ".hallouminate" / ".gitignore", "wiki/\n")
    touch(tmp_path / ".gitignore", "*.md\n")  # above the checkout: not ours
    assert rels(spec(wiki)) == ["page.md"]
    assert why_not_listed(spec(wiki), wiki, "drafts/d.md") is not None
    assert "ignored" in (why_not_listed(spec(wiki), wiki, "scratch.md") or "")
    assert why_not_listed(spec(wiki), wiki, "page.md") is None


def test_without_a_checkout_only_the_roots_own_ignore_files_count(tmp_path: Path) -> None:
    root = tmp_path / "plain" / "docs"
    touch(root / "a.md")
    touch(root / "b.md")
    touch(tmp_path / "plain" / ".gitignore", "a.md\n")
    touch(root / ".gitignore", "b.md\n")
    assert rels(spec(root)) == ["a.md"]


def test_a_nested_checkout_starts_afresh(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    touch(root / ".gitignore", "*.md\n!/top.md\n")
    touch(root / "top.md")
    touch(root / "vendor" / "lib" / "readme.md")
    touch(root / "vendor" / "lib" / "excluded.md")
    git(root / "vendor" / "lib", "init", "-q")
    touch(root / "vendor" / "lib" / ".git" / "info" / "exclude", "excluded.md\n")
    assert rels(spec(root)) == ["top.md", "vendor/lib/readme.md"]


def test_a_linked_worktree_uses_the_main_repositorys_info_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    touch(main / "docs" / "a.md")
    git(main, "init", "-q")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "init")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    touch(main / ".git" / "info" / "exclude", "local.md\n")
    touch(tmp_path / "wt" / "docs" / "local.md")
    assert (tmp_path / "wt" / ".git").is_file()
    assert rels(spec(tmp_path / "wt" / "docs")) == ["a.md"]


def test_globs_and_excludes_still_apply_and_git_dirs_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for rel in ["guides/a.md", "guides/b.txt", "other/c.md", ".git/d.md", "guides/.git/e.md"]:
        touch(root / rel)
    touch(root / ".gitignore", "other/\n")
    assert rels(spec(root, globs=("**/*.md", "**/*.txt"))) == ["guides/a.md", "guides/b.txt"]
    assert rels(spec(root, exclude=("*.md",))) == []


def test_broken_or_odd_ignore_files_do_not_break_the_walk(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    touch(root / "a.md")
    touch(root / "b.md")
    (root / ".gitignore").write_bytes(b"[z-a]\n\xff\xfe\nb.md\n")  # a bad range, invalid UTF-8
    (root / "sub" / ".ignore").mkdir(parents=True)  # a directory named like an ignore file
    touch(root / "sub" / "c.md")
    assert rels(spec(root)) == ["a.md", "sub/c.md"]


def test_symlinked_files_and_dirs_are_not_listed(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    touch(root / "a.md")
    os.symlink(root / "a.md", root / "alias.md")
    os.symlink(root, root / "loop")
    assert rels(spec(root)) == ["a.md"]


def ignored_tree(root: Path, dirs: int) -> None:
    """``dirs`` directories of 52 pages, each with its own .gitignore; the last directory ignored."""
    for d in range(dirs):
        directory = root / f"dir{d:02d}"
        directory.mkdir(parents=True)
        (directory / ".gitignore").write_text("*.tmp.md\n!keep.tmp.md\n")
        for f in range(50):
            (directory / f"page{f:02d}.md").write_text("x")
        (directory / "x.tmp.md").write_text("x")
        (directory / "keep.tmp.md").write_text("x")
    touch(root / ".gitignore", f"dir{dirs - 1:02d}/\n")


def best_walk(root: Path) -> tuple[float, list[str]]:
    """The fastest of three walks (a loaded machine's pauses inflate single timings) and what it listed."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        got = rels(spec(root))
        times.append(time.perf_counter() - started)
    return min(times), got


def test_thousands_of_files_walk_in_time_linear_in_their_number(tmp_path: Path) -> None:
    ignored_tree(tmp_path / "small", 6)
    ignored_tree(tmp_path / "big", 60)
    small_secs, small = best_walk(tmp_path / "small")
    big_secs, big = best_walk(tmp_path / "big")
    assert (len(small), len(big)) == (5 * 51, 59 * 51)
    # Relative, in the same run (how fast in seconds is bench/'s business): ten times the directories, each
    # with its own ignore file, cost about ten times as much, not the hundred a rescan per directory would.
    print(f"walk: 3,000 files {big_secs:.3f} s, 300 files {small_secs:.3f} s")
    assert big_secs < 40 * small_secs, f"3,000 files: {big_secs:.3f} s; 300 files: {small_secs:.3f} s"
