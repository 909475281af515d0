"""The result types (protocol/results.py) and the output schemas say the same thing, key for key; so do
the argument types (protocol/arguments.py) and the argument schemas.

Both the full result schemas (``schemas.RESULTS``, what the daemon is tested against) and the lighter ones
the MCP server publishes (``ToolSpec.output_schema``, ADR 0015) are walked next to the TypedDicts: any
difference in a property name, a required key (``NotRequired``), a JSON type, an enum (``Literal``) or a
nested shape fails, naming where it is.
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, is_typeddict

import pytest

from hallouminate.protocol import arguments as a
from hallouminate.protocol import results as r
from hallouminate.protocol.published import published
from hallouminate.protocol.schemas import ARGS, RESOURCE_RESULTS, RESULTS
from hallouminate.shim.grooveseek import FACE_TOOLS
from hallouminate.shim.kuradb import TOOLS as KURADB_TOOLS
from hallouminate.shim.tools import TOOLS

# Every operation that publishes an output schema, with its result type.
RESULT_TYPES: dict[str, Any] = {
    "ground": r.GroundResult,
    "search": r.SearchResult,
    "search_rag": r.SearchRagResult,
    "index": r.IndexResult,
    "get_best_practice": r.BestPracticeResult,
    "list_corpora": r.ListCorporaResult,
    "list_files": r.ListFilesResult,
    "list_tree": r.ListTreeResult,
    "read_markdown": r.ReadMarkdownResult,
    "corpus_stats": r.CorpusStatsResult,
    "list_topics": r.ListTopicsResult,
    "backlinks": r.BacklinksResult,
    "get_connection_graph": r.ConnectionGraphResult,
    "add_markdown": r.AddMarkdownResult,
    "delete_markdown": r.DeleteMarkdownResult,
    "move_markdown": r.MoveMarkdownResult,
    "get_document": r.GetDocumentResult,
}
# Operations no tool publishes (the shim's MCP resources call them), with their result type.
OP_RESULT_TYPES: dict[str, Any] = {
    "resource_groups": r.ResourceGroupsResult,
    "read_resource": r.ReadResourceResult,
}
# Every operation's arguments, as the daemon reads them once checked.
ARG_TYPES: dict[str, Any] = {
    "ping": a.NoArgs,
    "status": a.NoArgs,
    "shutdown": a.NoArgs,
    "http_reload": a.NoArgs,
    "list_corpora": a.NoArgs,
    "index": a.IndexArgs,
    "get_best_practice": a.BestPracticeArgs,
    "list_files": a.ListFilesArgs,
    "list_tree": a.CorpusArgs,
    "corpus_stats": a.CorpusArgs,
    "list_topics": a.CorpusArgs,
    "ground": a.GroundArgs,
    "search": a.SearchArgs,
    "search_rag": a.SearchRagArgs,
    "read_markdown": a.ReadMarkdownArgs,
    "backlinks": a.BacklinksArgs,
    "get_connection_graph": a.ConnectionGraphArgs,
    "add_markdown": a.AddMarkdownArgs,
    "delete_markdown": a.DeleteMarkdownArgs,
    "move_markdown": a.MoveMarkdownArgs,
    "get_document": a.GetDocumentArgs,
    "resource_groups": a.NoArgs,
    "read_resource": a.ReadResourceArgs,
}
_SCALARS = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


def _light(op: str) -> dict[str, Any] | None:
    full = RESULTS.get(op)
    return published(full) if full is not None else None


# -- the walk ------------------------------------------------------------------------------------------------
def _hints(td: Any) -> dict[str, Any]:
    return typing.get_type_hints(td, include_extras=True)


def _required(td: Any) -> set[str]:
    return {k for k, hint in _hints(td).items() if get_origin(hint) is not NotRequired}


def _bare(hint: Any) -> Any:
    return get_args(hint)[0] if get_origin(hint) is NotRequired else hint


def _members(hint: Any) -> list[Any]:
    return list(get_args(hint)) if get_origin(hint) in (Union, types.UnionType) else [hint]


def _json_types(hint: Any) -> list[str]:
    """The JSON types a Python type stands for, in the order they would be written."""
    out: list[str] = []
    for member in _members(hint):
        origin = get_origin(member)
        if member in _SCALARS:
            kind = _SCALARS[member]
        elif origin is Literal:
            kind = _SCALARS[type(get_args(member)[0])]
        elif origin is list:
            kind = "array"
        elif is_typeddict(member) or origin is dict:
            kind = "object"
        else:
            raise AssertionError(f"no JSON type for {member!r}")
        if kind not in out:
            out.append(kind)
    return out


def _schema_types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return [] if kind is None else list(kind) if isinstance(kind, list) else [kind]


def differences(hint: Any, schema: dict[str, Any], where: str = "", *, light: bool = False) -> list[str]:
    """Where ``schema`` says something else than the type ``hint``; ``light``: the published form."""
    return _Walk(light).value(hint, schema, where or "result", ())


class _Walk:
    def __init__(self, light: bool) -> None:
        self.light = light

    def value(self, hint: Any, schema: dict[str, Any], where: str, stack: tuple[Any, ...]) -> list[str]:
        hint = _bare(hint)
        found: list[str] = []
        want, have = _json_types(hint), _schema_types(schema)
        if set(want) != set(have):
            found.append(f"{where}: type {have} in the schema, {want} in the result type")
        literals = [a for m in _members(hint) if get_origin(m) is Literal for a in get_args(m)]
        if set(literals) != set(schema.get("enum", [])):
            found.append(f"{where}: enum {schema.get('enum')} in the schema, Literal {literals} in the type")
        non_null = [m for m in _members(hint) if m is not type(None)]
        records = [m for m in non_null if is_typeddict(m)]
        if records:
            if len(records) != len(non_null):
                found.append(f"{where}: a record mixed with other types is not comparable")
            else:
                found += self.records(records, schema, where, stack)
        for member in non_null:
            if get_origin(member) is list:
                found += self.array(get_args(member)[0], schema, where, stack)
        return found

    def array(self, item: Any, schema: dict[str, Any], where: str, stack: tuple[Any, ...]) -> list[str]:
        items = schema.get("items")
        records = [m for m in _members(item) if is_typeddict(m)]
        if items is None:
            if records and set(records) <= set(stack):
                return []  # a recursive type (a tree's subdirs): its schema stops somewhere
            if self.light and not records and get_origin(item) is not list:
                return []  # published: scalar items lose their per-item type (ADR 0015)
            return [f"{where}: array without items in the schema"]
        if self.light and records:
            return self.described(records, items, f"{where}[]")
        return self.value(item, items, f"{where}[]", stack)

    def records(
        self, records: list[Any], schema: dict[str, Any], where: str, stack: tuple[Any, ...]
    ) -> list[str]:
        """A TypedDict, or a union of them told apart by the schema's ``anyOf`` of required sets."""
        hints: dict[str, Any] = {}
        for td in records:
            for key, hint in _hints(td).items():
                hints.setdefault(key, hint)
                if _bare(hints[key]) != _bare(hint):
                    return [f"{where}.{key}: typed differently in {', '.join(t.__name__ for t in records)}"]
        found: list[str] = []
        props = schema.get("properties", {})
        for key in sorted(set(hints) - set(props)):
            found.append(f"{where}.{key}: in the result type, not in the schema")
        for key in sorted(set(props) - set(hints)):
            found.append(f"{where}.{key}: in the schema, not in the result type")
        required = [_required(td) for td in records]
        common = set.intersection(*required)
        if set(schema.get("required", [])) != common:
            found.append(
                f"{where}: required {sorted(schema.get('required', []))} in the schema, "
                f"{sorted(common)} in the result type"
            )
        branches = [set(b.get("required", [])) for b in schema.get("anyOf", [])]
        extras = [req - common for req in required if req - common]
        if sorted(map(sorted, branches)) != sorted(map(sorted, extras)):
            found.append(
                f"{where}: anyOf required {sorted(map(sorted, branches))} in the schema, "
                f"{sorted(map(sorted, extras))} in the result types"
            )
        for key in sorted(set(hints) & set(props)):
            found += self.value(hints[key], props[key], f"{where}.{key}", (*stack, *records))
        return found

    def described(self, records: list[Any], item: dict[str, Any], where: str) -> list[str]:
        """A published array item: ``{type: object, required, description: "fields: a (string), ..."}``."""
        found: list[str] = []
        if item.get("type") != "object" or "properties" in item:
            found.append(f"{where}: a published object item is {{type: object, description, required}}")
        hints = {k: v for td in records for k, v in _hints(td).items()}
        common = set.intersection(*(_required(td) for td in records))
        if set(item.get("required", [])) != common:
            found.append(f"{where}: published required {item.get('required')}, {sorted(common)} in the type")
        described = {}
        for field in item.get("description", "").removeprefix("fields: ").split(", "):
            name, _, kind = field.partition(" (")
            described[name] = set(kind.rstrip(")").split("|"))
        wanted = {key: set(_json_types(_bare(hint))) for key, hint in hints.items()}
        if described != wanted:
            found.append(f"{where}: published fields {described}, {wanted} in the type")
        return found


# -- the tests -----------------------------------------------------------------------------------------------
def test_every_published_result_has_its_type() -> None:
    assert set(RESULTS) == set(RESULT_TYPES)
    assert set(RESOURCE_RESULTS) == set(OP_RESULT_TYPES)
    published_ops = {spec.op for spec in TOOLS.values() if spec.output_schema is not None}
    # The GrooveSeek face publishes its search's (shim/grooveseek.py), the KuraDB face its search_rag's.
    published_ops |= {
        tool.op
        for tool in [*FACE_TOOLS.values(), *KURADB_TOOLS.values()]
        if tool.output_schema and tool.output_schema == _light(tool.op)
    }
    assert published_ops == set(RESULT_TYPES)


@pytest.mark.parametrize("op", sorted({**RESULT_TYPES, **OP_RESULT_TYPES}))
def test_the_full_schema_is_the_result_type(op: str) -> None:
    assert differences({**RESULT_TYPES, **OP_RESULT_TYPES}[op], {**RESULTS, **RESOURCE_RESULTS}[op], op) == []


@pytest.mark.parametrize("op", sorted(RESULT_TYPES))
def test_the_published_schema_is_the_result_type(op: str) -> None:
    faces = {tool.op: tool for tool in [*FACE_TOOLS.values(), *KURADB_TOOLS.values()]}
    schema = TOOLS[op].output_schema if op in TOOLS else faces[op].output_schema
    assert schema is not None
    assert differences(RESULT_TYPES[op], schema, op, light=True) == []


def test_every_operation_has_its_argument_type() -> None:
    assert set(ARGS) == set(ARG_TYPES)


@pytest.mark.parametrize("op", sorted(ARG_TYPES))
def test_the_argument_schema_is_the_argument_type(op: str) -> None:
    assert differences(ARG_TYPES[op], ARGS[op], op) == []


def test_a_planted_difference_in_the_arguments_is_found() -> None:
    schema = copy.deepcopy(ARGS["ground"])
    schema["properties"]["match"]["enum"].append("fuzzy")
    assert differences(a.GroundArgs, schema, "ground") != []


def _planted(op: str, change: Any) -> dict[str, Any]:
    schema = copy.deepcopy(RESULTS[op])
    change(schema)
    return schema


def _docs(schema: dict[str, Any]) -> dict[str, Any]:
    docs: dict[str, Any] = schema["properties"]["docs"]["items"]
    return docs


def _chunk(schema: dict[str, Any]) -> dict[str, Any]:
    chunk: dict[str, Any] = _docs(schema)["properties"]["chunks"]["items"]
    return chunk


PLANTS = {
    "a renamed property": (
        "read_markdown",
        lambda s: s["properties"].update(size=s["properties"].pop("bytes")),
    ),
    "a dropped property": ("corpus_stats", lambda s: s["properties"].pop("unindexed_files")),
    "a key made required": ("ground", lambda s: _chunk(s)["required"].append("page")),
    "a required key made optional": ("backlinks", lambda s: s["required"].remove("backlinks")),
    "a retyped nested key": ("ground", lambda s: _chunk(s)["properties"]["line_start"].update(type="number")),
    "a nullable key made non-null": (
        "corpus_stats",
        lambda s: s["properties"]["last_indexed_ms"].update(type="integer"),
    ),
    "an enum value added": (
        "add_markdown",
        lambda s: s["properties"]["action"]["enum"].append("renamed"),
    ),
    "an anyOf branch changed": ("ground", lambda s: _docs(s)["anyOf"][0]["required"].remove("summary")),
    "array items retyped": (
        "list_tree",
        lambda s: s["properties"]["roots"].update(items={"type": "integer"}),
    ),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_difference_is_found(plant: str) -> None:
    op, change = PLANTS[plant]
    assert differences(RESULT_TYPES[op], _planted(op, change), op) != []


def test_a_planted_difference_in_the_published_form_is_found() -> None:
    from hallouminate.protocol.published import published

    schema = published(_planted("ground", lambda s: _docs(s)["properties"].pop("stale")))
    assert differences(r.GroundResult, schema, "ground", light=True) != []
