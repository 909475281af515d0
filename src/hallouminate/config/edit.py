"""Edit the baseline config file in place (``hallouminate http enable``, ``port set``): one table's keys
set or removed, every other line (comments, other tables, key order) kept as written.

The edited text is checked as a whole before it replaces the file (atomically), so a command never leaves
behind a config the daemon would refuse; the check names the same problems ``config validate`` does.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from hallouminate import xdg
from hallouminate.config.layer import layer_from_text
from hallouminate.errors import ConfigError, FilesystemFault

# A key given this value is removed from the table.
REMOVE = None


def edit_baseline(table: str, changes: Mapping[str, bool | int | str | None]) -> Path:
    """Set (or, for ``REMOVE``, delete) ``changes`` in ``[table]`` of the baseline config, creating the
    file (and the table) when missing; returns the file."""
    file = xdg.baseline_config_file()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config: {exc}", {"file": str(file)}) from exc
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(
            f"{file}: malformed TOML: {exc}; fix it (`hallouminate config validate`) and run this again",
            {"file": str(file)},
        ) from exc
    section = doc.get(table)
    if section is None:
        section = tomlkit.table()
        doc.add(table, section)
    elif not isinstance(section, Table):
        raise ConfigError(
            f"{file}: {table} must be a table ([{table}]); fix it and run this again",
            {"file": str(file), "key": table},
        )
    for key, value in changes.items():
        if value is REMOVE:
            section.pop(key, None)
        else:
            section[key] = value
    new_text = tomlkit.dumps(doc)
    # The same checks as loading the file: a change that would make the daemon refuse it is not written.
    layer_from_text(new_text, file, None)
    _replace(file, new_text)
    return file


def _replace(file: Path, text: str) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if file.exists():
                os.chmod(tmp, file.stat().st_mode & 0o7777)
            os.replace(tmp, file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise FilesystemFault(
            f"{file}: cannot write the config: {exc.strerror or exc}", {"file": str(file)}
        ) from exc
