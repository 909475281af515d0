"""Writes under concurrency: writes to one corpus are serialised (concurrent section edits of one page all
land, none is lost), and writes to different corpora do not wait on each other (a write to corpus B
returns while a large index of corpus A runs, or a long write to A re-indexes; a write to A waits for that
index), nor on any number of index runs of other corpora at once.

The slow or stalled client is tested in tests/daemon/test_daemon_hostile_frames.py, reads during a large
index in tests/daemon/test_daemon_load.py.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

from mcp import ClientSession

from hallouminate.client import connect_or_spawn
from hallouminate.wiki.edits import Edit, apply_edit
from support.crash import page_text
from support.reliability_world import phrase_hits, token, tool
from support.sandbox import Sandbox, mcp_session

WRITERS = 4
EDITS = 5
# The large index the writes to another corpus must not wait for: ~500 chunks, ten times what those writes
# and their searches take even on a loaded machine (each one embeds a single chunk).
BIG_PAGES = 48
# Each of the concurrent index runs: ~100 chunks, so that all of them are still embedding while the other
# corpus's calls are served.
RUN_PAGES = 10


def shared_page() -> str:
    sections = "".join(f"## Writer {k}\n\nThe section of writer {k}.\n\n" for k in range(WRITERS))
    return f"# Shared page\n\n{sections}"


async def test_concurrent_section_edits_of_one_page_are_serialised_and_none_is_lost(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo("shared", wiki=None)
    cwd, corpus = str(repo), "repo:shared:wiki"
    wiki = repo / ".hallouminate" / "wiki"
    sandbox.start_daemon()
    rng = random.Random(4242)
    # Each writer appends under its own heading: whatever order the daemon serves them in, the page
    # must end up holding every edit, each section's in the order its writer sent them.
    edits = [[f"Edit {j} of writer {k}: {token(rng)}." for j in range(EDITS)] for k in range(WRITERS)]
    spans: list[tuple[float, float]] = []
    start = asyncio.Barrier(WRITERS)

    async def writer(k: int, s: ClientSession) -> None:
        await start.wait()
        for text in edits[k]:
            began = time.monotonic()
            done = await tool(
                s,
                "add_markdown",
                cwd=cwd,
                corpus=corpus,
                path="shared.md",
                content=text,
                under_heading=f"Writer {k}",
            )
            spans.append((began, time.monotonic()))
            assert done["action"] == "edited", done

    async def session_of(k: int) -> None:
        async with mcp_session(sandbox) as s:
            if k == 0:
                await tool(s, "add_markdown", cwd=cwd, corpus=corpus, path="shared.md", content=shared_page())
            await writer(k, s)

    await asyncio.wait_for(asyncio.gather(*(session_of(k) for k in range(WRITERS))), timeout=280)

    # The calls really overlapped: most were sent while another was in flight.
    overlapping = sum(
        any(b0 < e1 and b1 < e0 for j, (b1, e1) in enumerate(spans) if j != i)
        for i, (b0, e0) in enumerate(spans)
    )
    assert overlapping >= len(spans) // 2, spans

    expected = shared_page()
    for k in range(WRITERS):
        for text in edits[k]:
            expected = apply_edit(
                expected, Edit("under_heading", heading=f"Writer {k}"), text, "shared.md"
            ).text
    assert (wiki / "shared.md").read_text() == expected, "an edit was lost or torn"
    async with mcp_session(sandbox) as s:
        read = await tool(s, "read_markdown", cwd=cwd, corpus=corpus, path="shared.md")
        assert read["content"] == expected
        # The store follows the last write: every edit's text is found, on that page.
        for text in (t for texts in edits for t in texts):
            assert await phrase_hits(s, cwd, corpus, text) == ["shared.md"], text
    print(f"{len(spans)} concurrent section edits, {overlapping} overlapping another: none lost")


async def test_a_write_to_one_corpus_does_not_wait_for_an_index_or_a_write_of_another(
    sandbox: Sandbox,
) -> None:
    rng = random.Random(777)
    big = sandbox.make_repo("big", wiki=None)
    other = sandbox.make_repo("other", wiki=None)
    big_corpus, other_corpus = "repo:big:wiki", "repo:other:wiki"
    # BIG_PAGES pages of ~10 chunks: an index of many seconds, against writes of a fraction of a second.
    for i in range(BIG_PAGES):
        (big / ".hallouminate" / "wiki" / f"page-{i:02d}.md").write_text(page_text(rng, f"page-{i:02d}"))
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        async with mcp_session(sandbox) as s:
            # First writes of the daemon's life pay one-off costs (the Markdown stack import, the model).
            await tool(
                s, "add_markdown", cwd=str(other), corpus=other_corpus, path="warm.md", content="# Warm\n"
            )
            progress: list[dict] = []
            finished: dict[str, float] = {}
            started = time.monotonic()
            indexing = asyncio.ensure_future(
                conn.call("index", str(big), {"corpus": big_corpus}, on_progress=progress.append, timeout=600)
            )
            indexing.add_done_callback(lambda _: finished.setdefault("index", time.monotonic()))
            while not progress:  # the run has begun (the corpus lock of big is held)
                assert not indexing.done(), "the index ended before it reported progress"
                await asyncio.sleep(0.01)
            # A write to the corpus being indexed: it must wait for the run (one writer per corpus).
            same = asyncio.ensure_future(
                conn.call(
                    "add_markdown",
                    str(big),
                    {
                        "corpus": big_corpus,
                        "path": "during.md",
                        "content": "# During\n\nWritten mid-index.\n",
                    },
                    timeout=600,
                )
            )
            same.add_done_callback(lambda _: finished.setdefault("same", time.monotonic()))
            waits = []
            for k in range(3):
                word = token(rng)
                began = time.monotonic()
                await tool(
                    s,
                    "add_markdown",
                    cwd=str(other),
                    corpus=other_corpus,
                    path=f"during-{k}.md",
                    content=f"# During {k}\n\nWritten while another corpus indexes: {word}.\n",
                )
                waits.append(time.monotonic() - began)
                assert not indexing.done(), (
                    f"write {k} to {other_corpus} returned only after the index of big"
                )
                assert await phrase_hits(s, str(other), other_corpus, word) == [f"during-{k}.md"]
            report = await indexing
            await same
            assert finished["index"] <= finished["same"], "a write to big ran alongside its index"
            assert await phrase_hits(s, str(big), big_corpus, "Written mid-index") == ["during.md"]

            # Write against write: a long page for big (its re-index embeds for seconds), and meanwhile
            # writes to other, which must not queue behind it (the daemon-wide lock covers only the file
            # operations, not the re-index).
            long_page = "# Long page\n\n" + "".join(
                f"## Part {i}\n\n{page_text(rng, f'part-{i}').split(chr(10), 2)[2]}\n" for i in range(20)
            )
            written = big / ".hallouminate" / "wiki" / "long.md"
            began = time.monotonic()
            long_write = asyncio.ensure_future(
                conn.call(
                    "add_markdown",
                    str(big),
                    {"corpus": big_corpus, "path": "long.md", "content": long_page},
                    timeout=600,
                )
            )
            long_write.add_done_callback(lambda _: finished.setdefault("long", time.monotonic()))
            while not written.exists():  # published: its re-index is what runs now
                assert not long_write.done(), "the long write ended before its page appeared"
                await asyncio.sleep(0.005)
            beside = []
            for k in range(2):
                word = token(rng)
                t0 = time.monotonic()
                await tool(
                    s,
                    "add_markdown",
                    cwd=str(other),
                    corpus=other_corpus,
                    path=f"beside-{k}.md",
                    content=f"# Beside {k}\n\nWritten while another corpus re-indexes a write: {word}.\n",
                )
                beside.append(time.monotonic() - t0)
                assert not long_write.done(), f"write {k} to {other_corpus} returned only after big's write"
            long_report = await long_write
            assert long_report["chunks_written"] >= 60, long_report
    finally:
        await conn.close()
    took = finished["index"] - started
    print(
        f"index of big: {took:.1f} s, {report['corpora'][0]['chunks_written']} chunks; writes to other "
        f"meanwhile: {', '.join(f'{w:.2f}' for w in waits)} s; write to big: returned "
        f"{finished['same'] - finished['index']:.2f} s after the index; long write to big: "
        f"{finished['long'] - began:.1f} s, writes to other meanwhile: {', '.join(f'{w:.2f}' for w in beside)} s"
    )
    assert report["corpora"][0]["files_upserted"] == BIG_PAGES
    # Generous (two loaded cores): a write that queued behind the run would take most of it.
    assert max(waits) < took / 2, (waits, took)


async def test_many_index_runs_at_once_do_not_hold_up_a_write_or_a_read_of_another_corpus(
    sandbox: Sandbox,
) -> None:
    """More concurrent index runs (of different corpora) than asyncio's default worker threads (cpu + 4):
    a write and the reads of one more corpus must still be served at once, not after one of the runs."""
    rng = random.Random(99)
    runs = min(32, (os.cpu_count() or 1) + 4) + 1
    bigs = []
    for n in range(runs):
        repo = sandbox.make_repo(f"big{n}", wiki=None)
        for i in range(RUN_PAGES):
            (repo / ".hallouminate" / "wiki" / f"page-{i}.md").write_text(page_text(rng, f"page-{i}"))
        bigs.append(repo)
    other = sandbox.make_repo("other", wiki=None)
    corpus = "repo:other:wiki"
    sandbox.start_daemon()
    conn = await connect_or_spawn(spawn=False)
    try:
        async with mcp_session(sandbox) as s:
            await tool(
                s,
                "add_markdown",
                cwd=str(other),
                corpus=corpus,
                path="warm.md",
                content="# Warm\n\nwarm up\n",
            )
            started = time.monotonic()
            ended: list[float] = []
            indexing = [
                asyncio.ensure_future(conn.call("index", str(repo), {}, timeout=900)) for repo in bigs
            ]
            for task in indexing:
                task.add_done_callback(lambda _: ended.append(time.monotonic()))
            await asyncio.sleep(1.0)  # every run has started embedding
            assert not ended, "an index run ended within a second: make the corpora bigger"
            word = token(rng)
            base = {"cwd": str(other), "corpus": corpus}
            calls = {
                "add_markdown": {
                    **base,
                    "path": "now.md",
                    "content": f"# Now\n\nAmid {runs} index runs: {word}.\n",
                },
                "read_markdown": {**base, "path": "now.md"},
                "ground": {**base, "query": word},
                "list_files": base,
            }
            took, answers = {}, {}
            for op, args in calls.items():  # one after another: each must be answered amid the runs
                began = time.monotonic()
                answers[op] = await tool(s, op, **args)
                took[op] = time.monotonic() - began
                assert not ended, f"{op} on {corpus} returned only after an index run of another corpus ended"
            assert word in answers["read_markdown"]["content"]
            assert "now.md" in [doc["path"] for doc in answers["ground"]["docs"]]
            assert "now.md" in [f["path"] for f in answers["list_files"]["files"]]
            reports = await asyncio.gather(*indexing)
    finally:
        await conn.close()
    assert all(r["corpora"][0]["files_upserted"] == RUN_PAGES for r in reports)
    print(
        f"{runs} index runs at once, the first ended after {min(ended) - started:.1f} s; meanwhile on "
        f"another corpus: {', '.join(f'{op} {t:.2f} s' for op, t in took.items())}"
    )
