"""``hallouminate eval``: measure retrieval on a golden file, through the daemon's `ground`, with history.

The golden file is parsed before the daemon is contacted, so a malformed one costs nothing and exits 2.
Every query then runs twice over one connection: a warm-up pass (it also lets the daemon catch up on a
corpus it has not seen since it started), then the measured pass whose results and timings are scored.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from hallouminate.protocol import limits

if TYPE_CHECKING:
    from hallouminate.client import DaemonConnection
    from hallouminate.evaluation import Golden
    from hallouminate.protocol.results import (
        GroundResult,
        ListCorporaResult,
        ListFilesResult,
        SearchResult,
        StatusResult,
    )

# `ground` returns at most TOP_FILES.high files; MRR is read over at least the top 10 files.
MAX_K = limits.TOP_FILES.high
MIN_DEPTH = 10
# Kept equal to hallouminate.evaluation.history.DEFAULT_THRESHOLD by a test: importing the evaluation
# package here would load PyYAML on every start of the CLI (including `serve`).
DEFAULT_THRESHOLD = 0.02


@dataclass(frozen=True)
class _Answers:
    status: StatusResult
    known_paths: set[str] | None
    results: list[tuple[GroundResult | SearchResult, float]]


def parse_ks(spec: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in spec.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers such as 1,5,10, got {spec!r}") from None
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise click.BadParameter(f"each k must be between 1 and {MAX_K}, got {spec!r}")
    return ks


@click.command("eval")
@click.argument("golden_file", metavar="GOLDEN", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--corpus", help="Search only this corpus (default: every corpus, as `ground` does).")
@click.option("--k", "k_spec", default="1,5,10", show_default=True, help="Cut-offs for recall@k and nDCG@k.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a quality metric fell by more than --threshold since the previous compatible run.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Largest absolute drop of a quality metric that is not a regression.",
)
@click.option(
    "--dialect",
    type=click.Choice(["hallouminate", "grooveseek"]),
    default="hallouminate",
    show_default=True,
    help="Ask through `ground` (hallouminate), or through the GrooveSeek face's `search` over --kb-path, "
    "driven over MCP like a GrooveSeek client (the figures must agree: docs/evaluation.md).",
)
@click.option(
    "--kb-path",
    metavar="DIR",
    help="Measure this knowledge base directory (a corpus of its own, as `serve --kb-path` serves it) "
    "instead of the corpora visible from the working directory. Needed by --dialect grooveseek.",
)
def eval_command(
    golden_file: Path,
    corpus: str | None,
    k_spec: str,
    fmt: str,
    fail_on_regression: bool,
    threshold: float,
    dialect: str,
    kb_path: str | None,
) -> None:
    """Score the knowledge base on GOLDEN's queries: recall@k, MRR, nDCG@k, exact top chunk, latency.

    Run it from inside the repository whose corpus it measures. Each run is appended to
    GOLDEN.history.jsonl (the last 50 are kept) and compared with the previous run that used the same
    golden queries, model and settings. See docs/evaluation.md.
    """
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.config import resolve
    from hallouminate.errors import HallouminateError, InvalidArgument
    from hallouminate.evaluation import (
        HISTORY_LIMIT,
        GoldenError,
        QueryResult,
        Report,
        aggregate,
        as_json,
        compare,
        describe_change,
        history_path,
        load_golden,
        make_run,
        previous_compatible,
        ranked_docs,
        ranked_hits,
        read_history,
        render_text,
        score_query,
        write_history,
    )
    from hallouminate.protocol.cwd import canonical_cwd

    try:
        ks = parse_ks(k_spec)
    except click.BadParameter as exc:
        exc.param_hint = "'--k'"
        raise
    try:
        golden = load_golden(golden_file)
    except GoldenError as exc:
        # A caller mistake (exit 2); with --format json each problem is in data.problems.
        problems = [{"line": e.line, "reason": e.reason} for e in exc.problems]
        raise CliFailure(
            InvalidArgument(str(exc), {"file": str(golden_file), "problems": problems})
        ) from None

    depth = max(MIN_DEPTH, ks[-1])
    kb = None
    if dialect == "grooveseek" or kb_path is not None:
        from hallouminate.cli.kb import kb_path as checked_kb_path

        kb = checked_kb_path(kb_path, needed_by="--dialect grooveseek measures one knowledge base")
        if corpus:
            raise click.BadParameter(
                "a knowledge base is one corpus (kb): drop --corpus with --kb-path", param_hint="--corpus"
            )
    try:
        cwd = str(canonical_cwd(str(kb) if kb is not None else os.getcwd()))
        settings = resolve(Path(cwd)).settings
    except HallouminateError as exc:
        raise CliFailure(exc) from None
    # Every ranking-relevant value is sent explicitly (so the request is exactly what the history records)
    # or, for the index-time ones, read from the same configuration the daemon resolves for this cwd.
    args: dict[str, Any] = {
        "top_files": depth,
        "chunks_per_file": settings.chunks_per_file,
        "limit": settings.limit,
        "snippet_chars": settings.snippet_chars,
    }
    if corpus:
        args["corpus"] = corpus
    identity = {
        "corpus": corpus,
        **{k: v for k, v in args.items() if k != "corpus"},
        "chunk_tokens": settings.chunk_tokens,
        "max_file_bytes": settings.max_file_bytes,
    }
    if kb is not None:  # absent otherwise, so earlier histories stay comparable
        identity["kb"] = True
    # The face's search returns chunks: enough of them that the first `depth` distinct pages are among
    # them (each page gives at most chunks_per_file; search/hits.py).
    face_limit = min(depth * settings.chunks_per_file, limits.GROOVESEEK_LIMIT.high)
    if dialect == "grooveseek":
        identity["dialect"] = "grooveseek"

    try:
        if dialect == "grooveseek":
            assert kb is not None
            answers = asyncio.run(_ask_face(cwd, golden, face_limit))
        else:
            answers = asyncio.run(_ask(cwd, golden, args, corpus, kb=kb is not None))
    except HallouminateError as exc:
        raise CliFailure(exc) from None
    except KeyboardInterrupt:
        sys.exit(130)

    warnings = _unknown_expectations(golden, answers.known_paths)
    results = []
    for query, (result, latency) in zip(golden.queries, answers.results, strict=True):
        if "results" in result:  # the GrooveSeek face's flat chunk hits: no timing, no warnings
            docs = ranked_hits(cast("SearchResult", result))
            took: float | None = None
        else:
            docs = ranked_docs(result)
            took = result.get("took_ms")
            warnings.extend(f"{query.id}: {w['message']}" for w in result.get("warnings", []))
        results.append(QueryResult(query, score_query(query, docs, ks), docs, latency, took))
    metrics = aggregate([r.score for r in results], ks, [r.latency_ms for r in results])
    model = str(answers.status.get("model_name", "?"))
    run = make_run(
        golden,
        model=model,
        settings=identity,
        daemon_version=str(answers.status.get("version", "?")),
        ks=ks,
        metrics=metrics,
        scores=[r.score for r in results],
    )

    where = history_path(golden_file)
    runs, history_warnings = read_history(where)
    warnings.extend(history_warnings)
    previous = previous_compatible(runs, run)
    comparison = compare(previous, run, threshold) if previous is not None else None
    runs.append(run)
    try:
        write_history(where, runs, HISTORY_LIMIT)
    except OSError as exc:
        warnings.append(f"could not write the history {where}: {exc}")
    report = Report(
        golden_path=str(golden_file),
        golden=golden,
        corpus=corpus,
        model=model,
        ks=ks,
        depth=depth,
        metrics=metrics,
        results=results,
        comparison=comparison,
        history_file=str(where),
        history_runs=min(len(runs), HISTORY_LIMIT),
        history_limit=HISTORY_LIMIT,
        warnings=warnings,
    )
    for warning in dict.fromkeys(warnings):
        click.echo(f"warning: {warning}", err=True)
    if fmt == "json":
        click.echo(json.dumps(as_json(report), indent=2))
    else:
        click.echo(render_text(report), nl=False)
    if fail_on_regression and comparison is not None and comparison.regressed:
        dropped = ", ".join(f"{c.metric} {c.delta:+.3f}" for c in comparison.drops)
        click.echo(f"regression beyond {threshold:g} since {comparison.previous_time}: {dropped}", err=True)
        for q in comparison.worse:  # which queries, and how: what to look at first
            click.echo(f"  query {q.id}: {describe_change(q, depth)}", err=True)
        sys.exit(1)


async def _ask(
    cwd: str, golden: Golden, args: dict[str, Any], corpus: str | None, *, kb: bool = False
) -> _Answers:
    from hallouminate.client import connect_or_spawn

    conn = await connect_or_spawn()
    try:
        status: StatusResult = await conn.call("status", cwd, {})
        known = await _known_paths(conn, cwd, corpus, kb=kb)
        # A search answers from what is indexed without waiting (ADR 0027): bring the corpora up to date
        # first (a no-op when they are), so the scores are those of the whole knowledge base.
        await conn.call("index", cwd, {"corpus": corpus} if corpus else {}, kb=kb)
        for query in golden.queries:  # warm-up: model, caches
            await conn.call("ground", cwd, {**args, "query": query.query}, kb=kb)
        results: list[tuple[GroundResult | SearchResult, float]] = []
        for query in golden.queries:
            started = time.perf_counter()
            result: GroundResult = await conn.call("ground", cwd, {**args, "query": query.query}, kb=kb)
            results.append((result, (time.perf_counter() - started) * 1000))
        return _Answers(status, known, results)
    finally:
        await conn.close()


async def _ask_face(cwd: str, golden: Golden, limit: int) -> _Answers:
    """The golden queries through the GrooveSeek face, as a GrooveSeek client asks them: `serve
    --dialect grooveseek --kb-path` driven by the MCP SDK's stdio client (`rebuild_index`, then `search`
    with ``limit`` hits). The daemon is asked directly only for its status and the files of the kb."""
    from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

    from hallouminate.client import connect_or_spawn
    from hallouminate.errors import Bug, InvalidArgument

    conn = await connect_or_spawn()
    try:
        status: StatusResult = await conn.call("status", cwd, {})
        known = await _known_paths(conn, cwd, None, kb=True)
    finally:
        await conn.close()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hallouminate", "serve", "--dialect", "grooveseek", "--kb-path", cwd],
        env=dict(os.environ),
    )
    results: list[tuple[GroundResult | SearchResult, float]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            answer = await session.call_tool(tool, args)
            if answer.is_error or answer.structured_content is None:
                text = " ".join(getattr(block, "text", "") for block in answer.content)
                raise Bug(f"the GrooveSeek face's {tool} answered a tool error: {text}")
            structured: dict[str, Any] = answer.structured_content
            return structured

        try:
            await call("rebuild_index", {})
            for query in golden.queries:  # warm-up: model, caches
                await call("search", {"query": query.query, "limit": limit})
            for query in golden.queries:
                started = time.perf_counter()
                found = await call("search", {"query": query.query, "limit": limit})
                results.append((cast("SearchResult", found), (time.perf_counter() - started) * 1000))
        except MCPError as exc:  # JSON-RPC errors, as GrooveSeek answers: a refused query, or a fault
            if exc.error.code == InvalidArgument.family.jsonrpc_code:  # e.g. a query over 1 KiB
                raise InvalidArgument(f"the GrooveSeek face refused a query: {exc.error.message}") from None
            raise Bug(f"the GrooveSeek face failed: {exc.error.message}") from None
    return _Answers(status, known, results)


async def _known_paths(
    conn: DaemonConnection, cwd: str, corpus: str | None, *, kb: bool = False
) -> set[str] | None:
    """Every file of the corpora searched, to flag expected pages that cannot be found (typos)."""
    from hallouminate.errors import HallouminateError

    try:
        if corpus:
            names = [corpus]
        else:
            listed: ListCorporaResult = await conn.call("list_corpora", cwd, {}, kb=kb)
            names = [c["name"] for c in listed["corpora"]]
        paths: set[str] = set()
        for name in names:
            files: ListFilesResult = await conn.call("list_files", cwd, {"corpus": name}, kb=kb)
            paths.update(f["path"] for f in files["files"])
    except HallouminateError:
        # `ground` reports an unknown corpus (or none at all) with the daemon's own message.
        return None
    return paths


def _unknown_expectations(golden: Golden, known: set[str] | None) -> list[str]:
    if known is None:
        return []
    return [
        f"{q.id} (line {q.line}): expected page {path!r} is not a file of the corpora searched"
        for q in golden.queries
        for path in q.expected_paths
        if path not in known
    ]
