"""walk_corpus: globs and excludes relative to each root, no symlinks, no .git."""

from __future__ import annotations

import os
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.indexing import walk_corpus
from hallouminate.indexing.walker import locate
from support.files import touch


def spec(*roots: Path, globs: tuple[str, ...] = ("**/*.md",), exclude: tuple[str, ...] = ()) -> CorpusSpec:
    return CorpusSpec("c", "custom", tuple(roots), globs, exclude, None)


def test_globs_and_excludes_are_relative_to_each_root(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "docs"
    for rel in ["a.md", "guides/b.md", "guides/deep/c.md", "notes.txt", "drafts/d.md", "x/guides/e.md"]:
        touch(root / rel)
    monkeypatch.chdir(tmp_path / "docs" / "guides")  # the process cwd must not matter
    got = walk_corpus(spec(root))
    assert [rel for rel, _ in got] == [
        "a.md",
        "drafts/d.md",
        "guides/b.md",
        "guides/deep/c.md",
        "x/guides/e.md",
    ]
    assert all(path == root / rel and path.is_absolute() for rel, path in got)

    anchored = walk_corpus(spec(root, globs=("guides/**/*.md",)))
    assert [rel for rel, _ in anchored] == ["guides/b.md", "guides/deep/c.md"]

    excluded = walk_corpus(spec(root, exclude=("drafts/", "**/deep/**")))
    assert [rel for rel, _ in excluded] == ["a.md", "guides/b.md", "x/guides/e.md"]


def test_git_dirs_and_symlinks_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    outside = tmp_path / "outside"
    touch(root / "page.md")
    touch(root / ".git" / "info.md")
    touch(outside / "secret.md")
    os.symlink(outside, root / "linked-dir")
    os.symlink(outside / "secret.md", root / "linked.md")
    assert [rel for rel, _ in walk_corpus(spec(root))] == ["page.md"]


def test_several_roots_first_wins_and_missing_root_is_empty(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    touch(one / "same.md")
    touch(two / "same.md")
    touch(two / "only-two.md")
    got = dict(walk_corpus(spec(one, two, tmp_path / "missing")))
    assert got == {"same.md": one / "same.md", "only-two.md": two / "only-two.md"}


def test_names_the_sandbox_refuses_are_not_listed(tmp_path: Path) -> None:
    """A listed file can always be read: names read_markdown would refuse are not corpus files."""
    root = tmp_path / "wiki"
    for name in ("ok é ü.md", "back\\slash.md", "tab\there.md", "line\nbreak.md", "esc\x1b.md"):
        touch(root / name)
    touch(root / "dir\\name" / "inside.md")
    with open(os.fsencode(root) + b"/not-utf8-\xff.md", "w") as f:  # a name that is not UTF-8
        f.write("# x\n")
    assert [rel for rel, _ in walk_corpus(spec(root))] == ["ok é ü.md"]


def test_locate_agrees_with_the_walk(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    touch(one / "same.md")
    touch(one / "ignored.md")
    (one / ".gitignore").write_text("ignored.md\n")
    touch(two / "same.md")
    touch(two / "ignored.md")
    touch(two / "only-two.md")
    os.symlink(two / "only-two.md", one / "only-two.md")  # a link in the first root: not its file
    corpus = spec(one, two)
    walked = dict(walk_corpus(corpus))
    assert walked == {
        "same.md": one / "same.md",
        "ignored.md": two / "ignored.md",
        "only-two.md": two / "only-two.md",
    }
    for rel, path in walked.items():
        root = locate(corpus, rel)
        assert root is not None and root / rel == path, rel
    assert locate(corpus, "missing.md") is None
