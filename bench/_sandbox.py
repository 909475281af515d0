"""A private world for a benchmark run: XDG dirs in a temp dir, the real model, a copy of a wiki."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hallouminate import xdg

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_WIKI = REPO_ROOT / ".hallouminate" / "wiki"
OUT = REPO_ROOT / "bench" / "out"


@dataclass
class BenchWorld:
    root: Path
    env: dict[str, str]
    repo: Path
    model_cache: Path


@contextmanager
def bench_world(
    wiki: Path = SAMPLE_WIKI,
    name: str = "sample",
    model: str | None = None,
    http: bool = False,
    root: Path | None = None,
) -> Iterator[BenchWorld]:
    """``http``: the daemon also listens on HTTP (a random loopback port; its URL in ``<socket>.endpoint``).
    ``root``: the world lives there and is kept (bench/build_store.py); otherwise in a temp dir, removed."""
    model_cache = xdg.default_model_cache()  # resolved before the XDG variables move
    keep = root is not None
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="hmb-", dir="/tmp"))
    else:
        root.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    env.update(
        {
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data"),
            "HALLOUMINATE_SOCKET": str(root / "run" / "d.sock"),
        }
    )
    (root / "config" / "hallouminate").mkdir(parents=True)
    (root / "config" / "hallouminate" / "config.toml").write_text(
        f'[embeddings]\ncache_dir = "{model_cache}"\n'
        + (f'model = "{model}"\n' if model else "")
        + ("\n[http]\nenabled = true\n" if http else "")
    )
    repo = root / name
    (repo / ".hallouminate").mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text(f'[[repository]]\nname = "{name}"\npath = "."\n')
    shutil.copytree(wiki, repo / ".hallouminate" / "wiki")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield BenchWorld(root=root, env=env, repo=repo, model_cache=model_cache)
    finally:
        import asyncio

        from hallouminate.client import stop_daemon

        asyncio.run(stop_daemon())
        os.environ.clear()
        os.environ.update(saved)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[rank]


@contextmanager
def kept_world(root: Path, name: str = "gen") -> Iterator[BenchWorld]:
    """A world bench/build_store.py kept at ``root``: its ``env.sh`` points the product at it. The daemon
    is stopped on the way out; the world stays."""
    import shlex

    model_cache = xdg.default_model_cache()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    for line in (root / "env.sh").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            env[key] = " ".join(shlex.split(value))
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield BenchWorld(root=root, env=env, repo=root / name, model_cache=model_cache)
    finally:
        import asyncio

        from hallouminate.client import stop_daemon

        asyncio.run(stop_daemon())
        os.environ.clear()
        os.environ.update(saved)
