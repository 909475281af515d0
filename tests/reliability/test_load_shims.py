"""16 MCP shims at once, each making N mixed calls: zero errors, every write readable afterwards, and the
p50/p99 latency of each tool printed (``pytest -s`` shows it).

Each shim is a real ``hallouminate serve`` process driven by the SDK's stdio client; all of them talk to
one real daemon. The mix: ``ground`` (a question on a small corpus, or the unique word of one of the
shim's own pages, which phrase mode must find at once: a write is searchable when its call returns),
``read_markdown`` (a page the shim wrote must read back byte for byte), ``list_files``/``list_tree``,
``add_markdown`` (create, overwrite, or a section edit of the shim's own pages in a shared wiki, so every
write also rewrites the shared ``index.md`` lists) and ``index``. Afterwards every page reads back as last
written, phrase search finds each page's current word on that page only and no word it no longer holds,
and each directory's ``index.md`` lists every page.

Quick tier (``make test``): 16 calls a shim (256 in all). Full tier (``make stress``):
HALLOUMINATE_LOAD_CALLS=200.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import ClientSession

from hallouminate.client import connect_or_spawn
from support.reliability_world import (
    INDEX_END,
    INDEX_START,
    Latencies,
    phrase_hits,
    token,
    tool,
)
from support.sandbox import REPO_ROOT, SMALL_WIKI, Sandbox, mcp_session

SHIMS = 16
CALLS = int(os.environ.get("HALLOUMINATE_LOAD_CALLS", "16"))
# The mix of a shim's calls (weights); list covers list_files and list_tree.
MIX = {"ground": 35, "read": 25, "list": 15, "add": 15, "index": 10}
QUESTIONS = json.loads((REPO_ROOT / "tests" / "fixtures" / "sample_questions.json").read_text())
WRITES = "repo:load:wiki"  # the shims' pages, shim-NN/page-NNN.md
SMALL = "repo:small:wiki"  # pages of the sample wiki: questions and index runs
# The full tier runs for minutes on two cores: the default per-test timeout is sized for the quick one.
pytestmark = pytest.mark.timeout(max(300, CALLS * 30 + 300))


@dataclass
class Shim:
    number: int
    cwd: str  # the repository holding WRITES
    small_cwd: str
    rng: random.Random
    pages: dict[str, str] = field(default_factory=dict)  # path -> content last written (acknowledged)
    words: dict[str, str] = field(default_factory=dict)  # path -> the unique word it holds now
    retired: list[str] = field(default_factory=list)  # words no page holds any more

    @property
    def directory(self) -> str:
        return f"shim-{self.number:02d}"

    def page_text(self, title: str, word: str) -> str:
        # Small on purpose (one or two chunks): the load is the calls, not the embedding of long pages.
        filler = " ".join(self.rng.choice(("shard", "replica", "ledger", "queue", "cache")) for _ in range(8))
        return f"# {title}\n\nWritten under load by shim {self.number}: the marker word is {word}, then {filler}.\n"


async def add(shim: Shim, s: ClientSession, lat: Latencies) -> None:
    rng = shim.rng
    base = {"cwd": shim.cwd, "corpus": WRITES}
    word = token(rng)
    if not shim.pages or rng.random() < 0.35:
        path = f"{shim.directory}/page-{len(shim.pages):03d}.md"
        content = shim.page_text(f"Shim {shim.number} page {len(shim.pages)}", word)
        done = await tool(s, "add_markdown", lat, **base, path=path, content=content)
        assert done["action"] == "created", done
    elif rng.random() < 0.5:
        path = rng.choice(sorted(shim.pages))
        # The same title: the directory's index.md list stays as it is, as for most rewrites of a page.
        content = shim.page_text(shim.pages[path].splitlines()[0][2:], word)
        done = await tool(s, "add_markdown", lat, **base, path=path, content=content, overwrite=True)
        assert done["action"] == "overwritten", done
        shim.retired.append(shim.words[path])
    else:
        # A section edit: the new text is predictable (the one occurrence of the old word replaced).
        path = rng.choice(sorted(shim.pages))
        old = shim.words[path]
        done = await tool(s, "add_markdown", lat, **base, path=path, content=word, replace_match=old)
        assert done["action"] == "edited", done
        content = shim.pages[path].replace(old, word)
        shim.retired.append(old)
    assert path in done["reindexed"], done
    shim.pages[path], shim.words[path] = content, word


async def step(shim: Shim, s: ClientSession, lat: Latencies) -> None:
    rng = shim.rng
    op = rng.choices(list(MIX), weights=list(MIX.values()))[0]
    if op == "ground":
        if shim.pages and rng.random() < 0.6:
            path = rng.choice(sorted(shim.pages))
            word = shim.words[path]
            if rng.random() < 0.5:
                # Read-your-writes under load: straight after the write, the page's current word is found,
                # on that page only (phrase mode: an exact lookup).
                found = await tool(s, "ground", lat, cwd=shim.cwd, corpus=WRITES, query=word, match="phrase")
                assert [doc["path"] for doc in found["docs"]] == [path], (path, found["docs"])
            else:
                # Ranked, only an answer is required: among hundreds of near-identical pages (the full
                # tier), a block of equally similar pages can rank above the word's one keyword hit.
                found = await tool(s, "ground", lat, cwd=shim.cwd, corpus=WRITES, query=word)
                assert found["docs"], word
        else:
            question = rng.choice(QUESTIONS)
            found = await tool(s, "ground", lat, cwd=shim.small_cwd, corpus=SMALL, query=question["query"])
            assert found["docs"], question
    elif op == "read":
        if shim.pages:
            path = rng.choice(sorted(shim.pages))
            read = await tool(s, "read_markdown", lat, cwd=shim.cwd, corpus=WRITES, path=path)
            assert read["content"] == shim.pages[path], path
        else:
            read = await tool(s, "read_markdown", lat, cwd=shim.small_cwd, corpus=SMALL, path="index.md")
            assert read["content"].startswith("#")
    elif op == "list":
        if rng.random() < 0.5:
            listed = await tool(s, "list_files", lat, cwd=shim.cwd, corpus=WRITES)
            assert set(shim.pages) <= {f["path"] for f in listed["files"]}
        else:
            tree = await tool(s, "list_tree", lat, cwd=shim.small_cwd, corpus=SMALL)
            assert tree["tree"]["files"] or tree["tree"]["subdirs"]
    elif op == "add":
        await add(shim, s, lat)
    else:
        cwd, corpus = rng.choice(((shim.small_cwd, SMALL), (shim.cwd, WRITES)))
        # Sixteen shims index the same two corpora: `wait` follows one already running (without it a
        # second call is refused by design, ADR 0039); each call still ends with its own pass.
        report = await tool(s, "index", lat, cwd=cwd, corpus=corpus, wait=True)
        assert report["corpora"][0]["files_skipped"] == 0, report


async def verify(shim: Shim, s: ClientSession, wiki: Path) -> None:
    """Every write of this shim readable afterwards, through the tools and on disk."""
    for path, content in sorted(shim.pages.items()):
        read = await tool(s, "read_markdown", cwd=shim.cwd, corpus=WRITES, path=path)
        assert read["content"] == content, f"{path}: not what was last written"
        assert (wiki / path).read_text() == content
        assert await phrase_hits(s, shim.cwd, WRITES, shim.words[path]) == [path], path
    for word in shim.retired:
        # A stale row would still hold the word after its page was overwritten or edited.
        assert await phrase_hits(s, shim.cwd, WRITES, word) == [], f"stale rows still hold {word}"
    if shim.pages:
        listing = (wiki / shim.directory / "index.md").read_text()
        block = listing[listing.index(INDEX_START) : listing.index(INDEX_END)]
        for path in shim.pages:
            assert f"(./{Path(path).name})" in block, f"{path} missing from {shim.directory}/index.md"


async def test_sixteen_shims_make_mixed_calls_without_an_error(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo("load", wiki=None)
    small = sandbox.make_repo("small", pages=SMALL_WIKI)
    wiki = repo / ".hallouminate" / "wiki"
    sandbox.start_daemon()
    # Warm up outside the measured phase: the model loads and both corpora are indexed once.
    conn = await connect_or_spawn(spawn=False)
    try:
        await conn.call("index", str(small), {"corpus": SMALL}, timeout=300)
        await conn.call("index", str(repo), {"corpus": WRITES}, timeout=300)
    finally:
        await conn.close()

    lat = Latencies()
    errors: list[str] = []
    shims = [Shim(n, str(repo), str(small), random.Random(8000 + n)) for n in range(SHIMS)]
    opened = asyncio.Barrier(SHIMS)
    ran = asyncio.Barrier(SHIMS)
    phase: dict[str, float] = {}

    async def run(shim: Shim) -> None:
        try:
            async with mcp_session(sandbox) as s:
                await opened.wait()  # all 16 sessions are up: the calls start together
                phase.setdefault("start", time.monotonic())
                for n in range(CALLS):
                    try:
                        await step(shim, s, lat)
                    except Exception as exc:  # counted, not raised: the figure is "errors = 0"
                        errors.append(f"shim {shim.number} call {n}: {type(exc).__name__}: {exc}")
                await ran.wait()  # no more writes anywhere: each shim checks its pages
                phase.setdefault("end", time.monotonic())
                await verify(shim, s, wiki)
        except BaseException:
            opened.abort()  # a shim that failed must not leave the others waiting at a barrier
            ran.abort()
            raise

    started = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(run(shim) for shim in shims)), timeout=CALLS * 30 + 120)
    calls = sum(len(v) for v in lat.samples.values())
    lat.report(
        f"\n{SHIMS} shims x {CALLS} calls: {calls} calls in {phase['end'] - phase['start']:.1f} s "
        f"({time.monotonic() - started:.1f} s with start-up and checks), errors: {len(errors)}, "
        f"at most {lat.peak} in flight at once"
    )
    assert errors == [], "\n".join(errors[:20])
    assert calls == SHIMS * CALLS
    # The shims' calls really ran at once (the barrier only lines up their first calls).
    assert lat.peak >= SHIMS // 2, f"at most {lat.peak} calls were in flight at once"
    writes = sum(len(shim.pages) for shim in shims)
    print(f"pages written: {writes}, words retired: {sum(len(shim.retired) for shim in shims)}")
    assert writes >= SHIMS, "too few writes to mean anything"
