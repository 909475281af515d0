"""The 16-bit held vectors against float32 on a kept bench world (ADR 0062).

Reads the world's vectors, holds them as ``HeldVectors`` codes (the form the daemon holds a corpus past
``EXACT_ROWS`` in), embeds ``--queries`` queries made as the suite makes its ranked queries (6-9 consecutive
words of a chunk's text) with the real model, and reports how many queries get the same top 10 in the
same order from the codes as from exact float32 cosine, the mean top-10 overlap, the largest score
difference, and the memory and time of both forms.

Usage: .venv/bin/python bench/held_vectors.py --root /work/wt/stores/s100k [--queries 300] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True, help="a world bench/build_store.py made")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT / "held_vectors.json")
    args = parser.parse_args()
    os.environ.setdefault("LANCEDB_LOG", "error")
    from hallouminate import xdg
    from hallouminate.embedding.embedder import Embedder
    from hallouminate.storage.held_vectors import HeldVectors
    from hallouminate.storage.lancedb_import import import_lancedb
    from hallouminate.storage.schema import TABLE

    model_cache = xdg.default_model_cache()  # before the world's XDG variables would move it
    db = import_lancedb().connect(str(args.root / "data" / "hallouminate" / "lancedb"))
    table = db.open_table(TABLE).to_arrow().select(["vector", "text"])
    exact = table["vector"].combine_chunks().flatten().to_numpy().reshape(len(table), -1).astype(np.float32)
    exact /= np.maximum(np.linalg.norm(exact, axis=1, keepdims=True), 1e-12)
    codes = HeldVectors(len(exact), exact.shape[1], exact_rows=0)
    codes.put(exact)
    codes.trimmed()
    rng = np.random.default_rng(args.seed)
    texts = table["text"].to_pylist()
    queries = []
    for i in rng.choice(len(texts), min(len(texts), 4 * args.queries), replace=False):
        words = (texts[i] or "").split()
        if len(words) >= 10:
            start = int(rng.integers(0, len(words) - 9))
            queries.append(" ".join(words[start : start + int(rng.integers(6, 10))]))
        if len(queries) == args.queries:
            break
    embedder = Embedder(model_cache)
    same = 0
    overlaps: list[float] = []
    worst = 0.0
    seconds = {"float32": 0.0, "codes": 0.0}
    for query in queries:
        vector = embedder.embed_query(query).astype(np.float32)
        started = time.perf_counter()
        truth = exact @ vector
        seconds["float32"] += time.perf_counter() - started
        started = time.perf_counter()
        held = codes.scores(vector)
        seconds["codes"] += time.perf_counter() - started
        top, top_held = np.argsort(-truth)[:10], np.argsort(-held)[:10]
        same += list(top) == list(top_held)
        overlaps.append(len(set(top) & set(top_held)) / 10)
        worst = max(worst, float(np.abs(truth - held).max()))
    result = {
        "root": str(args.root),
        "rows": len(exact),
        "queries": len(queries),
        "same_top10_order": same,
        "mean_top10_overlap": float(np.mean(overlaps)),
        "min_top10_overlap": float(min(overlaps)),
        "max_score_difference": worst,
        "mb": {"float32": exact.nbytes / 1e6, "codes": codes.nbytes / 1e6},
        "ms_per_query": {k: 1000 * v / len(queries) for k, v in seconds.items()},
    }
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
