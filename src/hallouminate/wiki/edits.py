"""Section edits of an existing page: insert under a heading, replace a line range, replace a literal.

Pure functions over text. Lines are split at ``\\n`` only and numbered from 1, exactly as
``read_markdown`` with ``line_numbers: true`` shows them (the final newline does not start a line), so an
agent can read a page and name the lines it wants replaced. Every refusal is a caller error with
``data = {path, edit, problem, ...}`` and says how to fix the call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hallouminate.errors import Conflict, InvalidArgument, NotFound
from hallouminate.protocol.arguments import AddMarkdownArgs
from hallouminate.wiki.markdown import Heading, headings, parse

EditMode = Literal["under_heading", "replace_lines", "replace_match"]
EDIT_MODES: tuple[EditMode, ...] = ("under_heading", "replace_lines", "replace_match")
# How many candidates an error lists.
SHOW_HEADINGS = 30
SHOW_LINES = 10


@dataclass(frozen=True)
class Edit:
    mode: EditMode
    heading: str = ""
    position: Literal["append", "prepend"] = "append"
    start: int = 0
    end: int = 0
    match: str = ""


@dataclass(frozen=True)
class Edited:
    text: str
    # The 1-based lines of the new text that the edit wrote (None when it only removed lines).
    lines: tuple[int, int] | None


def parse_edit(args: AddMarkdownArgs) -> Edit | None:
    """The section edit the arguments ask for, or None for a whole-file write."""
    given = [mode for mode in EDIT_MODES if args.get(mode) is not None]
    if len(given) > 1:
        raise InvalidArgument(
            f"add_markdown takes at most one section edit per call, got {' and '.join(given)}: make one call "
            "per edit",
            {"edits": given, "problem": "several-edits"},
        )
    if "position" in args and given != ["under_heading"]:
        raise InvalidArgument(
            "'position' only applies to 'under_heading' (append or prepend to that heading's section); "
            "drop it or pass under_heading",
            {"problem": "position-without-heading"},
        )
    if not given:
        return None
    mode = given[0]
    if mode == "under_heading":
        return Edit(
            "under_heading", heading=str(args["under_heading"]), position=args.get("position", "append")
        )
    if mode == "replace_lines":
        lines = args["replace_lines"]
        return Edit("replace_lines", start=int(lines["start"]), end=int(lines["end"]))
    return Edit("replace_match", match=str(args["replace_match"]))


def apply_edit(text: str, edit: Edit, content: str, path: str) -> Edited:
    newline = "\r\n" if _uses_crlf(text) else "\n"
    if newline == "\r\n" and "\r" not in content:
        content = content.replace("\n", "\r\n")  # keep the page's own line ends
    if edit.mode == "replace_match":
        return _replace_match(text, edit.match, content, path)
    lines, final_newline = _split(text)
    if edit.mode == "replace_lines":
        return _replace_lines(lines, final_newline, edit, content, path)
    return _under_heading(text, lines, final_newline, edit, content, path)


# -- modes -------------------------------------------------------------------------------------------------
def _replace_match(text: str, needle: str, content: str, path: str) -> Edited:
    count = text.count(needle)
    if count == 0:
        raise NotFound(
            f"replace_match: the text {_shorten(needle)!r} does not occur in {path!r}; it must match "
            "exactly (whitespace and line ends included): read_markdown shows the current text",
            {"path": path, "edit": "replace_match", "problem": "match-not-found"},
        )
    if count > 1:
        lines = _occurrence_lines(text, needle)
        shown = ", ".join(str(n) for n in lines[:SHOW_LINES])
        raise Conflict(
            f"replace_match: the text {_shorten(needle)!r} occurs {count} times in {path!r} (lines {shown}); "
            "it must occur once: include more of the surrounding text, or use replace_lines",
            {
                "path": path,
                "edit": "replace_match",
                "problem": "match-not-unique",
                "count": count,
                "lines": lines[:SHOW_LINES],
            },
        )
    at = text.index(needle)
    new = text[:at] + content + text[at + len(needle) :]
    first = text.count("\n", 0, at) + 1
    if not content:
        return Edited(new, None)
    last = first + content.count("\n") - (1 if content.endswith("\n") else 0)
    return Edited(new, (first, max(first, last)))


def _replace_lines(lines: list[str], final_newline: bool, edit: Edit, content: str, path: str) -> Edited:
    total = len(lines)
    if edit.start > edit.end:
        raise InvalidArgument(
            f"replace_lines: start ({edit.start}) is after end ({edit.end}); both are 1-based and "
            "inclusive, e.g. {start: 3, end: 5} replaces lines 3 to 5",
            {"path": path, "edit": "replace_lines", "problem": "range-reversed", "lines": total},
        )
    if edit.end > total:
        raise InvalidArgument(
            f"replace_lines: lines {edit.start}-{edit.end} are out of bounds: {path!r} has {total} "
            f"line{'s' if total != 1 else ''} (read_markdown with line_numbers shows them)",
            {"path": path, "edit": "replace_lines", "problem": "range-out-of-bounds", "lines": total},
        )
    new_lines, _ = _split(content)
    if content and not new_lines:  # content "\n": one empty line
        new_lines = [""]
    new_lines = _crlf_lines(new_lines, lines)
    result = lines[: edit.start - 1] + new_lines + lines[edit.end :]
    written = (edit.start, edit.start + len(new_lines) - 1) if new_lines else None
    return Edited(_join(result, final_newline or not result), written)


def _under_heading(
    text: str, lines: list[str], final_newline: bool, edit: Edit, content: str, path: str
) -> Edited:
    found = headings(parse(text))
    target, index = _find_heading(found, edit.heading, path)
    if edit.position == "prepend":
        at = target.end
    else:
        # The section runs to the next heading of the same or a higher level (subsections included).
        following = [h.start for h in found[index + 1 :] if h.level <= target.level]
        at = following[0] if following else len(lines)
    block, _ = _split(content)
    while block and not block[0].strip():
        block.pop(0)
    while block and not block[-1].strip():
        block.pop()
    block = _crlf_lines(block, lines)
    if not block:
        raise InvalidArgument(
            "under_heading: content is empty; pass the Markdown to insert under the heading",
            {"path": path, "edit": "under_heading", "problem": "empty-content"},
        )
    blank = "\r" if _uses_crlf(text) else ""
    before, after = lines[:at], lines[at:]
    lead = [blank] if before and before[-1].strip() else []
    trail = [blank] if after and after[0].strip() else []
    result = before + lead + block + trail + after
    first = len(before) + len(lead) + 1
    ends_with_block = not after and not trail
    return Edited(_join(result, final_newline or ends_with_block), (first, first + len(block) - 1))


def _find_heading(found: list[Heading], query: str, path: str) -> tuple[Heading, int]:
    """The one heading ``query`` names: ``Title``, ``## Title`` (that level), or ``Parent > Title``."""
    wanted = query.strip()
    level = None
    stripped = wanted.lstrip("#")
    if stripped != wanted and stripped.startswith(" "):
        level = len(wanted) - len(stripped)
        wanted = stripped.strip()
    parts = [_norm(part) for part in wanted.split(" > ")]
    trail: list[Heading] = []
    exact: list[int] = []
    folded: list[int] = []
    for index, heading in enumerate(found):
        while trail and trail[-1].level >= heading.level:
            trail.pop()
        trail.append(heading)
        if level is not None and heading.level != level:
            continue
        names = [_norm(h.text) for h in trail][-len(parts) :]
        if names == parts:
            exact.append(index)
        elif [n.casefold() for n in names] == [p.casefold() for p in parts]:
            folded.append(index)
    matches = exact or folded
    if len(matches) == 1:
        return found[matches[0]], matches[0]
    listing = "; ".join(f"line {h.start + 1}: {'#' * h.level} {h.text}" for h in found[:SHOW_HEADINGS])
    if not matches:
        hint = f"its headings are: {listing}" if found else "it has no headings"
        raise NotFound(
            f"under_heading: no heading {query!r} in {path!r}; {hint}",
            {
                "path": path,
                "edit": "under_heading",
                "problem": "heading-not-found",
                "headings": [h.text for h in found[:SHOW_HEADINGS]],
            },
        )
    where = ", ".join(f"line {found[i].start + 1}" for i in matches[:SHOW_LINES])
    raise Conflict(
        f"under_heading: {query!r} names {len(matches)} headings in {path!r} ({where}); name one: prefix "
        "its level ('## Setup') or its parent ('Install > Setup')",
        {
            "path": path,
            "edit": "under_heading",
            "problem": "heading-ambiguous",
            "lines": [found[i].start + 1 for i in matches[:SHOW_LINES]],
        },
    )


# -- helpers -----------------------------------------------------------------------------------------------
def _split(text: str) -> tuple[list[str], bool]:
    """Lines split at ``\\n`` (a ``\\r`` stays on its line) and whether the text ended with a newline."""
    if not text:
        return [], False
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


def _join(lines: list[str], final_newline: bool) -> str:
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


def _crlf_lines(new: list[str], page: list[str]) -> list[str]:
    """In a CRLF page every inserted line ends with '\r' too (the content's last line has no newline)."""
    if not page or not page[0].endswith("\r"):
        return new
    return [line if line.endswith("\r") else line + "\r" for line in new]


def _uses_crlf(text: str) -> bool:
    first = text.find("\n")
    return first > 0 and text[first - 1] == "\r"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _occurrence_lines(text: str, needle: str) -> list[int]:
    # Each line once, in order, however many times the text occurs on it.
    lines: list[int] = []
    at = text.find(needle)
    while at >= 0:
        line = text.count("\n", 0, at) + 1
        if not lines or lines[-1] != line:
            lines.append(line)
        at = text.find(needle, at + len(needle))
    return lines


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
