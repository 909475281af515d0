"""read_markdown: verbatim contents, line numbers, helpful misses, and the path attack list refused."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hallouminate.browse import backlinks, read_markdown
from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidParams
from support.files import touch

SECRET = "TOP-SECRET-CONTENT"

# Acceptance list: each refused (-32602) by read_markdown and backlinks, with nothing read.
ATTACKS = [
    "/etc/passwd",
    "../x.md",
    "a/../../x.md",
    "./a.md",
    "a//b.md",
    "a/./b.md",
    "a\u0000.md",
    "",
    "link.md",  # a symlinked file
    "linkdir/page.md",  # a file under a symlinked directory
    "escape.md",  # a symlink pointing outside the corpus
    "escape-dir/secret.md",
    "a\\b.md",
    "a/\x07.md",
]


def spec(*roots: Path, globs: tuple[str, ...] = ("**/*.md",), exclude: tuple[str, ...] = ()) -> CorpusSpec:
    return CorpusSpec("docs", "custom", tuple(roots), globs, exclude, None)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    touch(outside / "secret.md", f"{SECRET} [[page]]\n")
    root = tmp_path / "docs"
    touch(root / "page.md", "# Page\n")
    touch(root / "real" / "page.md", "# Real\n")
    for n in range(25):
        touch(root / "guides" / f"g{n:02d}.md")
    touch(root / "guides" / "setup.md", "# Setup\n")
    os.symlink(root / "page.md", root / "link.md")
    os.symlink(root / "real", root / "linkdir")
    os.symlink(outside / "secret.md", root / "escape.md")
    os.symlink(outside, root / "escape-dir")
    return root


@contextmanager
def recording() -> Iterator[list[str]]:
    """Every file or directory the interpreter opens in this block (audit hooks, no mocks)."""
    events: list[str] = []
    active = [True]

    def hook(event: str, args: tuple[object, ...]) -> None:
        if active[0] and event in ("open", "os.scandir", "os.listdir"):
            events.append(str(args[0]) if args else "")

    sys.addaudithook(hook)  # hooks cannot be removed; the flag retires this one
    try:
        yield events
    finally:
        active[0] = False


@pytest.mark.parametrize("path", ATTACKS)
def test_attacks_are_refused_by_read_and_backlinks_before_anything_is_read(path: str, root: Path) -> None:
    with recording() as events:
        with pytest.raises(InvalidParams) as read_err:
            read_markdown(spec(root), path)
        with pytest.raises(InvalidParams) as link_err:
            backlinks(spec(root), path)
    assert events == [], events
    for err in (read_err.value, link_err.value):
        assert err.kind == "invalid_params"
        assert SECRET not in err.message and SECRET not in str(err.data)


def test_the_recorder_sees_reads(root: Path) -> None:
    with recording() as events:
        read_markdown(spec(root), "page.md")
    assert events  # so the empty lists above mean "nothing opened", not "nothing recorded"


def test_reads_verbatim_utf8(root: Path) -> None:
    text = "\ufeff# Tïtle\r\n\r\nBody with `code` and \x1b[31mansi\x1b[0m\n"
    (root / "crlf.md").write_bytes(text.encode("utf-8"))
    result = read_markdown(spec(root), "crlf.md")
    assert result == {
        "corpus": "docs",
        "path": "crlf.md",
        "absolute_path": str(root / "crlf.md"),
        "content": text,
        "bytes": len(text.encode("utf-8")),
    }


def test_line_numbers(root: Path) -> None:
    touch(root / "n.md", "# A\n\nb\n")
    assert read_markdown(spec(root), "n.md", line_numbers=True)["content"] == "1: # A\n2: \n3: b\n"
    touch(root / "m.md", "x\ny")  # no final newline
    numbered = read_markdown(spec(root), "m.md", line_numbers=True)
    assert numbered["content"] == "1: x\n2: y\n" and numbered["bytes"] == 3


def test_a_miss_lists_the_nearest_directory_and_closest_names(root: Path) -> None:
    with pytest.raises(InvalidParams) as err:
        read_markdown(spec(root), "guides/stup.md")
    message, data = err.value.message, err.value.data
    assert "does not exist" in message and "'guides/stup.md'" in message
    assert data["directory"] == "guides"
    assert len(data["entries"]) == 20 and "more" in message
    assert data["closest"][0] == "guides/setup.md" and len(data["closest"]) <= 3
    with pytest.raises(InvalidParams) as err:
        read_markdown(spec(root), "nowhere/deep/setup.md")
    assert err.value.data["directory"] == ""
    assert "guides/" in err.value.data["entries"] and "page.md" in err.value.data["entries"]
    assert "guides/setup.md" in err.value.data["closest"]
    # Symlinked entries are not corpus files and are not listed.
    assert "link.md" not in err.value.data["entries"] and "linkdir/" not in err.value.data["entries"]


def test_only_corpus_files_can_be_read(root: Path) -> None:
    touch(root / ".env", "TOKEN=abc\n")
    touch(root / "notes.txt", "plain\n")
    touch(root / "drafts" / "d.md")
    touch(root / ".gitignore", "ignored.md\n")
    touch(root / "ignored.md")
    s = spec(root, exclude=("drafts/",))
    for path, reason in [
        (".env", "globs"),
        ("notes.txt", "globs"),
        ("drafts/d.md", "excluded"),
        ("ignored.md", "ignored"),
    ]:
        with pytest.raises(InvalidParams) as err:
            read_markdown(s, path)
        assert "not a file of corpus" in err.value.message and reason in err.value.message
        assert "abc" not in err.value.message
    assert read_markdown(spec(root, globs=("**/*.txt",)), "notes.txt")["content"] == "plain\n"


def test_directories_non_utf8_and_oversize_files_are_refused(root: Path) -> None:
    with pytest.raises(InvalidParams) as err:
        read_markdown(spec(root, globs=("**",)), "real")
    assert "directory" in err.value.message
    (root / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(InvalidParams) as err:
        read_markdown(spec(root), "latin1.md")
    assert "UTF-8" in err.value.message and err.value.data["offset"] == 3
    touch(root / "big.md", "x" * 100)
    with pytest.raises(InvalidParams) as err:
        read_markdown(spec(root), "big.md", max_bytes=50)
    assert "limit" in err.value.message


def test_several_roots_first_corpus_file_wins(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    touch(one / "same.md", "one\n")
    touch(two / "same.md", "two\n")
    touch(one / "skip.md", "one\n")
    touch(one / ".gitignore", "skip.md\n")
    touch(two / "skip.md", "two\n")
    touch(two / "only.md", "two\n")
    s = spec(one, two)
    assert read_markdown(s, "same.md")["content"] == "one\n"
    assert read_markdown(s, "only.md")["absolute_path"] == str(two / "only.md")
    # Ignored in the first root, a corpus file in the second: the second is what list_files shows.
    assert read_markdown(s, "skip.md")["content"] == "two\n"
