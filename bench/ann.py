"""The approximate vector index on a kept bench world: candidates measured against exact search (ADR 0059).

For each candidate index (type and parameters) on a hard-linked scratch copy of the world's table (the
world itself is never changed): build seconds, index size on disk, and for each search setting recall@10
against ``bypass_vector_index()`` (exact) and the vector query's p50, on the tier's queries (6-9
consecutive words of chunk texts, embedded by the real model, as bench/suite.py ``make_queries``). Also
the exact scan's p50 on the table and the in-memory product's p50 at the reader's bound (the crossover).
``--chosen`` measures only storage/ann.py's configuration through its ``tune`` (what ``make bench-1m``
reports).

Absolute times move with the machine's load: compare the rows of one run.

Usage: .venv/bin/python bench/ann.py --root WORLD [--queries 100] [--chosen] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import make_queries

os.environ.setdefault("LANCEDB_LOG", "error")

# (label, create_index keyword arguments, [(nprobes, refine_factor or None), ...]).
# Measured at 100k on 2 loaded cores (ADR 0059): IVF_PQ (48 sub-vectors) took 851 s to build against
# IVF_FLAT's 32 s and reached recall 0.86 only at nprobes 40 / refine 30, where IVF_FLAT had 0.91 at
# nprobes 40: its codes cost build time without saving probes. The probes are what recall needs on these
# clustered vectors, so the candidates kept are the cheap-to-build ones, with more probes.
CANDIDATES: list[tuple[str, dict[str, Any], list[tuple[int, int | None]]]] = [
    ("IVF_FLAT p=sqrt", {"index_type": "IVF_FLAT"}, [(40, None), (80, None), (120, None)]),
    ("IVF_SQ p=sqrt", {"index_type": "IVF_SQ"}, [(40, 4), (80, 4), (120, 4)]),
]
# --grow: vectors drawn around the world's as bench/_fill.py draws them (its NOISE_SIGMA).
NOISE_SIGMA = 0.025


def store_dir(root: Path) -> Path:
    return root / "data" / "hallouminate" / "lancedb"


def scratch_copy(root: Path, into: Path) -> Path:
    """The world's table hard-linked into ``into`` (LanceDB never rewrites a file in place; an index
    build only adds files), so candidates are built without touching the world."""
    target = into / "lancedb"
    subprocess.run(["cp", "-al", str(store_dir(root)), str(target)], check=True)
    return target


def grown_copy(root: Path, into: Path, rows: int, seed: int) -> Path:
    """A table of ``rows`` rows (id, text, vector) whose vectors are drawn around the world's as
    bench/_fill.py draws them, and whose texts are the world's: the index sees a tier of that size without
    the hour a full world of it takes to build (its other columns do not touch the vector index)."""
    import lancedb
    import pyarrow as pa

    source = lancedb.connect(str(store_dir(root))).open_table("chunks")
    held = source.search().select(["text", "vector"]).limit(None).to_arrow()
    dim = held.schema.field("vector").type.list_size
    base = held["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
    texts = held["text"].to_pylist()
    rng = np.random.default_rng(seed)
    target = into / "lancedb"
    table = None
    for start in range(0, rows, 100_000):
        n = min(100_000, rows - start)
        picked = rng.integers(0, len(base), n)
        vectors = base[picked] + rng.normal(0.0, NOISE_SIGMA, (n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = pa.table(
            {
                "id": pa.array([f"g{start + i}" for i in range(n)]),
                "text": pa.array([texts[i] for i in picked]),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dim),
            }
        )
        if table is None:
            table = lancedb.connect(str(target)).create_table("chunks", batch)
        else:
            table.add(batch)
    assert table is not None
    table.optimize()
    return target


def sample_texts(table: Any, n: int, seed: int) -> list[str]:
    rows = table.count_rows()
    rng = np.random.default_rng(seed)
    offsets = sorted(rng.choice(rows, size=min(rows, n * 20), replace=False).tolist())
    return [str(t) for t in table.take_offsets(offsets).select(["text"]).to_arrow()["text"].to_pylist()]


def query_vectors(root: Path, texts: list[str], n: int, seed: int) -> np.ndarray:
    from hallouminate.embedding import Embedder

    config = (root / "config" / "hallouminate" / "config.toml").read_text()
    cache = config.split('cache_dir = "', 1)[1].split('"', 1)[0]
    ranked, _phrases = make_queries(texts, n, seed)
    return Embedder(Path(cache)).embed_queries(ranked)


def top_ids(builder: Any, k: int = 10) -> list[str]:
    return [str(r["id"]) for r in builder.distance_type("cosine").select(["id"]).limit(k).to_list()]


def timed(fn: Any, queries: np.ndarray) -> tuple[list[list[str]], float, float]:
    """Each query's answer, the wall p50 and CPU seconds per query (load moves the first, barely the
    second)."""
    fn(queries[0])  # warm the caches the first query fills
    answers, walls = [], []
    cpu = time.process_time()
    for q in queries:
        started = time.perf_counter()
        answers.append(fn(q))
        walls.append(time.perf_counter() - started)
    return answers, statistics.median(walls) * 1000, (time.process_time() - cpu) / len(queries) * 1000


def recall(found: list[list[str]], exact: list[list[str]]) -> float:
    hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
    return hits / max(1, sum(len(e) for e in exact))


def index_bytes(path: Path) -> int:
    indices = path / "chunks.lance" / "_indices"
    return sum(f.stat().st_size for f in indices.rglob("*") if f.is_file()) if indices.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True, help="a world made by bench/build_store.py")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--chosen", action="store_true", help="only storage/ann.py's configuration")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--grow", type=int, help="measure on this many rows drawn around the world's instead")
    parser.add_argument(
        "--scratch", type=Path, help="where the scratch copy goes (same filesystem; default: the world)"
    )
    args = parser.parse_args()

    import lancedb

    from hallouminate.storage import ann
    from hallouminate.storage.reader import IN_MEMORY_ROWS

    figures: dict[str, Any] = {"candidates": []}
    with tempfile.TemporaryDirectory(prefix="hmb-ann-", dir=args.scratch or args.root) as tmp:
        if args.grow:
            path = grown_copy(args.root, Path(tmp), args.grow, args.seed)
        else:
            path = scratch_copy(args.root, Path(tmp))
        table = lancedb.connect(str(path)).open_table("chunks")
        rows = table.count_rows()
        dim = table.schema.field("vector").type.list_size
        figures.update(rows=rows, dim=dim, min_rows=ann.MIN_ROWS)
        print(f"{rows} rows x {dim}; {args.queries} queries", file=sys.stderr)
        queries = query_vectors(
            args.root, sample_texts(table, args.queries, args.seed), args.queries, args.seed
        )

        exact, exact_p50, exact_cpu = timed(lambda q: top_ids(table.search(q).bypass_vector_index()), queries)
        figures["exact"] = {"p50_ms": exact_p50, "cpu_ms": exact_cpu}
        print(f"exact scan: p50 {exact_p50:.1f} ms, {exact_cpu:.1f} CPU ms/query", file=sys.stderr)
        held = min(rows, IN_MEMORY_ROWS)
        column = table.search().select(["vector"]).limit(held).to_arrow()["vector"].combine_chunks()
        matrix = column.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)
        _, product_p50, _ = timed(
            lambda q: [str(i) for i in np.argpartition(-(matrix @ q), 10)[:10]], queries
        )
        figures["in_memory"] = {"rows": held, "p50_ms": product_p50}
        print(f"in-memory product at {held} rows: p50 {product_p50:.1f} ms", file=sys.stderr)

        if args.chosen:
            plan = [("storage/ann.py", {"config": ann.index_config(rows, dim)}, [(-1, -1)])]
        else:
            plan = [(label, dict(kw), settings) for label, kw, settings in CANDIDATES]
        for label, kwargs, settings in plan:
            if "config" not in kwargs:
                partitions = max(1, int(rows**0.5))
                if kwargs["index_type"] == "IVF_HNSW_SQ":
                    partitions = max(1, partitions // 8)
                kwargs.update(metric="cosine", num_partitions=partitions)
            before = index_bytes(path)  # a replaced index's files stay until cleanup: count the new ones
            started = time.perf_counter()
            if "config" in kwargs:
                table.create_index("vector", config=kwargs["config"], replace=True)
            else:
                table.create_index(vector_column_name="vector", replace=True, **kwargs)
            built = time.perf_counter() - started
            size = index_bytes(path) - before
            entry: dict[str, Any] = {
                "index": label,
                "build_s": built,
                "index_mib": size / 2**20,
                "searches": [],
            }
            print(f"{label}: built in {built:.1f} s, {size / 2**20:.0f} MiB", file=sys.stderr)
            for nprobes, refine in settings:

                def search(q: np.ndarray, nprobes: int = nprobes, refine: int | None = refine) -> list[str]:
                    if nprobes < 0:
                        return top_ids(ann.tune(table.search(q)))
                    builder = table.search(q).nprobes(nprobes)
                    if refine:
                        builder = builder.refine_factor(refine)
                    return top_ids(builder)

                found, p50, cpu = timed(search, queries)
                got = recall(found, exact)
                setting = (
                    f"nprobes {ann.NPROBES}, refine {ann.REFINE_FACTOR}"
                    if nprobes < 0
                    else f"nprobes {nprobes}, refine {refine}"
                )
                entry["searches"].append(
                    {"setting": setting, "recall_at_10": got, "p50_ms": p50, "cpu_ms": cpu}
                )
                print(
                    f"  {setting}: recall@10 {got:.3f} (target >= 0.95), p50 {p50:.1f} ms, {cpu:.1f} CPU ms",
                    file=sys.stderr,
                )
            figures["candidates"].append(entry)
        shutil.rmtree(path, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
