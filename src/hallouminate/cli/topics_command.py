"""``hallouminate topics``: the (category, topic) groups of a corpus's indexed pages, as ``list_topics``
returns them (docs/tools/list_topics.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from hallouminate.protocol.results import ListTopicsResult


@click.command("topics")
@click.option(
    "--corpus", help="This corpus (default: the wiki of the repository containing the current directory)."
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Short for --format json.")
def topics(corpus: str | None, fmt: str, as_json: bool) -> None:
    """What a corpus covers: each category and topic with its documents, dates, titles and directories."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_topics

    result: ListTopicsResult = call_daemon("list_topics", {"corpus": corpus} if corpus else {})
    click.echo(
        json.dumps(result, indent=2, ensure_ascii=False)
        if as_json or fmt == "json"
        else render_topics(result)
    )
