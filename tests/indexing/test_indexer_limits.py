"""The indexer's `[indexing]` size caps, one per kind of file: text files against max_text_file_size,
binary documents (a PDF) against max_binary_file_size, each skip naming the key that would let the file
in. A real store and the real model, in process."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from support.files import pdf_bytes
from support.indexer import indexer_for


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "small.md").write_text("# Small\n\nA page well under every cap.\n")
    (root / "big.md").write_text("# Big\n\n" + "words and more words " * 200)  # ~4 KB
    # A PDF larger than the text cap and smaller than the binary one.
    (root / "guide.pdf").write_bytes(pdf_bytes(["The lighthouse keeper logs every ship in the harbour."]))
    return root


def test_text_and_binary_files_are_capped_each_by_their_own_key(tmp_path: Path, embedder: Embedder) -> None:
    root = _corpus(tmp_path)
    pdf_size = (root / "guide.pdf").stat().st_size
    big_size = (root / "big.md").stat().st_size
    assert pdf_size > 1000 and big_size > 1000
    indexer, store, spec = indexer_for(tmp_path, embedder, root, max_file_bytes=1000)
    spec = CorpusSpec(spec.name, spec.kind, spec.roots, ("**/*.md", "**/*.pdf"), (), spec.repository)

    report = indexer.index_corpus(spec)
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}
    assert list(reasons) == ["big.md"]  # the PDF is over the text cap but not a text file
    assert reasons["big.md"] == (
        f"larger than [indexing] max_text_file_size ({big_size} > 1000 bytes); raise max_text_file_size to index it"
    )
    assert set(store.file_states(spec.store_key)) == {"small.md", "guide.pdf"}

    tight = Indexer(store, embedder, replace(indexer.settings, max_binary_file_size=pdf_size - 1))
    st = (root / "guide.pdf").stat()  # a new mtime: the change gate looks at the file again
    os.utime(root / "guide.pdf", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    report = tight.index_corpus(spec)
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}
    assert reasons["guide.pdf"].startswith(
        f"larger than [indexing] max_binary_file_size ({pdf_size} > {pdf_size - 1} bytes); "
        "raise max_binary_file_size to index it"
    )
    problems = {p["path"]: p for p in report["problems"]}
    assert problems["guide.pdf"]["problem"] == "too-large" and not problems["guide.pdf"]["indexed"]
