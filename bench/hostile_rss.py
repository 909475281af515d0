"""The daemon's peak memory while it indexes each hostile file (tests/support/hostile_files.py), one fresh
daemon per file, and how the file ended (skipped or cut, with its reason).

Per file: a fresh daemon on a temporary socket (bench_world), the model loaded and run once (a one-page
wiki indexed first, so the model's first-call allocations are not charged to the file), then its idle RSS
(VmRSS), its peak reset (``5`` written to ``/proc/PID/clear_refs``), a corpus holding only that file
indexed, and the peak (VmHWM) read back: peak above idle, in MB. A row "normal page" does the same with a
small Markdown page, for the floor any index run costs. Target (issue 17): the zip bombs stay under 300 MB
above idle.

Usage: .venv/bin/python bench/hostile_rss.py [--only zip_bomb_docx,deep_html]
Writes bench/out/hostile_rss.json and bench/out/hostile_rss.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _sandbox import OUT, bench_world
from hallouminate.sandbox.formats import file_format
from indexing import peak_rss_mib, wait_loaded
from support.hostile_files import GENERATORS

MIB = 1024 * 1024
BOMB_TARGET_MB = 300.0
BOMBS = ("zip_bomb_docx", "zip_bomb_xlsx")
CORPUS = "repo:hostile:corpus"
WIKI = "repo:hostile:wiki"
GLOBS = ["**/*"]
# The indexer's reason for a format whose reader is not registered.
NO_READER = "no reader for"


def normal_page(directory: Path) -> Path:
    path = directory / "normal.md"
    path.write_text(
        "# Release checklist\n\nTag the release, publish the notes, and tell the support team.\n\n"
        "## Rollback\n\nRevert the tag and redeploy the previous build if the canary fails.\n"
    )
    return path


def reset_peak(pid: int) -> bool:
    """Reset the process's VmHWM to its current RSS (Linux 4.0+); False where that is not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


async def measure(repo: Path) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        pid = int((await conn.call("ping"))["pid"])
        await wait_loaded(conn)
        await conn.call("index", str(repo), {"corpus": WIKI})  # the model runs once before we measure
        idle = peak_rss_mib(pid)["VmRSS"]
        reset = reset_peak(pid)
        started = time.perf_counter()
        result = await conn.call("index", str(repo), {"corpus": CORPUS})
        seconds = time.perf_counter() - started
        rss = peak_rss_mib(pid)
        alive = (await conn.call("ping"))["pid"] == pid
    finally:
        await conn.close()
    [report] = result["corpora"]
    return {
        "idle_mb": idle * MIB / 1e6,
        "peak_mb": rss["VmHWM"] * MIB / 1e6,
        "peak_above_idle_mb": (rss["VmHWM"] - idle) * MIB / 1e6,
        "peak_reset": reset,
        "seconds": seconds,
        "daemon_alive": alive,
        "report": report,
    }


def outcome(report: dict[str, Any]) -> tuple[str, str]:
    """How the one file of the corpus ended: skipped / cut / indexed, and the reason."""
    if report["skipped"]:
        return "skipped", report["skipped"][0]["reason"]
    for problem in report["problems"]:
        if problem["problem"] == "cut":
            return "cut", problem["detail"]
    return "indexed", f"{report['chunks_written']} chunks"


def one(name: str, generate: Any, wiki: Path) -> dict[str, Any]:
    with bench_world(wiki=wiki, name="hostile") as world:
        files = world.repo / "files"
        files.mkdir()
        started = time.perf_counter()
        path = generate(files)
        generated_s = time.perf_counter() - started
        (world.repo / ".hallouminate" / "config.toml").write_text(
            '[[repository]]\nname = "hostile"\npath = "."\ncorpus_paths = ["files"]\n'
            f"corpus_globs = {json.dumps(GLOBS)}\n"
        )
        size = path.stat().st_size
        figures = asyncio.run(measure(world.repo))
    how, reason = outcome(figures["report"])
    return {
        "name": name,
        "file": path.name,
        "format": file_format(path.name),
        "bytes": size,
        "generated_s": generated_s,
        "outcome": how,
        "reason": reason,
        **figures,
    }


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def table(figures: dict[str, Any]) -> list[str]:
    """The Markdown table of a run (also used by the suite's report)."""
    lines = [
        "| file | size | what happened | reason | peak above idle | index s |",
        "|---|---|---|---|---|---|",
    ]
    for row in figures["files"]:
        peak = f"{row['peak_above_idle_mb']:.0f} MB"
        if row["name"] in BOMBS and row["reason"].startswith(NO_READER):
            peak += " (no reader yet: not a measure of the target)"
        elif row["name"] in BOMBS:
            peak += f" ({'pass' if row['peak_above_idle_mb'] < BOMB_TARGET_MB else '**FAIL**'}: < {BOMB_TARGET_MB:.0f})"
        if not row["peak_reset"]:
            peak += " (peak not reset: includes start-up)"
        reason = row["reason"].replace("|", "\\|")
        lines.append(
            f"| `{row['file']}` ({row['name']}) | {_size(row['bytes'])} | {row['outcome']} | {reason} "
            f"| {peak} | {row['seconds']:.1f} |"
        )
    idle = [row["idle_mb"] for row in figures["files"]]
    lines += [
        "",
        f"Idle RSS after start, model load and one small index: {min(idle):.0f}-{max(idle):.0f} MB. "
        f"Zip bombs under {BOMB_TARGET_MB:.0f} MB above idle: "
        + {True: "**pass**", False: "**FAIL**", None: "not measured (no reader for them yet)"}[
            figures["bombs_pass"]
        ]
        + ".",
    ]
    return lines


def run(only: list[str] | None, wiki: Path) -> dict[str, Any]:
    chosen = {"normal_page": normal_page, **GENERATORS}
    if only:
        chosen = {k: v for k, v in chosen.items() if k in only}
    rows = []
    for name, generate in chosen.items():
        print(f"  {name} ...", file=sys.stderr, flush=True)
        row = one(name, generate, wiki)
        print(
            f"    {row['outcome']}: {row['reason'][:100]}; peak +{row['peak_above_idle_mb']:.0f} MB",
            file=sys.stderr,
            flush=True,
        )
        rows.append(row)
    # A bomb its format's reader never opened says nothing about the target.
    bombs = [r for r in rows if r["name"] in BOMBS and not r["reason"].startswith(NO_READER)]
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "target_mb": BOMB_TARGET_MB,
        "bombs_pass": all(r["peak_above_idle_mb"] < BOMB_TARGET_MB for r in bombs) if bombs else None,
        "files": rows,
    }


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="comma-separated generator names (normal_page for the control)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hmb-hostile-") as tmp:
        wiki = Path(tmp) / "wiki"
        wiki.mkdir()
        (wiki / "index.md").write_text("# Warm-up\n\nOne page so that the model runs before we measure.\n")
        figures = run(opts.only.split(",") if opts.only else None, wiki)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hostile_rss.json").write_text(json.dumps(figures, indent=2))
    text = "\n".join(["# Peak RSS per hostile file", "", *table(figures), ""])
    (OUT / "hostile_rss.md").write_text(text)
    print(text)
    print(f"raw figures: {OUT / 'hostile_rss.json'}")


if __name__ == "__main__":
    main()
