"""What the corpus watcher costs while nothing changes: CPU per watched root, in one run.

The watcher wakes every ``ROOT_CHECK_MS`` without events to check that each root's path still names the
directory it watches (a root removed and made again, or renamed over, leaves the watch on the old
directory: ADR 0028). This runs ``CorpusWatcher`` in this process on ``--roots`` idle roots (each a small
tree of ``--dirs`` directories) for ``--seconds`` and reports the process' CPU time (every thread: the
event loop, watchfiles' threads, the stat threads), with the check as shipped and with it every 5 s
(watchfiles' own wake-up when no timeout is asked for, so the loop woke that often before the check), as
a ratio and in absolute terms (CPU per root per wake-up, share of one core). Raw numbers:
``bench/out/watcher_idle.json``.

Usage: .venv/bin/python bench/watcher_idle.py [--roots 20] [--dirs 50] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT
from hallouminate.config import CorpusSpec
from hallouminate.daemon import watcher


async def idle_cpu(roots: list[Path], seconds: float, check_ms: int) -> float:
    """CPU seconds the process spent while ``roots`` were watched, idle, for ``seconds``."""
    watcher.ROOT_CHECK_MS = check_ms
    batches = 0

    async def on_paths(spec: CorpusSpec, paths: list[str]) -> None:
        nonlocal batches
        batches += 1

    async def on_corpus(spec: CorpusSpec) -> None:
        nonlocal batches
        batches += 1

    watch = watcher.CorpusWatcher(on_paths, on_corpus)
    spec = CorpusSpec(
        name="idle", kind="custom", roots=tuple(roots), globs=("**/*.md",), exclude=(), repository=None
    )
    watch.watch(spec)
    await asyncio.sleep(2.0)  # arming (a walk of each tree) is not the idle cost
    started = time.process_time()
    await asyncio.sleep(seconds)
    used = time.process_time() - started
    await watch.close()
    if batches:
        raise SystemExit(f"the roots were not idle: {batches} batches")
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", type=int, default=20)
    parser.add_argument("--dirs", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hm-watch-") as tmp:
        roots = []
        for r in range(args.roots):
            root = Path(tmp) / f"root{r}"
            for d in range(args.dirs):
                (root / f"d{d}").mkdir(parents=True)
                (root / f"d{d}" / "page.md").write_text("# Page\n")
            roots.append(root)
        shipped = watcher.ROOT_CHECK_MS
        figures = {}
        for check_ms in (5000, shipped, 5000, shipped):  # interleaved: drift on a shared machine evens out
            used = asyncio.run(idle_cpu(roots, args.seconds, check_ms))
            figures.setdefault(check_ms, []).append(used)
    base = min(figures[5000])
    now = min(figures[shipped])
    # The wake-ups the shipped check adds over one every 5 s, and what each costs above the baseline.
    extra = args.roots * args.seconds * (1000 / shipped - 1000 / 5000)
    added = now - base
    print(f"{args.roots} idle roots x {args.dirs} directories, {args.seconds:.0f} s each run (best of 2)")
    print(f"  check every 5000 ms:  {base * 1000:7.1f} ms CPU ({base / args.seconds:.3%} of a core)")
    print(
        f"  check every {shipped} ms:  {now * 1000:7.1f} ms CPU ({now / args.seconds:.3%} of a core), shipped"
    )
    print(f"  ratio:                {now / base if base else float('inf'):.2f}")
    print(f"  added per root:       {added / args.seconds / args.roots:.3%} of a core")
    print(f"  added per wake-up:    {added / extra * 1e6:.0f} us CPU")
    OUT.mkdir(parents=True, exist_ok=True)
    raw = {"args": vars(args), "cpu_seconds": {str(ms): runs for ms, runs in figures.items()}}
    (OUT / "watcher_idle.json").write_text(json.dumps(raw, indent=2))


if __name__ == "__main__":
    main()
