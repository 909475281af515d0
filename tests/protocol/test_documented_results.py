"""The result examples of docs/tools/*.md against the published output schemas: a page that drifts from
what a tool returns fails here.

Every ```json block of a tool's page is a result of that tool (several values may follow each other in
one block). It must validate against the tool's published output schema (``protocol.schemas.RESULTS``),
made strict: a property the schema does not declare is an error, so neither an example nor the schema
can gain a field the other lacks. And every property of the schema must be shown on the page, in an
example or in a shape such as ``{corpora: [{corpus, files_seen, ...}], seconds}``.
"""

from __future__ import annotations

import copy
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.protocol.schemas import ARGS, RESULTS
from hallouminate.shim.kuradb import TOOLS as KURADB_TOOLS

DOCS = Path(__file__).resolve().parents[2] / "docs"
TOOL_PAGES = sorted((DOCS / "tools").glob("*.md"))
# docs/mcp.md documents the tools by linking these pages; it holds no result example of its own.
_FENCE = re.compile(r"^([ \t]*)```json\n(.*?)^[ \t]*```", re.S | re.M)
# A shape written inline: `{corpus, files: [{path, absolute_path}]}` or `[{code, message}]`.
_SHAPE = re.compile(r"`(\{[^`]*\}|\[\{[^`]*\}\])`")


def result_schema(tool: str) -> Any:
    """The result schema a page documents: KuraDB's face's tools are tools of their own (no cwd, their own
    names), published by the face (docs/kuradb-face.md); every other page is an operation's."""
    if tool in KURADB_TOOLS:
        return KURADB_TOOLS[tool].output_schema
    return RESULTS[tool]


def parameters(tool: str) -> set[str]:
    if tool in KURADB_TOOLS:
        return set(KURADB_TOOLS[tool].input_schema.get("properties", {}))
    # cwd is the shim's own argument (docs/mcp.md), added to every tool's published input schema.
    return {"cwd", *ARGS[tool]["properties"]}


def examples(page: Path) -> list[Any]:
    """Every JSON value of the page's ```json blocks."""
    values: list[Any] = []
    decoder = json.JSONDecoder()
    for match in _FENCE.finditer(page.read_text()):
        text = textwrap.dedent(match.group(2))
        at = 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at == len(text):
                break
            try:
                value, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError as exc:
                raise AssertionError(f"{page.name}: a ```json block is not JSON: {exc}") from None
            values.append(value)
    return values


def strict(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object schema that lists properties."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def property_names(schema: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            names.add(name)
            names |= property_names(sub)
        for value in schema.values():
            if isinstance(value, dict | list) and value is not schema.get("properties"):
                names |= property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            names |= property_names(value)
    return names


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def test_every_tool_with_a_result_schema_has_a_page() -> None:
    assert sorted({*RESULTS, *KURADB_TOOLS}) == sorted(page.stem for page in TOOL_PAGES)


@pytest.mark.parametrize("page", TOOL_PAGES, ids=lambda p: p.stem)
def test_each_documented_result_is_valid_against_the_strict_output_schema(page: Path) -> None:
    schema = strict(result_schema(page.stem))
    for value in examples(page):
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=str)
        assert not errors, f"{page.name}: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or 'result'}: {e.message}" for e in errors
        )


@pytest.mark.parametrize("page", TOOL_PAGES, ids=lambda p: p.stem)
def test_each_property_of_a_result_is_shown_on_its_page(page: Path) -> None:
    shown = {key for value in examples(page) for key in keys_of(value)}
    for shape in _SHAPE.findall(page.read_text()):
        shown |= set(re.findall(r"[A-Za-z_]+", shape))
    missing = sorted(property_names(result_schema(page.stem)) - shown)
    assert not missing, f"{page.name} shows no example or shape with {missing}"


@pytest.mark.parametrize("page", TOOL_PAGES, ids=lambda p: p.stem)
def test_the_parameter_table_lists_exactly_the_published_arguments(page: Path) -> None:
    section = re.search(r"^## Parameters\n(.*?)(?=^## |\Z)", page.read_text(), re.S | re.M)
    assert section, f"{page.name} has no ## Parameters table"
    rows = re.findall(r"^\| `([a-z_]+)` \|", section.group(1), re.M)
    assert sorted(rows) == sorted(parameters(page.stem)), page.name


def test_a_drifted_example_fails() -> None:
    """The check can fail: an example with a field the schema lacks, or missing a required one."""
    (listed,) = examples(DOCS / "tools" / "list_corpora.md")
    schema = strict(RESULTS["list_corpora"])
    jsonschema.validate(listed, schema)
    with pytest.raises(jsonschema.ValidationError, match="'sorted' was unexpected"):
        jsonschema.validate({**listed, "sorted": True}, schema)
    with pytest.raises(jsonschema.ValidationError, match="'corpora' is a required property"):
        jsonschema.validate({k: v for k, v in listed.items() if k != "corpora"}, schema)
