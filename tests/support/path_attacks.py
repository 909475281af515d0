"""A shared list of path attacks for any tool that takes a corpus-relative path, and a filesystem snapshot.

Import it from any test module::

    from support.path_attacks import ATTACKS, SWAPS, plant_traps, snapshot

- ``STRING_ATTACKS``: refused from the string alone (absolute, ``..`` and ``.`` in every position, empty
  segments, NUL, backslashes, control characters, over-long names);
- ``WRITE_RULE_ATTACKS``: refused by the write rules (``.git``, reserved temp names, non-``.md`` in a wiki);
- ``PLANTED_ATTACKS``: need the traps ``plant_traps`` sets up inside the corpus root (a symlinked leaf, a
  symlinked directory, links pointing outside, a dangling link, a directory, a FIFO, a file used as a
  directory);
- ``SWAPS``: a symlink swapped in between the tool's check and its write (needs the daemon's pause
  fault point, see ``hallouminate.testing_hooks.write_fault_point``).

``problem`` is the ``data.problem`` the refusal must carry (None: only the -32602 code is checked, e.g.
when the JSON schema refuses first).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SECRET = "TOP-SECRET-CONTENT"


@dataclass(frozen=True)
class Attack:
    label: str
    path: str
    problem: str | None
    # The tools an attack applies to differ only for the planted traps (a FIFO is "not-a-file" for every
    # tool, but a missing leaf under a real directory is no attack for a create).


STRING_ATTACKS: list[Attack] = [
    Attack("empty", "", "empty"),
    Attack("absolute /etc/passwd", "/etc/passwd", "absolute"),
    Attack("absolute into /tmp", "/tmp/x.md", "absolute"),
    Attack("absolute with '//'", "//x.md", "absolute"),
    Attack("'..' first", "../x.md", "dot-dot"),
    Attack("'..' in the middle", "a/../x.md", "dot-dot"),
    Attack("'..' twice, escaping", "a/b/../../../x.md", "dot-dot"),
    Attack("'..' last", "a/..", "dot-dot"),
    Attack("'..' alone", "..", "dot-dot"),
    Attack("'..' to /etc/passwd", "../../../../../../etc/passwd", "dot-dot"),
    Attack("'..' after a real directory", "guides/../../outside/secret.md", "dot-dot"),
    Attack("'...' then '..'", ".../../x.md", "dot-dot"),
    Attack("'.' first", "./x.md", "dot-segment"),
    Attack("'.' in the middle", "guides/./x.md", "dot-segment"),
    Attack("'.' last", "guides/.", "dot-segment"),
    Attack("'.' alone", ".", "dot-segment"),
    Attack("empty segment", "guides//x.md", "empty-segment"),
    Attack("trailing slash on a directory", "guides/", "empty-segment"),
    Attack("trailing slash on a page", "x.md/", "empty-segment"),
    Attack("three slashes", "a///x.md", "empty-segment"),
    Attack("NUL in the name", "x\u0000.md", "nul"),
    Attack("NUL segment", "a/\u0000/x.md", "nul"),
    Attack("NUL before another suffix", "x.md\u0000.txt", "nul"),
    Attack("backslash separator", "guides\\x.md", "backslash"),
    Attack("backslash '..'", "..\\x.md", "backslash"),
    Attack("backslash absolute", "\\etc\\passwd", "backslash"),
    Attack("drive letter", "C:\\x.md", "backslash"),
    Attack("newline", "x\n.md", "control"),
    Attack("tab", "x\t.md", "control"),
    Attack("terminal escape", "x\x1b[31m.md", "control"),
    Attack("DEL", "x\x7f.md", "control"),
    Attack("C1 control (NEL)", "x\u0085.md", "control"),
    Attack("segment over 255 bytes", "x" * 256 + ".md", "too-long"),
    Attack("multi-byte segment over 255 bytes", "é" * 127 + ".md", "too-long"),
    # 2400 characters (under the schema's 4096) but 4200 bytes: the sandbox's byte limit refuses it.
    Attack("path over 4096 bytes", "ééé/" * 600 + "x.md", "too-long"),
    Attack("path over the schema's 4096 characters", "a/" * 2100 + "x.md", None),
]

WRITE_RULE_ATTACKS: list[Attack] = [
    Attack(".git at the root", ".git/config", "git-dir"),
    Attack(".git hook", ".git/hooks/pre-commit.md", "git-dir"),
    Attack("nested .git", "guides/.git/x.md", "git-dir"),
    Attack("reserved temp name", ".hallouminate-write.0123456789abcdef.tmp", "reserved"),
    Attack("non-.md in a wiki", "notes.txt", "not-markdown"),
    Attack("upper-case .MD in a wiki", "x.MD", "not-markdown"),
    Attack("double suffix in a wiki", "x.md.txt", "not-markdown"),
    Attack("no suffix in a wiki", "README", "not-markdown"),
]

PLANTED_ATTACKS: list[Attack] = [
    Attack("symlinked leaf pointing inside", "linked-file.md", "symlink"),
    Attack("symlinked leaf pointing outside", "escape.md", "symlink"),
    Attack("dangling symlink pointing outside", "dangling.md", "symlink"),
    Attack("existing file under a symlinked directory", "linked-dir/secret.md", "symlink"),
    Attack("new file under a symlinked directory", "linked-dir/new.md", "symlink"),
    Attack("new directories under a symlinked directory", "linked-dir/deeper/new.md", "symlink"),
    Attack("symlinked directory pointing inside", "inner-link/x.md", "symlink"),
    Attack("a directory as the leaf", "folder.md", "directory"),
    Attack("a FIFO as the leaf", "fifo.md", "not-a-file"),
    Attack("a file used as a directory", "overview.md/x.md", "not-a-directory"),
]

ATTACKS: list[Attack] = STRING_ATTACKS + WRITE_RULE_ATTACKS + PLANTED_ATTACKS


def plant_traps(root: Path, outside: Path) -> None:
    """The traps ``PLANTED_ATTACKS`` walk into, under the corpus ``root``; secrets in ``outside``.

    ``root`` must hold ``overview.md`` (a real page) and ``guides/`` (a real directory).
    """
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (outside / "dir").mkdir(exist_ok=True)
    (outside / "dir" / "page.md").write_text(f"# Outside page\n\n{SECRET}\n")
    (root / "linked-file.md").symlink_to(root / "overview.md")
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "dangling.md").symlink_to(outside / "created-through-a-dangling-link.md")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    (root / "inner-link").symlink_to(root / "guides", target_is_directory=True)
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inside.md").write_text("# Inside\n")
    os.mkfifo(root / "fifo.md")


# -- symlinks swapped in between the check and the write ---------------------------------------------------
@dataclass(frozen=True)
class Swap:
    """A race: ``prepare`` before the call; the tool pauses at ``point``; ``swap`` runs; the tool goes on."""

    label: str
    tool: str  # "add_markdown" (with `overwrite`) or "delete_markdown"
    path: str
    point: str  # a fault point of hallouminate.testing_hooks.write_fault_point
    overwrite: bool
    prepare: Callable[[Path, Path], None]
    swap: Callable[[Path, Path], None]
    problem: str


def _page(rel: str) -> Callable[[Path, Path], None]:
    def prepare(root: Path, outside: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n\nOriginal text.\n")

    return prepare


def _nothing(root: Path, outside: Path) -> None:
    return None


def _leaf_to_secret(rel: str) -> Callable[[Path, Path], None]:
    def swap(root: Path, outside: Path) -> None:
        if (root / rel).exists():
            (root / rel).rename(root / f"{rel}.moved")
        (root / rel).symlink_to(outside / "secret.md")

    return swap


def _dir_to_outside(rel_dir: str) -> Callable[[Path, Path], None]:
    def swap(root: Path, outside: Path) -> None:
        (root / rel_dir).rename(root / f"{rel_dir}-moved")
        (root / rel_dir).symlink_to(outside / "dir", target_is_directory=True)

    return swap


SWAPS: list[Swap] = [
    Swap(
        "new page: leaf symlink swapped in after the check",
        "add_markdown",
        "swap-new.md",
        "after-check",
        False,
        _nothing,
        _leaf_to_secret("swap-new.md"),
        "symlink",
    ),
    Swap(
        "overwrite: leaf replaced by a symlink after the check",
        "add_markdown",
        "swap-page.md",
        "after-check",
        True,
        _page("swap-page.md"),
        _leaf_to_secret("swap-page.md"),
        "symlink",
    ),
    Swap(
        "new page: its directory replaced by a symlink after the check",
        "add_markdown",
        "swapdir/page.md",
        "after-check",
        False,
        _page("swapdir/other.md"),
        _dir_to_outside("swapdir"),
        "symlink",
    ),
    Swap(
        "overwrite: leaf replaced by a symlink once the temp file is synced",
        "add_markdown",
        "late-page.md",
        "after-fsync",
        True,
        _page("late-page.md"),
        _leaf_to_secret("late-page.md"),
        "symlink",
    ),
    Swap(
        "new page: its directory replaced by a symlink once the temp file is synced",
        "add_markdown",
        "latedir/page.md",
        "after-fsync",
        False,
        _page("latedir/other.md"),
        _dir_to_outside("latedir"),
        "symlink",
    ),
    Swap(
        "delete: leaf replaced by a symlink after the check",
        "delete_markdown",
        "del-page.md",
        "after-check",
        False,
        _page("del-page.md"),
        _leaf_to_secret("del-page.md"),
        "symlink",
    ),
    Swap(
        "delete: its directory replaced by a symlink after the check",
        "delete_markdown",
        "deldir/page.md",
        "after-check",
        False,
        _page("deldir/page.md"),
        _dir_to_outside("deldir"),
        "symlink",
    ),
]


# -- snapshots ---------------------------------------------------------------------------------------------
Entry = tuple[str, int, bytes | str | None]


def snapshot(*roots: Path, skip: tuple[Path, ...] = ()) -> dict[str, Entry]:
    """Every entry under ``roots`` (files or directories) without following links: kind, mode and bytes
    (a link's target); entries under ``skip`` are left out. Equal snapshots mean nothing changed."""
    out: dict[str, Entry] = {}
    skipped = {str(p) for p in skip}

    def visit(path: Path) -> None:
        if str(path) in skipped:
            return
        info = os.lstat(path)
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            out[str(path)] = ("link", mode, os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            out[str(path)] = ("dir", mode, None)
            for name in sorted(os.listdir(path)):
                visit(path / name)
        elif stat.S_ISREG(info.st_mode):
            out[str(path)] = ("file", mode, path.read_bytes())
        else:
            out[str(path)] = ("other", info.st_mode, None)

    for root in roots:
        if os.path.lexists(root):
            visit(root)
    return out


def diff(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """Human-readable differences between two snapshots (empty when identical)."""
    changes = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    changes += [f"added {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return changes


def reset_tree(path: Path) -> None:
    """Remove a file, a link or a whole directory (used between swap cases)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
