"""A page's YAML frontmatter -> JSON-safe fields, or the reason it is malformed (domain; pure).

The caller (the Markdown chunker) finds the block; this module only reads its YAML. A block that is not
valid YAML, or whose document is not a mapping (a stray ``---`` rule pair around prose), is malformed:
the chunker then indexes it as ordinary text instead of hiding it.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import yaml

# Aliases let a few lines of YAML name a structure exponentially large (or cyclic) once walked; past
# these limits the block is reported rather than expanded.
MAX_VALUES = 10_000
MAX_DEPTH = 32


class _TooLarge(Exception):
    pass


def parse_frontmatter(content: str, *, first_line: int = 2) -> tuple[dict[str, Any], str | None]:
    """``(fields, error)`` for the YAML between the fences; ``first_line`` is the file line (1-based)
    of ``content``'s first line, so a YAML error names a line of the file. Malformed: ``({}, reason)``.
    """
    try:
        data = yaml.safe_load(content)
    except yaml.YAMLError as exc:
        return {}, f"frontmatter is not valid YAML: {_describe(exc, first_line)}"
    if data is None:
        return {}, None  # an empty block is a valid, empty frontmatter
    if not isinstance(data, dict):
        return {}, f"frontmatter is not a mapping (got a {_yaml_kind(data)})"
    budget = [MAX_VALUES]
    try:
        fields = {_key(k): _json_safe(v, 1, budget) for k, v in data.items()}
    except (_TooLarge, RecursionError):
        return (
            {},
            f"frontmatter is too large or too deeply nested (over {MAX_VALUES} values or {MAX_DEPTH} levels)",
        )
    return fields, None


def _describe(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    text = " ".join(str(problem).split())  # one line: PyYAML's messages span several
    return f"line {mark.line + first_line}: {text}" if mark is not None else text


def _yaml_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _key(key: object) -> str:
    # YAML keys may be numbers, dates or null; JSON object keys are strings.
    if isinstance(key, str):
        return key
    if isinstance(key, dt.date):
        return key.isoformat()
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _json_safe(value: object, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise _TooLarge
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)  # .nan/.inf are not JSON
    if isinstance(value, dt.date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, dict):
        return {_key(k): _json_safe(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1, budget) for v in value]
    if isinstance(value, (set, frozenset)):  # !!set
        return sorted((_json_safe(v, depth + 1, budget) for v in value), key=str)
    if isinstance(value, bytes):  # !!binary
        return value.decode("utf-8", errors="replace")
    return str(value)
