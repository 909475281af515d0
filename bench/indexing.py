"""Indexing figures on a generated corpus of Markdown files (~2 chunks each), in one run:

- full index through the real daemon (client ``index`` call): wall time, chunks/s, tokens/s;
- the bare embedder in this process on exactly the same embed texts (same chunker, same budget, the
  indexer's batch composition: windows of 256 chunks in walk order, sorted by length, batches of 32),
  and the pipeline's share of it (target >= 0.85); plus, as context, the bare embedder on the first
  chunks in plain file order (unsorted batches);
- no-op re-index (target <= 2 s) and one-file change re-index;
- the daemon's peak RSS (VmHWM).

The corpus is generated deterministically from ``--seed``: an H1 with a paragraph and one H2 with a
paragraph per file, 80-150 words each, prose drawn from a technical-wiki vocabulary.

Usage: .venv/bin/python bench/indexing.py [--files 5000] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, bench_world

PIPELINE_TARGET = 0.85
NOOP_TARGET_S = 2.0
# Chunks of the plain-file-order baseline: enough for a stable rate, a fraction of the full run's cost.
UNSORTED_SAMPLE = 1024

AREAS = [
    "billing", "search", "auth", "storage", "deploy", "observability", "payments", "onboarding",
    "mobile", "data-platform", "networking", "security", "support", "frontend", "ml", "infra",
    "release", "compliance", "analytics", "messaging",
]  # fmt: skip
NOUNS = [
    "queue", "worker", "cache", "replica", "shard", "index", "schema", "migration", "endpoint", "token",
    "session", "certificate", "bucket", "snapshot", "pipeline", "scheduler", "dashboard", "alert",
    "runbook", "ledger", "invoice", "webhook", "gateway", "cluster", "node", "volume", "backup",
    "rollout", "feature flag", "dependency", "container", "config file", "secret", "audit log",
    "rate limit", "retry budget", "consumer group", "batch job", "timeout", "health check", "load balancer",
    "service account", "deadline", "partition", "checkpoint", "manifest", "connection pool", "trace",
]  # fmt: skip
VERBS = [
    "rotates", "drains", "replays", "validates", "compacts", "throttles", "retries", "publishes",
    "archives", "rebuilds", "schedules", "mirrors", "invalidates", "promotes", "pins", "signs",
    "samples", "batches", "deduplicates", "escalates", "reconciles", "encrypts", "restores", "forwards",
]  # fmt: skip
ADJECTIVES = [
    "stale", "primary", "regional", "idle", "nightly", "partial", "expired", "pending", "hot", "cold",
    "encrypted", "orphaned", "degraded", "canary", "legacy", "quarantined", "oversized", "unsigned",
]  # fmt: skip
PEOPLE = ["the on-call engineer", "the release captain", "the platform team", "a reviewer", "the owner"]
OPENERS = [
    "In practice,", "Since the last incident,", "By default,", "During a deploy,", "Once a week,",
    "When traffic spikes,", "Before a release,", "After a failover,", "On startup,", "Historically,",
]  # fmt: skip
REASONS = [
    "so that a slow consumer never blocks the rest",
    "because the upstream provider rejects duplicates",
    "which keeps the error budget intact",
    "to keep latency under the agreed objective",
    "since partial writes used to corrupt the ledger",
    "so that nothing is lost when a node disappears",
    "because auditors ask for a complete trail",
    "which halves the cost of a cold start",
]
SECTIONS = [
    "How it works", "Failure modes", "Operations", "Configuration", "Known issues", "History",
    "Monitoring", "Rollback", "Capacity", "Ownership", "Testing", "Security notes",
]  # fmt: skip


def sentence(rng: random.Random) -> str:
    a, b = rng.sample(NOUNS, 2)
    shape = rng.randrange(6)
    if shape == 0:
        text = f"{rng.choice(OPENERS)} the {a} {rng.choice(VERBS)} every {rng.choice(ADJECTIVES)} {b}"
    elif shape == 1:
        text = f"The {rng.choice(ADJECTIVES)} {a} {rng.choice(VERBS)} the {b} {rng.choice(REASONS)}"
    elif shape == 2:
        text = (
            f"If the {a} is {rng.choice(ADJECTIVES)}, {rng.choice(PEOPLE)} {rng.choice(VERBS)} the {b} "
            f"by hand and records it in the {rng.choice(NOUNS)}"
        )
    elif shape == 3:
        n = rng.choice([2, 3, 5, 10, 15, 30, 60, 90, 128, 500])
        unit = rng.choice(["seconds", "minutes", "requests", "megabytes", "retries", "hours"])
        text = f"Each {a} keeps at most {n} {unit} of {rng.choice(ADJECTIVES)} {b} state"
    elif shape == 4:
        text = (
            f"Nobody should touch the {a} while the {b} {rng.choice(VERBS).removesuffix('s')}s; "
            f"ask {rng.choice(PEOPLE)} first"
        )
    else:
        text = (
            f"The `{a.replace(' ', '_')}` setting controls how the {b} {rng.choice(VERBS)} "
            f"{rng.choice(ADJECTIVES)} entries, {rng.choice(REASONS)}"
        )
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random) -> str:
    target = rng.randint(80, 150)
    words: list[str] = []
    while len(words) < target:
        words.extend(sentence(rng).split())
    # Close on a whole sentence: cut after the last full stop within the target.
    text = " ".join(words[:target])
    cut = text.rfind(".")
    return text[: cut + 1] if cut > len(text) // 2 else text + "."


def page(rng: random.Random, index: int) -> tuple[str, str]:
    area = AREAS[index % len(AREAS)]
    noun = rng.choice(NOUNS)
    title = f"{rng.choice(ADJECTIVES).capitalize()} {noun} in {area}"
    slug = f"{area}/{noun.replace(' ', '-')}-{index:05d}.md"
    text = f"# {title}\n\n{paragraph(rng)}\n\n## {rng.choice(SECTIONS)}\n\n{paragraph(rng)}\n"
    return slug, text


def generate(root: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(files):
        rel, text = page(rng, i)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# -- measurements --------------------------------------------------------------------------------------
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (all cores, all processes), from /proc/stat."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _CLOCK_TICKS  # less idle and iowait


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


class CpuMeter:
    """CPU used by our processes and by everything else while a phase runs.

    The machine is shared: other processes' CPU during a phase slows it, so each figure comes with the
    CPU others took meanwhile, and the pipeline is also compared by CPU time, which contention barely moves.
    """

    def __init__(self, *pids: int) -> None:
        self.pids = pids
        self.busy = machine_busy_s()
        self.ours = sum(process_cpu_s(p) for p in pids)

    def stop(self) -> dict[str, float]:
        ours = sum(process_cpu_s(p) for p in self.pids) - self.ours
        return {"own_cpu_s": ours, "others_cpu_s": max(0.0, machine_busy_s() - self.busy - ours)}


def peak_rss_mib(pid: int) -> dict[str, float]:
    fields: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) / 1024  # kB -> MiB
    return fields


async def wait_loaded(conn: Any) -> float:
    started = time.perf_counter()
    while True:
        status = await conn.call("status")
        if status["model"] == "loaded":
            return time.perf_counter() - started
        if str(status["model"]).startswith("failed"):
            raise SystemExit(f"the daemon could not load the model: {status['model']}")
        await asyncio.sleep(0.1)


async def timed_index(conn: Any, repo: Path, *, log_progress: bool = False) -> tuple[float, dict[str, Any]]:
    last = [0.0]

    def progress(data: dict[str, Any]) -> None:
        now = time.perf_counter()
        if log_progress and now - last[0] >= 30:
            last[0] = now
            print(f"    ... {data['done']}/{data['total']} files", file=sys.stderr, flush=True)

    started = time.perf_counter()
    result = await conn.call("index", str(repo), {}, on_progress=progress)
    return time.perf_counter() - started, result["corpora"][0]


def indexer_batches(texts: list[str]) -> list[list[str]]:
    """The indexer's batch composition: consecutive windows of 256 chunks, each sorted by length."""
    from hallouminate.indexing.indexer import EMBED_BATCH, EMBED_WINDOW

    batches = []
    for start in range(0, len(texts), EMBED_WINDOW):
        window = sorted(texts[start : start + EMBED_WINDOW], key=len)
        batches.extend(window[i : i + EMBED_BATCH] for i in range(0, len(window), EMBED_BATCH))
    return batches


def same_chunks(repo: Path, embedder: Any) -> tuple[list[str], int]:
    """The embed texts the daemon embedded, in its order, and their total tokens."""
    from hallouminate.config import corpus_for, resolve
    from hallouminate.indexing import chunk_markdown, walk_corpus
    from hallouminate.indexing.indexer import SPECIAL_TOKENS

    resolved = resolve(repo)
    spec = corpus_for(resolved, None)
    budget = min(resolved.settings.chunk_tokens, embedder.max_tokens) - SPECIAL_TOKENS
    texts = [
        chunk.embed_text
        for _, path in walk_corpus(spec)
        for chunk in chunk_markdown(
            path.read_bytes().decode("utf-8-sig"), embedder.count_tokens, budget
        ).chunks
    ]
    return texts, sum(embedder.count_tokens(t) for t in texts)


def timed_bare_embedding(embedder: Any, texts: list[str]) -> tuple[float, dict[str, float]]:
    """The bare embedder on ``texts`` in the indexer's batches, after a warm-up batch: seconds, and the
    CPU seconds of this process and of the others meanwhile (CpuMeter)."""
    from hallouminate.indexing.indexer import EMBED_BATCH

    embedder.embed_passages(texts[:EMBED_BATCH])  # warm-up: first-call allocations
    meter = CpuMeter(os.getpid())
    started = time.perf_counter()
    for batch in indexer_batches(texts):
        embedder.embed_passages(batch)
    return time.perf_counter() - started, meter.stop()


def bare_embedding(embedder: Any, texts: list[str], tokens: int) -> dict[str, Any]:
    from hallouminate.indexing.indexer import EMBED_BATCH

    seconds, cpu = timed_bare_embedding(embedder, texts)
    sample = texts[:UNSORTED_SAMPLE]
    started = time.perf_counter()
    for i in range(0, len(sample), EMBED_BATCH):
        embedder.embed_passages(sample[i : i + EMBED_BATCH])
    unsorted = time.perf_counter() - started
    return {
        "chunks": len(texts),
        "tokens": tokens,
        "seconds": seconds,
        "chunks_per_s": len(texts) / seconds,
        "tokens_per_s": tokens / seconds,
        **cpu,
        "file_order_sample": {
            "chunks": len(sample),
            "seconds": unsorted,
            "chunks_per_s": len(sample) / unsorted,
        },
    }


async def daemon_phase(repo: Path, files: int) -> dict[str, Any]:
    """Full, no-op and one-file index runs through the daemon, then its peak RSS."""
    from hallouminate.client import connect_or_spawn

    wiki = repo / ".hallouminate" / "wiki"
    conn = await connect_or_spawn()
    try:
        pid = (await conn.call("ping"))["pid"]
        load_s = await wait_loaded(conn)
        print(f"  daemon {pid} loaded in {load_s:.1f} s; indexing {files} files ...", file=sys.stderr)
        meter = CpuMeter(pid, os.getpid())
        full_s, full = await timed_index(conn, repo, log_progress=True)
        full_cpu = meter.stop()
        noop_s, noop = await timed_index(conn, repo)
        # One file's content changes (a sentence appended): re-read, re-chunk, re-embed, commit. Called at
        # once, so it runs before the daemon's watcher (250 ms debounce) would pick the change up.
        target = sorted(wiki.rglob("*.md"))[files // 2]
        target.write_text(target.read_text() + "\nOne more sentence was added for the benchmark.\n")
        change_s, change = await timed_index(conn, repo)
        rss = peak_rss_mib(pid)
    finally:
        await conn.close()
    return {
        "daemon_load_s": load_s,
        "full": (full_s, full),
        "full_cpu": full_cpu,
        "noop": (noop_s, noop),
        "change": (change_s, change),
        "rss": rss,
    }


def run(files: int, seed: int) -> dict[str, Any]:
    from hallouminate.embedding import Embedder

    with tempfile.TemporaryDirectory(prefix="hmb-corpus-") as tmp:
        corpus = Path(tmp) / "wiki"
        started = time.perf_counter()
        generate(corpus, files, seed)
        generated_s = time.perf_counter() - started
        # bench_world stops the daemon with asyncio.run on exit: the event loop lives inside it.
        with bench_world(wiki=corpus, name="bench") as world:
            # Chunked before the daemon runs: the one-file change edits the corpus afterwards, and the
            # bare run must embed exactly what the full index embedded.
            embedder = Embedder(world.model_cache)
            texts, tokens = same_chunks(world.repo, embedder)
            daemon = asyncio.run(daemon_phase(world.repo, files))
            print("  bare embedder on the same texts ...", file=sys.stderr)
            bare = bare_embedding(embedder, texts, tokens)
    (full_s, full), (noop_s, noop), (change_s, change) = daemon["full"], daemon["noop"], daemon["change"]
    chunks = full["chunks_written"]
    return {
        "files": files,
        "seed": seed,
        "corpus_generation_s": generated_s,
        "daemon_load_s": daemon["daemon_load_s"],
        "full_index": {
            "seconds": full_s,
            "indexer_seconds": full["seconds"],
            "files_upserted": full["files_upserted"],
            "chunks": chunks,
            "chunks_per_s": chunks / full_s,
            "tokens_per_s": bare["tokens"] / full_s,
            **daemon["full_cpu"],
        },
        "bare_embedder": bare,
        "pipeline_ratio": (chunks / full_s) / bare["chunks_per_s"],
        # The same chunks, so CPU seconds compare directly: what the pipeline adds beyond embedding.
        "pipeline_ratio_cpu": bare["own_cpu_s"] / daemon["full_cpu"]["own_cpu_s"],
        "pipeline_target": PIPELINE_TARGET,
        "chunks_match": chunks == bare["chunks"],
        "noop_reindex": {"seconds": noop_s, "report": noop, "target_s": NOOP_TARGET_S},
        "one_file_change": {"seconds": change_s, "report": change},
        "daemon_rss_mib": {"peak": daemon["rss"]["VmHWM"], "current": daemon["rss"]["VmRSS"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    opts = parser.parse_args()
    figures = run(opts.files, opts.seed)
    full, bare = figures["full_index"], figures["bare_embedder"]
    noop, change = figures["noop_reindex"], figures["one_file_change"]
    sample = bare["file_order_sample"]
    full_others, bare_others = full["others_cpu_s"], bare["others_cpu_s"]
    ok = {True: "ok", False: "MISSED"}
    print(f"hallouminate indexing bench ({opts.files} generated Markdown files, seed {opts.seed}, 2 cores)")
    print(f"  {'what':<34} {'figure':>24}  note")
    print(
        f"  {'full index (daemon)':<34} {full['seconds']:>22.1f} s  "
        f"{full['chunks']} chunks, {full['chunks_per_s']:.1f} chunks/s, {full['tokens_per_s']:.0f} tokens/s"
    )
    print(
        f"  {'bare embedder, same texts':<34} {bare['seconds']:>22.1f} s  "
        f"{bare['chunks']} chunks, {bare['chunks_per_s']:.1f} chunks/s, {bare['tokens_per_s']:.0f} tokens/s"
    )
    print(
        f"  {'pipeline / bare embedder':<34} {figures['pipeline_ratio']:>24.3f}  "
        f"target >= {PIPELINE_TARGET}: {ok[figures['pipeline_ratio'] >= PIPELINE_TARGET]}"
    )
    print(
        f"  {'pipeline / bare, by CPU time':<34} {figures['pipeline_ratio_cpu']:>24.3f}  "
        f"CPU s: daemon {full['own_cpu_s']:.0f}, bare {bare['own_cpu_s']:.0f}"
    )
    print(
        f"  {'other processes, CPU s meanwhile':<34} "
        f"{f'{full_others:.0f} / {bare_others:.0f}':>24}  "
        "during the full index / the bare run (2 cores: ~2 CPU s per s)"
    )
    print(
        f"  {'bare, file order (no sort)':<34} {sample['chunks_per_s']:>15.1f} chunks/s  "
        f"first {sample['chunks']} chunks, unsorted batches of 32 (context)"
    )
    print(
        f"  {'no-op re-index':<34} {noop['seconds']:>22.3f} s  "
        f"target <= {NOOP_TARGET_S:.0f} s: {ok[noop['seconds'] <= NOOP_TARGET_S]}"
    )
    print(
        f"  {'one-file change re-index':<34} {change['seconds']:>22.3f} s  "
        f"{change['report']['files_upserted']} upserted, {change['report']['chunks_written']} chunks"
    )
    print(f"  {'daemon peak RSS (VmHWM)':<34} {figures['daemon_rss_mib']['peak']:>20.0f} MiB")
    if not figures["chunks_match"]:
        print("  WARNING: the daemon wrote a different number of chunks than the bare run embedded")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "indexing.json").write_text(json.dumps(figures, indent=2))
    print(f"  raw figures: {OUT / 'indexing.json'}")


if __name__ == "__main__":
    main()
