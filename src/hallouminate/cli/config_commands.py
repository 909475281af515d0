"""``hallouminate config init|show|validate``, ``corpora`` and ``read``.

``config`` works locally (it reads files, no daemon); ``corpora`` and ``read`` ask the daemon, like the
MCP tools, so they see exactly what an agent sees. Register with ``cli.add_command(...)``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from hallouminate.config.validate import EffectiveConfig
    from hallouminate.protocol.results import ListCorporaResult, ListFilesResult, ReadMarkdownResult

    class ShownConfig(EffectiveConfig):
        cwd: str


def _cwd() -> Path:
    from hallouminate.protocol.cwd import canonical_cwd

    return canonical_cwd(os.getcwd())


@click.group("config")
def config_group() -> None:
    """Write, show and check the configuration (baseline and repository layer)."""


@config_group.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing baseline config.")
def config_init(force: bool) -> None:
    """Write a commented baseline config to $XDG_CONFIG_HOME/hallouminate/config.toml."""
    from hallouminate import xdg
    from hallouminate.config import baseline_template

    file = xdg.baseline_config_file()
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        # "x" (O_EXCL) unless forced: never clobber a config someone wrote, even in a race.
        with file.open("w" if force else "x", encoding="utf-8") as f:
            f.write(baseline_template())
    except FileExistsError:
        from hallouminate.cli.daemon_calls import CliFailure
        from hallouminate.errors import Conflict

        raise CliFailure(
            Conflict(
                f"{file} already exists; edit it, or pass --force to replace it with the template",
                {"file": str(file), "problem": "exists"},
            )
        ) from None
    click.echo(f"wrote {file}")


@config_group.command("show")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def config_show(fmt: str) -> None:
    """Print the effective configuration for the current directory and the files it came from."""
    from hallouminate.cli.daemon_calls import CliFailure
    from hallouminate.config import describe_effective, resolve
    from hallouminate.errors import HallouminateError

    try:
        cwd = _cwd()
        described = describe_effective(resolve(cwd))
    except HallouminateError as exc:
        raise CliFailure(exc) from None
    shown: ShownConfig = {"cwd": str(cwd), **described}
    if fmt == "json":
        click.echo(json.dumps(shown, indent=2))
    else:
        click.echo(render_effective(shown), nl=False)


@config_group.command("validate")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
def config_validate(files: tuple[Path, ...]) -> None:
    """Check config files; exit 1 naming each problem (key and file), 0 when clean.

    Without FILES: the baseline and the repository layer that apply to the current directory, each alone
    and then together. A file at <repo>/.hallouminate/config.toml is checked as a repository layer, any
    other as a baseline.
    """
    from hallouminate import xdg
    from hallouminate.config import validate_file, validate_for
    from hallouminate.errors import HallouminateError

    if files:
        checked = [f.absolute() for f in files]
        found = {f: validate_file(f) for f in checked}
        problems = [message for messages in found.values() for message in messages]
        at_fault = [f for f, messages in found.items() if messages]
    else:
        try:
            checked, problems, at_fault = validate_for(_cwd())
        except HallouminateError as exc:
            checked, problems, at_fault = [], [exc.message], []
        if not checked and not problems:
            click.echo(
                f"no config files apply here (looked for {xdg.baseline_config_file()} and "
                ".hallouminate/config.toml above the current directory); every setting has its default"
            )
            return
    for message in problems:
        click.echo(message, err=True)
    if problems:
        where = f" in {', '.join(str(f) for f in at_fault)}" if at_fault else ""
        click.echo(f"{len(problems)} problem(s){where}", err=True)
        for file in checked:
            if file not in at_fault:
                click.echo(f"ok: {file}")
        sys.exit(1)
    for file in checked:
        click.echo(f"ok: {file}")


@click.command("corpora")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def corpora(fmt: str) -> None:
    """List the corpora visible from the current directory (* marks the default)."""
    from hallouminate.cli.daemon_calls import call_daemon

    result: ListCorporaResult = call_daemon("list_corpora")
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_corpora(result), nl=False)


@click.command("read")
@click.argument("where", metavar="[CORPUS] PAGE", nargs=-1, required=True)
@click.option("--line-numbers", is_flag=True, help='Prefix each line with "N: ".')
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def read(where: tuple[str, ...], line_numbers: bool, fmt: str) -> None:
    """Print the page PAGE of CORPUS (default: this repository's wiki) verbatim.

    PAGE is a path relative to the corpus; failing that, the same path with ".md" added
    (`read storage` reads storage.md); failing that, the one file of the corpus with that name
    (`read setup` reads guides/setup.md when no other file is called setup.md).
    """
    if len(where) > 2:
        raise click.UsageError(f"expected [CORPUS] PAGE, got {len(where)} arguments: {' '.join(where)}")
    corpus, page = (None, where[0]) if len(where) == 1 else where
    result = _read_page(corpus, page, line_numbers)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    # Bytes straight to stdout: click.echo would strip ANSI sequences when piped, and this is verbatim.
    sys.stdout.buffer.write(result["content"].encode("utf-8"))
    sys.stdout.buffer.flush()


def _read_page(corpus: str | None, page: str, line_numbers: bool) -> ReadMarkdownResult:
    """``read_markdown`` on the first of: ``page``, ``page + ".md"``, the corpus' one file whose name is
    ``page`` or ``page + ".md"``. A miss reports the daemon's error for ``page`` itself (it lists the
    nearest directory and the closest names)."""
    from hallouminate.cli.daemon_calls import CliFailure, call_daemon
    from hallouminate.errors import Conflict, NotFound

    base: dict[str, Any] = {} if corpus is None else {"corpus": corpus}
    if line_numbers:
        base["line_numbers"] = True

    def attempt(path: str) -> ReadMarkdownResult | CliFailure:
        try:
            found: ReadMarkdownResult = call_daemon("read_markdown", {**base, "path": path})
            return found
        except CliFailure as exc:
            # Only a missing file is worth another guess; a refused path, an unknown corpus, ... stand.
            if isinstance(exc.error, NotFound) and "path" in exc.error.data:
                return exc
            raise

    first = attempt(page)
    if not isinstance(first, CliFailure):
        return first
    if not page.endswith(".md"):
        with_suffix = attempt(page + ".md")
        if not isinstance(with_suffix, CliFailure):
            return with_suffix
    listed: ListFilesResult = call_daemon("list_files", {} if corpus is None else {"corpus": corpus})
    names = {page, page + ".md"}
    named = sorted(f["path"] for f in listed["files"] if f["path"].rsplit("/", 1)[-1] in names)
    if len(named) > 1:
        raise CliFailure(
            Conflict(
                f"{page!r} names {len(named)} files of corpus {listed['corpus']!r}: {', '.join(named)}; "
                "pass the path of the one you mean",
                {"path": page, "corpus": listed["corpus"], "problem": "ambiguous", "candidates": named},
            )
        )
    if named:
        only = attempt(named[0])
        if not isinstance(only, CliFailure):
            return only
    raise first


# -- rendering -----------------------------------------------------------------------------------------
def render_effective(d: ShownConfig) -> str:
    """TOML-like text: every setting with its origin, then the corpora, then warnings."""
    lines = [f"# effective configuration for {d['cwd']}"]
    if d["repository"]:
        lines.append(f"# repository: {d['repository']} (default corpus {d['default_corpus']})")
    else:
        lines.append("# repository: none (read tools need an explicit corpus)")
    if d["sources"]:
        lines.append("# files, in merge order:")
        lines.extend(f"#   {source}" for source in d["sources"])
    else:
        lines.append("# files: none (every setting has its default)")
    for table, values in d["settings"].items():
        lines.append("")
        lines.append(f"[{table}]")
        for key, value in values.items():
            given = d["list_sources"].get(f"{table}.{key}")
            if given:  # merged from several files: each value's own
                lines.append(f"{key} = [")
                lines.extend(f"  {_toml(item['value'])},  # {item['source']}" for item in given)
                lines.append("]")
                continue
            origin = d["setting_sources"].get(f"{table}.{key}", "default")
            lines.append(f"{key} = {_toml(value)}  # {origin}")
    for corpus in d["corpora"]:
        lines.append("")
        owner = f", repository {corpus['repository']}" if corpus["repository"] else ""
        lines.append(f"# corpus {corpus['name']} ({corpus['kind']}{owner}) from {corpus['source']}")
        lines.append(f"#   paths = {_toml(corpus['paths'])}")
        lines.append(f"#   globs = {_toml(corpus['globs'])}")
        lines.append(f"#   exclude = {_toml(corpus['exclude'])}")
    if d["discovered"]:
        lines.append("")
        lines.append("# repositories discovered below this directory:")
        lines.extend(f"#   {path}" for path in d["discovered"])
    if d["warnings"]:
        lines.append("")
        lines.extend(f"# warning: {w}" for w in d["warnings"])
    return "\n".join(lines) + "\n"


def render_corpora(result: ListCorporaResult) -> str:
    rows = [("", "NAME", "KIND", "REPOSITORY", "PATHS")]
    for c in result["corpora"]:
        mark = "*" if c["name"] == result.get("default_corpus") else ""
        rows.append((mark, c["name"], c["kind"], c["repository"] or "-", ", ".join(c["paths"])))
    if len(rows) == 1:
        text = "no corpora are configured here; see `hallouminate config show`\n"
    else:
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        text = "".join(
            " ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + " " + row[4] + "\n"
            for row in rows
        )
    return text + "".join(f"warning: {w}\n" for w in result.get("warnings", []))


def _toml(value: Any) -> str:
    # JSON scalars and arrays of strings are valid TOML too.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)
