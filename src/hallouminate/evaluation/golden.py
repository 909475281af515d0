"""Golden files: the queries a user expects their wiki to answer, and which pages should answer them.

Two formats are read (see docs/evaluation.md):

- JSON, a list of ``{id, query, expected_chunk: {file, heading_path, line_start?}}``: one expected chunk.
- YAML, ``{queries: [{id, query, expected: [{path, heading?}], tags?}]}``: one or more expected pages.

Anything malformed is refused with a ``GoldenError`` carrying the 1-based line and the reason: the
decoder's position for syntax errors, the offending entry's (or field's) line for schema errors. A file
that parses is checked whole: the error then lists every entry at fault (``problems``), not only the first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import yaml

GoldenFormat = Literal["json", "yaml"]

_JSON_ENTRY_KEYS = {"id", "query", "expected_chunk", "tags"}
_JSON_CHUNK_KEYS = {"file", "heading_path", "line_start"}
_YAML_ENTRY_KEYS = {"id", "query", "expected", "tags"}
_YAML_EXPECTED_KEYS = {"path", "heading"}
_WS = re.compile(r"\s+")


class GoldenError(ValueError):
    """A golden file that cannot be used: where (1-based line, or None for the whole file) and why."""

    def __init__(self, line: int | None, reason: str, source: str = "golden file") -> None:
        self.line = line
        self.reason = reason
        self.source = source
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")
        # Every problem found (this one alone, unless built by ``of``).
        self.problems: list[GoldenError] = [self]

    @classmethod
    def of(cls, problems: list[GoldenError]) -> GoldenError:
        """One error for several: the first's line and reason, every problem listed in the message."""
        if len(problems) == 1:
            return problems[0]
        ordered = sorted(problems, key=lambda e: (e.line is not None, e.line or 0))
        first = ordered[0]
        combined = cls(first.line, first.reason, first.source)
        combined.problems = ordered
        ValueError.__init__(
            combined, f"{len(ordered)} problems:\n" + "\n".join(f"  {e.args[0]}" for e in ordered)
        )
        return combined


@dataclass(frozen=True)
class Expected:
    """One expected page; optionally the section of it that should come first.

    ``heading_path``/``line_start`` come from the JSON format (one exact chunk), ``heading`` from YAML.
    """

    path: str
    heading: str | None = None
    heading_path: tuple[str, ...] | None = None
    line_start: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.heading is not None:
            out["heading"] = self.heading
        if self.heading_path is not None:
            out["heading_path"] = list(self.heading_path)
        if self.line_start is not None:
            out["line_start"] = self.line_start
        return out


@dataclass(frozen=True)
class GoldenQuery:
    id: str
    query: str
    expected: tuple[Expected, ...]
    tags: tuple[str, ...]
    line: int

    @property
    def expected_paths(self) -> list[str]:
        """The distinct expected pages, in the order the golden file lists them."""
        return list(dict.fromkeys(e.path for e in self.expected))


@dataclass(frozen=True)
class Golden:
    format: GoldenFormat
    queries: tuple[GoldenQuery, ...]
    # Digest of the parsed content, not the bytes: comments and layout may change without breaking the
    # history chain, any change to a query, an expectation or a tag does break it.
    digest: str


def normalise_heading(text: str) -> str:
    """Headings compare trimmed, with inner runs of whitespace collapsed, case-insensitively."""
    return _WS.sub(" ", text.strip()).casefold()


def load_golden(path: Path) -> Golden:
    """Read and parse ``path``; the format follows the suffix (.json, .yaml/.yml), else the content."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GoldenError(None, f"cannot read it: {exc.strerror or exc}", str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise GoldenError(line, "not UTF-8 text", str(path)) from None
    suffix = path.suffix.lower()
    if suffix == ".json":
        fmt: GoldenFormat = "json"
    elif suffix in (".yaml", ".yml"):
        fmt = "yaml"
    else:
        fmt = "json" if text.lstrip().startswith("[") else "yaml"
    return parse_golden(text, fmt, str(path))


def parse_golden(text: str, fmt: GoldenFormat, source: str = "golden file") -> Golden:
    entries, problems = _parse_json(text, source) if fmt == "json" else _parse_yaml(text, source)
    if not entries and not problems:
        raise GoldenError(None, "it holds no queries", source)
    seen: dict[str, int] = {}
    for q in entries:
        if q.id in seen:
            problems.append(
                GoldenError(q.line, f"duplicate id {q.id!r} (first used on line {seen[q.id]})", source)
            )
        else:
            seen[q.id] = q.line
    if problems:
        raise GoldenError.of(problems)
    canonical = [
        {"id": q.id, "query": q.query, "expected": [e.as_dict() for e in q.expected], "tags": list(q.tags)}
        for q in entries
    ]
    digest = hashlib.sha256(json.dumps(canonical, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return Golden(fmt, tuple(entries), digest)


# -- shared field checks ------------------------------------------------------------------------------------
def _text(value: Any, what: str, line: int, source: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GoldenError(line, f"{what} must be a non-empty string, got {_show(value)}", source)
    return value.strip()


def _ident(value: Any, line: int, source: str) -> str:
    # Ids are often written bare in YAML (`id: 7`); accept integers and keep them as text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(value, "id", line, source)


def _corpus_path(value: Any, what: str, line: int, source: str) -> str:
    path = _text(value, what, line, source).replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("/") or ".." in path.split("/"):
        raise GoldenError(
            line, f"{what} must be relative to the corpus root, without '..', got {value!r}", source
        )
    return path


def _tags(value: Any, line: int, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise GoldenError(line, f"tags must be a list of non-empty strings, got {_show(value)}", source)
    return tuple(t.strip() for t in value)


def _unknown_keys(keys: set[str], allowed: set[str], what: str, line: int, source: str) -> None:
    # Refused rather than ignored: a misspelt key ("expect") would otherwise drop an expectation silently.
    extra = sorted(keys - allowed)
    if extra:
        raise GoldenError(
            line,
            f"unknown key(s) {', '.join(extra)} in {what}; allowed: {', '.join(sorted(allowed))}",
            source,
        )


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


# -- JSON ---------------------------------------------------------------------------------------------------
def _each(parse: Callable[[], GoldenQuery], entries: list[GoldenQuery], problems: list[GoldenError]) -> None:
    """One entry parsed into ``entries``, or its problem kept in ``problems`` so the rest are checked."""
    try:
        entries.append(parse())
    except GoldenError as exc:
        problems.append(exc)


def _parse_json(text: str, source: str) -> tuple[list[GoldenQuery], list[GoldenError]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldenError(exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})", source) from None
    if not isinstance(data, list):
        raise GoldenError(
            1, "a JSON golden file is a list of {id, query, expected_chunk} objects, got an object", source
        )
    lines = _json_item_lines(text)
    entries: list[GoldenQuery] = []
    problems: list[GoldenError] = []
    for item, line in zip(data, lines, strict=True):
        _each(partial(_json_entry, item, line, source), entries, problems)
    return entries, problems


def _json_item_lines(text: str) -> list[int]:
    """The 1-based line where each element of the top-level array starts (the text is valid JSON)."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    lines: list[int] = []
    while True:
        pos = _skip_ws(text, pos)
        if text[pos] == "]":
            return lines
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos += 1


def _skip_ws(text: str, pos: int) -> int:
    while text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_entry(item: Any, line: int, source: str) -> GoldenQuery:
    if not isinstance(item, dict):
        raise GoldenError(line, f"each entry must be an object, got {_show(item)}", source)
    _unknown_keys(set(item), _JSON_ENTRY_KEYS, "the entry", line, source)
    for key in ("id", "query", "expected_chunk"):
        if key not in item:
            raise GoldenError(line, f"the entry has no {key!r}", source)
    qid = _ident(item["id"], line, source)
    query = _text(item["query"], "query", line, source)
    chunk = item["expected_chunk"]
    if not isinstance(chunk, dict):
        raise GoldenError(line, f"expected_chunk must be an object, got {_show(chunk)}", source)
    _unknown_keys(set(chunk), _JSON_CHUNK_KEYS, "expected_chunk", line, source)
    if "file" not in chunk:
        raise GoldenError(line, "expected_chunk has no 'file'", source)
    path = _corpus_path(chunk["file"], "expected_chunk.file", line, source)
    heading_path = chunk.get("heading_path")
    if heading_path is None:
        heading_tuple = None
    elif isinstance(heading_path, list) and all(isinstance(h, str) for h in heading_path):
        heading_tuple = tuple(h.strip() for h in heading_path)
    else:
        raise GoldenError(
            line, f"expected_chunk.heading_path must be a list of strings, got {_show(heading_path)}", source
        )
    line_start = chunk.get("line_start")
    if line_start is not None and (
        not isinstance(line_start, int) or isinstance(line_start, bool) or line_start < 1
    ):
        raise GoldenError(
            line, f"expected_chunk.line_start must be an integer >= 1, got {_show(line_start)}", source
        )
    expected = Expected(path, heading_path=heading_tuple, line_start=line_start)
    return GoldenQuery(qid, query, (expected,), _tags(item.get("tags"), line, source), line)


# -- YAML ---------------------------------------------------------------------------------------------------
def _parse_yaml(text: str, source: str) -> tuple[list[GoldenQuery], list[GoldenError]]:
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise GoldenError(None, "it is empty; expected a mapping with a 'queries' list", source)
        _check_duplicate_keys(root, source)
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "unreadable"
        if exc.problem and exc.context and exc.context_mark is not None:
            reason += f" ({exc.context}, from line {exc.context_mark.line + 1})"
        raise GoldenError(mark.line + 1 if mark else None, f"invalid YAML: {reason}", source) from None
    except yaml.YAMLError as exc:
        raise GoldenError(None, f"invalid YAML: {exc}", source) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise GoldenError(
            root.start_mark.line + 1, "a YAML golden file is a mapping with a 'queries' list", source
        )
    key_lines = _key_lines(root)
    if "queries" not in data:
        raise GoldenError(root.start_mark.line + 1, "no 'queries' key at the top level", source)
    queries_node = _value_node(root, "queries")
    assert queries_node is not None
    if not isinstance(data["queries"], list) or not isinstance(queries_node, yaml.SequenceNode):
        raise GoldenError(key_lines["queries"], "'queries' must be a list of entries", source)
    entries: list[GoldenQuery] = []
    problems: list[GoldenError] = []
    for item, node in zip(data["queries"], queries_node.value, strict=True):
        _each(partial(_yaml_entry, item, node, source), entries, problems)
    return entries, problems


def _yaml_entry(item: Any, node: yaml.Node, source: str) -> GoldenQuery:
    line = node.start_mark.line + 1
    if not isinstance(item, dict) or not isinstance(node, yaml.MappingNode):
        raise GoldenError(line, f"each entry must be a mapping, got {_show(item)}", source)
    at = _field_line(node, line)
    _unknown_keys({str(k) for k in item}, _YAML_ENTRY_KEYS, "the entry", line, source)
    for key in ("id", "query", "expected"):
        if key not in item:
            raise GoldenError(line, f"the entry has no {key!r}", source)
    qid = _ident(item["id"], at("id"), source)
    query = _text(item["query"], "query", at("query"), source)
    expected_node = _value_node(node, "expected")
    raw_expected = item["expected"]
    if (
        not isinstance(raw_expected, list)
        or not raw_expected
        or not isinstance(expected_node, yaml.SequenceNode)
    ):
        raise GoldenError(at("expected"), "expected must be a non-empty list of {path, heading?}", source)
    expected = tuple(
        _yaml_expected(e, n, source) for e, n in zip(raw_expected, expected_node.value, strict=True)
    )
    return GoldenQuery(qid, query, expected, _tags(item.get("tags"), at("tags"), source), line)


def _yaml_expected(item: Any, node: yaml.Node, source: str) -> Expected:
    line = node.start_mark.line + 1
    if isinstance(item, str):
        # `- guides/setup.md` is shorthand for `- path: guides/setup.md`.
        return Expected(_corpus_path(item, "expected path", line, source))
    if not isinstance(item, dict) or not isinstance(node, yaml.MappingNode):
        raise GoldenError(line, f"each expected item is {{path, heading?}}, got {_show(item)}", source)
    at = _field_line(node, line)
    _unknown_keys({str(k) for k in item}, _YAML_EXPECTED_KEYS, "the expected item", line, source)
    if "path" not in item:
        raise GoldenError(line, "the expected item has no 'path'", source)
    path = _corpus_path(item["path"], "expected path", at("path"), source)
    heading = item.get("heading")
    if heading is not None:
        heading = _text(heading, "heading", at("heading"), source)
    return Expected(path, heading=heading)


def _check_duplicate_keys(node: yaml.Node, source: str) -> None:
    # PyYAML keeps the last of two equal keys without a word; a doubled `expected:` would lose pages.
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise GoldenError(key.start_mark.line + 1, f"duplicate key {key.value!r}", source)
                seen.add(key.value)
            _check_duplicate_keys(value, source)
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            _check_duplicate_keys(child, source)


def _key_lines(node: yaml.MappingNode) -> dict[str, int]:
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def _value_node(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            value: yaml.Node = v
            return value
    return None


def _field_line(node: yaml.MappingNode, default: int) -> Callable[[str], int]:
    lines = _key_lines(node)
    return lambda key: lines.get(key, default)
