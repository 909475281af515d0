"""``hallouminate files`` (list a corpus' files, optionally only those changed since) and ``hallouminate mv``
(move_markdown). Both ask the daemon, like the MCP tools. Register with ``cli.add_command(...)``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from hallouminate.protocol.results import ListFilesResult, MoveMarkdownResult


@click.command("files")
@click.option("--corpus", help="The corpus to list (default: this repository's wiki).")
@click.option(
    "--changed-since",
    metavar="WHEN",
    help="Only files modified (mtime) at or after WHEN: YYYY-MM-DD, an ISO datetime, or 12h, 7d, 2w.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def files(corpus: str | None, changed_since: str | None, fmt: str) -> None:
    """List the files of a corpus (corpus-relative paths), as the list_files tool does."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_files

    args: dict[str, str] = {}
    if corpus is not None:
        args["corpus"] = corpus
    if changed_since is not None:
        args["changed_since"] = changed_since
    result: ListFilesResult = call_daemon("list_files", args)
    click.echo(json.dumps(result, indent=2) if fmt == "json" else render_files(result))


@click.command("mv")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@click.option("--corpus", required=True, help="The corpus holding the page (writes never default one).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def move(source: str, target: str, corpus: str, fmt: str) -> None:
    """Move the page FROM to TO (corpus-relative paths) and rewrite every link to it (move_markdown)."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_move

    result: MoveMarkdownResult = call_daemon(
        "move_markdown", {"corpus": corpus, "from": source, "to": target}
    )
    click.echo(json.dumps(result, indent=2) if fmt == "json" else render_move(result))
