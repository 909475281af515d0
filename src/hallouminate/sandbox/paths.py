"""Validate corpus-relative paths and resolve them under a root without following a symlink.

The first two of the sandbox's layers, cheapest first (the third, descriptor-relative opening, is
``sandbox.descriptors``):

1. ``check_relative_path`` looks at the string only (absolute, empty, ``.``/``..``/empty segments, NUL,
   backslash, control characters, length);
2. ``resolve_inside`` walks the segments from the root with ``lstat`` and refuses any symlink on the way,
   before anything is opened.

The root itself is trusted: it comes from the configuration, already made canonical.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from hallouminate.errors import CallerError, InvalidArgument
from hallouminate.protocol.limits import PATH_MAX_BYTES
from hallouminate.sandbox.refusals import EXAMPLE, PathMissing, check_leaf, refuse, symlink, unreadable

MAX_SEGMENT_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_BYTES = PATH_MAX_BYTES  # the limits table's, which the published schemas use too

# Unicode category Cc is exactly these two ranges; a character class is much faster than a per-character
# category lookup, which matters because the walker checks every file it lists.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_relative_path(path: str) -> list[str]:
    """The segments of a safe corpus-relative path; ``UnsafePath`` naming the problem otherwise."""
    if not isinstance(path, str):
        raise InvalidArgument(f"path must be a string, got {type(path).__name__}; {EXAMPLE}", {"path": None})
    if path == "":
        raise refuse(path, f"it is empty; {EXAMPLE}", "empty")
    if "\0" in path:
        raise refuse(path, f"it contains a NUL character; {EXAMPLE}", "nul")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise refuse(path, "it is not valid UTF-8 (it holds a lone surrogate)", "encoding") from None
    if path.startswith("/"):
        raise refuse(path, f"it is absolute; {EXAMPLE} (list_files shows them)", "absolute")
    if "\\" in path:
        raise refuse(path, "it contains a backslash; separate directories with '/'", "backslash")
    if _CONTROL.search(path):
        raise refuse(path, "it contains a control character (tab, newline, escape, ...)", "control")
    if size > MAX_PATH_BYTES:
        raise refuse(path, f"it is {size} bytes long, more than the {MAX_PATH_BYTES}-byte limit", "too-long")
    segments = path.split("/")
    for segment in segments:
        if segment == "":
            raise refuse(
                path, f"it has an empty segment ('//' or a trailing '/'); {EXAMPLE}", "empty-segment"
            )
        if segment == ".":
            raise refuse(path, f"it has a '.' segment; drop it and {EXAMPLE}", "dot-segment")
        if segment == "..":
            raise refuse(path, "it has a '..' segment; paths may not leave the corpus root", "dot-dot")
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise refuse(
                path, f"a segment is longer than the {MAX_SEGMENT_BYTES}-byte file name limit", "too-long"
            )
    return segments


# Paths ``check_relative_path`` accepts for sure, checked in one match: segments of ASCII letters, digits,
# '_', '-' and '.', not starting with '.' (so never '.' or '..'), at most 255 bytes, none empty. The walker
# asks this of every file it lists (130k files: ~1.3 s in the full check, a tenth of it here).
_PLAIN = re.compile(r"(?:[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,254}/)*[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,254}")


def is_safe_relative_path(path: str) -> bool:
    """Whether ``check_relative_path`` accepts ``path`` (for a walk, which skips what it would refuse)."""
    if len(path) <= MAX_PATH_BYTES and _PLAIN.fullmatch(path):
        return True
    try:
        check_relative_path(path)
    except CallerError:
        return False
    return True


def resolve_inside(root: Path, rel: str, *, must_exist: bool, leaf_file: bool = False) -> Path:
    """``root/rel``, refusing a symlink anywhere on the way (intermediate or leaf) and any escape.

    With ``must_exist`` a missing segment raises ``PathMissing``; without, the rest of the path may be
    missing (a file about to be written). An existing non-directory in the middle is refused. With
    ``leaf_file`` an existing leaf must be a regular file (``directory``, ``not-a-file``): the tools that
    take a page refuse a directory as such, before any rule about page names or globs.
    """
    segments = check_relative_path(rel)
    current = root
    for index, segment in enumerate(segments):
        current = current / segment
        shown = "/".join(segments[: index + 1])
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if must_exist:
                raise PathMissing(root, rel, index) from None
            break
        except NotADirectoryError:
            raise refuse(rel, f"{segments[index - 1]!r} is not a directory", "not-a-directory") from None
        except OSError as exc:
            raise unreadable(rel, exc, "check") from None
        if stat.S_ISLNK(info.st_mode):
            raise symlink(rel, shown)
        if index < len(segments) - 1 and not stat.S_ISDIR(info.st_mode):
            raise refuse(rel, f"{shown!r} is not a directory", "not-a-directory")
        if index == len(segments) - 1 and leaf_file:
            check_leaf(rel, info.st_mode)
    target = root.joinpath(*segments)
    # Belt and braces: with no '..' and no symlink the target cannot escape, but say so explicitly.
    if os.path.commonpath([str(root), str(target)]) != str(root):
        raise refuse(rel, "it leads outside the corpus root", "escape")
    return target
