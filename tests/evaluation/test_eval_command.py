"""`hallouminate eval` as a user runs it: a real process, a real daemon, a small wiki written here."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.sandbox import Sandbox, hm, private_world

BACKUPS = """\
# Backups

## Restoring a table

To restore a single table from the nightly snapshot, run `vaultkeeper restore --table NAME`. The
snapshot lives in the cold bucket and takes about ten minutes to fetch.

## Retention

Snapshots are kept for thirty-five days, then deleted by the lifecycle rule.
"""

DEPLOYS = """\
# Deploys

## Rolling out

Every release goes through the canary ring first; `shipit promote` moves it to everyone.

## Rollback

`shipit rollback` returns production to the previous release within two minutes.
"""

ONCALL = """\
# On-call

## Paging

The pager rotates weekly; escalate to the secondary engineer after fifteen minutes without an
acknowledgement.
"""

# q3 expects the wrong page on purpose (the pager lives in oncall.md); q4 expects a page that does not exist.
GOLDEN_JSON = """\
[
  {"id": "q1", "query": "vaultkeeper restore a single table from the snapshot",
   "expected_chunk": {"file": "backups.md", "heading_path": ["Backups", "Restoring a table"], "line_start": 3}},
  {"id": "q2", "query": "shipit rollback to the previous release",
   "expected_chunk": {"file": "deploys.md", "heading_path": ["Deploys", "Rollback"], "line_start": 7}},
  {"id": "q3", "query": "pager escalation to the secondary engineer",
   "expected_chunk": {"file": "deploys.md", "heading_path": ["Deploys"], "line_start": 1}},
  {"id": "q4", "query": "who approves the quarterly budget",
   "expected_chunk": {"file": "finance/budget.md", "heading_path": ["Budget"]}}
]
"""

GOLDEN_YAML = """\
queries:
  - id: restore
    query: vaultkeeper restore a single table from the snapshot
    expected:
      - path: backups.md
        heading: restoring a table
  - id: rollback
    query: shipit rollback to the previous release
    expected: [deploys.md]
"""


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world and daemon for the tests that score through it: each has a repository of its own (both
    named "ev", in directories of their own: a corpus' rows are keyed by its roots as well as its name)."""
    with private_world(model_cache, prefix="hm-ev-", in_process=False) as box:
        yield box


def wiki_repo(sandbox: Sandbox, under: str = "") -> Path:
    repo = sandbox.root / under / "ev"
    (repo / ".hallouminate" / "wiki").mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text('[[repository]]\nname = "ev"\npath = "."\n')
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "backups.md").write_text(BACKUPS)
    (wiki / "deploys.md").write_text(DEPLOYS)
    (wiki / "oncall.md").write_text(ONCALL)
    return repo


def history_of(golden: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in golden.with_name(golden.name + ".history.jsonl").read_text().splitlines()
    ]


def test_eval_scores_a_json_golden_through_the_daemon(world: Sandbox) -> None:
    sandbox = world
    repo = wiki_repo(sandbox, "json")
    golden = repo / "golden.json"
    golden.write_text(GOLDEN_JSON)

    out = hm(sandbox, "eval", "golden.json", "--k", "1,5", "--format", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    by_id = {q["id"]: q for q in report["queries"]}
    assert [by_id[i]["rank"] for i in ("q1", "q2", "q4")] == [1, 1, None]
    r3 = by_id["q3"]["rank"]
    assert r3 in (2, 3), by_id["q3"]["top"]
    assert by_id["q3"]["top"][0]["path"] == "oncall.md"
    assert [by_id[i]["exact_top_chunk"] for i in ("q1", "q2", "q3", "q4")] == [True, True, False, False]
    assert by_id["q1"]["top"][0] == {
        "path": "backups.md",
        "corpus": "repo:ev:wiki",
        "score": by_id["q1"]["top"][0]["score"],
        "heading_path": ["Backups", "Restoring a table"],
        "line_start": 3,
    }
    # By hand, from those ranks: two queries found first, q3 at r3, q4 nowhere.
    metrics = report["metrics"]
    assert metrics["recall@1"] == 2 / 4
    assert metrics["recall@5"] == 3 / 4
    assert math.isclose(metrics["mrr"], (1 + 1 + 1 / r3 + 0) / 4)
    assert math.isclose(metrics["ndcg@5"], (1 + 1 + 1 / math.log2(r3 + 1) + 0) / 4)
    assert metrics["exact_top_chunk"] == 2 / 4
    assert 0 < metrics["latency_p50_ms"] <= metrics["latency_p95_ms"]
    assert report["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert report["previous"] is None and report["regression"] is None
    assert (
        "q4 (line 8): expected page 'finance/budget.md' is not a file of the corpora searched" in out.stderr
    )
    assert len(history_of(golden)) == 1

    text = hm(sandbox, "eval", "golden.json", "--k", "1,5", cwd=repo)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert (
        lines[0] == "eval golden.json: 4 queries, every corpus, model sentence-transformers/all-MiniLM-L6-v2"
    )
    assert lines[1].startswith("compared with the run of ")
    assert any(line.split()[:3] == ["recall@1", "0.500", "0.500"] for line in lines)
    assert "misses (2): no expected page ranked first, or one is not in the top 5" in text.stdout
    assert f"expected deploys.md rank {r3}; first: oncall.md" in text.stdout
    assert "expected finance/budget.md not in the top 10; first: " in text.stdout
    assert "regressions: none (no quality metric fell by more than 0.02)" in text.stdout
    assert "history: golden.json.history.jsonl (2 run(s) kept, at most 50)" in text.stdout


def test_a_real_regression_fails_the_run_and_only_compatible_runs_are_compared(world: Sandbox) -> None:
    sandbox = world
    repo = wiki_repo(sandbox, "regression")
    golden = repo / "golden.yaml"
    golden.write_text(GOLDEN_YAML)
    # A full history of runs of some older golden file: incompatible, and the oldest must make room.
    old = {"golden_digest": "old", "model": "m", "settings": {}, "metrics": {"mrr": 1.0}}
    golden.with_name("golden.yaml.history.jsonl").write_text(
        "".join(json.dumps({**old, "seq": i}) + "\n" for i in range(50))
    )

    first = hm(sandbox, "eval", "golden.yaml", "--fail-on-regression", cwd=repo)
    assert first.returncode == 0, first.stderr
    assert "no previous compatible run" in first.stdout
    runs = history_of(golden)
    assert len(runs) == 50 and runs[0]["seq"] == 1 and "seq" not in runs[-1]
    assert runs[-1]["queries"] == {
        "restore": {"rank": 1, "exact": True, "ranks": {"backups.md": 1}},
        "rollback": {"rank": 1, "exact": True, "ranks": {"deploys.md": 1}},
    }

    steady = hm(sandbox, "eval", "golden.yaml", "--fail-on-regression", cwd=repo)
    assert steady.returncode == 0, steady.stderr
    assert "regressions: none" in steady.stdout

    # Someone moves the restore procedure out of the page the golden file expects.
    wiki = repo / ".hallouminate" / "wiki"
    restore = BACKUPS.split("\n\n")[2]
    (wiki / "backups.md").write_text(BACKUPS.replace(f"## Restoring a table\n\n{restore}\n\n", ""))
    (wiki / "oncall.md").write_text(f"{ONCALL}\n## Restores at night\n\n{restore}\n")
    assert "vaultkeeper" not in (wiki / "backups.md").read_text()
    indexed = hm(sandbox, "index", cwd=repo)
    assert indexed.returncode == 0, indexed.stderr

    regressed = hm(sandbox, "eval", "golden.yaml", "--fail-on-regression", cwd=repo)
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "regression beyond 0.02 since " in regressed.stderr and "mrr -" in regressed.stderr
    assert "Traceback" not in regressed.stderr
    mrr_row = next(line.split() for line in regressed.stdout.splitlines() if line.startswith("mrr "))
    assert mrr_row[2] == "1.000" and mrr_row[-1] == "REGRESSION"
    now = history_of(golden)[-1]["queries"]["restore"]["rank"]
    assert now is None or now > 1
    # The report names the query that changed and how: its rank before and after, the page it lost,
    # the exact top chunk it no longer finds; --fail-on-regression says the same on stderr.
    how = f"rank 1 -> {'rank ' + str(now) if now else 'not in the top 10'}"
    how += "; lost backups.md (was rank 1)" if now is None else ""
    how += "; exact top chunk lost"
    assert f"  query restore worse: {how}" in regressed.stdout.splitlines()
    assert f"  query restore: {how}" in regressed.stderr.splitlines()
    assert "rollback" not in regressed.stderr

    # The previous compatible run is now the regressed one: nothing changed since, so this passes.
    again = hm(sandbox, "eval", "golden.yaml", "--fail-on-regression", "--format", "json", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["regression"]["regressed"] is False

    # A golden file whose expectations change is a new test, not a regression: no compatible run.
    golden.write_text(GOLDEN_YAML.replace("path: backups.md", "path: oncall.md"))
    changed = hm(sandbox, "eval", "golden.yaml", "--fail-on-regression", cwd=repo)
    assert changed.returncode == 0, changed.stderr
    assert "no previous compatible run" in changed.stdout

    # Nor are other settings (here the corpus searched) compared with.
    pinned = hm(sandbox, "eval", "golden.yaml", "--corpus", "repo:ev:wiki", "--fail-on-regression", cwd=repo)
    assert pinned.returncode == 0, pinned.stderr
    assert "no previous compatible run" in pinned.stdout and "corpus repo:ev:wiki" in pinned.stdout
    assert len(history_of(golden)) == 50


def test_bad_input_exits_2_with_the_reason(sandbox: Sandbox) -> None:
    repo = wiki_repo(sandbox)
    (repo / "broken.yaml").write_text(
        "queries:\n  - id: a\n    query: x\n    expected: [a.md]\n  - id: b\n"
        "  - id: a\n    query: again\n    expected: [b.md]\n  - id: c\n    query: ''\n    expected: [c.md]\n"
    )
    broken = hm(sandbox, "eval", "broken.yaml", cwd=repo)
    assert broken.returncode == 2
    # Every entry at fault, not only the first.
    assert "3 problems:" in broken.stderr
    assert "broken.yaml:5: the entry has no 'query'" in broken.stderr
    assert "broken.yaml:6: duplicate id 'a' (first used on line 2)" in broken.stderr
    assert "broken.yaml:10: query must be a non-empty string, got ''" in broken.stderr
    as_json = hm(sandbox, "eval", "broken.yaml", "--format", "json", cwd=repo)
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["type"] == "invalid_argument" and [p["line"] for p in error["data"]["problems"]] == [
        5,
        6,
        10,
    ]
    assert "Traceback" not in broken.stderr
    assert not sandbox.socket.exists()  # refused before any daemon was asked (or started)
    assert not (repo / "broken.yaml.history.jsonl").exists()

    (repo / "broken.json").write_text(
        '[\n  {"id": "a", "query": "x",\n   "expected_chunk": {"file": "a.md"},}\n]\n'
    )
    syntax = hm(sandbox, "eval", "broken.json", cwd=repo)
    assert syntax.returncode == 2 and "broken.json:3: invalid JSON: Expecting property name" in syntax.stderr

    (repo / "golden.yaml").write_text(GOLDEN_YAML)
    bad_k = hm(sandbox, "eval", "golden.yaml", "--k", "5,x", cwd=repo)
    assert bad_k.returncode == 2 and "--k" in bad_k.stderr
    missing = hm(sandbox, "eval", "nowhere.yaml", cwd=repo)
    assert missing.returncode == 2 and "nowhere.yaml" in missing.stderr
    unknown = hm(sandbox, "eval", "golden.yaml", "--corpus", "nope", cwd=repo)
    assert unknown.returncode == 2 and "nope" in unknown.stderr and "repo:ev:wiki" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert not (repo / "golden.yaml.history.jsonl").exists()
