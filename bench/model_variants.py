"""Speed and footprint of the provisioned models, fp32 against -int8, on one machine in one run (ADR 0052).

For each model, in a fresh process of its own (so its RSS is its own): load time, RSS after loading, the
query-embedding p50 over the sample wiki's questions, and passage throughput on 128-token chunks of the
evaluation wiki's text (batches of 32, what the indexer sends), with the peak RSS while embedding; and the
model's size on disk. The models run in turn, ``--repeats`` times, and each figure is also given as a ratio
to the first model's in the same round: on a machine shared with other work only ratios taken close
together mean anything; the spread over rounds says how much.

Quality is measured by ``bench/eval_ranking.py --set all --model NAME``.

Usage: .venv/bin/python bench/model_variants.py [--repeats 3] [--chunks 96] [--queries 60]
       [--models NAME ...]   (install each first: `hallouminate model install --model NAME`)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MODELS = (
    "sentence-transformers/all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2-int8",
    "sentence-transformers/all-mpnet-base-v2",
    "sentence-transformers/all-mpnet-base-v2-int8",
)
CHUNK_TOKENS = 128


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def chunks_of_128_tokens(count_tokens: Any, n: int) -> list[str]:
    """``n`` texts of the evaluation wiki's prose, each cut to 128 tokens of the default tokenizer."""
    words = " ".join(
        p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "eval_wiki").rglob("*.md"))
    ).split()
    out, start = [], 0
    while len(out) < n:
        end = start + 60
        while end < len(words) and count_tokens(" ".join(words[start : end + 1])) <= CHUNK_TOKENS:
            end += 1
        out.append(" ".join(words[start:end]))
        start = end if end < len(words) - 200 else 0
    return out


def measure_one(model: str, chunks: int, queries: int) -> dict[str, Any]:
    """Runs in the child process: every figure of one model."""
    from hallouminate import xdg
    from hallouminate.embedding import Embedder
    from hallouminate.model import PROVISIONED

    cache = xdg.default_model_cache()
    directory = PROVISIONED[model].require_installed(cache)
    rss_before = _status_kb("VmRSS")
    started = time.perf_counter()
    embedder = Embedder(cache, model)
    load_s = time.perf_counter() - started
    rss_loaded = _status_kb("VmRSS")
    questions = [q["query"] for q in json.loads((FIXTURES / "sample_questions.json").read_text())]
    for q in questions:
        embedder.embed_query(q)  # warm-up
    times = []
    for i in range(queries):
        started = time.perf_counter()
        embedder.embed_query(questions[i % len(questions)])
        times.append(time.perf_counter() - started)
    texts = chunks_of_128_tokens(embedder.count_tokens, chunks)
    embedder.embed_passages(texts[:32])  # warm-up
    started = time.perf_counter()
    embedder.embed_passages(texts)
    embed_s = time.perf_counter() - started
    return {
        "model": model,
        "load_s": load_s,
        "rss_loaded_mb": (rss_loaded - rss_before) / 1024,
        "peak_rss_mb": _status_kb("VmHWM") / 1024,
        "query_p50_ms": statistics.median(times) * 1000,
        "chunks_per_s": len(texts) / embed_s,
        "onnx_mb": (directory / "model.onnx").stat().st_size / 1e6,
    }


def run_child(model: str, chunks: int, queries: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", model, "--chunks", str(chunks), "--queries", str(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=96)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(measure_one(opts.child, opts.chunks, opts.queries)))
        return
    rounds: list[list[dict[str, Any]]] = []
    for n in range(opts.repeats):
        row = []
        for model in opts.models:
            row.append(run_child(model, opts.chunks, opts.queries))
            print(json.dumps(row[-1]), flush=True)  # kept even if a later round is cut short
        rounds.append(row)
        print(f"round {n + 1}: " + "; ".join(
            f"{r['model'].rsplit('/', 1)[-1]} q50 {r['query_p50_ms']:.1f} ms, {r['chunks_per_s']:.1f} ch/s"
            for r in row
        ), flush=True)  # fmt: skip
    print(
        f"\n{'model':28s} {'query p50 ms':>14s} {'x first':>14s} {'chunks/s':>14s} {'x first':>14s} "
        f"{'RSS MB':>7s} {'peak MB':>8s} {'onnx MB':>8s}"
    )
    for i, model in enumerate(opts.models):
        mine = [r[i] for r in rounds]
        q_ratio = [r[i]["query_p50_ms"] / r[0]["query_p50_ms"] for r in rounds]
        c_ratio = [r[i]["chunks_per_s"] / r[0]["chunks_per_s"] for r in rounds]

        def spread(values: list[float], fmt: str) -> str:
            return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"

        print(
            f"{model.rsplit('/', 1)[-1]:28s} {spread([m['query_p50_ms'] for m in mine], '.1f'):>14s} "
            f"{spread(q_ratio, '.2f'):>14s} {spread([m['chunks_per_s'] for m in mine], '.1f'):>14s} "
            f"{spread(c_ratio, '.2f'):>14s} {statistics.median(m['rss_loaded_mb'] for m in mine):7.0f} "
            f"{statistics.median(m['peak_rss_mb'] for m in mine):8.0f} {mine[0]['onnx_mb']:8.0f}"
        )
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "model_variants.json").write_text(json.dumps(rounds, indent=2))


if __name__ == "__main__":
    main()
