"""The layout hallouminate 0.1 installed the default model in, and its one-way conversion to the current one.

Up to 0.1 the default model was laid out as a fake download in fastembed's hub cache, under the hub repo
fastembed maps its name to, so that fastembed would find it by name with hub downloads switched off:

    <cache_dir>/models--Qdrant--all-MiniLM-L6-v2-onnx/refs/main                      "hallouminate-pypi-v1"
    <cache_dir>/models--Qdrant--all-MiniLM-L6-v2-onnx/snapshots/hallouminate-pypi-v1/  files + manifest

Such an install holds exactly the files of the current layout (``layout.MODEL_FILES`` and a manifest of the
same format), so converting it needs no download and no rebuild: the files are hard-linked (copied where
links are not possible) into a staging directory, checked against the sha256 its manifest recorded, and
the result is renamed into place before the old snapshot is removed. A crash at any point leaves either
the old install, or the new one (and perhaps the old one beside it, unused), never half of either.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from hallouminate.model import layout
from hallouminate.model.base import MODEL_NAME, ModelInstallError
from hallouminate.model.wheels import sha256_file

REPO_DIR_NAME = "models--Qdrant--all-MiniLM-L6-v2-onnx"
REVISION = "hallouminate-pypi-v1"
# Every snapshot 0.1 wrote was named with this prefix; other snapshots there are fastembed's own downloads.
REVISION_PREFIX = "hallouminate-pypi-"


def repo_dir(cache_dir: Path) -> Path:
    return cache_dir / REPO_DIR_NAME


def snapshot_dir(cache_dir: Path) -> Path:
    return repo_dir(cache_dir) / "snapshots" / REVISION


def snapshots(cache_dir: Path) -> list[Path]:
    """The snapshot directories 0.1 wrote (usable or not); other snapshots there are fastembed's own."""
    parent = repo_dir(cache_dir) / "snapshots"
    if not parent.is_dir():
        return []
    return [p for p in parent.iterdir() if p.name.startswith(REVISION_PREFIX)]


def remnants(cache_dir: Path) -> bool:
    """Whether anything 0.1 wrote is left: a snapshot of ours, refs/main naming one, or the bare
    directories a crash between two removals leaves."""
    repo = repo_dir(cache_dir)
    if not repo.is_dir():
        return False
    if snapshots(cache_dir):
        return True
    with contextlib.suppress(OSError):
        if (repo / "refs" / "main").read_text(encoding="utf-8").strip().startswith(REVISION_PREFIX):
            return True
    return not any(not p.is_dir() for p in repo.rglob("*"))


def find(cache_dir: Path) -> layout.Manifest | None:
    """The manifest of a usable install in the old layout (sizes checked, as 0.1 did), or None."""
    snapshot = snapshot_dir(cache_dir)
    if not snapshot.is_dir():
        return None
    found = layout.inspect(snapshot, MODEL_NAME, REVISION)
    return found.manifest if found.problem is None else None


def convert(cache_dir: Path, target: Path, say: Callable[[str], None]) -> layout.Manifest:
    """Turn the old-layout install in ``cache_dir`` into ``target`` (the caller holds the install lock
    and has checked that ``target`` holds no usable install). Raises ModelInstallError, leaving the old
    install as it was, if the old files do not match their recorded sha256 or cannot be linked or copied.
    """
    old = snapshot_dir(cache_dir)
    manifest = find(cache_dir)
    if manifest is None:
        raise ModelInstallError(f"No usable install in the old layout at {old}.", {"directory": str(old)})
    say(f"Converting the install at {old} into {target} (no download, no rebuild)")
    stage = Path(tempfile.mkdtemp(dir=cache_dir, prefix=layout.STAGING_PREFIX))
    try:
        built = stage / "model"
        built.mkdir()
        for name in layout.MODEL_FILES:
            _link_or_copy(old / name, built / name)
            expected = manifest.files[name]["sha256"]
            actual = sha256_file(built / name)
            if actual != expected:
                raise ModelInstallError(
                    f"{old / name} does not match the sha256 its manifest recorded (expected {expected}, got "
                    f"{actual}): the old install is damaged. Run `hallouminate model install --force`.",
                    {"file": str(old / name), "expected_sha256": expected, "actual_sha256": actual},
                )
        converted = layout.Manifest(
            model=manifest.model,
            revision=manifest.revision,
            installed_at=manifest.installed_at,
            files=manifest.files,
            extra={
                **manifest.extra,
                "converted_from": str(old),
                "converted_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        )
        layout.write_text_atomic(built / layout.MANIFEST_NAME, converted.to_json())
        layout.fsync_dir(built)
        layout.replace_dir(built, target, stage)
    except OSError as exc:
        raise ModelInstallError(
            f"Could not convert the install at {old} into {target}: {exc}. The old install is unchanged; "
            "free space or fix the permissions of the cache directory, or run "
            "`hallouminate model install --force`.",
            {"cache_dir": str(cache_dir)},
        ) from exc
    else:
        # The new install is in place and used from now on; an old snapshot that cannot be removed stays
        # beside it, unused, until the next `hallouminate model install` removes it.
        with contextlib.suppress(OSError):
            remove(cache_dir, stage)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return converted


def remove(cache_dir: Path, scratch: Path) -> None:
    """Remove the snapshots 0.1 wrote (moved into ``scratch``, which the caller deletes, so each goes in
    one rename), and refs/main and the repo directory if nothing of fastembed's own is left in them."""
    for snapshot in snapshots(cache_dir):
        os.rename(snapshot, scratch / f"old-{snapshot.name}")
    refs_main = repo_dir(cache_dir) / "refs" / "main"
    with contextlib.suppress(OSError):
        if refs_main.read_text(encoding="utf-8").strip().startswith(REVISION_PREFIX):
            refs_main.unlink()
    for empty in (repo_dir(cache_dir) / "snapshots", refs_main.parent, repo_dir(cache_dir)):
        # Absent, or holding fastembed's own download of that repo: not ours to remove.
        with contextlib.suppress(OSError):
            empty.rmdir()


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        layout.fsync_file(target)
