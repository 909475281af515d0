"""``hallouminate doc PATH``: ``get_document`` from the command line."""

from __future__ import annotations

import json
import sys

import click

from hallouminate.protocol.results import GetDocumentResult


@click.command("doc")
@click.argument("path")
@click.option("--corpus", help="The corpus holding PATH (default: this repository's wiki).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def doc(path: str, corpus: str | None, fmt: str) -> None:
    """Print the indexed document PATH with its title, date, topic and tags.

    PATH is spelled exactly as `hallouminate ground` shows it (no guessing, unlike `read`): another
    spelling is not found. Markdown and text over 1 MiB are refused; a document's extracted text (PDF, Office, ...) is cut at 1 MiB.
    """
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_document

    args = {"path": path} if corpus is None else {"path": path, "corpus": corpus}
    result: GetDocumentResult = call_daemon("get_document", args)
    text = (
        json.dumps(result, indent=2, ensure_ascii=False) + "\n" if fmt == "json" else render_document(result)
    )
    # Bytes straight to stdout: the content is verbatim (click.echo would strip ANSI sequences when piped).
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()
