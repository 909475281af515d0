"""The suite's outputs: raw numbers (JSON), a Markdown report with targets beside figures, and a PNG chart."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
TARGETS_TEXT = {
    "pipeline": "indexing >= 0.85 of the bare embedder at every tier (full index; on the filled tiers, "
    "~1,000 new chunks indexed into the big store)",
    "noop": "no-op re-index of the 10k corpus <= 2 s",
    "p50_1k": "`ground` p50 <= 15 ms at 1k chunks",
    "p50_100k": "`ground` p50 <= 80 ms at 100k chunks",
    "throughput": ">= 100 `ground` calls/s with 8 daemon-protocol clients at 10k chunks",
    "throughput_mcp": ">= 90 `ground` calls/s with 8 MCP sessions at 10k chunks",
    "rss": "daemon RSS <= 800 MB at 100k chunks",
    "rss_1m": "daemon RSS <= 2 GB at 1M chunks",
    "p50_1m": "`ground` p50 <= 100 ms at 1M chunks",
    "recall_1m": "approximate index recall@10 >= 0.95 against exact search at 1M chunks",
    "noop_1m": "no-op re-index at 1M chunks <= 5 s",
    "bombs": "peak RSS while indexing a zip bomb < 300 MB above idle",
    "http_load": "32 concurrent HTTP clients calling `ground` for 30 s at 10k chunks: 0 errors",
}


def write_outputs(results: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "suite.json", out / "suite.md"]
    paths[0].write_text(json.dumps(results, indent=2, default=str))
    chart = out / "suite.png"
    chart_error = None
    try:
        write_chart(results, chart)
        paths.append(chart)
    except ImportError as exc:  # matplotlib is a dev dependency: say so rather than lose the report
        chart_error = f"no chart: {exc}"
    paths[1].write_text(report(results, chart.name if chart_error is None else None, chart_error))
    return paths


# -- formatting ------------------------------------------------------------------------------------------
def _num(value: Any, fmt: str = ".1f", unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:{fmt}}{unit}"


def _corpora(results: dict[str, Any]) -> list[dict[str, Any]]:
    real = results.get("real")
    return [*results["tiers"], *([real] if real and "error" not in real else [])]


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:.1f} MB"


def _latency(figures: dict[str, Any], mode: str) -> str:
    f = figures["ground_mcp"][mode]
    if mode == "phrase" and not f.get("available"):
        return "n/a"
    return f"{f['p50_ms']:.1f} / {f['p95_ms']:.1f} / {f['p99_ms']:.1f}"


def _by_size(results: dict[str, Any], size: int) -> dict[str, Any] | None:
    """The generated tier of ``size`` chunks (within 10%); in a quick run, the tier in the same place
    (smallest for 1k, ...), so that the report's logic is exercised on tiny sizes too."""
    for tier in results["tiers"]:
        if abs(tier["chunks"] - size) <= 0.1 * size and tier.get("tier") != "1m":
            return tier
    tiers = sorted((t for t in results["tiers"] if t.get("tier") != "1m"), key=lambda t: t["chunks"])
    place = {1_000: 0, 10_000: 1, 100_000: 2}[size]
    if results["options"]["quick"] and len(tiers) == 3:
        return tiers[place]
    return None


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    # Each tier's indexing figure: its full index where it was indexed in full, otherwise the incremental
    # index into its filled store.
    indexing = [
        (t["label"] + ("" if key == "full_index" else " incremental"), t[key])
        for t in _corpora(results)
        for key in ("full_index", "incremental_index")
        if t.get(key) and t[key].get("pipeline_ratio") is not None
    ]
    if indexing:
        ratios = ", ".join(
            f"{label} {f['pipeline_ratio']:.2f} (by CPU time {f['pipeline_ratio_cpu']:.2f})"
            for label, f in indexing
        )
        unindexed = [
            t["label"]
            for t in _corpora(results)
            if not any(label.split()[0] == t["label"] for label, _ in indexing)
        ]
        if unindexed:
            ratios += f"; not measured at {', '.join(unindexed)}"
        worst = min(f["pipeline_ratio"] for _, f in indexing)
        rows.append((TARGETS_TEXT["pipeline"], ratios, _met(worst >= 0.85)))
    checks: list[tuple[str, int, Any]] = [
        ("noop", 10_000, lambda t: (f"{t['noop']['seconds']:.2f} s", t["noop"]["seconds"] <= 2.0)),
        (
            "p50_1k",
            1_000,
            lambda t: (
                f"{t['ground_mcp']['ranked']['p50_ms']:.1f} ms ranked, phrase {_phrase_p50(t)}",
                t["ground_mcp"]["ranked"]["p50_ms"] <= 15.0,
            ),
        ),
        (
            "p50_100k",
            100_000,
            lambda t: (
                f"{t['ground_mcp']['ranked']['p50_ms']:.1f} ms ranked, phrase {_phrase_p50(t)}",
                t["ground_mcp"]["ranked"]["p50_ms"] <= 80.0,
            ),
        ),
        (
            "throughput",
            10_000,
            lambda t: (
                f"{t['throughput_daemon_protocol']['calls_per_s']:.1f} calls/s",
                t["throughput_daemon_protocol"]["calls_per_s"] >= 100.0,
            ),
        ),
        (
            "throughput_mcp",
            10_000,
            lambda t: (
                f"{t['throughput_mcp']['calls_per_s']:.1f} calls/s "
                f"({t['throughput_mcp']['calls_per_s'] / t['throughput_daemon_protocol']['calls_per_s']:.2f} "
                "of the daemon protocol's)",
                t["throughput_mcp"]["calls_per_s"] >= 90.0,
            ),
        ),
        (
            "rss",
            100_000,
            lambda t: (
                f"{t['daemon_rss_mib']['peak'] * MIB / 1e6:.0f} MB",
                t["daemon_rss_mib"]["peak"] * MIB <= 800e6,
            ),
        ),
    ]
    for key, size, check in checks:
        tier = _by_size(results, size)
        if tier is None:
            rows.append((TARGETS_TEXT[key], "tier not run", "-"))
            continue
        text, ok = check(tier)
        rows.append((TARGETS_TEXT[key], f"{text} ({tier['label']}: {tier['chunks']:,} chunks)", _met(ok)))
    rows += million_targets(results)
    loaded = _load_tier(results)
    if loaded is not None:
        f = loaded["http_load"]
        rows.append(
            (
                TARGETS_TEXT["http_load"],
                f"{f['http']['errors']} errors in {f['http']['calls']:,} calls over {f['http']['seconds']:.0f} s, "
                f"{f['http']['calls_per_s']:.1f} calls/s ({f['ratio_calls_per_s']:.2f} of the daemon protocol's) "
                f"({loaded['label']}: {loaded['chunks']:,} chunks)",
                _met(f["http"]["errors"] == 0),
            )
        )
    hostile = results.get("hostile_rss")
    if hostile:
        bombs = [r for r in hostile["files"] if r["name"].startswith("zip_bomb")]
        text = ", ".join(f"{r['file']} +{r['peak_above_idle_mb']:.0f} MB ({r['outcome']})" for r in bombs)
        ok = hostile["bombs_pass"]
        rows.append((TARGETS_TEXT["bombs"], text, "no reader yet" if ok is None else _met(ok)))
    return rows


def _million(results: dict[str, Any]) -> dict[str, Any] | None:
    """The tier `make bench-1m` measured (bench/suite.py --million), if it ran."""
    return next((t for t in results["tiers"] if t.get("tier") == "1m"), None)


def million_targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    tier = _million(results)
    keys = ("rss_1m", "p50_1m", "recall_1m", "noop_1m")
    if tier is None:
        return [(TARGETS_TEXT[k], "tier not run (`make bench-1m`)", "-") for k in keys]
    where = f" ({tier['label']}: {tier['chunks']:,} chunks" + (
        ")" if tier["chunks"] >= 900_000 else "; **not the 1M size**)"
    )
    rss = tier["daemon_rss_mib"]["peak"] * MIB
    p50 = tier["ground_mcp"]["ranked"]["p50_ms"]
    index = tier.get("vector_index") or {}
    searched = (
        f", approximate index ready {index['ready_after_start_s']:.0f} s after the daemon started"
        if index.get("available")
        else f", {index.get('reason', 'no approximate index')}"
    )
    recall = tier.get("ann_recall") or {"available": False, "reason": "not measured"}
    return [
        (TARGETS_TEXT["rss_1m"], f"{rss / 1e6:.0f} MB{where}", _met(rss <= 2000e6)),
        (
            TARGETS_TEXT["p50_1m"],
            f"{p50:.1f} ms ranked, p95 {tier['ground_mcp']['ranked']['p95_ms']:.1f} ms{searched}{where}",
            _met(p50 <= 100.0),
        ),
        (
            TARGETS_TEXT["recall_1m"],
            (
                f"{recall['recall_at_10']:.3f} on {recall['queries']} queries (worst query "
                f"{recall['worst_query_recall']:.1f}; {recall['index_type']}, nprobes {recall['params']['nprobes']}, "
                f"refine factor {recall['params']['refine_factor']}){where}"
            )
            if recall["available"]
            else f"n/a: {recall['reason']}{where}",
            _met(recall["recall_at_10"] >= 0.95) if recall["available"] else "n/a",
        ),
        (
            TARGETS_TEXT["noop_1m"],
            f"{tier['noop']['seconds']:.2f} s{where}",
            _met(tier["noop"]["seconds"] <= 5.0),
        ),
    ]


def _load_tier(results: dict[str, Any]) -> dict[str, Any] | None:
    """The tier the HTTP load ran on (bench/http_load.py), if any."""
    return next((t for t in results["tiers"] if "http_load" in t), None)


def _load_cell(c: dict[str, Any], key: str) -> str:
    if "http_load" not in c:
        return "-"
    f = c["http_load"][key]
    return f"{f['calls_per_s']:.1f} ({f['p50_ms']:.0f} / {f['p99_ms']:.0f})" + (
        f", **{f['errors']} errors**" if f["errors"] else ""
    )


def _phrase_p50(tier: dict[str, Any]) -> str:
    phrase = tier["ground_mcp"]["phrase"]
    return f"{phrase['p50_ms']:.1f} ms" if phrase.get("available") else "n/a"


def _met(ok: bool) -> str:
    return "met" if ok else "**not met**"


# -- the report ------------------------------------------------------------------------------------------
def report(results: dict[str, Any], chart: str | None, chart_error: str | None) -> str:
    corpora = _corpora(results)
    opts = results["options"]
    lines = [
        "# hallouminate benchmark report",
        "",
        f"Run {results['started']}, {results['machine']['cpus']} CPUs, Python {results['machine']['python']}, "
        f"load average at start {', '.join(f'{x:.1f}' for x in results['machine']['load_avg_at_start'])}; "
        f"the whole suite took {results['seconds'] / 60:.1f} min"
        + (" (**quick mode: tiny sizes, figures not comparable**)" if opts["quick"] else "")
        + ".",
        "",
        "The machine is shared: compare ratios (pipeline / bare embedder, ground / bare query embedding), "
        "not absolute times, across runs. `CPU s of others` is what other processes used while the full index ran.",
        "",
        "## Targets",
        "",
        "| target | figure | |",
        "|---|---|---|",
        *(f"| {t} | {f} | {m} |" for t, f, m in targets(results)),
        "",
        "## Figures",
        "",
        "| figure | " + " | ".join(c["label"] for c in corpora) + " |",
        "|---|" + "---|" * len(corpora),
    ]

    def row(name: str, cell: Any) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(c) for c in corpora) + " |")

    row("chunks", lambda c: f"{c['chunks']:,}")
    row("files", lambda c: f"{c['corpus']['files']:,}")
    row("Markdown", lambda c: _mb(c["corpus"]["bytes"]))
    row("full index", _full_index_cell)
    row(
        "pipeline chunks/s",
        lambda c: (
            "-"
            if c["full_index"]["chunks_per_s"] is None
            else f"{c['full_index']['chunks_per_s']:.1f}"
            + ("" if c["full_index"]["measured"] else f" ({c['full_index']['basis']})")
        ),
    )
    row(
        "bare embedder chunks/s (sample)",
        lambda c: f"{c['bare']['passages']['chunks_per_s']:.1f} ({c['bare']['passages']['chunks']})",
    )
    row("pipeline / bare (wall time)", lambda c: _num(c["full_index"]["pipeline_ratio"], ".2f"))
    row("pipeline / bare (CPU s per chunk)", lambda c: _num(c["full_index"]["pipeline_ratio_cpu"], ".2f"))
    row(
        "incremental index into the store: chunks in s (chunks/s)",
        lambda c: (
            f"{c['incremental_index']['chunks']:,} in {c['incremental_index']['seconds']:.1f} s "
            f"({c['incremental_index']['chunks_per_s']:.1f})"
            if c.get("incremental_index")
            else "-"
        ),
    )
    row(
        "incremental / bare (wall time; CPU s per chunk)",
        lambda c: (
            f"{c['incremental_index']['pipeline_ratio']:.2f}; {c['incremental_index']['pipeline_ratio_cpu']:.2f}"
            if c.get("incremental_index")
            else "-"
        ),
    )
    row(
        "CPU s: daemon+bench / others, full index",
        lambda c: f"{c['full']['own_cpu_s']:.0f} / {c['full']['others_cpu_s']:.0f}" if "full" in c else "-",
    )
    row("no-op re-index", lambda c: f"{c['noop']['seconds']:.3f} s")
    row("ground ranked p50/p95/p99 ms (MCP)", lambda c: _latency(c, "ranked"))
    row("ground phrase p50/p95/p99 ms (MCP)", lambda c: _latency(c, "phrase"))
    row(
        "bare query embedding p50/p95 ms",
        lambda c: (
            f"{c['bare']['query_embedding']['p50_ms']:.1f} / {c['bare']['query_embedding']['p95_ms']:.1f}"
        ),
    )
    row(
        "8 MCP sessions: calls/s (p50 ms)",
        lambda c: (
            f"{c['throughput_mcp']['calls_per_s']:.1f} ({c['throughput_mcp']['p50_ms']:.0f})"
            + (f", {c['throughput_mcp']['errors']} errors" if c["throughput_mcp"]["errors"] else "")
        ),
    )
    row(
        "8 daemon-protocol clients: calls/s (p50 ms)",
        lambda c: (
            f"{c['throughput_daemon_protocol']['calls_per_s']:.1f} ({c['throughput_daemon_protocol']['p50_ms']:.0f})"
            + (
                f", {c['throughput_daemon_protocol']['errors']} errors"
                if c["throughput_daemon_protocol"]["errors"]
                else ""
            )
        ),
    )
    row("32 HTTP MCP sessions: calls/s (p50 / p99 ms)", lambda c: _load_cell(c, "http"))
    row("32 daemon-protocol clients: calls/s (p50 / p99 ms)", lambda c: _load_cell(c, "daemon_protocol"))
    row(
        "approximate vector index: ready after daemon start",
        lambda c: (
            "-"
            if "vector_index" not in c
            else f"{c['vector_index']['ready_after_start_s']:.0f} s ({c['vector_index']['index_type']})"
            if c["vector_index"]["available"]
            else "n/a (exact search)"
        ),
    )
    row(
        "approximate index recall@10 (exact / approximate vector query p50 ms)",
        lambda c: (
            "-"
            if "ann_recall" not in c
            else f"{c['ann_recall']['recall_at_10']:.3f} ({c['ann_recall']['exact_p50_ms']:.0f} / "
            f"{c['ann_recall']['approx_p50_ms']:.0f})"
            if c["ann_recall"]["available"]
            else "n/a"
        ),
    )
    row("daemon peak RSS (VmHWM)", lambda c: f"{c['daemon_rss_mib']['peak'] * MIB / 1e6:.0f} MB")
    row("store on disk", lambda c: f"{_mb(c['store']['bytes'])} ({c['store']['files']} files)")
    lines.append("")
    if chart:
        lines += [f"![latency, throughput and indexing rate against corpus size]({chart})", ""]
    elif chart_error:
        lines += [f"({chart_error})", ""]
    lines += method(results)
    foundation = results.get("foundation")
    if foundation:
        spawn = foundation["shim_spawn_to_initialized_s"]
        ground = foundation["ground_mcp_ms"]
        lines += [
            "## Foundation (`bench/foundation.py`, sample wiki)",
            "",
            "| figure | value | target |",
            "|---|---|---|",
            f"| shim spawn -> initialized, median (host up) | {spawn['median']:.3f} s | {spawn['target']} s |",
            f"| first launch, starting the shim host | {foundation['first_launch_starting_the_host_s']:.3f} s | - |",
            f"| bare `import mcp.server`, median | {foundation['sdk_import_floor_s']['median']:.3f} s | - |",
            f"| `ground` through MCP, p50 / p95 | {ground['p50']:.1f} / {ground['p95']:.1f} ms | p50 {ground['target_p50']} ms |",
            f"| bare query embedding, p50 | {foundation['bare_query_embedding_ms']['p50']:.1f} ms | - |",
            "",
        ]
    lines += load_section(results)
    lines += other_tiers(results)
    return "\n".join(lines)


def _full_index_cell(c: dict[str, Any]) -> str:
    f = c["full_index"]
    if f["measured"]:
        return f"{f['seconds']:.1f} s"
    if f["seconds"] is None:
        return "-"
    return f"~{f['seconds'] / 60:.0f} min (extrapolated)"


def load_section(results: dict[str, Any]) -> list[str]:
    """The HTTP load (bench/http_load.py) on its tier, beside that tier's stdio figures."""
    tier = _load_tier(results)
    if tier is None:
        return []
    from http_load import table as load_table

    f, mcp = tier["http_load"], tier["throughput_mcp"]
    return [
        "## HTTP load (`bench/http_load.py`)",
        "",
        f"On the {tier['label']} tier ({tier['chunks']:,} chunks), the daemon restarted with its HTTP listener: "
        f"{f['http']['clients']} MCP sessions over Streamable HTTP on `/mcp`, then the same load over the daemon "
        f"protocol, {f['http']['seconds']:.0f} s each, from {f['http']['processes']} worker processes "
        "(cores = CPU seconds over wall time; `others` is every other process on the machine).",
        "",
        *load_table(f),
        "",
        f"Beside it, the same tier's stdio figure: {mcp['clients']} MCP sessions (`hallouminate serve`) "
        f"{mcp['calls_per_s']:.1f} calls/s, p50 {mcp['p50_ms']:.0f} ms, p99 {mcp['p99_ms']:.0f} ms.",
        "",
    ]


def other_tiers(results: dict[str, Any]) -> list[str]:
    """The sections of bench/formats.py, bench/hostile_rss.py and bench/http_hostile.py, with the tables
    those scripts write."""
    lines: list[str] = []
    formats = results.get("formats")
    if formats:
        from formats import table as formats_table

        code = formats["code_package"]
        lines += [
            "## Mixed formats (`bench/formats.py`)",
            "",
            f"A generated corpus of Markdown, PDF, Word, Excel and PowerPoint files (seed {formats['seed']}, "
            f"scale {formats['scale']}) and the source of `{code['package']}` {code['version']} "
            f"({code['files']} files, {code['lines']:,} lines), one corpus per kind indexed by one daemon; the bare "
            "embedder then ran on exactly the chunk texts of each kind.",
            "",
            *formats_table(formats),
            "",
        ]
    hostile = results.get("hostile_rss")
    if hostile:
        from hostile_rss import table as hostile_table

        lines += [
            "## Peak RSS per hostile file (`bench/hostile_rss.py`)",
            "",
            "A fresh daemon per file; peak (VmHWM, reset after the model ran once) minus idle RSS.",
            "",
            *hostile_table(hostile),
            "",
        ]
    http_hostile = results.get("http_hostile")
    if http_hostile:
        from http_hostile import table as http_hostile_table

        lines += [
            "## RSS under hostile HTTP (`bench/http_hostile.py`)",
            "",
            "A fresh daemon with `[http] max_sessions = 1000` (the default cap is 256), VmRSS from /proc.",
            "",
            *http_hostile_table(http_hostile),
            "",
        ]
    return lines


def million_method(tier: dict[str, Any]) -> str:
    corpus, fill, run = tier["corpus"], tier.get("fill"), tier.get("run", {})
    real = corpus.get("really_embedded_chunks")
    text = (
        f"- **{tier['label']}** (`make bench-1m`, run {run.get('started', '?')}, load average at start "
        f"{', '.join(f'{x:.1f}' for x in run.get('load_avg_at_start', []))}): the kept world `{tier['world']}`, "
        f"{corpus['files']:,} pages, {tier['chunks']:,} chunks, built by `bench/build_store.py`: "
        + (f"{real:,} chunks embedded by the daemon, " if real else "")
        + "the rest filled as the 100k tier is (the product's `Indexer` and `Store`, vectors drawn around the "
        "really embedded ones)"
        + (f" in {fill['fill_s'] / 60:.0f} min" if fill else "")
        + ". The daemon restarted on it"
    )
    index = tier.get("vector_index") or {}
    if index.get("available"):
        dropped = tier.get("index_dropped_before_start")
        text += (
            f" and built its approximate vector index ({index['index_type']}"
            + (
                f"; the bench dropped the store's index `{dropped}` first so that the build is timed"
                if dropped
                else "; the store had none"
            )
            + f") in {index['ready_after_start_s']:.0f} s from its start"
        )
    else:
        text += f"; no approximate index ({index.get('reason', 'not built')})"
    inc = tier.get("incremental_index")
    if inc:
        text += (
            f". Incremental index: {inc['files']} new generated pages ({inc['chunks']:,} chunks) copied into the "
            "wiki and indexed by one `index` call (walk of every file, chunking, embedding, commit), against the "
            "bare embedder on exactly their texts after the daemon stopped; the pages were then removed and "
            f"indexed away ({inc['removal_s']:.1f} s)"
        )
    recall = tier.get("ann_recall") or {}
    if recall.get("available"):
        text += (
            f". Recall@10: {recall['queries']} of the tier's ranked queries embedded by the model; the store "
            "opened in the bench process, `ann.tune(table.search(q))` (what the reader runs) against "
            "`table.search(q).bypass_vector_index()` (exact), cosine"
        )
    return text + "."


def method(results: dict[str, Any]) -> list[str]:
    opts = results["options"]
    lines = ["## How each corpus was built and measured", ""]
    for tier in results["tiers"]:
        corpus = tier["corpus"]
        if tier["full_index"]["measured"]:
            lines.append(
                f"- **{tier['label']}**: {corpus['files']:,} generated wiki pages (seed {corpus['seed']}: H1 and "
                "intro, 1-4 H2 sections, lists, code blocks, tables, a made-up system name per page), "
                f"{tier['chunks']:,} chunks, indexed in full by the daemon"
                + (
                    ""
                    if tier.get("chunks_match", True)
                    else " (**chunk count differs from the bench's own chunking**)"
                )
                + "."
            )
        elif tier.get("tier") == "1m":
            lines.append(million_method(tier))
        else:
            fill = tier["fill"]
            lines.append(
                f"- **{tier['label']}**: the previous tier's store ({corpus['really_embedded_chunks']:,} chunks the "
                f"daemon embedded for real) grown with {fill['pages_written']:,} more generated pages to "
                f"{tier['chunks']:,} chunks. The product's `Indexer` chunked them and wrote them through the "
                "product's `Store` in a separate writer process (`bench/_fill.py`), with a stand-in embedder: each new chunk got the vector "
                f"of a random really-embedded chunk ({fill['real_vectors']:,} to draw from) plus Gaussian noise "
                f"(sigma {fill['noise_sigma']} per dimension, re-normalised). That took {fill['fill_s']:.0f} s "
                f"({fill['own_cpu_s']:.0f} CPU s) for {fill['report']['chunks_written']:,} chunks: chunking, "
                "keywords, commits and the BM25 index update, without embedding (tokens counted by an exact "
                "per-word cache of the model's tokenizer, checked against it on the run's texts); that "
                f"writer process peaked at {fill['rss_mib']['peak'] * MIB / 1e6:.0f} MB RSS with the model "
                "loaded but never run. The table and file "
                "states are the daemon's own (the store has no vector index: vector search scans), so the "
                "restarted daemon's no-op index found nothing to do. The full-index time is **extrapolated** from "
                f"the {tier['full_index']['basis']}; the bare embedder ran on chunks of the new pages. The "
                "daemon's RSS here is a serving peak (no-op index, ground, phrase scans, 8 clients): it did "
                "not embed or write these rows."
            )
    real = results.get("real")
    if real and "error" not in real:
        corpus = real["corpus"]
        lines.append(
            f"- **real**: every Markdown file of the npm package `{corpus['package']}` {corpus['version']} "
            f"(tarball {_mb(corpus['tarball_bytes'])}, cached under `bench/out/cache/`): {corpus['files']} files, "
            f"{_mb(corpus['bytes'])}, {real['chunks']:,} chunks; the CLI's own documentation plus the READMEs, "
            "changelogs and licences of the dependencies it bundles, written by their authors. Indexed in full."
        )
    elif real:
        lines.append(f"- **real**: not measured: {real['error']}")
    lines += [
        "",
        f"- Full index: one `index` call to a fresh daemon over the daemon protocol, wall time from call to "
        f"answer. Bare embedder: the same model in the bench process on {opts['bare_sample']} of the same embed "
        "texts spread over the corpus, batched as the indexer batches (windows of 256 sorted by length, batches "
        "of 32), run after the daemon stopped so the two never share the CPU.",
        "- No-op re-index: a second `index` call right after (for the 100k tier, after one untimed run that waits "
        "for the restarted daemon's own catch-up).",
        f"- `ground` latency: {opts['rounds']} distinct queries per mode, one after another, through one MCP "
        "session (`mcp` stdio client driving `hallouminate serve`), after "
        f"{opts['warmup']} warm-up calls; ranked queries are 6-9 consecutive words of a chunk, phrases 4 "
        '(`match: "phrase"`). Bare query embedding: the same ranked queries embedded in the bench process.',
        f"- Throughput: 8 MCP sessions (8 `hallouminate serve` processes, one client each, all in the bench "
        f"process) calling ranked `ground` back to back for {opts['concurrency_s']:.0f} s; then 8 connections "
        f"speaking the daemon protocol directly for {opts['daemon_concurrency_s']:.0f} s, which shows the "
        "daemon's own capacity without the shim and the MCP client.",
        "- HTTP load (one tier): the daemon restarted with `[http] enabled`; 32 MCP sessions on `/mcp` "
        "(initialize, `Mcp-Session-Id`, then `tools/call ground` back to back), dealt among worker processes, "
        f"for {opts.get('http_load_s', 30):.0f} s; then the same 32 clients over the daemon protocol; any error "
        "fails the target.",
        "- RSS: the daemon's VmHWM from `/proc/<pid>/status` after all of the above. Store: the bytes of every "
        "file under the store directory, old versions included (the daemon keeps them an hour).",
        "",
    ]
    return lines


# -- the chart -------------------------------------------------------------------------------------------
def write_chart(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    tiers = sorted(results["tiers"], key=lambda t: t["chunks"])
    real = results.get("real")
    real = real if real and "error" not in real else None
    fig, (lat, thr, idx) = plt.subplots(1, 3, figsize=(16, 5))
    xs = [t["chunks"] for t in tiers]

    def plot(ax: Any, values: list[float | None], real_value: float | None, style: str, label: str) -> None:
        pts = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if pts:
            (line,) = ax.plot(*zip(*pts, strict=True), style, label=label)
            if real is not None and real_value is not None:
                ax.plot(
                    [real["chunks"]], [real_value], marker="*", markersize=12, color=line.get_color(), ls=""
                )

    def phrase(t: dict[str, Any], key: str) -> float | None:
        p = t["ground_mcp"]["phrase"]
        return p[key] if p.get("available") else None

    for key, style, label in [("p50_ms", "o-", "ranked p50"), ("p95_ms", "o--", "ranked p95")]:
        plot(
            lat,
            [t["ground_mcp"]["ranked"][key] for t in tiers],
            real and real["ground_mcp"]["ranked"][key],
            style,
            label,
        )
    for key, style, label in [("p50_ms", "s-", "phrase p50"), ("p95_ms", "s--", "phrase p95")]:
        plot(lat, [phrase(t, key) for t in tiers], real and phrase(real, key), style, label)
    plot(
        lat,
        [t["bare"]["query_embedding"]["p50_ms"] for t in tiers],
        real and real["bare"]["query_embedding"]["p50_ms"],
        "^:",
        "bare query embedding p50",
    )
    lat.plot([1_000, 100_000, 1_000_000], [15, 80, 100], "rx", markersize=12, mew=2, label="p50 targets")
    lat.set(xscale="log", yscale="log", xlabel="chunks", ylabel="ms", title="ground latency through MCP")

    plot(
        thr,
        [t["throughput_mcp"]["calls_per_s"] for t in tiers],
        real and real["throughput_mcp"]["calls_per_s"],
        "o-",
        "8 MCP sessions",
    )
    plot(
        thr,
        [t["throughput_daemon_protocol"]["calls_per_s"] for t in tiers],
        real and real["throughput_daemon_protocol"]["calls_per_s"],
        "s-",
        "8 daemon-protocol clients",
    )
    loaded = _load_tier(results)
    if loaded is not None:
        f = loaded["http_load"]
        thr.plot([loaded["chunks"]], [f["http"]["calls_per_s"]], "D", label="32 HTTP MCP sessions")
        thr.plot(
            [loaded["chunks"]], [f["daemon_protocol"]["calls_per_s"]], "v", label="32 daemon-protocol clients"
        )
    thr.plot([10_000], [100], "rx", markersize=12, mew=2, label="target (10k)")
    thr.set(
        xscale="log", xlabel="chunks", ylabel="ground calls/s", title="concurrent throughput", ylim=(0, None)
    )

    measured = [t for t in tiers if t["full_index"]["measured"]]
    idx.plot(
        [t["chunks"] for t in measured],
        [t["full_index"]["chunks_per_s"] for t in measured],
        "o-",
        label="full index (daemon)",
    )
    incremental = [t for t in tiers if t.get("incremental_index")]
    if incremental:
        idx.plot(
            [t["chunks"] for t in incremental],
            [t["incremental_index"]["chunks_per_s"] for t in incremental],
            "D-",
            label="~1,000 new chunks into the filled store (daemon)",
        )
    plot(
        idx,
        [t["bare"]["passages"]["chunks_per_s"] for t in tiers],
        real and real["bare"]["passages"]["chunks_per_s"],
        "s--",
        "bare embedder (sample)",
    )
    if real is not None:
        idx.plot(
            [real["chunks"]],
            [real["full_index"]["chunks_per_s"]],
            marker="*",
            markersize=12,
            color="C0",
            ls="",
        )
    idx.set(xscale="log", xlabel="chunks", ylabel="chunks/s", title="indexing rate", ylim=(0, None))
    ticks = sorted({*xs, *([real["chunks"]] if real is not None else [])})
    for ax in (lat, thr, idx):
        # Label the corpus sizes themselves; matplotlib's log minor labels (2x10^2 ...) only clutter.
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if real is not None:
        fig.text(
            0.5,
            0.01,
            f"stars: the real corpus ({real['corpus']['package']} {real['corpus']['version']}, {real['chunks']:,} chunks)",
            ha="center",
            fontsize=9,
        )
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
