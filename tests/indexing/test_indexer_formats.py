"""Text, JSON and PDF files go through the indexer into search; unparseable ones are skipped, old rows kept."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path

import pytest
from fpdf import FPDF

from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.search import ground
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader


def make_pdf(pages: list[str]) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


@pytest.fixture
def mixed(tmp_path: Path, setup) -> tuple[Indexer, Store, CorpusSpec]:
    indexer, store, spec = setup
    root = spec.roots[0]
    (root / "notes.txt").write_text("Plain notes.\n\nThe turquoise heron migrates every spring.\n")
    (root / "config.json").write_text(
        json.dumps({"servers": [{"name": "alpha", "role": "the amber gateway"}]}, indent=2)
    )
    (root / "manual.pdf").write_bytes(
        make_pdf(["Chapter one covers setup.", "Page two explains the crimson lighthouse procedure."])
    )
    spec = CorpusSpec(
        spec.name, spec.kind, spec.roots, ("**/*.md", "**/*.txt", "**/*.json", "**/*.pdf"), (), "t"
    )
    return indexer, store, spec


def search(store: Store, model: Embedder, spec: CorpusSpec, query: str) -> list[dict]:
    ground_it = ground(
        AsyncReader(store),
        partial(asyncio.to_thread, model.embed_query),
        [spec],
        query,
        priority_corpus=None,
        top_files=3,
        chunks_per_file=2,
        limit=20,
        snippet_chars=200,
    )
    return asyncio.run(ground_it)["docs"]


def test_each_format_is_indexed_and_found(mixed, embedder: Embedder) -> None:
    indexer, store, spec = mixed
    report = indexer.index_corpus(spec)
    assert report["files_skipped"] == 0, report["skipped"]
    assert search(store, embedder, spec, "turquoise heron")[0]["path"] == "notes.txt"
    found = search(store, embedder, spec, "amber gateway")[0]
    assert found["path"] == "config.json"
    assert found["chunks"][0]["heading_path"][0] == "config.json"
    pdf = search(store, embedder, spec, "crimson lighthouse procedure")[0]
    assert pdf["path"] == "manual.pdf"
    assert pdf["chunks"][0]["page"] == 2 and "page:2" in pdf["chunks"][0]["heading_path"]


def test_an_unparseable_file_is_skipped_and_its_last_good_rows_stay(mixed, embedder: Embedder) -> None:
    indexer, store, spec = mixed
    indexer.index_corpus(spec)
    root = spec.roots[0]
    (root / "config.json").write_text('{"servers": [ broken')
    (root / "manual.pdf").write_bytes(b"%PDF-1.7 not really a pdf")
    report = indexer.index_corpus(spec)
    reasons = {item["path"]: item["reason"] for item in report["skipped"]}
    assert set(reasons) == {"config.json", "manual.pdf"}
    assert report["files_skipped"] == 2
    # The rows of the last good versions still answer.
    assert search(store, embedder, spec, "amber gateway")[0]["path"] == "config.json"
    assert search(store, embedder, spec, "crimson lighthouse procedure")[0]["path"] == "manual.pdf"


def test_frontmatter_fields_are_stored_and_a_malformed_block_is_reported(setup) -> None:
    indexer, store, spec = setup
    root = spec.roots[0]
    (root / "tagged.md").write_text(
        "---\ntitle: Tagged\ntags: [ops, backup]\ndate: 2026-01-31\n---\n# Tagged\n\nBody.\n"
    )
    (root / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n\nBody text.\n")
    report = indexer.index_corpus(spec)
    assert [item["path"] for item in report["frontmatter_errors"]] == ["broken.md"]
    assert report["files_skipped"] == 0  # indexed as text, not skipped
    tagged = store.file_rows(spec.store_key, "tagged.md")[0]
    assert json.loads(tagged["fields"]) == {
        "title": "Tagged",
        "tags": ["ops", "backup"],
        "date": "2026-01-31",
    }
    assert "ops" in tagged["keywords"]
    broken = store.file_rows(spec.store_key, "broken.md")
    assert broken[0]["fields"] is None and "unclosed" in "".join(row["text"] for row in broken)
