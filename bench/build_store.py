"""Build a kept bench world: a generated wiki, ``--real`` chunks of it embedded by the daemon, the rest filled
to ``--chunks`` as the suite fills its 100k tier (bench/_fill.py: the product's Indexer and Store, vectors
drawn around the really embedded ones). For work on large stores without rebuilding them each time.

The world stays at ``--root`` with the daemon stopped; ``ROOT/env.sh`` sets the variables that point the
product at it (XDG dirs, socket). Use it as:

    set -a; . ROOT/env.sh; set +a; cd ROOT/gen && hallouminate ground "..."

Usage: .venv/bin/python bench/build_store.py --root DIR [--real 2000] [--chunks 100000] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpora
from _sandbox import bench_world
from suite import chunk_budget, fill_phase, index_runs, log


def build(root: Path, real: int, chunks: int, seed: int) -> None:
    """Make the world at ``root`` (which must not exist); ``make bench-1m`` builds its tier with this too."""
    if root.exists():
        raise SystemExit(f"{root} exists: give a new directory (or remove it)")

    from hallouminate import xdg
    from hallouminate.embedding import Embedder
    from hallouminate.indexing import chunk_markdown

    embedder = Embedder(xdg.default_model_cache())
    counter = _corpora.TokenCounter(embedder.count_tokens)
    budget = chunk_budget(embedder.max_tokens)
    tmp = Path(tempfile.mkdtemp(prefix="hmb-gen-", dir="/tmp"))
    generated = _corpora.generate_to_chunks(
        tmp / "wiki",
        seed,
        min(real, chunks),
        lambda text: [c.embed_text for c in chunk_markdown(text, counter, budget).chunks],
    )
    log(f"{generated.files} pages, {generated.chunks} chunks to embed for real")
    with bench_world(wiki=tmp / "wiki", name="gen", root=root) as world:
        shutil.rmtree(tmp, ignore_errors=True)
        started = time.perf_counter()
        runs = asyncio.run(index_runs(world.repo, full=True))
        log(f"indexed by the daemon in {time.perf_counter() - started:.0f} s: {runs['full']['report']}")
        from hallouminate.client import stop_daemon

        asyncio.run(stop_daemon())
        fill = None
        if chunks > generated.chunks:
            opts = SimpleNamespace(seed=seed, warmup=0, rounds=0, bare_sample=64)
            fill = fill_phase(world, generated, chunks, opts)  # type: ignore[arg-type]
            fill.pop("kept_texts")
        # What the world is made of, for the report of a tier measured on it (bench/suite.py --million).
        (root / "world.json").write_text(
            json.dumps({"seed": seed, "real_chunks": generated.chunks, "chunks": chunks, "fill": fill})
        )
        (root / "env.sh").write_text(
            "".join(
                f"{k}={shlex.quote(v)}\n"
                for k, v in world.env.items()
                if k.startswith(("XDG_", "HALLOUMINATE_"))
            )
        )
    log(f"kept at {root}: set -a; . {root}/env.sh; set +a; cd {root}/gen")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True, help="where the world is made (must not exist)")
    parser.add_argument("--real", type=int, default=2000, help="chunks embedded for real by the daemon")
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the store at the end")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    build(args.root.resolve(), args.real, args.chunks, args.seed)


if __name__ == "__main__":
    main()
