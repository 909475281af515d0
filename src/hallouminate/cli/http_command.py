"""``hallouminate http enable|disable|url|status`` and ``hallouminate port set|clear``.

Each edits ``[http]`` in the baseline config file in place (``config.edit``: comments and other keys kept),
then asks a running daemon to apply it (the ``http_reload`` operation: stop, start or restart its
listener). ``http enable`` starts the daemon when none runs. Register with ``cli.add_command(...)``.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from hallouminate.protocol import limits

if TYPE_CHECKING:
    from hallouminate.config.types import HttpSettings
    from hallouminate.protocol.results import HttpReloadResult, StatusResult

ENABLE_HINT = "run `hallouminate http enable`"
# `http url` / `http status` when nothing listens: an answer, not a failure (as `daemon status` says it).
NOT_LISTENING = 3


def _edit(changes: dict[str, bool | int | None]) -> str:
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.config.edit import edit_baseline
    from hallouminate.errors import HallouminateError

    try:
        return str(edit_baseline("http", changes))
    except HallouminateError as exc:
        raise CliFailure(exc) from None


def _configured() -> HttpSettings:
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.config import load_baseline
    from hallouminate.errors import HallouminateError

    try:
        return load_baseline().settings.http
    except HallouminateError as exc:
        raise CliFailure(exc) from None


def _running(op: str) -> Any:
    """``op``'s result from the running daemon, or None when none runs (none is started)."""
    from hallouminate.cli.daemon_calls import CliFailure, call_daemon
    from hallouminate.errors import Unavailable

    try:
        return call_daemon(op, spawn=False)
    except CliFailure as exc:
        if isinstance(exc.error, Unavailable):
            return None
        raise


def _port_value(value: str) -> int:
    bound = limits.HTTP_PORT
    try:
        port = int(value)
    except ValueError:
        port = -1
    if port not in bound:
        raise click.BadParameter(
            f"{value!r} is not a port: give a number from {bound.span} (or `hallouminate port clear` for a "
            "random free port at each start)",
            param_hint="N",
        )
    return port


@click.group("http")
def http_group() -> None:
    """The daemon's HTTP listener: MCP over Streamable HTTP at <url>/mcp (docs/http.md)."""


@http_group.command("enable")
@click.option("--port", "port", metavar="N", help=f"Listen on this port ({limits.HTTP_PORT.span}).")
def http_enable(port: str | None) -> None:
    """Turn the listener on (starting the daemon if none runs) and print its base URL."""
    from hallouminate.cli.daemon_calls import call_daemon

    changes: dict[str, bool | int | None] = {"enabled": True}
    if port is not None:
        changes["port"] = _port_value(port)
    _edit(changes)
    # A daemon started now reads the edited file; one already running is told to apply it.
    result: HttpReloadResult = call_daemon("http_reload")
    click.echo(result["url"])


@http_group.command("disable")
def http_disable() -> None:
    """Turn the listener off (a running daemon stops it now)."""
    file = _edit({"enabled": False})
    result: HttpReloadResult | None = _running("http_reload")
    stopped = " and stopped the listener" if result is not None else ""
    click.echo(f"HTTP disabled in {file}{stopped}")


@http_group.command("url")
def http_url() -> None:
    """Print the listener's base URL (starting the daemon when [http] enabled says it should listen).

    Exit 3, saying why, when nothing listens.
    """
    from hallouminate.cli.daemon_calls import call_daemon

    if not _configured().enabled:
        click.echo(f"HTTP is not enabled: {ENABLE_HINT}", err=True)
        sys.exit(NOT_LISTENING)
    status: StatusResult = call_daemon("status")
    url = status.get("http_url")
    if url is None:
        # Starting (a daemon just spawned), or it could not start: apply the config now, which waits for
        # a start under way and says why one fails.
        reloaded: HttpReloadResult = call_daemon("http_reload")
        url = reloaded["url"]
    if url is None:
        click.echo(f"the daemon is not listening on HTTP: {ENABLE_HINT}", err=True)
        sys.exit(NOT_LISTENING)
    click.echo(url)


@http_group.command("status")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def http_status(fmt: str) -> None:
    """Say whether HTTP is enabled, on which port, and the URL the running daemon listens on.

    Exit 3 when nothing listens.
    """
    settings = _configured()
    status: StatusResult | None = _running("status")
    shown: dict[str, Any] = {
        "enabled": settings.enabled,
        "host": settings.host,
        "port": settings.port,
        "daemon": status is not None,
        "url": status.get("http_url") if status is not None else None,
    }
    if status is not None and "http_error" in status:
        shown["error"] = status["http_error"]
    if fmt == "json":
        click.echo(json.dumps(shown, indent=2))
    else:
        click.echo(f"enabled: {'yes' if settings.enabled else f'no ({ENABLE_HINT})'}")
        click.echo(f"address: {settings.host} port {settings.port or 'random at each start'}")
        if status is None:
            click.echo(
                "daemon: not running" + (" (`hallouminate http url` starts it)" if settings.enabled else "")
            )
        else:
            click.echo(f"listening: {shown['url'] or 'no'}")
            if "error" in shown:
                click.echo(f"error: {shown['error']}")
    sys.exit(0 if shown["url"] else NOT_LISTENING)


@click.group("port")
def port_group() -> None:
    """The HTTP listener's port ([http] port)."""


@port_group.command("set")
@click.argument("n", metavar="N")
def port_set(n: str) -> None:
    """Listen on port N (1-65535) from now on; a running listener restarts on it."""
    port = _port_value(n)
    file = _edit({"port": port})
    result: HttpReloadResult | None = _running("http_reload")
    if result is not None and result["url"] is not None:
        click.echo(result["url"])
    elif not _configured().enabled:
        click.echo(f"port {port} set in {file}; HTTP is not enabled: {ENABLE_HINT}")
    else:
        click.echo(f"port {port} set in {file}; the daemon listens on it when it starts")


@port_group.command("clear")
def port_clear() -> None:
    """Forget the port: a random free port at the listener's next start (a running one keeps its port)."""
    from hallouminate.config.edit import REMOVE

    file = _edit({"port": REMOVE})
    result: HttpReloadResult | None = _running("http_reload")
    kept = (
        f"; the running listener keeps {result['url']} until it restarts" if result and result["url"] else ""
    )
    click.echo(f"port cleared in {file}: a random free port at the next start{kept}")
