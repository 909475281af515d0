"""Plain text, JSON and PDF chunked with the real model's tokenizer: the budget holds, phrases survive cuts."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest
from fpdf import FPDF

from hallouminate import xdg
from hallouminate.indexing.json_chunker import chunk_json
from hallouminate.indexing.pdf_text import chunk_pdf
from hallouminate.indexing.text_chunker import TextChunk, chunk_text
from hallouminate.model import require_installed

BUDGET = 254  # min(chunk_tokens, 256) - [CLS] - [SEP], as the indexer computes it

WORDS = (
    "index search chunk token budget overlap phrase page section vector store query result ranking "
    "embedding model document paragraph sentence boundary breadcrumb heading parser reader library "
    "caché naïve Grüße"
)
VOCAB = WORDS.split()


@pytest.fixture(scope="module")
def count_tokens() -> Callable[[str], int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(require_installed(xdg.default_model_cache()) / "tokenizer.json"))
    # As the embedder does: a truncating tokenizer would make every long chunk "fit".
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def prose(seed: int, sentences: int) -> str:
    rng = random.Random(seed)
    out = []
    for k in range(sentences):
        # A numbered word in each sentence keeps every 6-word phrase unique.
        body = [rng.choice(VOCAB) for _ in range(rng.randint(6, 16))]
        body.insert(rng.randrange(len(body)), f"n{k}")
        out.append(" ".join(body).capitalize() + ".")
        if k % 7 == 6:
            out.append("\n\n")
    return " ".join(out).replace(" \n\n ", "\n\n")


def assert_phrases(chunks: list[TextChunk], source: str, size: int = 6) -> None:
    """Every phrase of ``size`` consecutive words is whole in at least one chunk."""
    bodies = [f" {' '.join(c.text.split())} " for c in chunks]
    source_words = source.split()
    for i in range(len(source_words) - size + 1):
        phrase = " ".join(source_words[i : i + size])
        assert any(f" {phrase} " in b for b in bodies), phrase


def test_plain_text(count_tokens: Callable[[str], int]) -> None:
    text = prose(1, 400)
    page = chunk_text(text, count_tokens, BUDGET, title="notes.txt")
    assert len(page.chunks) > 5
    assert max(count_tokens(c.embed_text) for c in page.chunks) <= BUDGET
    assert_phrases(page.chunks, text)


def test_json_long_string(count_tokens: Callable[[str], int]) -> None:
    text = prose(2, 300).replace("\n\n", " ")
    src = json.dumps({"servers": [{"name": "alpha", "notes": text}]}, indent=2, ensure_ascii=False)
    page = chunk_json(src, count_tokens, BUDGET, title="config.json")
    notes = [c for c in page.chunks if c.heading_path == ["config.json", "servers", "0", "notes"]]
    assert len(notes) > 3
    assert max(count_tokens(c.embed_text) for c in page.chunks) <= BUDGET
    assert_phrases(notes, text)


def test_pdf_pages(count_tokens: Callable[[str], int]) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=8)
    texts = [prose(10 + n, 60) for n in range(2)]
    for text in texts:
        pdf.add_page()
        pdf.multi_cell(0, 5, text)
    page = chunk_pdf(bytes(pdf.output()), count_tokens, BUDGET, title="report.pdf")
    assert {c.page for c in page.chunks} == {1, 2}
    assert max(count_tokens(c.embed_text) for c in page.chunks) <= BUDGET
    for number, text in enumerate(texts, start=1):
        chunks = [c for c in page.chunks if c.page == number]
        assert len(chunks) >= 2 and all(c.heading_path == ["report.pdf", f"page:{number}"] for c in chunks)
        assert_phrases(chunks, text)
