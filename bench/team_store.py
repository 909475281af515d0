"""A read-only daemon on an object store against the same store on local disk (ADR 0063), on kept worlds.

For each ``--root`` (a world bench/build_store.py made): a real S3-compatible server (SeaweedFS's ``weed
mini`` on loopback, tests/support/s3.py) is started, the world's table is copied into a prefix of its bucket,
and two read-only daemons are started: one on the bucket, one on the world's local store directory. Then:

- ``ground`` p50/p95 over the daemon protocol, the two daemons' calls interleaved (the suite's ranked
  queries), and their ratio (bucket / local disk);
- a 1,000-chunk commit to the bucket (pages of the world copied to new paths, written by a ``Store`` in this
  process holding the writer's lease): seconds from the commit's return until the bucket reader answers a
  ``ground`` with a new page, which is its poll interval, its follow (the new version's handle and BM25
  index) and the reload of the corpus it holds.

Usage: .venv/bin/python bench/team_store.py --root /work/wt/stores/tput-10k --root /work/wt/stores/s100k
       [--calls 200] [--poll 1.0] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests"))  # support.s3: the tests' real S3 server

from _sandbox import OUT, percentile  # noqa: E402
from suite import log  # noqa: E402
from throughput import queries_of, repo_of  # noqa: E402

PICKUP_CHUNKS = 1000


def world_env(root: Path) -> dict[str, str]:
    env = {}
    for line in (root / "env.sh").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            env[key] = value
    return env


def copy_table(root: Path, location: Any) -> tuple[int, str]:
    """The world's table into the bucket (its schema and metadata kept): its rows and its (one) corpus."""
    from hallouminate.storage.lancedb_import import import_lancedb
    from hallouminate.storage.schema import TABLE

    lancedb = import_lancedb()
    local = lancedb.connect(str(Path(world_env(root)["XDG_DATA_HOME"]) / "hallouminate" / "lancedb"))
    table = local.open_table(TABLE)
    remote = lancedb.connect(location.connect_uri(), storage_options=location.storage_options())
    remote.create_table(TABLE, data=table.to_arrow(), schema=table.schema)
    corpus = str(table.search().select(["corpus"]).limit(1).to_list()[0]["corpus"])
    return int(table.count_rows()), corpus


@contextlib.contextmanager
def daemon(name: str, root: Path, store: str, env: dict[str, str], model_cache: Path) -> Iterator[Path]:
    """A read-only daemon in a world of its own whose baseline config says ``store``; yields its socket."""
    home = Path(tempfile.mkdtemp(prefix=f"hmb-{name}-", dir="/tmp"))
    config = home / "config" / "hallouminate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[embeddings]\ncache_dir = "{model_cache}"\n{store}')
    sock = home / "run" / "d.sock"
    full = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_", "AWS_"))}
    full.update(
        {
            "HOME": str(home / "home"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "HALLOUMINATE_SOCKET": str(sock),
            **env,
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hallouminate", "daemon", "run"],
        env=full,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, f"{name}: the daemon did not start"
            time.sleep(0.05)
        yield sock
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)


async def grounds(socks: dict[str, Path], queries: list[str]) -> dict[str, list[float]]:
    """Each query on each daemon in turn (interleaved, so the machine's drift hits both alike)."""
    from hallouminate.client.connection import DaemonConnection

    conns = {name: await DaemonConnection.open(sock, timeout=30) for name, sock in socks.items()}
    times: dict[str, list[float]] = {name: [] for name in socks}
    try:
        for conn in conns.values():  # loaded: the corpus held, the first call's costs paid
            for query in queries[:5]:
                await conn.call("ground", "/", {"query": query}, timeout=600)
        for query in queries[5:]:
            for name, conn in conns.items():
                started = time.perf_counter()
                await conn.call("ground", "/", {"query": query}, timeout=600)
                times[name].append(time.perf_counter() - started)
    finally:
        for conn in conns.values():
            await conn.close()
    return times


def commit_pages(location: Any, corpus: str, chunks: int, lease_secs: float) -> tuple[str, int]:
    """~``chunks`` chunks of the bucket's store copied to new paths in one commit, under the writer's
    lease; returns one new page's path and the chunks written."""
    from hallouminate.storage.lease import WriterLease
    from hallouminate.storage.store import Store

    lease = WriterLease.for_location(location, lease_secs)
    lease.acquire()
    try:
        store = Store(location, 384)
        store.write_guard = lease.guard
        files: dict[str, Any] = {}
        taken = 0
        for path in sorted(store.file_states(corpus)):
            writes = store.file_writes(corpus, path)
            files[f"pickup-{uuid.uuid4().hex[:6]}/{path}"] = writes
            taken += len(writes)
            if taken >= chunks:
                break
        store.replace_files(corpus, files)
        return next(iter(files)), taken
    finally:
        lease.release()


async def pickup(sock: Path, path: str, started: float, deadline_s: float = 600.0) -> float:
    """Seconds from ``started`` until the daemon's ``list_files`` of the corpus names ``path``."""
    from hallouminate.client.connection import DaemonConnection

    async with await DaemonConnection.open(sock, timeout=30) as conn:
        while True:
            corpora = (await conn.call("list_corpora", "/", {}, timeout=600))["corpora"]
            for corpus in corpora:
                files = await conn.call("list_files", "/", {"corpus": corpus["name"]}, timeout=600)
                if any(f["path"] == path for f in files["files"]):
                    # And a search answers from the new version (the held corpus reloaded).
                    await conn.call("ground", "/", {"query": "pickup"}, timeout=600)
                    return time.perf_counter() - started
            if time.perf_counter() - started > deadline_s:
                raise TimeoutError(f"{path} never showed on the reader")
            await asyncio.sleep(0.05)


def measure(root: Path, server: Any, model_cache: Path, calls: int, poll: float) -> dict[str, Any]:

    prefix = f"bench-{root.name}-{uuid.uuid4().hex[:6]}"
    uri = server.uri(prefix)
    env = {
        "AWS_ACCESS_KEY_ID": server.access_key,
        "AWS_SECRET_ACCESS_KEY": server.secret_key,
        "AWS_REGION": server.region,
        "AWS_ENDPOINT_URL": server.endpoint,
    }
    location = server.location(prefix)
    started = time.perf_counter()
    rows, corpus = copy_table(root, location)
    copied = time.perf_counter() - started
    log(f"{root.name}: {rows} rows copied into {uri} in {copied:.1f} s")
    local_dir = Path(world_env(root)["XDG_DATA_HOME"]) / "hallouminate" / "lancedb"
    queries = queries_of(repo_of(root), model_cache, calls + 5, 7)
    read_only = f'mode = "read-only"\npoll_interval_secs = {poll}\n'
    with (
        daemon("bucket", root, f'[store]\nuri = "{uri}"\n{read_only}', env, model_cache) as bucket,
        daemon("local", root, f'[store]\npath = "{local_dir}"\n{read_only}', {}, model_cache) as local,
    ):
        times = asyncio.run(grounds({"bucket": bucket, "local": local}, queries[: calls + 5]))
        figures: dict[str, Any] = {
            "rows": rows,
            "copy_s": copied,
            **{
                name: {
                    "p50_ms": percentile(t, 50) * 1000,
                    "p95_ms": percentile(t, 95) * 1000,
                    "calls": len(t),
                }
                for name, t in times.items()
            },
        }
        figures["p50_ratio"] = figures["bucket"]["p50_ms"] / figures["local"]["p50_ms"]
        log(
            f"  ground p50: bucket {figures['bucket']['p50_ms']:.1f} ms, local {figures['local']['p50_ms']:.1f} "
            f"ms (ratio {figures['p50_ratio']:.2f})"
        )
        commit_started = time.perf_counter()
        path, chunks = commit_pages(location, corpus, PICKUP_CHUNKS, 30.0)
        committed = time.perf_counter()
        seconds = asyncio.run(pickup(bucket, path, committed))
        figures["pickup"] = {
            "chunks": chunks,
            "commit_s": committed - commit_started,
            "visible_after_commit_s": seconds,
            "poll_interval_s": poll,
        }
        log(
            f"  a {chunks}-chunk commit ({committed - commit_started:.1f} s) visible on the reader {seconds:.2f} s after it"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, action="append", required=True, help="a kept world (repeatable)")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--poll", type=float, default=1.0, help="the readers' poll_interval_secs")
    parser.add_argument("--out", type=Path, default=OUT / "team_store.json")
    args = parser.parse_args()
    os.environ.setdefault("LANCEDB_LOG", "error")
    from hallouminate import xdg
    from support.s3 import s3_server

    model_cache = xdg.default_model_cache()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hmb-s3-") as tmp, s3_server(Path(tmp)) as server:
        for root in args.root:
            results[root.name] = measure(root.resolve(), server, model_cache, args.calls, args.poll)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
