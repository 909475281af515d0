"""`hallouminate eval` through the GrooveSeek face gives the figures it gives through `ground`: the face's
search runs ground and its flat hits keep ground's file order (search/hits.py). Real CLI processes, a
real daemon, the real MCP stdio client inside `eval --dialect grooveseek`, the fixture knowledge base and
its GrooveSeek-style golden file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from support.sandbox import Sandbox, hm

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LATENCY = {"latency_p50_ms", "latency_p95_ms"}


def run(sandbox: Sandbox, *args: str) -> dict[str, Any]:
    out = hm(sandbox, "eval", *args, "--format", "json", cwd=sandbox.root)
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def ranking(report: dict[str, Any]) -> list[tuple[str, Any, list[tuple[str, float, list[str]]]]]:
    """Each query's ranks and its top files (path, score, the first chunk's heading path)."""
    return [
        (q["id"], q["ranks"], [(d["path"], d["score"], d["heading_path"]) for d in q["top"]])
        for q in report["queries"]
    ]


def test_eval_through_the_grooveseek_face_scores_what_ground_scores(sandbox: Sandbox) -> None:
    kb = sandbox.root / "kb"
    shutil.copytree(FIXTURES / "grooveseek_kb", kb)
    golden = sandbox.root / "golden.yaml"
    shutil.copy(FIXTURES / "grooveseek_golden.yaml", golden)

    ground = run(sandbox, "golden.yaml", "--kb-path", "kb")
    face = run(sandbox, "golden.yaml", "--dialect", "grooveseek", "--kb-path", "kb")

    drop = lambda metrics: {k: v for k, v in metrics.items() if k not in LATENCY}  # noqa: E731
    assert drop(face["metrics"]) == drop(ground["metrics"])
    assert ranking(face) == ranking(ground)
    # Not a vacuous agreement: the fixture's questions are answered, in English and Japanese, and the
    # top files list several pages (the face's hits were read past their first page).
    assert ground["metrics"]["recall@5"] >= 0.9 and ground["metrics"]["mrr"] >= 0.7
    assert all(len(q["top"]) >= 5 for q in ground["queries"])
    by_id = {q["id"]: q for q in face["queries"]}
    assert by_id["ja-backup"]["rank"] == 1 and face["metrics"]["exact_top_chunk"] > 0
    # The face's runs are a history of their own (the settings say which face answered).
    history = [
        json.loads(line) for line in (sandbox.root / "golden.yaml.history.jsonl").read_text().splitlines()
    ]
    assert [run["settings"].get("dialect") for run in history] == [None, "grooveseek"]


def test_eval_refuses_a_face_without_a_knowledge_base(sandbox: Sandbox) -> None:
    golden = sandbox.root / "golden.yaml"
    shutil.copy(FIXTURES / "grooveseek_golden.yaml", golden)
    out = hm(sandbox, "eval", "golden.yaml", "--dialect", "grooveseek", cwd=sandbox.root)
    assert out.returncode == 2 and "add --kb-path DIR" in out.stderr, out.stderr
    (sandbox.root / "kb").mkdir()
    out = hm(sandbox, "eval", "golden.yaml", "--kb-path", "kb", "--corpus", "x", cwd=sandbox.root)
    assert out.returncode == 2 and "drop --corpus" in out.stderr, out.stderr
