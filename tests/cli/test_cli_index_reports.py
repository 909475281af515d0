"""Honest index reports, through the real CLI over a real daemon: what the catch-up and the watcher did
reaches the next `index`; every file problem (broken frontmatter, a binary or empty page) is named by
`hallouminate status` and `daemon status`, whichever path indexed the file, survives a restart, and goes
once the file is fixed; a page that cannot be indexed counts as skipped, not as waiting for `index`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.sandbox import SMALL_WIKI, Sandbox, hm

# Bounds a hang only (the watcher's delay on a loaded machine), never a pass mark.
DEADLINE_SECS = 90.0
BROKEN = "---\ntitle: [unclosed\n---\n# Broken\n\nA page whose frontmatter is not YAML.\n"


def hm_json(sandbox: Sandbox, *args: str, cwd: Path) -> Any:
    out = hm(sandbox, *args, "--format", "json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def wiki_stats(sandbox: Sandbox, repo: Path) -> dict[str, Any]:
    """`hallouminate status` of the repository's wiki (the only corpus configured there)."""
    (stats,) = hm_json(sandbox, "status", cwd=repo)["corpora"]
    assert stats["corpus"] == "repo:sample:wiki"
    return dict(stats)


def wait_for(check: Callable[[], Any]) -> Any:
    started = time.monotonic()
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() - started < DEADLINE_SECS, "never happened"
        time.sleep(0.2)


def problems_by_path(stats: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {problem["path"]: problem for problem in stats.get("problems", [])}


def test_index_after_a_restart_reports_what_the_catch_up_did(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    first = hm_json(sandbox, "index", cwd=repo)
    assert first["corpora"][0]["files_upserted"] == len(SMALL_WIKI)
    assert first["corpora"][0].get("background") == []  # nothing done behind the client's back yet
    assert hm(sandbox, "daemon", "stop", cwd=repo).returncode == 0

    # Edits made while no daemon ran: the next daemon's start-up catch-up indexes them on its own.
    (wiki / "wombat.md").write_text("# Wombat\n\nThe cubic wombat ledger.\n")
    (wiki / "overview.md").write_text("# Overview\n\nRewritten while the daemon was down.\n")
    assert hm(sandbox, "daemon", "restart", cwd=repo).returncode == 0
    wait_for(lambda: wiki_stats(sandbox, repo)["indexed_files"] == len(SMALL_WIKI) + 1)

    report = hm_json(sandbox, "index", cwd=repo)["corpora"][0]
    assert report["files_upserted"] == 0  # this run's own work: the catch-up had done it
    (catch_up,) = report["background"]
    assert catch_up["by"] == "catch-up"
    assert catch_up["files_upserted"] == 2 and catch_up["chunks_written"] >= 2
    assert catch_up["runs"] == 1 and catch_up["first_ms"] <= catch_up["last_ms"]

    # Reported once: the next index has nothing from before it to tell.
    again = hm(sandbox, "index", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "0 upserted" in again.stdout and "earlier, by" not in again.stdout

    # The watcher's work is told the same way, in the text too.
    (wiki / "wombat.md").write_text("# Wombat\n\nThe square wombat ledger, edited under the watcher.\n")
    wait_for(lambda: "square" in hm(sandbox, "ground", "square wombat ledger", cwd=repo).stdout)
    text = hm(sandbox, "index", cwd=repo)
    assert text.returncode == 0, text.stderr
    assert "earlier, by the watcher" in text.stdout and "1 upserted" in text.stdout, text.stdout


def test_problems_found_by_the_watcher_are_named_survive_a_restart_and_go_when_fixed(
    sandbox: Sandbox,
) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    assert hm(sandbox, "index", cwd=repo).returncode == 0

    # Written while the daemon runs: only the watcher indexes it.
    (wiki / "broken.md").write_text(BROKEN)

    def watcher_done() -> dict[str, Any] | None:
        # The problem is recorded just before the rows are committed: wait for both.
        stats = wiki_stats(sandbox, repo)
        done = "broken.md" in problems_by_path(stats) and stats["indexed_files"] == len(SMALL_WIKI) + 1
        return stats if done else None

    stats = wait_for(watcher_done)
    problem = problems_by_path(stats)["broken.md"]
    assert problem["problem"] == "frontmatter" and problem["indexed"] is True
    assert "not valid YAML" in problem["detail"]
    # Logged once the watcher's run returns, a moment after its rows are committed: waited for too.
    logged = "watcher: repo:sample:wiki: broken.md: frontmatter is not valid YAML"
    wait_for(lambda: logged in sandbox.daemon_log_text())
    assert stats["indexed_files"] == len(SMALL_WIKI) + 1 and stats["skipped_files"] == 0

    text = hm(sandbox, "status", cwd=repo)
    assert text.returncode == 0, text.stderr
    assert "broken.md: frontmatter (indexed as text): frontmatter is not valid YAML" in text.stdout, (
        text.stdout
    )
    daemon = hm(sandbox, "daemon", "status", cwd=repo)
    assert "broken.md: frontmatter" in daemon.stdout, daemon.stdout
    daemon_json = hm_json(sandbox, "daemon", "status", cwd=repo)
    ((key, listed),) = daemon_json["file_problems"].items()
    assert key.startswith("repo:sample:wiki@") and [p["path"] for p in listed] == ["broken.md"]

    # A restart reads nothing unchanged again, yet the problem is still named (kept beside the store).
    assert hm(sandbox, "daemon", "stop", cwd=repo).returncode == 0
    assert "broken.md" in problems_by_path(wiki_stats(sandbox, repo))
    report = hm_json(sandbox, "index", cwd=repo)["corpora"][0]
    assert report["files_upserted"] == 0
    assert [p["path"] for p in report["problems"]] == ["broken.md"]

    # Fixed under the watcher: the problem goes at the file's next index.
    (wiki / "broken.md").write_text(BROKEN.replace("[unclosed", "closed"))
    wait_for(lambda: "broken.md" not in problems_by_path(wiki_stats(sandbox, repo)))
    assert hm_json(sandbox, "daemon", "status", cwd=repo)["file_problems"] == {}


def test_a_binary_and_an_empty_page_are_skipped_with_their_reason_not_unindexed(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "blob.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR binary")
    (wiki / "empty.md").write_text("")
    (wiki / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))

    indexed = hm_json(sandbox, "index", cwd=repo)["corpora"][0]
    assert indexed["files_skipped"] == 3
    found = {p["path"]: p for p in indexed["problems"]}
    assert found["blob.md"]["problem"] == "binary" and "NUL byte" in found["blob.md"]["detail"]
    assert found["empty.md"]["problem"] == "empty" and found["empty.md"]["detail"] == "an empty file"
    assert found["latin1.md"]["problem"] == "not-utf8"
    assert not any(p["indexed"] for p in found.values())

    stats = wiki_stats(sandbox, repo)
    assert stats["unindexed_files"] == 0  # indexing again cannot help: they are not waiting for it
    assert stats["skipped_files"] == 3 and set(problems_by_path(stats)) == set(found)
    text = hm(sandbox, "status", cwd=repo).stdout
    assert "unindexed_files: 0" in text and "skipped_files: 3" in text
    assert "blob.md: binary (skipped): binary content" in text
    assert "empty.md: empty (skipped): an empty file" in text

    # Fixed, then indexed: counted as indexed, no problem left.
    (wiki / "blob.md").write_text("# Blob\n\nNow a page.\n")
    (wiki / "empty.md").write_text("# Empty\n\nNo longer.\n")
    (wiki / "latin1.md").write_text("# Café\n")
    fixed = hm_json(sandbox, "index", cwd=repo)["corpora"][0]
    assert fixed["files_skipped"] == 0 and fixed["problems"] == []
    stats = wiki_stats(sandbox, repo)
    assert stats["skipped_files"] == 0 and stats["problems"] == []
    assert stats["indexed_files"] == len(SMALL_WIKI) + 3 and stats["unindexed_files"] == 0
