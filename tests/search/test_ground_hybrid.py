"""ground over a real store and the real model, on the fixture wiki in tests/search/fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidParams
from hallouminate.indexing import Indexer
from hallouminate.storage import Store
from support.ground import RESULT_SCHEMA, SETTINGS, run_ground

FIXTURES = Path(__file__).parent / "fixtures"
WIKI = "repo:acme:wiki"


class Env:
    def __init__(self, root: Path, embedder) -> None:
        self.root = root
        self.embedder = embedder
        self.store = Store(root / "db", embedder.dim)
        self.indexer = Indexer(self.store, embedder, SETTINGS)
        self.specs: dict[str, CorpusSpec] = {}

    def add(self, name: str, source: Path, repository: str | None = None) -> CorpusSpec:
        target = self.root / name.replace(":", "_")
        shutil.copytree(source, target)
        spec = CorpusSpec(name, "wiki" if repository else "custom", (target,), ("**/*.md",), (), repository)
        self.indexer.index_corpus(spec)
        self.specs[name] = spec
        return spec

    async def ground(self, query: str, corpora: list[str] | None = None, **overrides: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "priority_corpus": WIKI,
            "top_files": 5,
            "chunks_per_file": 2,
            "limit": 50,
            "snippet_chars": 160,
        }
        params.update(overrides)
        specs = [self.specs[n] for n in (corpora or list(self.specs))]
        result = await run_ground(self.store, self.embedder, specs, query, **params)
        jsonschema.validate(result, RESULT_SCHEMA)
        return result


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, embedder) -> Env:
    env = Env(tmp_path_factory.mktemp("ground"), embedder)
    env.add(WIKI, FIXTURES / "wiki", "acme")
    env.add("notes", FIXTURES / "notes")
    return env


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how do I cut a new release", "release-process.md"),
        ("semantic versioning tag", "release-process.md"),
        ("undo a schema change", "database-migrations.md"),
        ("quarantine flaky tests", "testing.md"),
        ("purge the CDN after deploy", "ops/caching.md"),
        # Paraphrases: little or no word overlap with the page.
        ("user forgot their password", "accounts.md"),
        ("what happens when the background server has been unused for a while", "daemon-lifecycle.md"),
        ("settings file precedence between global and per-project", "configuration.md"),
    ],
)
async def test_expected_page_ranks_first(env: Env, query: str, expected: str) -> None:
    result = await env.ground(query, [WIKI])
    assert result["docs"][0]["path"] == expected, [d["path"] for d in result["docs"]]


async def test_result_shape_and_content(env: Env) -> None:
    result = await env.ground(
        "rolling back a migration", [WIKI], top_files=3, chunks_per_file=2, snippet_chars=80
    )
    assert result["query"] == "rolling back a migration"
    assert result["stats"]["hits"] >= len(result["docs"]) > 0
    assert len(result["docs"]) <= 3
    top = result["docs"][0]
    assert top["corpus"] == WIKI and top["path"] == "database-migrations.md"
    assert Path(top["absolute_path"]).read_text().startswith("# Database migrations")
    assert top["summary"].startswith("Database migrations - Schema changes")
    assert top["stale"] is False
    best = top["chunks"][0]
    assert best["heading_path"] == ["Database migrations", "Rolling back"]
    lines = Path(top["absolute_path"]).read_text().split("\n")
    assert lines[best["line_start"] - 1] == "## Rolling back"
    assert best["line_end"] == len(lines) - 1
    assert len(best["snippet"]) <= 80 and "roll" in best["snippet"].lower()
    scores = [d["score"] for d in result["docs"]]
    assert scores == sorted(scores, reverse=True) and scores[0] <= 1.0
    assert top["score"] == best["score"]
    assert len(top["chunks"]) <= 2


async def test_all_corpora_are_ranked_together(env: Env) -> None:
    result = await env.ground("where are the log files written")
    paths = [(d["corpus"], d["path"]) for d in result["docs"]]
    assert paths[0] == (WIKI, "ops/logging.md")
    assert ("notes", "oncall.md") in paths
    pinned = await env.ground("where are the log files written", ["notes"])
    assert {d["corpus"] for d in pinned["docs"]} == {"notes"}


async def test_stopword_query_goes_vector_only(env: Env) -> None:
    result = await env.ground("how is it?", [WIKI])
    # A question asking nothing is no strong match for any page either (low_confidence, ADR 0025).
    assert [w["code"] for w in result["warnings"]] == ["vector-only", "weak-match"]
    assert result["docs"]


async def test_unindexed_corpus_is_warned_about(env: Env, tmp_path: Path) -> None:
    empty = CorpusSpec("empty", "custom", (tmp_path,), ("**/*.md",), (), None)
    result = await run_ground(
        env.store,
        env.embedder,
        [env.specs[WIKI], empty],
        "release",
        priority_corpus=None,
        top_files=3,
        chunks_per_file=1,
        limit=10,
        snippet_chars=100,
    )
    assert [w["code"] for w in result["warnings"]] == ["not-indexed"]
    assert "'empty'" in result["warnings"][0]["message"]


async def test_stale_flag_after_editing_a_file(tmp_path: Path, embedder) -> None:
    small = Env(tmp_path, embedder)
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(FIXTURES / "wiki" / "accounts.md", source / "accounts.md")
    shutil.copy(FIXTURES / "wiki" / "testing.md", source / "testing.md")
    spec = small.add(WIKI, source, "acme")
    page = spec.roots[0] / "accounts.md"
    assert [d["stale"] for d in (await small.ground("sign in session cookie"))["docs"]] == [False, False]
    page.write_text(page.read_text() + "\nA new line.\n")
    docs = {d["path"]: d["stale"] for d in (await small.ground("sign in session cookie"))["docs"]}
    assert docs == {"accounts.md": True, "testing.md": False}
    page.unlink()
    assert {d["path"]: d["stale"] for d in (await small.ground("sign in session cookie"))["docs"]}[
        "accounts.md"
    ]


@pytest.mark.parametrize(
    ("query", "overrides"),
    [
        ("   ", {}),
        ("x" * 5000, {}),
        ("ok", {"top_files": 0}),
        ("ok", {"limit": True}),
        ("ok", {"snippet_chars": 2}),
    ],
)
async def test_bad_parameters_are_invalid_params(env: Env, query: str, overrides: dict[str, Any]) -> None:
    with pytest.raises(InvalidParams):
        await env.ground(query, [WIKI], **overrides)
