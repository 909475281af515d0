"""``init-repo``: make a directory a hallouminate repository with an empty wiki."""

from __future__ import annotations

import json
from pathlib import Path

from hallouminate.config import defaults
from hallouminate.errors import Conflict, InvalidArgument

INDEX_START = "<!-- HALLOUMINATE:INDEX-START -->"
INDEX_END = "<!-- HALLOUMINATE:INDEX-END -->"


def init_repo(root: Path, name: str) -> list[Path]:
    """Write ``<root>/.hallouminate/config.toml`` and the wiki's ``index.md``; return the files written.

    Refuses when the config already exists. An existing ``index.md`` is left alone (not listed).
    """
    _check_name(name)
    if not root.is_dir():
        raise InvalidArgument(f"{root} is not a directory", {"path": str(root)})
    config = root / defaults.REPO_CONFIG
    if config.exists():
        raise Conflict(
            f"{config} already exists: this is already a hallouminate repository", {"path": str(config)}
        )
    config.parent.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    # "x" (O_EXCL) so that two racing init-repo runs cannot both write.
    try:
        with config.open("x", encoding="utf-8") as f:
            f.write(_config_text(name))
    except FileExistsError as exc:
        raise Conflict(f"{config} already exists", {"path": str(config)}) from exc
    written.append(config)
    index = root / defaults.WIKI_DIR / "index.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    try:
        with index.open("x", encoding="utf-8") as f:
            f.write(_index_text(name))
        written.append(index)
    except FileExistsError:
        pass
    return written


def _check_name(name: str) -> None:
    if not name:
        raise InvalidArgument("the repository name must not be empty", {"name": name})
    if ":" in name:
        raise InvalidArgument(
            f"the repository name {name!r} contains ':', which separates the parts of repo:NAME:wiki",
            {"name": name},
        )
    if any(c.isspace() or not c.isprintable() for c in name):
        raise InvalidArgument(
            f"the repository name {name!r} must not contain whitespace or control characters", {"name": name}
        )


def _config_text(name: str) -> str:
    # A JSON string is a valid TOML basic string for names without control characters.
    return (
        "# hallouminate repository layer; see docs/configuration.md.\n"
        "# Relative paths here resolve against this repository's root.\n"
        "\n"
        "[[repository]]\n"
        f"name = {json.dumps(name, ensure_ascii=False)}\n"
        'path = "."\n'
    )


def _index_text(name: str) -> str:
    return (
        f"# {name} wiki\n"
        "\n"
        f"Knowledge base for {name}: one topic per page. The list below is maintained by hallouminate.\n"
        "\n"
        f"{INDEX_START}\n"
        f"{INDEX_END}\n"
    )
