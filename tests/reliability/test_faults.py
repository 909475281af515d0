"""Faults under a running daemon, through the real MCP client: the store removed, made read-only or replaced
by a file; the disk filling up during an index; the model cache missing or damaged; the config made invalid.
Each answers a clear error naming the cause and the fix, the daemon stays up for what still works, and
nothing already indexed is lost. Then the daemon's life: an old daemon, a stale socket and lock, shims
racing to spawn, ending with exactly one current daemon.

How each fault is made, as root (chmod stops nobody):
- read-only store: a read-only bind mount over the store, inside the daemon's own mount namespace (the
  daemon runs under ``unshare --mount``), so writes fail with EROFS exactly as on a read-only disk while
  reads go on, and nothing is mounted outside the daemon;
- store replaced: the directory moved away and a plain file put in its place;
- disk full: ``RLIMIT_FSIZE`` lowered on the running daemon (``prlimit``), so its next large store write
  fails with EFBIG (the daemon ignores SIGXFSZ), then lifted again;
- model: a copy of the real model cache with ``model.onnx`` removed, truncated, or damaged at equal size.
"""

from __future__ import annotations

import asyncio
import resource
import shutil
import socket as socketlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hallouminate import __version__
from hallouminate.client import connect_or_spawn
from support.faults_world import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    PRIVATE_MOUNTS,
    World,
    fails,
    ok,
    paths_of,
    world,
    write_pages,
)
from support.sandbox import Sandbox, daemons_serving, mcp_session, pid_alive

WIKI = "repo:faults:wiki"
PAGES = {
    "walrus.md": "# Walrus\n\nThe amber walrus sleeps on the north shore.\n",
    "otter.md": "# Otter\n\nThe copper otter fishes in the cold river.\n",
    "guides/lynx.md": "# Lynx\n\nThe silver lynx hunts in the pine forest.\n",
}


def raw_lance(message: str) -> bool:
    """A LanceDB error passed through as it is: its Rust type or a cargo source path."""
    return "LanceError" in message or ".cargo" in message or "lance error" in message


@pytest.fixture(scope="module")
def w(model_cache: Path) -> Iterator[World]:
    with world(model_cache) as created:
        created.start(wrapper=PRIVATE_MOUNTS)
        yield created


@pytest.fixture(scope="module")
def repo(w: World) -> Path:
    repo = w.box.make_repo("faults", wiki=None)
    write_pages(repo / ".hallouminate" / "wiki", PAGES)
    return repo


async def converged(session: object, cwd: str) -> dict[str, int]:
    """Every file of the corpus indexed, none waiting: what a re-index after a fault must reach."""
    files = await ok(session, "list_files", cwd=cwd)  # type: ignore[arg-type]
    stats = await ok(session, "corpus_stats", cwd=cwd)  # type: ignore[arg-type]
    assert stats["unindexed_files"] == 0, stats
    assert stats["indexed_files"] == len(files["files"]), (stats, len(files["files"]))
    return stats


async def test_a_store_removed_under_the_daemon_is_named_until_index_rebuilds_it(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    pid = w.pid
    async with mcp_session(w.box) as s:
        await ok(s, "index", cwd=cwd)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus")) == sorted(PAGES)
        shutil.rmtree(w.store)

        # Chosen: a clear error, not an empty result that reads like "the wiki is silent".
        for tool, args in (("ground", {"query": "amber walrus"}), ("corpus_stats", {}), ("list_topics", {})):
            error = await fails(s, tool, INTERNAL_ERROR, cwd=cwd, **args)
            assert str(w.store) in error.message and "was removed" in error.message, error.message
            assert "hallouminate index" in error.message and not raw_lance(error.message)
            assert error.data["problem"] == "store-missing"
        # What needs no store still answers.
        listed = await ok(s, "list_files", cwd=cwd)
        assert sorted(f["path"] for f in listed["files"]) == sorted(PAGES)
        page = await ok(s, "read_markdown", cwd=cwd, path="walrus.md")
        assert page["content"] == PAGES["walrus.md"]

        # index rebuilds the store from the files: every page is back, nothing is missing.
        report = await ok(s, "index", cwd=cwd)
        assert report["corpora"][0]["files_upserted"] == len(PAGES)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus")) == sorted(PAGES)
        await converged(s, cwd)
    assert w.pid == pid


async def test_a_read_only_store_refuses_writes_clearly_and_keeps_answering_reads(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    wiki = repo / ".hallouminate" / "wiki"
    pid = w.pid
    async with mcp_session(w.box) as s:
        await ok(s, "index", cwd=cwd)
        before = await converged(s, cwd)
        w.in_daemon_mounts("mount", "--bind", "-o", "ro", str(w.store), str(w.store))
        try:
            write_pages(wiki, {"heron.md": "# Heron\n\nThe saffron heron wades in the marsh.\n"})
            error = await fails(s, "index", INTERNAL_ERROR, cwd=cwd)
            assert str(w.store) in error.message and "not writable" in error.message, error.message
            assert "Read-only file system" in error.message and "[store] path" in error.message
            assert not raw_lance(error.message) and error.data["problem"] == "store-read-only"

            # Reads answer from the rows already there; the new page waits, counted as not indexed.
            assert paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus")) == sorted(PAGES)
            stats = await ok(s, "corpus_stats", cwd=cwd)
            assert stats["indexed_files"] == before["indexed_files"] and stats["unindexed_files"] == 1
            # A write lands on disk (the wiki is writable) and says its re-index failed, and why.
            written = await ok(
                s, "add_markdown", cwd=cwd, corpus=WIKI, path="kept.md", content="# Kept\n\nA teal kestrel.\n"
            )
            assert (wiki / "kept.md").read_text() == "# Kept\n\nA teal kestrel.\n"
            failed = [x["message"] for x in written["warnings"] if x["code"] == "reindex-failed"]
            assert failed and "not writable" in failed[0], written["warnings"]
        finally:
            w.in_daemon_mounts("umount", str(w.store))

        # Writable again: one index converges, and the old rows were never lost.
        await ok(s, "index", cwd=cwd)
        await converged(s, cwd)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="saffron heron", top_files=1)) == ["heron.md"]
        assert paths_of(await ok(s, "ground", cwd=cwd, query="teal kestrel", top_files=1)) == ["kept.md"]
        assert "walrus.md" in paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus"))
    assert w.pid == pid


async def test_a_file_in_place_of_the_store_is_named_and_the_moved_store_comes_back_whole(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    async with mcp_session(w.box) as s:
        await ok(s, "index", cwd=cwd)
        before = await converged(s, cwd)
        found = paths_of(await ok(s, "ground", cwd=cwd, query="copper otter"))
        moved = w.store.with_name("lancedb.moved")
        w.store.rename(moved)
        w.store.write_text("not a store\n")
        try:
            for tool, args in (("ground", {"query": "copper otter"}), ("corpus_stats", {}), ("index", {})):
                error = await fails(s, tool, INTERNAL_ERROR, cwd=cwd, **args)
                assert str(w.store) in error.message and "not a directory" in error.message, error.message
                assert "[store] path" in error.message and not raw_lance(error.message)
            # index did not "rebuild" over the file, and the reads without a store still answer.
            assert w.store.read_text() == "not a store\n"
            assert len((await ok(s, "list_files", cwd=cwd))["files"]) == before["indexed_files"]
        finally:
            w.store.unlink()
            moved.rename(w.store)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="copper otter")) == found
        assert (await converged(s, cwd)) == before


async def test_the_disk_filling_up_during_an_index_keeps_old_rows_and_a_later_index_converges(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    wiki = repo / ".hallouminate" / "wiki"
    pid = w.pid
    async with mcp_session(w.box) as s:
        await ok(s, "index", cwd=cwd)
        before = await converged(s, cwd)
        # Room for what is there (the log, the store's files) plus 24 KiB; the new pages need ~3x that
        # (30 rows of 384 float32 each, written in one data file).
        biggest = max(p.stat().st_size for p in [w.log, *w.store.rglob("*")] if p.is_file())
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (biggest + 24 * 1024, resource.RLIM_INFINITY))
        try:
            write_pages(
                wiki,
                {
                    f"bulk/page-{i}.md": f"# Bulk page {i}\n\n"
                    + "".join(
                        f"## Part {j}\n\nThe violet ibis {i} nests by pond {j} of the delta.\n\n"
                        for j in range(5)
                    )
                    for i in range(6)
                },
            )
            error = await fails(s, "index", INTERNAL_ERROR, cwd=cwd)
            assert str(w.store) in error.message and "disk is full" in error.message, error.message
            assert "File too large" in error.message and "free space" in error.message.lower()
            assert not raw_lance(error.message) and error.data["problem"] == "store-full"
            # Still up, same process, and everything indexed before is intact.
            assert pid_alive(pid) and w.pid == pid
            stats = await ok(s, "corpus_stats", cwd=cwd)
            assert stats["indexed_files"] == before["indexed_files"]
            assert stats["total_chunks"] == before["total_chunks"]
            assert "walrus.md" in paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus"))
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

        await ok(s, "index", cwd=cwd)
        after = await converged(s, cwd)
        assert after["indexed_files"] == before["indexed_files"] + 6
        # The rows that did not fit in the limit (one per part): ~48 KiB of vectors alone.
        assert after["total_chunks"] - before["total_chunks"] >= 30
        assert "bulk/page-3.md" in paths_of(await ok(s, "ground", cwd=cwd, query="violet ibis 3 nests"))
    assert w.pid == pid


async def test_a_config_made_invalid_while_running_is_named_with_its_line_and_fixing_it_needs_no_restart(
    w: World, repo: Path
) -> None:
    cwd = str(repo)
    pid = w.pid
    baseline = w.box.config_file
    layer = repo / ".hallouminate" / "config.toml"
    good_baseline, good_layer = baseline.read_text(), layer.read_text()
    calls = [
        ("list_corpora", {}),
        ("list_files", {}),
        ("read_markdown", {"path": "walrus.md"}),
        ("ground", {"query": "amber walrus"}),
        ("index", {}),
    ]
    async with mcp_session(w.box) as s:
        await ok(s, "index", cwd=cwd)
        # A torn edit: an unclosed table header on the line after the good text.
        broken_line = good_baseline.count("\n") + 2
        baseline.write_text(good_baseline + "\n[search\ntop_files = 3\n")
        for tool, args in calls:
            error = await fails(s, tool, INVALID_PARAMS, cwd=cwd, **args)
            assert str(baseline) in error.message and f"line {broken_line}" in error.message, error.message
        baseline.write_text(good_baseline)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="amber walrus"))

        # The repository layer: a misspelt key is named with its file and a suggestion.
        layer.write_text(good_layer + "\n[search]\ntop_filez = 3\n")
        for tool, args in calls:
            error = await fails(s, tool, INVALID_PARAMS, cwd=cwd, **args)
            assert str(layer) in error.message and "top_filez" in error.message, error.message
            assert "top_files" in error.message  # did you mean
        layer.write_text(good_layer)
        for tool, args in calls:
            await ok(s, tool, cwd=cwd, **args)
    assert w.pid == pid, "fixing the config needed no restart"


# -- the model cache -----------------------------------------------------------------------------------------
def snapshot_file(cache: Path) -> Path:
    from hallouminate.model import require_installed

    return require_installed(cache) / "model.onnx"


async def test_a_missing_or_damaged_model_names_the_install_command_and_reads_still_work(
    sandbox: Sandbox, model_cache: Path
) -> None:
    cache = sandbox.root / "models"
    shutil.copytree(model_cache, cache)  # a copy: this test damages it
    onnx = snapshot_file(cache)
    original = onnx.read_bytes()
    sandbox.write_config(f'[embeddings]\ncache_dir = "{cache}"\n')
    repo = sandbox.make_repo("faults", wiki=None)
    write_pages(repo / ".hallouminate" / "wiki", PAGES)
    cwd = str(repo)

    onnx.unlink()
    proc = sandbox.start_daemon()
    damages = [
        ("removed", None, "model install`"),
        ("truncated", original[: len(original) // 2], "model install`"),
        # Same size: passes the manifest's size check, fails to load; a plain install would do nothing.
        ("overwritten", b"\0" * 4096 + original[4096:], "model install --force`"),
    ]
    async with mcp_session(sandbox) as s:
        for label, content, fix in damages:
            if content is not None:
                onnx.write_bytes(content)
            for tool, args in (("ground", {"query": "amber walrus"}), ("index", {})):
                error = await fails(s, tool, INTERNAL_ERROR, cwd=cwd, **args)
                assert f"hallouminate {fix}" in error.message, (label, error.message)
                assert str(cache) in error.message, (label, error.message)
            # The read tools need neither the model nor the store.
            listed = await ok(s, "list_files", cwd=cwd)
            assert sorted(f["path"] for f in listed["files"]) == sorted(PAGES), label
            assert (await ok(s, "read_markdown", cwd=cwd, path="otter.md"))["content"] == PAGES["otter.md"]

        # Repaired: the next request loads the model, with no restart.
        onnx.write_bytes(original)
        await ok(s, "index", cwd=cwd)
        assert paths_of(await ok(s, "ground", cwd=cwd, query="copper otter", top_files=1)) == ["otter.md"]
    assert proc.poll() is None and sandbox.daemon_pid() == proc.pid


# -- lifecycle: what tests/daemon and tests/shim do not cover yet ---------------------------------------------
async def test_a_stale_socket_and_a_lock_naming_a_live_stranger_end_with_one_daemon_and_the_stranger_unharmed(
    sandbox: Sandbox,
) -> None:
    """kill -9 leaves the socket and the lock file (with the dead daemon's pid) behind, and that pid may have
    been reused since: here it names a live process that is no daemon. Three shims racing must end with one
    daemon, and nobody may signal the stranger the lock names."""
    repo = sandbox.make_repo("faults", wiki=None)
    write_pages(repo / ".hallouminate" / "wiki", PAGES)
    sandbox.socket.parent.mkdir(mode=0o700, parents=True)
    stale = socketlib.socket(socketlib.AF_UNIX)
    stale.bind(str(sandbox.socket))
    stale.close()
    stranger = await asyncio.create_subprocess_exec("sleep", "120")
    sandbox.socket.with_name(sandbox.socket.name + ".lock").write_text(f"{stranger.pid}\n")
    try:
        together = asyncio.Barrier(3)

        async def one_shim() -> list[str]:
            async with mcp_session(sandbox) as s:
                await asyncio.wait_for(together.wait(), 120)  # all three are up before any calls: they race
                return [c["name"] for c in (await ok(s, "list_corpora", cwd=str(repo)))["corpora"]]

        assert await asyncio.gather(one_shim(), one_shim(), one_shim()) == [[WIKI]] * 3
        serving = daemons_serving(sandbox)
        assert len(serving) == 1 and sandbox.daemon_pid() == serving[0]
        assert stranger.returncode is None and pid_alive(stranger.pid)
    finally:
        stranger.kill()
        await stranger.wait()


async def test_shims_racing_to_replace_an_old_daemon_end_with_exactly_one_current_daemon(
    sandbox: Sandbox,
) -> None:
    repo = sandbox.make_repo("faults", wiki=None)
    write_pages(repo / ".hallouminate" / "wiki", PAGES)
    old = sandbox.start_daemon({"HALLOUMINATE_TEST_FAKE_VERSION": "0.0.1-old"})

    together = asyncio.Barrier(2)

    async def one_shim() -> int:
        async with mcp_session(sandbox) as s:
            await asyncio.wait_for(together.wait(), 120)  # both are up before either calls: they race
            return len((await ok(s, "list_files", cwd=str(repo)))["files"])

    assert await asyncio.gather(one_shim(), one_shim()) == [len(PAGES)] * 2
    assert old.wait(timeout=30) == 0  # asked to shut down, it drained and exited cleanly
    serving = daemons_serving(sandbox)
    assert len(serving) == 1 and old.pid not in serving
    conn = await connect_or_spawn(spawn=False)
    try:
        info = await conn.call("ping")
    finally:
        await conn.close()
    assert info["version"] == __version__ and info["pid"] == serving[0]
