"""``hallouminate status``: the index health of the corpora here, as ``corpus_stats`` reports each one.

Counts, and every file problem by name: a page indexed as plain text because its frontmatter is not valid
YAML, a binary or empty page skipped, a file too large. ``daemon status`` is the daemon's own state.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from hallouminate.protocol.results import CorpusStatsResult, ListCorporaResult, StatusResult


@click.command("status")
@click.option("--corpus", help="Only this corpus (default: every corpus configured here).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def status(corpus: str | None, fmt: str) -> None:
    """Index health of the corpora here: files indexed, skipped (and why), not yet indexed; file problems."""
    from hallouminate.cli.daemon_calls import call_daemon
    from hallouminate.render import render_stats

    if corpus is not None:
        names = [corpus]
    else:
        listed: ListCorporaResult = call_daemon("list_corpora")
        names = [entry["name"] for entry in listed["corpora"]]
    results: list[CorpusStatsResult] = [call_daemon("corpus_stats", {"corpus": name}) for name in names]
    # The daemon's HTTP URL while it listens (docs/http.md): where other clients reach the same corpora.
    daemon: StatusResult = call_daemon("status")
    url = daemon.get("http_url")
    # The store refusing to mix vectors (or rebuilt at start for a new layout): first, it explains the rest.
    store = {key: daemon[key] for key in ("store_mismatch", "store_rebuilt") if key in daemon}
    if fmt == "json":
        click.echo(json.dumps({"corpora": results, **({"http_url": url} if url else {}), **store}, indent=2))
        return
    if "store_mismatch" in daemon:
        click.echo(f"store refuses to mix vectors: {daemon['store_mismatch']['message']}")
    if "store_rebuilt" in daemon:
        click.echo(f"store rebuilt: {daemon['store_rebuilt']}")
    if url:
        click.echo(f"HTTP: {url}")
    if not results:
        click.echo("no corpora are configured here; see `hallouminate config show`")
    else:
        click.echo("\n".join(render_stats(result) for result in results))
