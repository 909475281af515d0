"""One limits table (protocol/limits.py): the published schemas, config validation, the engine, the page
size and the CLI read the same numbers. Each consumer is checked against the table, so a number copied
anywhere (or a new bound that bypasses the table) fails here."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hallouminate.config import load_baseline, validate_file
from hallouminate.protocol import limits
from hallouminate.protocol.schemas import ARGS
from hallouminate.shim.tools import TOOLS
from support.files import write

# Every bounded property of every tool's published input schema, by property name.
BY_PROPERTY = {
    "cwd": limits.CWD_CHARS,
    "corpus": limits.CORPUS_NAME_CHARS,
    "query": limits.QUERY_CHARS,
    "path": limits.PATH_CHARS,
    "from": limits.PATH_CHARS,  # move_markdown's two paths
    "to": limits.PATH_CHARS,
    "content": limits.CONTENT_CHARS,
    "under_heading": limits.UNDER_HEADING_CHARS,
    "replace_match": limits.REPLACE_MATCH_CHARS,
    "start": limits.REPLACE_LINE,
    "end": limits.REPLACE_LINE,
    **{bound.name: bound for bound in limits.SEARCH_SETTINGS},
    "mmr_lambda": limits.MMR_LAMBDA,
    "mmr_same_doc_penalty": limits.MMR_SAME_DOC_PENALTY,
    "category": limits.CATEGORY_CHARS,
    "topic": limits.TOPIC_CHARS,
    "target": limits.BEST_PRACTICE_TARGET_CHARS,
    "changed_since": limits.CHANGED_SINCE_CHARS,
    "min_quality": limits.MIN_QUALITY,  # a number from 0 to 1: the range's bounds, not its integers
}
BOUND_KEYWORDS = ("minimum", "maximum", "minLength", "maxLength")
# A property whose name another tool bounds otherwise: (tool, name) -> its bound.
BY_TOOL_PROPERTY = {("get_connection_graph", "start"): limits.PATH_CHARS}
# get_connection_graph's numbers are clamped by the engine, never refused (GrooveSeek's rule): their schema
# bounds them only to the integers JSON and msgpack carry exactly (limits.GRAPH_ANY_INT).
CLAMPED = {"depth", "fan_out", "max_nodes", "max_seed_chunks"}
ANY_INT = {"minimum": -limits.GRAPH_ANY_INT, "maximum": limits.GRAPH_ANY_INT}


def bounded_properties(schema: dict[str, Any], where: str = "") -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(location, property name, its schema) for every property carrying a numeric bound, nested too."""
    for name, spec in schema.get("properties", {}).items():
        if any(key in spec for key in BOUND_KEYWORDS):
            yield f"{where}{name}", name, spec
        yield from bounded_properties(spec, f"{where}{name}.")


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_bound_of_the_published_input_schemas_is_the_tables(tool: str) -> None:
    spec = TOOLS[tool]
    # The daemon validates against ARGS, MCP clients against the tool's schema (ARGS plus cwd): both.
    for schema in (spec.input_schema, ARGS[spec.op]):
        for where, name, prop in bounded_properties(schema):
            if tool == "get_connection_graph" and name in CLAMPED:
                assert {k: prop[k] for k in BOUND_KEYWORDS if k in prop} == ANY_INT, f"{tool}: {where}"
                continue
            bound = BY_TOOL_PROPERTY.get((tool, name), BY_PROPERTY.get(name))
            assert bound is not None, f"{tool}: {where} has a bound that is not in protocol/limits.py"
            if isinstance(bound, limits.Fraction):
                expected = bound.number_schema()
            else:
                expected = bound.integer_schema() if prop["type"] == "integer" else bound.length_schema()
            assert {k: prop[k] for k in BOUND_KEYWORDS if k in prop} == expected, f"{tool}: {where}"


def test_every_request_bound_of_the_table_is_published_somewhere() -> None:
    published = {
        name: spec for tool in TOOLS.values() for _, name, spec in bounded_properties(tool.input_schema)
    }
    assert set(BY_PROPERTY) == set(published) - CLAMPED


def test_the_ground_descriptions_state_the_tables_defaults_and_caps() -> None:
    ground = ARGS["ground"]["properties"]
    for bound in limits.SEARCH_SETTINGS:
        assert f"(default {bound.default})" in ground[bound.name]["description"]
    match = ground["match"]["description"]
    assert f"({limits.PHRASE_CHARS.low}-{limits.PHRASE_CHARS.high} characters)" in match
    assert f"{limits.SCAN_CAP:,}-match scan cap" in match
    assert f"at most {limits.COUNTS_MAX_FILES:,} files" in ground["output"]["description"]


def test_the_engine_and_the_page_size_read_the_table() -> None:
    from hallouminate.browse.read import READ_MAX_BYTES
    from hallouminate.protocol.cwd import MAX_CWD_BYTES
    from hallouminate.sandbox import MAX_PATH_BYTES
    from hallouminate.wiki.writes import WRITE_MAX_BYTES

    assembly = importlib.import_module("hallouminate.search.assembly")
    phrase = importlib.import_module("hallouminate.search.phrase")

    assert {bound.name: (bound.low, bound.high) for bound in limits.SEARCH_SETTINGS} == assembly.BOUNDS
    assert limits.QUERY_CHARS.high == assembly.MAX_QUERY_CHARS
    assert limits.PHRASE_CHARS.high == phrase.PHRASE_MAX_CHARS
    assert (phrase.SCAN_CAP, phrase.COUNTS_MAX_FILES) == (limits.SCAN_CAP, limits.COUNTS_MAX_FILES)
    assert READ_MAX_BYTES == WRITE_MAX_BYTES == limits.PAGE_MAX_BYTES
    assert MAX_CWD_BYTES == limits.PATH_MAX_BYTES == limits.CWD_CHARS.high
    # The sandbox's own byte check of a corpus path.
    assert MAX_PATH_BYTES == limits.PATH_MAX_BYTES == limits.PATH_CHARS.high


@pytest.mark.parametrize("bound", limits.SEARCH_SETTINGS, ids=lambda b: b.name)
def test_config_accepts_exactly_the_tables_range_and_defaults_to_its_default(
    baseline: Path, bound: limits.Range
) -> None:
    assert getattr(load_baseline().settings, bound.name) == bound.default
    for ok in (bound.low, bound.high):
        write(baseline, f"[search]\n{bound.name} = {ok}\n")
        assert validate_file(baseline) == []
        assert getattr(load_baseline().settings, bound.name) == ok
    for bad in (bound.low - 1, bound.high + 1):
        write(baseline, f"[search]\n{bound.name} = {bad}\n")
        assert validate_file(baseline) == [
            f"{baseline}: [search] {bound.name} must be an integer from {bound.span}, got {bad}"
        ]


def test_config_names_fit_the_corpus_parameter(tmp_path: Path) -> None:
    longest = limits.CORPUS_NAME_CHARS.high
    repo_name = longest - len("repo::corpus")  # the longest name a repository derives
    cases = {
        f'[[corpus]]\nname = "{"c" * longest}"\npaths = ["/a"]\n': True,
        f'[[corpus]]\nname = "{"c" * (longest + 1)}"\npaths = ["/a"]\n': False,
        f'[[repository]]\nname = "{"r" * repo_name}"\npath = "/r"\n': True,
        f'[[repository]]\nname = "{"r" * (repo_name + 1)}"\npath = "/r"\n': False,
    }
    for text, valid in cases.items():
        problems = validate_file(write(tmp_path / "c.toml", text))
        assert (problems == []) is valid, problems
        if not valid:
            assert f"{limits.CORPUS_NAME_CHARS.span} characters" in problems[0]


def test_a_range_refuses_what_json_or_toml_could_pass_for_an_integer() -> None:
    assert 10 in limits.TOP_FILES
    for value in (True, 10.0, "10", None, 0, 101):
        assert value not in limits.TOP_FILES
    with pytest.raises(ValueError):
        limits.Range("x", 5, 1)
    with pytest.raises(ValueError):
        limits.Range("x", 1, 5, default=6)
