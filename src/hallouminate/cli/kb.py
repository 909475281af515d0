"""``--kb-path DIR``: a knowledge base directory of its own (``serve --dialect grooveseek``, ``eval``)."""

from __future__ import annotations

from pathlib import Path

import click


def kb_path(value: str | None, *, needed_by: str = "--dialect grooveseek serves one knowledge base") -> Path:
    """``value`` made absolute (relative to the working directory), symlinks resolved, and checked to be
    an existing directory: the daemon serves it as a corpus of its own, ``kb``. A bad one is a usage
    error (exit 2) naming the problem and the fix."""
    if not value:
        raise click.BadParameter(
            f"{needed_by}: add --kb-path DIR (a directory of Markdown)", param_hint="--kb-path"
        )
    try:
        resolved = Path(value).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise click.BadParameter(
            f"{value!r} does not exist: pass an existing directory of Markdown", param_hint="--kb-path"
        ) from None
    if not resolved.is_dir():
        raise click.BadParameter(
            f"{value!r} is not a directory: pass the knowledge base's directory, not a file",
            param_hint="--kb-path",
        )
    if not resolved.is_absolute():  # resolve() makes it absolute; kept as the daemon's own rule
        raise click.BadParameter(f"{value!r} could not be made absolute", param_hint="--kb-path")
    return resolved
