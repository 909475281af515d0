"""The mixed-format tier of `make bench`: a corpus of Markdown, PDF, Word, Excel and PowerPoint files and
source code, indexed through the real daemon kind by kind, each against the bare embedder on the same
chunk texts.

The documents are generated deterministically from ``--seed`` with the technical-wiki prose of
bench/indexing.py (fpdf2, python-docx, openpyxl and python-pptx write them); the code is the source tree
of a real package from the registry, installed in this environment as a dependency (``h11``: pure
Python, ~2,600 lines in 11 files), copied as is.

Per kind: one corpus (its own directory and globs), one ``index`` call to the daemon (wall time, CPU),
then, with the daemon stopped, the bare embedder in this process on exactly the chunk texts the product's
chunkers give for those files, batched as the indexer batches: chunks/s of each, and the pipeline's share
(pipeline chunks/s / bare chunks/s, also by CPU seconds per chunk). A kind whose reader is not registered
in this build is reported with 0 chunks and the reason its files were skipped.

Usage: .venv/bin/python bench/formats.py [--scale 1.0] [--seed 7]
Writes bench/out/formats.json, formats.md and formats.png.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sandbox import OUT, bench_world
from indexing import (
    NOUNS,
    SECTIONS,
    CpuMeter,
    page,
    paragraph,
    sentence,
    timed_bare_embedding,
    wait_loaded,
)

# The real package whose source is the code corpus (a dependency of this environment, from the registry).
CODE_PACKAGE = "h11"
# Files per kind at --scale 1.
COUNTS = {"markdown": 40, "pdf": 8, "docx": 8, "xlsx": 6, "pptx": 6}
GLOBS = {
    "markdown": "**/*.md",
    "pdf": "**/*.pdf",
    "docx": "**/*.docx",
    "xlsx": "**/*.xlsx",
    "pptx": "**/*.pptx",
    "code": "**/*.py",
}
KINDS = list(GLOBS)


# -- the corpus ------------------------------------------------------------------------------------------
def write_markdown(root: Path, rng: random.Random, n: int) -> None:
    for i in range(n):
        rel, text = page(rng, i)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_pdf(root: Path, rng: random.Random, n: int) -> None:
    from fpdf import FPDF

    for i in range(n):
        pdf = FPDF()
        pdf.set_title(f"Operations report {i}")
        pdf.set_font("Helvetica", size=11)
        for _ in range(3):
            pdf.add_page()
            pdf.multi_cell(0, 5, f"{paragraph(rng)}\n\n{paragraph(rng)}")
        (root / f"report-{i:02d}.pdf").write_bytes(bytes(pdf.output()))


def write_docx(root: Path, rng: random.Random, n: int) -> None:
    from docx import Document

    for i in range(n):
        document = Document()
        title = f"Design note {i}: the {rng.choice(NOUNS)}"
        document.core_properties.title = title
        document.add_heading(title, level=1)
        document.add_paragraph(paragraph(rng))
        for section in rng.sample(SECTIONS, 3):
            document.add_heading(section, level=2)
            document.add_paragraph(paragraph(rng))
        table = document.add_table(rows=1, cols=3)
        for cell, text in zip(table.rows[0].cells, ("Setting", "Default", "Why"), strict=True):
            cell.text = text
        for _ in range(6):
            cells = table.add_row().cells
            cells[0].text = rng.choice(NOUNS).replace(" ", "_")
            cells[1].text = str(rng.choice([1, 5, 30, 128, 500]))
            cells[2].text = sentence(rng)
        document.save(str(root / f"design-{i:02d}.docx"))


def write_xlsx(root: Path, rng: random.Random, n: int) -> None:
    from openpyxl import Workbook

    for i in range(n):
        workbook = Workbook()
        sheet = workbook.active
        assert sheet is not None
        sheet.title = "Inventory"
        sheet.append(["Item", "Owner", "Region", "Cost", "Renewed", "Notes"])
        for r in range(80):
            sheet.append(
                [
                    f"{rng.choice(NOUNS)} {r}",
                    rng.choice(["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret"]),
                    rng.choice(["eu-west", "us-east", "ap-south"]),
                    round(rng.uniform(10, 5000), 2),
                    datetime.date(2026, 1, 1) + datetime.timedelta(days=rng.randrange(330)),
                    sentence(rng),
                ]
            )
        costs = workbook.create_sheet("Budget")
        costs.append(["Quarter", "Planned", "Spent"])
        for q in range(1, 5):
            costs.append([f"Q{q}", rng.randrange(10_000, 90_000), rng.randrange(10_000, 90_000)])
        workbook.save(str(root / f"inventory-{i:02d}.xlsx"))


def write_pptx(root: Path, rng: random.Random, n: int) -> None:
    from pptx import Presentation

    for i in range(n):
        deck = Presentation()
        layout = deck.slide_layouts[1]  # title and content
        for s in range(8):
            slide = deck.slides.add_slide(layout)
            slide.shapes.title.text = f"{rng.choice(SECTIONS)} {s + 1}"
            body = slide.placeholders[1].text_frame
            body.text = sentence(rng)
            for _ in range(3):
                body.add_paragraph().text = sentence(rng)
            slide.notes_slide.notes_text_frame.text = paragraph(rng)
        buffer = io.BytesIO()
        deck.save(buffer)
        (root / f"roadmap-{i:02d}.pptx").write_bytes(buffer.getvalue())


def copy_code(root: Path) -> dict[str, Any]:
    import importlib

    package = importlib.import_module(CODE_PACKAGE)
    source = Path(package.__file__ or "").parent
    files = sorted(source.rglob("*.py"))
    lines = 0
    for path in files:
        target = root / CODE_PACKAGE / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        lines += path.read_text().count("\n")
    from importlib.metadata import version

    return {"package": CODE_PACKAGE, "version": version(CODE_PACKAGE), "files": len(files), "lines": lines}


WRITERS: dict[str, Callable[[Path, random.Random, int], None]] = {
    "markdown": write_markdown,
    "pdf": write_pdf,
    "docx": write_docx,
    "xlsx": write_xlsx,
    "pptx": write_pptx,
}


def generate(root: Path, seed: int, scale: float) -> dict[str, Any]:
    rng = random.Random(seed)
    made: dict[str, Any] = {}
    for kind, write in WRITERS.items():
        (root / kind).mkdir(parents=True)
        write(root / kind, rng, max(1, round(COUNTS[kind] * scale)))
    (root / "code").mkdir()
    made["code"] = copy_code(root / "code")
    for kind in KINDS:
        files = [p for p in (root / kind).rglob("*") if p.is_file()]
        made.setdefault(kind, {}).update(files=len(files), bytes=sum(p.stat().st_size for p in files))
    return made


def config(root: Path) -> str:
    lines = ['[[repository]]\nname = "formats"\npath = "."\n']
    for kind in KINDS:
        lines.append(f'[[corpus]]\nname = "{kind}"\npaths = ["{root / kind}"]\nglobs = ["{GLOBS[kind]}"]\n')
    return "\n".join(lines)


# -- the product's chunks, in this process ----------------------------------------------------------------
def kind_chunks(repo: Path, kind: str, counter: Callable[[str], int], budget: int) -> dict[str, Any]:
    """The embed texts the daemon embeds for ``kind``'s corpus (its walk, chunk_file), and the reasons of
    the files it skips."""
    from hallouminate.config import corpus_for, resolve
    from hallouminate.indexing import walk_corpus
    from hallouminate.indexing.indexer import chunk_file
    from hallouminate.indexing.text_chunker import UnparseableFile

    texts: list[str] = []
    skipped: dict[str, str] = {}
    for rel, path in walk_corpus(corpus_for(resolve(repo), kind)):
        try:
            chunked = chunk_file(rel, path.read_bytes(), counter, budget)
        except (UnparseableFile, UnicodeDecodeError) as exc:
            skipped[rel] = getattr(exc, "reason", str(exc))
            continue
        texts.extend(c.embed_text for c in chunked.chunks)
    return {"texts": texts, "skipped": skipped}


def bare(embedder: Any, texts: list[str]) -> dict[str, Any]:
    if not texts:
        return {"chunks": 0, "seconds": 0.0, "chunks_per_s": None, "own_cpu_s": 0.0, "others_cpu_s": 0.0}
    seconds, cpu = timed_bare_embedding(embedder, texts)
    return {"chunks": len(texts), "seconds": seconds, "chunks_per_s": len(texts) / seconds, **cpu}


async def daemon_runs(repo: Path) -> dict[str, Any]:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    out: dict[str, Any] = {}
    try:
        pid = int((await conn.call("ping"))["pid"])
        await wait_loaded(conn)
        out["pid"] = pid
        for kind in KINDS:
            meter = CpuMeter(pid, os.getpid())
            started = time.perf_counter()
            result = await conn.call("index", str(repo), {"corpus": kind})
            seconds = time.perf_counter() - started
            [report] = result["corpora"]
            out[kind] = {"seconds": seconds, "report": report, **meter.stop()}
            print(
                f"  {kind}: {report['chunks_written']} chunks in {seconds:.1f} s"
                + (f", {report['files_skipped']} files skipped" if report["files_skipped"] else ""),
                file=sys.stderr,
                flush=True,
            )
    finally:
        await conn.close()
    return out


def run(seed: int, scale: float) -> dict[str, Any]:
    from hallouminate.client import stop_daemon
    from hallouminate.config import defaults
    from hallouminate.embedding import Embedder
    from hallouminate.indexing.indexer import SPECIAL_TOKENS

    started_at = time.strftime("%Y-%m-%d %H:%M:%S")
    empty = Path(tempfile.mkdtemp(prefix="hmb-fmt-wiki-"))
    try:
        with bench_world(wiki=empty, name="formats") as world:
            files = world.repo / "files"
            started = time.perf_counter()
            made = generate(files, seed, scale)
            generated_s = time.perf_counter() - started
            (world.repo / ".hallouminate" / "config.toml").write_text(config(files))
            print(f"  corpus generated in {generated_s:.1f} s: {made}", file=sys.stderr, flush=True)
            embedder = Embedder(world.model_cache)
            budget = min(defaults.CHUNK_TOKENS, embedder.max_tokens) - SPECIAL_TOKENS
            chunks = {kind: kind_chunks(world.repo, kind, embedder.count_tokens, budget) for kind in KINDS}
            daemon = asyncio.run(daemon_runs(world.repo))
            asyncio.run(stop_daemon())  # the bare runs never share the CPU with it
            print("  bare embedder on the same texts ...", file=sys.stderr, flush=True)
            bares = {kind: bare(embedder, chunks[kind]["texts"]) for kind in KINDS}
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    kinds: dict[str, Any] = {}
    for kind in KINDS:
        run_ = daemon[kind]
        report = run_["report"]
        written = report["chunks_written"]
        b = bares[kind]
        rate = written / run_["seconds"] if written else None
        kinds[kind] = {
            "files": made[kind]["files"],
            "bytes": made[kind]["bytes"],
            "chunks": written,
            "seconds": run_["seconds"],
            "chunks_per_s": rate,
            "own_cpu_s": run_["own_cpu_s"],
            "others_cpu_s": run_["others_cpu_s"],
            "bare": b,
            "pipeline_ratio": rate / b["chunks_per_s"] if rate and b["chunks_per_s"] else None,
            "pipeline_ratio_cpu": (b["own_cpu_s"] / b["chunks"]) / (run_["own_cpu_s"] / written)
            if written and b["chunks"] and b["own_cpu_s"]
            else None,
            "chunks_match": written == b["chunks"],
            "skipped": [{"path": s["path"], "reason": s["reason"]} for s in report["skipped"]],
        }
    total_chunks = sum(k["chunks"] for k in kinds.values())
    total_s = sum(k["seconds"] for k in kinds.values())
    bare_chunks = sum(k["bare"]["chunks"] for k in kinds.values())
    bare_s = sum(k["bare"]["seconds"] for k in kinds.values())
    # The same chunks on both sides, so total CPU seconds compare directly.
    own_cpu = sum(k["own_cpu_s"] for k in kinds.values() if k["chunks"])
    bare_cpu = sum(k["bare"]["own_cpu_s"] for k in kinds.values())
    return {
        "started": started_at,
        "seed": seed,
        "scale": scale,
        "corpus_generation_s": generated_s,
        "code_package": made["code"],
        "kinds": kinds,
        "total": {
            "files": sum(k["files"] for k in kinds.values()),
            "chunks": total_chunks,
            "seconds": total_s,
            "chunks_per_s": total_chunks / total_s if total_s else None,
            "bare_chunks": bare_chunks,
            "bare_seconds": bare_s,
            "bare_chunks_per_s": bare_chunks / bare_s if bare_s else None,
            "pipeline_ratio_cpu": bare_cpu / own_cpu if own_cpu and bare_cpu else None,
            "pipeline_ratio": (total_chunks / total_s) / (bare_chunks / bare_s)
            if total_chunks and bare_s
            else None,
        },
    }


# -- outputs ---------------------------------------------------------------------------------------------
def _num(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else f"{value:{fmt}}"


def table(figures: dict[str, Any]) -> list[str]:
    """The Markdown table of a run (also used by the suite's report)."""
    code = figures["code_package"]
    lines = [
        "| kind | files | chunks | index s | pipeline chunks/s | bare chunks/s | pipeline / bare | by CPU s "
        "| CPU s of others, index / bare | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, k in figures["kinds"].items():
        note = ""
        if k["skipped"]:
            reasons = sorted({s["reason"] for s in k["skipped"]})
            note = f"{len(k['skipped'])} skipped: " + "; ".join(reasons)[:120]
        elif not k["chunks_match"]:
            note = f"daemon wrote {k['chunks']}, bench chunked {k['bare']['chunks']}"
        if kind == "code":
            note = (f"{code['package']} {code['version']}, {code['lines']:,} lines; " + note).rstrip("; ")
        lines.append(
            f"| {kind} | {k['files']} | {k['chunks']:,} | {k['seconds']:.1f} | {_num(k['chunks_per_s'], '.1f')} "
            f"| {_num(k['bare']['chunks_per_s'], '.1f')} | {_num(k['pipeline_ratio'], '.2f')} "
            f"| {_num(k['pipeline_ratio_cpu'], '.2f')} "
            f"| {k['others_cpu_s']:.0f} / {k['bare']['others_cpu_s']:.0f} | {note.replace('|', '/')} |"
        )
    t = figures["total"]
    lines.append(
        f"| **total** | {t['files']} | {t['chunks']:,} | {t['seconds']:.1f} | {_num(t['chunks_per_s'], '.1f')} "
        f"| {_num(t['bare_chunks_per_s'], '.1f')} | {_num(t['pipeline_ratio'], '.2f')} "
        f"| {_num(t.get('pipeline_ratio_cpu'), '.2f')} | | |"
    )
    return lines


def write_chart(figures: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k, v in figures["kinds"].items() if v["chunks"]]
    pipeline = [figures["kinds"][k]["chunks_per_s"] for k in kinds]
    bare_rates = [figures["kinds"][k]["bare"]["chunks_per_s"] or 0 for k in kinds]
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = range(len(kinds))
    ax.bar([x - 0.2 for x in xs], pipeline, width=0.4, label="full index (daemon)")
    ax.bar([x + 0.2 for x in xs], bare_rates, width=0.4, label="bare embedder, same texts")
    ax.set_xticks(list(xs), kinds)
    ax.set(ylabel="chunks/s", title="indexing rate per kind")
    ax.legend(loc="lower right")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0, help="files per kind, times the default counts")
    opts = parser.parse_args()
    figures = run(opts.seed, opts.scale)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "formats.json").write_text(json.dumps(figures, indent=2))
    chart = OUT / "formats.png"
    try:
        write_chart(figures, chart)
        chart_line = f"![chunks/s per kind]({chart.name})"
    except ImportError as exc:
        chart_line = f"(no chart: {exc})"
    text = "\n".join(["# Mixed-format corpus", "", *table(figures), "", chart_line, ""])
    (OUT / "formats.md").write_text(text)
    print(text)
    print(f"raw figures: {OUT / 'formats.json'}")


if __name__ == "__main__":
    main()
