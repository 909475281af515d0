"""The real model, provisioned by the session fixture `model_cache`, loaded from its directory through
fastembed's local-model API; and a real install in the layout of hallouminate 0.1, converted."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from fastembed import TextEmbedding

from hallouminate.embedding import Embedder
from hallouminate.embedding.embedder import fastembed_name
from hallouminate.model import MAX_TOKENS, MODEL_DIM, MODEL_NAME, install, install_dir, layout, legacy, status
from hallouminate.model.wheels import KNOWN_WHEELS, UPSTREAM_SHA256

QUERY = "How do I reset my password?"
RELATED = "Steps to recover a forgotten login password"
UNRELATED = "The recipe needs two cups of flour."
TEXTS = [QUERY, RELATED, UNRELATED, " ".join([RELATED] * 20)]


@pytest.fixture(scope="module")
def embedder(model_cache: Path) -> Embedder:
    return Embedder(model_cache, threads=2)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _link_tree(files: Path, target: Path) -> None:
    """``target`` holding the model files of ``files``, hard-linked (copied across filesystems): 90 MB
    that are only read."""
    target.mkdir(parents=True)
    for name in layout.MODEL_FILES:
        try:
            os.link(files / name, target / name)
        except OSError:
            shutil.copyfile(files / name, target / name)


def _old_layout(model_cache: Path, cache: Path) -> Path:
    """A real install as hallouminate 0.1 laid it out: the same files and manifest, in a fake hub cache."""
    snapshot = legacy.snapshot_dir(cache)
    _link_tree(install_dir(model_cache), snapshot)
    manifest = json.loads((install_dir(model_cache) / layout.MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest = {k: v for k, v in manifest.items() if not k.startswith("converted_")}
    (snapshot / layout.MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    (legacy.repo_dir(cache) / "refs").mkdir()
    (legacy.repo_dir(cache) / "refs" / "main").write_text(legacy.REVISION)
    return snapshot


def test_registered_under_a_name_of_our_own_with_our_pooling(embedder: Embedder) -> None:
    # fastembed has a built-in entry for the public name and refuses to register it again; ours is apart.
    assert fastembed_name(MODEL_NAME) == "hallouminate/all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="already registered"):
        TextEmbedding.add_custom_model(MODEL_NAME, *_custom_args())
    (entry,) = [m for m in TextEmbedding.list_supported_models() if m["model"] == fastembed_name(MODEL_NAME)]
    assert (entry["dim"], entry["model_file"]) == (MODEL_DIM, "model.onnx")
    assert embedder.dim == MODEL_DIM and embedder.max_tokens == MAX_TOKENS


def _custom_args() -> tuple[object, ...]:
    from fastembed.common.model_description import ModelSource, PoolingType

    return (PoolingType.MEAN, True, ModelSource(hf=MODEL_NAME), MODEL_DIM, "model.onnx")


def test_sanity_pair(embedder: Embedder) -> None:
    query, related, unrelated = embedder.embed_passages([QUERY, RELATED, UNRELATED])
    assert query.shape == (MODEL_DIM,) and query.dtype == np.float32
    assert abs(_cos(query, related) - 0.702) < 0.01
    assert abs(_cos(query, unrelated) - 0.049) < 0.01


def test_batching_and_padding_do_not_change_vectors(embedder: Embedder) -> None:
    alone = embedder.embed_passages([QUERY])[0]
    batched = embedder.embed_passages([QUERY, " ".join([RELATED] * 20)])[0]
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_long_input_is_truncated_at_max_tokens(embedder: Embedder, model_cache: Path) -> None:
    config = json.loads((install_dir(model_cache) / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == MAX_TOKENS
    # Past the limit, extra text is cut off: two inputs that differ only after token 256 embed the same.
    prefix = " ".join(["password recovery steps"] * 100)
    a, b = embedder.embed_passages([prefix + " apples", prefix + " engines"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_0_1_way_of_loading_and_ours_give_the_same_vectors(
    embedder: Embedder, model_cache: Path, tmp_path: Path
) -> None:
    """0.1 loaded fastembed's built-in entry by name from a fake hub cache; we load our own registration
    from the install directory. Same graph, same pooling: the same numbers."""
    cache = tmp_path / "old"
    _old_layout(model_cache, cache)
    before = TextEmbedding(MODEL_NAME, cache_dir=str(cache), local_files_only=True, threads=2)
    old = np.asarray(list(before.passage_embed(TEXTS)), dtype=np.float32)
    new = embedder.embed_passages(TEXTS)
    assert np.abs(old - new).max() <= 1e-6
    assert min(_cos(a, b) for a, b in zip(old, new, strict=True)) >= 0.99999


def test_a_real_install_in_the_0_1_layout_is_converted_and_embeds_as_before(
    embedder: Embedder, model_cache: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "old"
    _old_layout(model_cache, cache)
    assert status(cache).legacy_dir == legacy.snapshot_dir(cache)
    converted = Embedder(cache, threads=2)
    assert sorted(p.name for p in cache.iterdir()) == [install_dir(cache).name]
    assert status(cache).directory == install_dir(cache)
    np.testing.assert_array_equal(converted.embed_passages(TEXTS), embedder.embed_passages(TEXTS))
    assert converted.count_tokens(RELATED) == embedder.count_tokens(RELATED)


def test_status_of_real_install(model_cache: Path) -> None:
    found = status(model_cache)
    assert found.installed, found.problem
    assert found.source in {w.requirement for w in KNOWN_WHEELS}
    assert found.directory == install_dir(model_cache) and found.legacy_dir is None
    assert set(found.files) == set(layout.MODEL_FILES)
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt"):
        assert found.files[name] == UPSTREAM_SHA256[name]
    assert str(found.directory) in found.describe()


def test_second_install_of_real_model_is_a_no_op(model_cache: Path) -> None:
    target = install_dir(model_cache)
    watched = [target / layout.MANIFEST_NAME, target / "model.onnx"]
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in watched]
    manifest = watched[0].read_bytes()
    assert install(model_cache).installed
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in watched] == before
    assert watched[0].read_bytes() == manifest
