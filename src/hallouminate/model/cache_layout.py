"""fastembed's cache layout for the model, and the manifest hallouminate keeps beside the files.

fastembed maps `sentence-transformers/all-MiniLM-L6-v2` to the hub repo `Qdrant/all-MiniLM-L6-v2-onnx` and,
with `local_files_only=True`, resolves it in the hub cache format:

    <cache_dir>/models--Qdrant--all-MiniLM-L6-v2-onnx/refs/main          (holds REVISION)
    <cache_dir>/models--Qdrant--all-MiniLM-L6-v2-onnx/snapshots/REVISION/ (the files below)

No `blobs/` directory is needed. The manifest sits inside the snapshot directory so that the files and
the record of them appear together, in one rename.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallouminate.model.base import MODEL_NAME

HF_REPO = "Qdrant/all-MiniLM-L6-v2-onnx"
REPO_DIR_NAME = "models--" + HF_REPO.replace("/", "--")
# Not a hub commit hash on purpose: a snapshot we built can never be mistaken for one fastembed
# downloaded, and bumping the suffix gives a rebuilt graph its own directory.
REVISION_PREFIX = "hallouminate-pypi-"
REVISION = REVISION_PREFIX + "v1"
SNAPSHOT_FILES: tuple[str, ...] = (
    "model.onnx",
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
    "vocab.txt",
)
MANIFEST_NAME = "hallouminate-manifest.json"
MANIFEST_FORMAT = 1
STAGING_PREFIX = ".hallouminate-install-"


def repo_dir(cache_dir: Path) -> Path:
    return cache_dir / REPO_DIR_NAME


def snapshot_dir(cache_dir: Path) -> Path:
    return repo_dir(cache_dir) / "snapshots" / REVISION


def refs_main(cache_dir: Path) -> Path:
    return repo_dir(cache_dir) / "refs" / "main"


def manifest_path(snapshot: Path) -> Path:
    return snapshot / MANIFEST_NAME


@dataclass
class Manifest:
    """What was installed, from where, with the size and hash of every file."""

    source: str
    source_file: str
    source_sha256: str
    files: dict[str, dict[str, Any]]
    installed_at: str
    model: str = MODEL_NAME
    revision: str = REVISION
    format: int = MANIFEST_FORMAT
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": self.format,
                "model": self.model,
                "revision": self.revision,
                "source": self.source,
                "source_file": self.source_file,
                "source_sha256": self.source_sha256,
                "installed_at": self.installed_at,
                "files": self.files,
                **self.extra,
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Parse a manifest; raises ValueError if it is not one this version wrote."""
        try:
            raw = json.loads(text)
            fmt = raw["format"]
            if fmt != MANIFEST_FORMAT:
                raise ValueError(f"manifest format {fmt!r}, expected {MANIFEST_FORMAT}")
            files = raw["files"]
            for name in SNAPSHOT_FILES:
                entry = files[name]
                if not isinstance(entry["size"], int) or not isinstance(entry["sha256"], str):
                    raise ValueError(f"bad entry for {name}")
            known = {
                "format",
                "model",
                "revision",
                "source",
                "source_file",
                "source_sha256",
                "installed_at",
                "files",
            }
            return cls(
                source=str(raw["source"]),
                source_file=str(raw["source_file"]),
                source_sha256=str(raw["source_sha256"]),
                files=files,
                installed_at=str(raw["installed_at"]),
                model=str(raw["model"]),
                revision=str(raw["revision"]),
                format=fmt,
                extra={k: v for k, v in raw.items() if k not in known},
            )
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"unreadable manifest: {exc!r}") from exc


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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


def commit_snapshot(staged: Path, cache_dir: Path, scratch: Path) -> Path:
    """Move a complete staged snapshot into place and point refs/main at it.

    `scratch` is a directory on the same filesystem that the caller deletes afterwards: a snapshot
    being replaced is moved there first, and moved back if the new one cannot be renamed into place.
    """
    target = snapshot_dir(cache_dir)
    replace_dir(staged, target, scratch)
    write_text_atomic(refs_main(cache_dir), REVISION)
    # Snapshots an older hallouminate built under another revision are ours to remove; any other
    # snapshot (fastembed's own download on a connected machine) is left alone.
    for other in target.parent.iterdir():
        if other.name.startswith(REVISION_PREFIX) and other.name != REVISION:
            shutil.rmtree(other, ignore_errors=True)
    return target


def replace_dir(staged: Path, target: Path, scratch: Path) -> None:
    """Rename ``staged`` to ``target``. A directory already there is moved into ``scratch`` (which the
    caller deletes) first, and moved back if the rename fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    previous = scratch / "previous-snapshot"
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


def staging_dirs(cache_dir: Path) -> list[Path]:
    if not cache_dir.is_dir():
        return []
    return [p for p in cache_dir.iterdir() if p.name.startswith(STAGING_PREFIX)]
