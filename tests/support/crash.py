"""Helpers of the kill -9 tests (tests/daemon/test_daemon_crash_safety.py, tests/reliability/
test_kill9_cycles.py): generated pages, disk and store states, checks that every file is one whole version and
that no temp file survived."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path
from typing import Any

from hallouminate.client import connect_or_spawn
from hallouminate.config import corpus_for, resolve
from support.sandbox import Sandbox, kill_daemon_of, pid_alive

PAGES = 60
# One-sentence sections make ~10 small chunks a page (~630 rows): more than the indexer's FLUSH_ROWS
# (512), so a full run commits at least twice, while short texts keep embedding fast.
SECTIONS = (7, 12)
DIM = 384
_WORD_TEXT = """
    cache shard replica ledger queue socket daemon schema index vector token budget corpus page section
    heading commit fragment manifest version snapshot rollback retry timeout signal worker thread batch
"""
WORDS = _WORD_TEXT.split()
# Names that betray a write left half-done: our atomic-replace temps (".known-*.tmp"), the object store's
# staged uploads ("<name>#<n>", renamed into place on success), partial files, editor swaps.
TEMP_MARKERS = (".tmp", "tmp-", "tmp_", "#", ".partial", ".swp", "~")


def page_text(rng: random.Random, name: str) -> str:
    lines = [f"# {name.replace('-', ' ').title()}", "", f"Intro of {name}: {' '.join(rng.sample(WORDS, 6))}."]
    for i in range(rng.randint(*SECTIONS)):
        lines += [
            "",
            f"## Section {i} {rng.choice(WORDS)}",
            "",
            f"{' '.join(rng.sample(WORDS, 5)).capitalize()}.",
        ]
    return "\n".join(lines) + "\n"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def disk_state(wiki: Path) -> dict[str, str]:
    return {p.relative_to(wiki).as_posix(): sha256(p) for p in sorted(wiki.rglob("*.md"))}


def mutate(wiki: Path, rng: random.Random, cycle: int, every: int) -> None:
    """Rewrite every ``every``-th page (its section count changes), delete three pages, add three."""
    pages = sorted(wiki.glob("*.md"))
    for page in pages[::every]:
        page.write_text(page_text(rng, page.stem))
    for page in rng.sample(pages, 3):
        page.unlink()
    for i in range(3):
        (wiki / f"added-{cycle}-{i}.md").write_text(page_text(rng, f"added-{cycle}-{i}"))


def store_dir(sandbox: Sandbox) -> Path:
    return Path(sandbox.env["XDG_DATA_HOME"]) / "hallouminate" / "lancedb"


def versions(sandbox: Sandbox) -> int:
    try:
        return len(os.listdir(store_dir(sandbox) / "chunks.lance" / "_versions"))
    except FileNotFoundError:
        return 0


def stored_files(sandbox: Sandbox, repo: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row of the repository wiki's corpus, by path; asserts no row lies outside it."""
    from hallouminate.storage import Store

    assert not sandbox.daemon_pid() or not pid_alive(sandbox.daemon_pid() or 0), "stop the daemon first"
    store = Store(store_dir(sandbox), DIM)
    key = corpus_for(resolve(repo), None).store_key
    files = {path: store.file_rows(key, path) for path in store.file_states(key)}
    assert sum(len(rows) for rows in files.values()) == store.count_rows(), "rows outside the wiki corpus"
    return files


def check_file_rows(path: str, rows: list[dict[str, Any]]) -> str:
    """One whole version of one file: ordinals exactly 0..n-1 and one content hash; returns that hash."""
    assert [row["ordinal"] for row in rows] == list(range(len(rows))), f"{path}: ordinals"
    hashes = {row["content_hash"] for row in rows}
    assert len(hashes) == 1, f"{path}: rows of several versions {hashes}"
    assert len({row["id"] for row in rows}) == len(rows), f"{path}: duplicate ids"
    return hashes.pop()


def check_no_temp_files(*roots: Path) -> None:
    leftovers = [
        str(p) for root in roots for p in root.rglob("*") if any(m in p.name.lower() for m in TEMP_MARKERS)
    ]
    assert not leftovers, leftovers


async def index_to_completion(sandbox: Sandbox, repo: Path) -> dict[str, Any]:
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        result = await conn.call("index", str(repo), {}, timeout=120)
    finally:
        await conn.close()
    kill_daemon_of(sandbox)  # SIGTERM: drains, releases the store
    return result
