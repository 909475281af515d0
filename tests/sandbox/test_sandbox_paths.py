"""The path sandbox: string rules, symlinks anywhere on the way, swaps between check and open."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hallouminate.errors import InvalidParams
from hallouminate.sandbox import (
    PathMissing,
    check_relative_path,
    is_safe_relative_path,
    open_for_read,
    resolve_inside,
    walk_tree,
)

SECRET = "TOP-SECRET-CONTENT"

# The string attacks of the acceptance list (the symlink ones need a tree: see `tree` below).
STRING_ATTACKS = [
    ("/etc/passwd", "absolute"),
    ("../x.md", "dot-dot"),
    ("a/../../x.md", "dot-dot"),
    ("./a.md", "dot-segment"),
    ("a//b.md", "empty-segment"),
    ("a/./b.md", "dot-segment"),
    ("a\u0000.md", "nul"),
    ("", "empty"),
    ("a/", "empty-segment"),
    ("..", "dot-dot"),
    ("a\\..\\b.md", "backslash"),
    ("a\nb.md", "control"),
    ("a\x1b[31m.md", "control"),
    ("a\u0085.md", "control"),  # C1 control (NEL)
    ("x" * 256 + ".md", "too-long"),
    ("/".join(["d" * 200] * 21), "too-long"),
    ("a\udcff.md", "encoding"),
]

SYMLINK_ATTACKS = ["link.md", "linkdir/page.md", "escape.md", "escape-dir/secret.md", "linkdir"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A corpus root with a real page, and every kind of symlink next to it; a secret outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "page.md").write_text("# Page\n")
    (root / "real" / "page.md").write_text("# Real page\n")
    os.symlink(root / "page.md", root / "link.md")  # a symlinked file (pointing inside)
    os.symlink(root / "real", root / "linkdir")  # a symlinked directory (pointing inside)
    os.symlink(outside / "secret.md", root / "escape.md")  # a symlink pointing outside
    os.symlink(outside, root / "escape-dir")
    return root


@contextmanager
def no_file_opened() -> Iterator[list[tuple[str, ...]]]:
    """Record every open/scandir the interpreter performs in this block (audit hooks, no mocks)."""
    events: list[tuple[str, ...]] = []
    active = [True]

    def hook(event: str, args: tuple[object, ...]) -> None:
        if active[0] and event in ("open", "os.scandir", "os.listdir"):
            events.append((event, str(args[0]) if args else ""))

    sys.addaudithook(hook)  # hooks cannot be removed; the flag retires this one
    try:
        yield events
    finally:
        active[0] = False


@pytest.mark.parametrize(("path", "problem"), STRING_ATTACKS)
def test_string_attacks_are_refused_naming_the_problem(path: str, problem: str, tree: Path) -> None:
    with pytest.raises(InvalidParams) as err:
        check_relative_path(path)
    assert err.value.data["problem"] == problem
    assert "path" in err.value.message
    with no_file_opened() as events, pytest.raises(InvalidParams):
        resolve_inside(tree, path, must_exist=True)
    with pytest.raises(InvalidParams):
        open_for_read(tree, path)
    assert events == []


def test_messages_say_how_to_fix_it() -> None:
    with pytest.raises(InvalidParams) as err:
        check_relative_path("/etc/passwd")
    assert "relative to the corpus root" in err.value.message and "guides/setup.md" in err.value.message
    with pytest.raises(InvalidParams) as err:
        check_relative_path("a\\b.md")
    assert "'/'" in err.value.message


def test_good_paths_split_into_segments() -> None:
    assert check_relative_path("page.md") == ["page.md"]
    assert check_relative_path("guides/deep/é ü.md") == ["guides", "deep", "é ü.md"]
    assert check_relative_path(".hidden/x.md") == [".hidden", "x.md"]
    assert check_relative_path("...md") == ["...md"]
    assert check_relative_path("x" * 255) == ["x" * 255]


def test_not_a_string_is_refused() -> None:
    with pytest.raises(InvalidParams):
        check_relative_path(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", SYMLINK_ATTACKS)
def test_symlinks_anywhere_are_refused_before_opening(path: str, tree: Path) -> None:
    with no_file_opened() as events, pytest.raises(InvalidParams) as err:
        resolve_inside(tree, path, must_exist=True)
    assert events == []
    assert err.value.data["problem"] == "symlink"
    assert "symbolic link" in err.value.message and SECRET not in err.value.message
    # Also for a path that would be created (writes) and through the descriptor-relative open.
    with pytest.raises(InvalidParams):
        resolve_inside(tree, path, must_exist=False)
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, path)
    assert SECRET not in err.value.message


def test_a_file_below_a_symlinked_dir_is_refused_even_when_missing(tree: Path) -> None:
    with pytest.raises(InvalidParams) as err:
        resolve_inside(tree, "escape-dir/new.md", must_exist=False)
    assert err.value.data["problem"] == "symlink" and "'escape-dir'" in err.value.message


def test_resolve_inside_returns_the_path_and_reports_what_is_missing(tree: Path) -> None:
    assert resolve_inside(tree, "real/page.md", must_exist=True) == tree / "real" / "page.md"
    assert resolve_inside(tree, "new/dir/x.md", must_exist=False) == tree / "new" / "dir" / "x.md"
    with pytest.raises(PathMissing) as err:
        resolve_inside(tree, "real/nope/x.md", must_exist=True)
    assert (err.value.existing, err.value.rel, err.value.kind) == (1, "real/nope/x.md", "invalid_params")
    with pytest.raises(InvalidParams) as bad:
        resolve_inside(tree, "page.md/x.md", must_exist=False)
    assert bad.value.data["problem"] == "not-a-directory"


def test_open_for_read_reads_regular_files_only(tree: Path) -> None:
    with no_file_opened() as events:
        assert open_for_read(tree, "real/page.md") == b"# Real page\n"
    assert events  # the audit hook does see opens: the "nothing opened" checks above are not vacuous
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "real")
    assert err.value.data["problem"] == "directory"
    os.mkfifo(tree / "fifo.md")  # opening a FIFO would block a reader: refused from its stat
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "fifo.md")
    assert err.value.data["problem"] == "not-a-file"
    with pytest.raises(PathMissing):
        open_for_read(tree, "real/missing.md")
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "page.md/x.md")
    assert err.value.data["problem"] == "not-a-directory"


def test_read_limit(tree: Path) -> None:
    (tree / "big.md").write_bytes(b"x" * 1000)
    assert len(open_for_read(tree, "big.md", max_bytes=1000)) == 1000
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "big.md", max_bytes=999)
    assert err.value.data["limit"] == 999


def test_a_directory_swapped_for_a_symlink_after_the_check_is_refused(tree: Path) -> None:
    outside = tree.parent / "outside"
    (outside / "page.md").write_text(SECRET)
    assert resolve_inside(tree, "real/page.md", must_exist=True)
    # The race: between the check and the open, `real` becomes a link to the outside.
    os.rename(tree / "real", tree / "real-moved")
    os.symlink(outside, tree / "real")
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "real/page.md")
    assert err.value.data["problem"] == "symlink" and SECRET not in err.value.message


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused(tree: Path) -> None:
    assert resolve_inside(tree, "page.md", must_exist=True)
    os.unlink(tree / "page.md")
    os.symlink(tree.parent / "outside" / "secret.md", tree / "page.md")
    with pytest.raises(InvalidParams) as err:
        open_for_read(tree, "page.md")
    assert err.value.data["problem"] == "symlink"


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_tree_walk_enters_only_real_directories_and_closes_what_it_opens(tree: Path) -> None:
    (tree / "real" / "deeper").mkdir()
    (tree / "real" / "deeper" / "x.md").write_text("x")
    before = open_fds()
    seen: dict[str, list[str]] = {}
    for listing in walk_tree(tree):
        seen[listing.rel_dir] = sorted(entry.name for entry in listing.entries)
        assert listing.path == tree / listing.rel_dir
        # Asked to, the walk still does not enter a symlinked directory (linkdir, escape-dir).
        listing.descend += [e.name for e in listing.entries if e.is_dir() and e.name != "page.md"]
    assert seen == {
        "": ["escape-dir", "escape.md", "link.md", "linkdir", "page.md", "real"],
        "real/": ["deeper", "page.md"],
        "real/deeper/": ["x.md"],
    }
    assert open_fds() == before
    walk = walk_tree(tree)
    next(walk).descend.append("real")
    next(walk)
    walk.close()  # a walk left early closes its descriptors too
    assert open_fds() == before


def test_the_tree_walk_does_not_enter_a_directory_swapped_for_a_symlink(tree: Path) -> None:
    outside = tree.parent / "outside"
    (outside / "page.md").write_text(SECRET)
    seen: list[str] = []
    for listing in walk_tree(tree):
        seen.append(listing.rel_dir)
        assert "secret.md" not in {entry.name for entry in listing.entries}
        if listing.rel_dir == "":
            listing.descend.append("real")
            # The race: `real` was listed as a directory, then becomes a link to the outside.
            os.rename(tree / "real", tree / "real-moved")
            os.symlink(outside, tree / "real")
    assert seen == [""]


# The walker's quick test (``is_safe_relative_path``'s one-regex path for plain ASCII names) must never
# accept what the full check refuses, nor refuse what it accepts: the same verdict on any string.
_PATH_CHARS = st.sampled_from([*"ab.-_/\\ \0\t", "é", "\x7f", "\ud800", "/", ".."])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PATH_CHARS, max_size=12).map("".join) | st.text(max_size=20))
def test_the_walkers_quick_safety_test_agrees_with_the_full_check(path: str) -> None:
    try:
        check_relative_path(path)
        accepted = True
    except InvalidParams:
        accepted = False
    assert is_safe_relative_path(path) is accepted


@pytest.mark.parametrize(
    ("path", "accepted"),
    [
        ("a/b.md", True),
        ("a" * 255 + ".md", False),
        ("a" * 252 + ".md", True),
        ("x/" * 2100 + "y.md", False),
        ("x/" * 2000 + "y.md", True),
    ],
)
def test_the_quick_safety_test_keeps_the_length_limits(path: str, accepted: bool) -> None:
    assert is_safe_relative_path(path) is accepted
