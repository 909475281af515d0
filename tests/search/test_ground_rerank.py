"""The rerank stage through the real daemon, the real MCP stdio client and the real CLI (issue 15).

The reranker is a tiny cross-encoder built by the test (support/cross_encoder.py) and loaded by fastembed's
``TextCrossEncoder`` from a directory, as ``[embeddings] reranker`` names it. Its scores are chosen: a
passage holding "zebra" scores 3, "tiger" 2, "eagle" 1, any other 0. So the reranked order is known:
the zebra page, the tiger page, the eagle page, then every other page in its fused order.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from support.cross_encoder import build_cross_encoder
from support.files import write
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox, config_only_env, hm

WEIGHTS = {"zebra": 3.0, "tiger": 2.0, "eagle": 1.0}
QUERY = "how do we roll back a failed deployment"
# The page the query's own wording leads to, and the three pages the reranker puts first.
FUSED_BEST = "rollback.md"
RERANKED_FIRST = ["zoo-zebra.md", "zoo-tiger.md", "rollback.md"]
PAGES = {
    "rollback.md": "# Rolling back a deployment\n\nTo roll back a failed deployment, run the rollback "
    "command with the previous release tag; the deployment returns to the last good build. An eagle "
    "watches.\n",
    "release.md": "# Releases\n\nA release is tagged, built and deployed by the pipeline; a failed "
    "deployment stops the pipeline.\n",
    "deploy.md": "# Deploying\n\nDeployments go out every morning after the build passes.\n",
    "zoo-zebra.md": "# Zoo notes\n\nThe zebra enclosure is cleaned on Mondays.\n",
    "zoo-tiger.md": "# Big cats\n\nThe tiger sleeps most of the afternoon.\n",
    "kitchen.md": "# Kitchen\n\nThe kettle is descaled each week.\n",
    "garden.md": "# Garden\n\nTomatoes are watered at dawn, every day.\n",
}
BUDGET_MS = 1500


class World:
    def __init__(self, box: Sandbox, client: McpClient, repo: Path, model_dir: Path, pause: Path) -> None:
        self.box, self.client, self.repo, self.model_dir, self.pause = box, client, repo, model_dir, pause

    def ground(self, **args: Any) -> dict[str, Any]:
        result = self.client.call("ground", {"cwd": str(self.repo), "query": QUERY, **args})
        content: dict[str, Any] = result.structured_content
        jsonschema.validate(content, RESULT_SCHEMA)
        return content

    def cli(self, *flags: str) -> dict[str, Any]:
        done = hm(self.box, "ground", QUERY, "--format", "json", *flags, cwd=self.repo)
        assert done.returncode == 0, done.stderr
        parsed: dict[str, Any] = json.loads(done.stdout)
        return parsed


def _paths(result: dict[str, Any]) -> list[str]:
    return [doc["path"] for doc in result["docs"]]


def _codes(result: dict[str, Any]) -> list[str]:
    return [w["code"] for w in result["warnings"]]


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        model_dir = build_cross_encoder(model_cache, box.root / "tiny-reranker", WEIGHTS)
        box.write_config(
            f'[embeddings]\ncache_dir = "{model_cache}"\nreranker = "{model_dir}"\n'
            f"[search]\nrerank_budget_ms = {BUDGET_MS}\n"
        )
        repo = make_repo(box, "acme")
        for name, text in PAGES.items():
            write(repo / ".hallouminate" / "wiki" / name, text)
        pause = box.root / "pause"
        pause.mkdir()
        box.env["HALLOUMINATE_TEST_RERANK_PAUSE"] = str(pause)
        box.start_daemon()
        client = McpClient(box)
        try:
            client.call("index", {"cwd": str(repo)})
            yield World(box, client, repo, model_dir, pause)
        finally:
            client.close()


def test_the_reranker_reorders_the_fused_candidates_as_its_scores_say(world: World) -> None:
    fused = world.ground(rerank=False)
    reranked = world.ground()  # on by default: a reranker is configured
    assert _paths(fused)[0] == FUSED_BEST
    assert "rerank" not in fused
    # The model's order first, then the pages it scores alike (0) in their fused order.
    rest = [p for p in _paths(fused) if p not in RERANKED_FIRST]
    assert _paths(reranked) == [*RERANKED_FIRST, *rest]
    assert _paths(reranked) != _paths(fused)
    info = reranked["rerank"]
    assert info["reranker"] == str(world.model_dir)
    # The pool is max(top_files x 5, 50) fused chunks: every candidate of this small wiki.
    assert info["candidates"] == reranked["stats"]["hits"] == len(PAGES)
    assert info["took_ms"] >= 0
    scores = [doc["score"] for doc in reranked["docs"]]
    assert scores == sorted(scores, reverse=True) and scores[0] == fused["docs"][0]["score"]
    assert not {"rerank-timeout", "rerank-unavailable"} & set(_codes(reranked))


def test_mmr_runs_after_the_rerank_over_its_scores(world: World) -> None:
    # Pipeline order: fusion -> rerank -> mmr. With relevance only (lambda 1) mmr keeps the reranked order.
    both = world.ground(mmr=True, mmr_lambda=1.0)
    assert both["rerank"]["candidates"] == len(PAGES) and both["mmr"]["pool"] == len(PAGES)
    assert _paths(both)[:3] == RERANKED_FIRST


def test_the_cli_flags_turn_the_stage_on_and_off(world: World) -> None:
    on, off, default = world.cli("--rerank"), world.cli("--no-rerank"), world.cli()
    assert _paths(on)[:3] == RERANKED_FIRST and on["rerank"]["reranker"] == str(world.model_dir)
    assert _paths(off)[0] == FUSED_BEST and "rerank" not in off
    assert _paths(default) == _paths(on)
    outline = hm(world.box, "ground", QUERY, cwd=world.repo)
    assert f"reranked by {world.model_dir}" in outline.stdout.splitlines()[0]


def test_past_the_budget_the_fused_order_returns_with_a_warning_and_the_daemon_keeps_answering(
    world: World,
) -> None:
    fused = world.ground(rerank=False)
    (world.pause / "rerank.pause").touch()  # the next model call holds until rerank.go appears
    answer: Future[dict[str, Any]] = Future()

    def call() -> None:
        try:
            answer.set_result(world.ground())
        except Exception as exc:
            answer.set_exception(exc)

    threading.Thread(target=call, daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not (world.pause / "rerank.reached").exists():
            assert time.monotonic() < deadline, "the rerank never reached its model call"
            time.sleep(0.02)
        # The model call is held now: another request is answered meanwhile (the loop is not blocked).
        other = world.cli("--no-rerank")
        assert not (world.pause / "rerank.go").exists()  # still held while that answer came
        assert _paths(other) == _paths(fused)
        timed_out = answer.result(timeout=120)
    finally:
        (world.pause / "rerank.go").touch()
    assert "rerank-timeout" in _codes(timed_out)
    (warning,) = [w for w in timed_out["warnings"] if w["code"] == "rerank-timeout"]
    assert f"{BUDGET_MS} ms" in warning["message"] and "rerank_budget_ms" in warning["message"]
    assert "rerank" not in timed_out
    assert _paths(timed_out) == _paths(fused)
    # Released, the reranker serves the next request again.
    deadline = time.monotonic() + 60
    while (world.pause / "rerank.go").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _paths(world.ground())[:3] == RERANKED_FIRST


def test_phrase_mode_never_reranks(world: World) -> None:
    result = world.ground(query="rollback command", match="phrase")
    assert "rerank" not in result and _paths(result) == ["rollback.md"]


# -- no reranker, or a wrong one ----------------------------------------------------------------------------


def test_rerank_true_without_a_reranker_warns_and_the_default_is_silent(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo("plain", wiki=None)
    for name in ("rollback.md", "kitchen.md"):
        write(repo / ".hallouminate" / "wiki" / name, PAGES[name])
    assert hm(sandbox, "index", cwd=repo).returncode == 0
    asked = hm(sandbox, "ground", QUERY, "--format", "json", "--rerank", cwd=repo)
    plain = hm(sandbox, "ground", QUERY, "--format", "json", cwd=repo)
    assert asked.returncode == 0 and plain.returncode == 0, asked.stderr + plain.stderr
    asked_result, plain_result = json.loads(asked.stdout), json.loads(plain.stdout)
    assert "rerank-unavailable" in _codes(asked_result) and "rerank" not in asked_result
    assert "[embeddings] reranker" in asked_result["warnings"][-1]["message"]
    assert "rerank-unavailable" not in _codes(plain_result)
    assert _paths(asked_result) == _paths(plain_result)


def test_config_validate_names_a_wrong_reranker_directory(tmp_path: Path, model_cache: Path) -> None:
    env = config_only_env(tmp_path)
    config = tmp_path / "config" / "hallouminate" / "config.toml"
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    good = build_cross_encoder(model_cache, tmp_path / "good", WEIGHTS)
    cases = {
        str(tmp_path / "nowhere"): "does not exist",
        str(empty): "lacks model.onnx or onnx/model.onnx, tokenizer.json, tokenizer_config.json",
        "not a model name": "neither a directory",
    }
    for value, problem in cases.items():
        write(config, f'[embeddings]\nreranker = "{value}"\n')
        done = _run(["config", "validate"], env, tmp_path)
        assert done.returncode != 0
        assert "[embeddings] reranker" in done.stdout + done.stderr
        assert problem in done.stdout + done.stderr, done.stdout + done.stderr
    write(config, f'[embeddings]\nreranker = "{good}"\n[search]\nrerank_budget_ms = 5\n')
    done = _run(["config", "validate"], env, tmp_path)
    assert done.returncode != 0 and "rerank_budget_ms must be an integer from 10 to 60000" in (
        done.stdout + done.stderr
    )
    write(config, f'[embeddings]\nreranker = "{good}"\n')
    assert _run(["config", "validate"], env, tmp_path).returncode == 0
    assert f'reranker = "{good}"' in _run(["config", "show"], env, tmp_path).stdout
    write(config, "[search]\nrerank_budget_ms = 700\n")
    shown = _run(["config", "show"], env, tmp_path).stdout
    assert "rerank_budget_ms = 700" in shown and "reranker" not in shown.replace("rerank_budget", "")


def test_a_reranker_that_cannot_load_fails_the_search_clearly_and_rerank_false_still_answers(
    sandbox: Sandbox, model_cache: Path
) -> None:
    # A name fastembed knows, with the hub unreachable (said outright, so the test does not depend on how
    # the network fails): the one download attempt fails at once, and the error names the fixes.
    sandbox.write_config(
        f'[embeddings]\ncache_dir = "{model_cache}"\nreranker = "Xenova/ms-marco-MiniLM-L-6-v2"\n'
    )
    sandbox.env["HF_HUB_OFFLINE"] = "1"
    repo = sandbox.make_repo("plain", wiki=None)
    write(repo / ".hallouminate" / "wiki" / "rollback.md", PAGES["rollback.md"])
    assert hm(sandbox, "index", cwd=repo).returncode == 0
    failed = hm(sandbox, "ground", QUERY, cwd=repo)
    assert failed.returncode == 1, failed.stdout
    assert "reranker Xenova/ms-marco-MiniLM-L-6-v2" in failed.stderr
    assert "remove `[embeddings] reranker`" in failed.stderr
    answered = hm(sandbox, "ground", QUERY, "--no-rerank", "--format", "json", cwd=repo)
    assert answered.returncode == 0 and _paths(json.loads(answered.stdout)) == ["rollback.md"]
    # The daemon's start tried it at once, and said so in its log.
    assert "reranker load failed" in sandbox.daemon_log_text()


def _run(args: list[str], env: dict[str, str], cwd: Path) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "hallouminate", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
