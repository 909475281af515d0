"""Golden files in both formats: what parses, what it parses to, and how a broken one is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.evaluation import Expected, GoldenError, load_golden, parse_golden

JSON_GOLDEN = """\
[
  {"id": "q1", "query": "restore one table",
   "expected_chunk": {"file": "runbooks/backups.md", "heading_path": ["Backups", "Restore"], "line_start": 12}},
  {"id": 2, "query": "  rollback  ", "tags": ["deploy"],
   "expected_chunk": {"file": "./deploys.md", "heading_path": []}}
]
"""

YAML_GOLDEN = """\
# what our agents ask most
queries:
  - id: restore
    query: How do I restore one table?
    expected:
      - path: runbooks/backups.md
        heading: "  Restoring A Table "
      - path: runbooks/restore-drill.md
    tags: [backups, paraphrase]
  - id: 7
    query: shipit rollback
    expected:
      - deploys.md
"""


def test_json_golden_parses_to_one_expected_chunk_per_query() -> None:
    golden = parse_golden(JSON_GOLDEN, "json")
    assert golden.format == "json"
    q1, q2 = golden.queries
    assert (q1.id, q1.query, q1.line, q1.tags) == ("q1", "restore one table", 2, ())
    assert q1.expected == (
        Expected("runbooks/backups.md", heading_path=("Backups", "Restore"), line_start=12),
    )
    # Integer ids become text, queries are trimmed, "./" goes, line_start may be left out.
    assert (q2.id, q2.query, q2.line, q2.tags) == ("2", "rollback", 4, ("deploy",))
    assert q2.expected == (Expected("deploys.md", heading_path=(), line_start=None),)


def test_yaml_golden_parses_several_expected_pages_and_tags() -> None:
    golden = parse_golden(YAML_GOLDEN, "yaml")
    assert golden.format == "yaml"
    restore, rollback = golden.queries
    assert (restore.id, restore.line, restore.tags) == ("restore", 3, ("backups", "paraphrase"))
    assert restore.expected == (
        Expected("runbooks/backups.md", heading="Restoring A Table"),
        Expected("runbooks/restore-drill.md"),
    )
    assert restore.expected_paths == ["runbooks/backups.md", "runbooks/restore-drill.md"]
    # A bare string is shorthand for {path: ...}.
    assert (rollback.id, rollback.line, rollback.expected) == ("7", 10, (Expected("deploys.md"),))


def test_the_digest_follows_content_not_layout() -> None:
    base = parse_golden(YAML_GOLDEN, "yaml").digest
    relaid = YAML_GOLDEN.replace("# what our agents ask most\n", "").replace(
        "    tags: [backups, paraphrase]", "    tags:\n      - backups\n      - paraphrase"
    )
    assert parse_golden(relaid, "yaml").digest == base
    moved = YAML_GOLDEN.replace("path: runbooks/restore-drill.md", "path: runbooks/drill.md")
    assert parse_golden(moved, "yaml").digest != base
    retagged = YAML_GOLDEN.replace("paraphrase]", "keyword]")
    assert parse_golden(retagged, "yaml").digest != base


def test_load_golden_picks_the_format_by_suffix_then_by_content(tmp_path: Path) -> None:
    (tmp_path / "g.json").write_text(JSON_GOLDEN)
    (tmp_path / "g.yml").write_text(YAML_GOLDEN)
    (tmp_path / "g1.txt").write_text(JSON_GOLDEN)
    (tmp_path / "g2.txt").write_text(YAML_GOLDEN)
    assert load_golden(tmp_path / "g.json").format == "json"
    assert load_golden(tmp_path / "g.yml").format == "yaml"
    assert load_golden(tmp_path / "g1.txt").format == "json"
    assert load_golden(tmp_path / "g2.txt").format == "yaml"


def _entry(body: str) -> str:
    return f'{{"id": "q", "query": "x", {body}}}'


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            '[\n  {"id": "a", "query": "x"\n   "expected_chunk": {}}\n]\n',
            3,
            "invalid JSON: Expecting ',' delimiter",
        ),
        ("[\n  {\"id\": 'a'}\n]\n", 2, "invalid JSON: Expecting value (column 10)"),
        ('{"queries": []}', 1, "a JSON golden file is a list"),
        ("[]", None, "no queries"),
        ('[\n  "just a string"\n]', 2, "each entry must be an object"),
        ('[\n  {"id": "a",\n   "query": "x"}\n]', 2, "the entry has no 'expected_chunk'"),
        (
            "[\n" + _entry('"expected_chunk": {"file": "a.md"}, "expect": 1') + "\n]",
            2,
            "unknown key(s) expect",
        ),
        (
            "[\n\n" + _entry('"expected_chunk": {"path": "a.md"}') + "]",
            3,
            "unknown key(s) path in expected_chunk",
        ),
        ("[\n" + _entry('"expected_chunk": {"heading_path": []}') + "]", 2, "expected_chunk has no 'file'"),
        ("[\n" + _entry('"expected_chunk": {"file": "../a.md"}') + "]", 2, "relative to the corpus root"),
        (
            "[\n" + _entry('"expected_chunk": {"file": "a.md", "heading_path": "A > B"}') + "]",
            2,
            "list of strings",
        ),
        ("[\n" + _entry('"expected_chunk": {"file": "a.md", "line_start": 0}') + "]", 2, "integer >= 1"),
        (
            '[{"id": "a", "query": "x", "expected_chunk": {"file": "a.md"}},\n'
            ' {"id": "b", "query": "", "expected_chunk": {"file": "b.md"}}]',
            2,
            "query must be a non-empty string",
        ),
        (
            '[{"id": "a", "query": "x", "expected_chunk": {"file": "a.md"}},\n\n'
            ' {"id": "a", "query": "y", "expected_chunk": {"file": "b.md"}}]',
            3,
            "duplicate id 'a' (first used on line 1)",
        ),
    ],
)
def test_malformed_json_is_refused_with_line_and_reason(text: str, line: int | None, reason: str) -> None:
    with pytest.raises(GoldenError) as caught:
        parse_golden(text, "json", "g.json")
    assert caught.value.line == line
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"g.json:{line}: " if line else "g.json: ")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("queries:\n  - id: a\n    query: [x\n", 4, "invalid YAML: expected ',' or ']'"),
        ("queries:\n  - id: a\n   query: x\n", 3, "invalid YAML:"),
        ("queries:\n  - id: a\n    query: !!python/object:os.system x\n", 3, "invalid YAML:"),
        ("", None, "it is empty"),
        ("- id: a\n", 1, "a mapping with a 'queries' list"),
        ("name: mine\n", 1, "no 'queries' key"),
        ("name: mine\nqueries: {a: 1}\n", 2, "'queries' must be a list"),
        ("queries: []\n", None, "no queries"),
        ("queries:\n  - just text\n", 2, "each entry must be a mapping"),
        ("queries:\n  - id: a\n    expected: [a.md]\n", 2, "the entry has no 'query'"),
        ("queries:\n  - id: a\n    query: x\n    expected: []\n", 4, "expected must be a non-empty list"),
        ("queries:\n  - id: a\n    query: x\n    expected:\n      - heading: Intro\n", 5, "has no 'path'"),
        (
            "queries:\n  - id: a\n    query: x\n    expected:\n      - path: a.md\n        heading: [1]\n",
            6,
            "heading must be a non-empty string",
        ),
        (
            "queries:\n  - id: a\n    query: x\n    expected:\n      - path: a.md\n        title: Intro\n",
            5,
            "unknown key(s) title in the expected item",
        ),
        (
            "queries:\n  - id: a\n    query: x\n    expected: [a.md]\n    tags: mine\n",
            5,
            "tags must be a list",
        ),
        (
            "queries:\n  - id: a\n    query: x\n    expected: [/etc/passwd]\n",
            4,
            "relative to the corpus root",
        ),
        (
            "queries:\n  - id: a\n    query: x\n    expected: [a.md]\n    expected: [b.md]\n",
            5,
            "duplicate key 'expected'",
        ),
        (
            "queries:\n  - id: a\n    query: x\n    expected: [a.md]\n  - id: a\n    query: y\n    expected: [b.md]\n",
            5,
            "duplicate id 'a' (first used on line 2)",
        ),
    ],
)
def test_malformed_yaml_is_refused_with_line_and_reason(text: str, line: int | None, reason: str) -> None:
    with pytest.raises(GoldenError) as caught:
        parse_golden(text, "yaml", "g.yaml")
    assert caught.value.line == line
    assert reason in caught.value.reason


def test_a_file_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_bytes(b"queries:\n  - id: a\n    query: caf\xe9\n")
    with pytest.raises(GoldenError) as caught:
        load_golden(path)
    assert (caught.value.line, caught.value.reason) == (3, "not UTF-8 text")
