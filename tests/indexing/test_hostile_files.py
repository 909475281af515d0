"""Hostile files through a real daemon: one corpus holding every file of support/hostile_files.py and two
normal Markdown pages. The run completes; each hostile file is skipped with a reason, or indexed as far
as a limit let it with a ``cut`` problem; the reason names what is wrong (and the setting to change, where
one would help); the normal pages are found; a second, forced run over the whole corpus completes too.

A format without a reader skips its files with "no reader for ...", which is not a reason naming the
problem: that fails here too.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hallouminate.client import connect_or_spawn
from support.files import write
from support.hostile_files import GENERATORS
from support.sandbox import Sandbox, private_world

CORPUS = "repo:hostile:corpus"
GLOBS = ["**/*.md", "**/*.docx", "**/*.xlsx", "**/*.html", "**/*.js", "**/*.csv"]
PAGES = {
    "lighthouse.md": (
        "# Lighthouse keeping\n\nThe keeper trims the wick at dusk and logs the fog signal every hour.\n",
        "keeper trims the wick and logs the fog signal",
    ),
    "orchard.md": (
        "# Orchard grafting\n\nGraft the scion onto the rootstock in early spring, before the buds open.\n",
        "graft the scion onto the rootstock in spring",
    ),
}

# Per hostile file: how it may end ("skip", or "either": skipped or indexed up to a cut) and what its
# reason must say. Loose enough for any reader's wording, tight enough to fail on a wrong reason (a
# generic "no reader", a crash message): the bombs name the limit to raise (zipguard words it so), the
# oversized file its size setting, the corrupt containers the zip they are not, the CSV its encoding.
EXPECTED: dict[str, tuple[str, str]] = {
    "zip_bomb_docx": ("skip", r"max_decompressed_size"),
    "zip_bomb_xlsx": ("skip", r"max_decompressed_size"),
    "empty_rows_xlsx": ("either", r"\brows?\b|max_[a-z_]+"),
    "deep_html": ("either", r"nest|deep|depth|max_[a-z_]+"),
    "minified_js": ("skip", r"max_file_bytes|max_text_file_size"),
    "truncated_docx": ("skip", r"\bzip\b"),
    "pdf_named_xlsx": ("skip", r"\bzip\b"),
    "bad_utf8_csv": ("skip", r"utf-?8"),
}


@dataclass
class Hostile:
    sandbox: Sandbox
    repo: Path
    # Generator name -> the file's corpus-relative path.
    paths: dict[str, str]
    first: dict[str, Any]
    second: dict[str, Any]


async def index(repo: Path, *, force: bool = False) -> dict[str, Any]:
    conn = await connect_or_spawn(spawn=False)
    try:
        result: dict[str, Any] = await conn.call("index", str(repo), {"corpus": CORPUS, "force": force})
    finally:
        await conn.close()
    [report] = result["corpora"]
    return report


@pytest.fixture(scope="module")
def hostile(model_cache: Path) -> Iterator[Hostile]:
    with private_world(model_cache, prefix="hm-hf-") as box:
        repo = box.root / "hostile"
        write(
            repo / ".hallouminate" / "config.toml",
            '[[repository]]\nname = "hostile"\npath = "."\ncorpus_paths = ["files"]\n'
            f"corpus_globs = {json.dumps(GLOBS)}\n",
        )
        (repo / ".hallouminate" / "wiki").mkdir()
        files = repo / "files"
        files.mkdir()
        paths = {name: generate(files).name for name, generate in GENERATORS.items()}
        for name, (text, _) in PAGES.items():
            write(files / name, text)
        box.start_daemon()
        first = asyncio.run(index(repo))
        second = asyncio.run(index(repo, force=True))
        yield Hostile(box, repo, paths, first, second)


def outcome(report: dict[str, Any], path: str) -> tuple[str, str]:
    """("skip", reason) or ("cut", reason) of ``path`` in an index report; ("clean", "") otherwise."""
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    problems = {p["path"]: p for p in report["problems"]}
    problem = problems.get(path)
    if path in skipped:
        # The same reason is kept as the file's problem, not indexed.
        assert problem is not None and not problem["indexed"] and problem["detail"] == skipped[path]
        return "skip", skipped[path]
    if problem is not None and problem["problem"] == "cut":
        assert problem["indexed"], problem
        return "cut", str(problem["detail"])
    return "clean", ""


def test_the_run_completes_and_sees_every_file(hostile: Hostile) -> None:
    assert set(EXPECTED) == set(GENERATORS)
    for report in (hostile.first, hostile.second):
        assert report["files_seen"] == len(GENERATORS) + len(PAGES)
        # Every file is accounted for: indexed, or skipped with a reason.
        indexed = report["files_upserted"]
        assert indexed + report["files_skipped"] == report["files_seen"], report
        assert report["chunks_total"] > 0


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_hostile_file_is_skipped_or_cut_with_a_reason_naming_the_problem(
    hostile: Hostile, name: str
) -> None:
    allowed, pattern = EXPECTED[name]
    path = hostile.paths[name]
    for report in (hostile.first, hostile.second):
        how, reason = outcome(report, path)
        assert how == "skip" or (allowed == "either" and how == "cut"), (name, how, report["problems"])
        assert re.search(pattern, reason, re.IGNORECASE), (name, reason)
        assert not reason.startswith("no reader for"), reason
        assert not reason.startswith("cannot chunk:"), reason  # a reader crash is no reason


async def test_the_normal_pages_are_found(hostile: Hostile) -> None:
    for report in (hostile.first, hostile.second):
        for page in PAGES:
            assert outcome(report, page) == ("clean", "")
    conn = await connect_or_spawn(spawn=False)
    try:
        for page, (_, query) in PAGES.items():
            found = await conn.call("ground", str(hostile.repo), {"query": query, "corpus": CORPUS})
            assert found["docs"], query
            assert found["docs"][0]["path"] == page
        alive = await conn.call("ping")
    finally:
        await conn.close()
    assert alive["pid"] == hostile.sandbox.daemon_pid()  # the daemon that ran both indexes is still up


def test_the_forced_second_run_finds_the_same_problems(hostile: Hostile) -> None:
    def kinds(report: dict[str, Any]) -> dict[str, tuple[str, bool]]:
        return {p["path"]: (p["problem"], p["indexed"]) for p in report["problems"]}

    assert hostile.second["forced"]
    assert kinds(hostile.second) == kinds(hostile.first)
    assert set(kinds(hostile.first)) == set(hostile.paths.values())
