"""What the indexer and the reads do with a reader's verdicts, on real Word documents (the docx reader):
a zip over the decompression budget is a `too-large` skip naming the key, the budget comes from the
`[indexing]` settings (for index runs and reads alike), and a Word document's headings weigh in its
keywords. A real store and the real model, in process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hallouminate.browse import read_markdown
from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.errors import BadEncoding
from hallouminate.indexing import Indexer
from hallouminate.indexing.documents import FormatLimits
from hallouminate.indexing.indexer import chunk_file, file_keywords
from hallouminate.storage import Store
from support.indexer import indexer_for
from support.office_files import docx_bytes, zip_bomb

HANDBOOK = [
    ("h", 1, "Eviction policy"),
    ("p", "The cache keeps hot rows. A cache miss reads the store; the cache is warmed at start."),
    ("h", 2, "Eviction under load"),
    ("p", "Rows go oldest first."),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "handbook.docx").write_bytes(docx_bytes(HANDBOOK))
    (root / "bomb.docx").write_bytes(zip_bomb("word/document.xml", 60 << 20))
    return root


def _spec(spec: CorpusSpec) -> CorpusSpec:
    return CorpusSpec(spec.name, spec.kind, spec.roots, ("**/*.docx",), (), spec.repository)


def test_a_zip_over_the_budget_is_too_large_and_the_budget_is_the_setting(
    tmp_path: Path, root: Path, embedder: Embedder
) -> None:
    indexer, store, spec = indexer_for(tmp_path, embedder, root)
    spec = _spec(spec)
    report = indexer.index_corpus(spec)
    problems = {p["path"]: p for p in report["problems"]}
    assert set(problems) == {"bomb.docx"}
    assert (problems["bomb.docx"]["problem"], problems["bomb.docx"]["indexed"]) == ("too-large", False)
    assert "max_decompressed_size (52428800)" in problems["bomb.docx"]["detail"]
    assert set(store.file_states(spec.store_key)) == {"handbook.docx"}

    # The same budget from [indexing] max_decompressed_size: a tiny one refuses the handbook too.
    tight = Indexer(
        Store(tmp_path / "db2", embedder.dim), embedder, replace(indexer.settings, max_decompressed_size=1000)
    )
    report = tight.index_corpus(spec)
    problems = {p["path"]: p for p in report["problems"]}
    assert problems["handbook.docx"]["problem"] == "too-large"
    assert "max_decompressed_size (1000)" in problems["handbook.docx"]["detail"]


def test_reads_show_the_extracted_view_within_the_same_budget(root: Path) -> None:
    spec = CorpusSpec("kb", "custom", (root,), ("**/*.docx",), (), None)
    result = read_markdown(spec, "handbook.docx", line_numbers=True)
    assert result["format"] == "docx" and "pages" not in result  # one unlabelled part
    assert result["content"].startswith("1: # Eviction policy\n2: \n3: The cache keeps hot rows.")
    for limits, size in ((FormatLimits(max_decompressed_size=1000), "1000"), (None, "52428800")):
        path = "handbook.docx" if limits is not None else "bomb.docx"
        with pytest.raises(BadEncoding) as err:
            read_markdown(spec, path, limits=limits)
        assert err.value.data["problem"] == "unreadable-document"
        assert f"max_decompressed_size ({size})" in err.value.data["reason"]


def test_a_word_documents_headings_lead_its_keywords(root: Path, embedder: Embedder) -> None:
    data = (root / "handbook.docx").read_bytes()
    page = chunk_file("handbook.docx", data, embedder.count_tokens, 126)
    keywords = file_keywords("handbook.docx", data, page)
    assert keywords[:2] == ["eviction", "policy"], keywords  # by count alone, "cache" would lead
    assert not {"handbook", "docx"} & set(keywords)


def test_a_reader_that_stops_at_a_limit_is_indexed_as_far_as_it_got_with_a_cut_problem(
    tmp_path: Path, root: Path, embedder: Embedder
) -> None:
    (root / "bomb.docx").unlink()
    long = [("h", 1, "Logbook"), *(("p", f"Entry {n}: the keeper logged a ship at dawn.") for n in range(40))]
    (root / "logbook.docx").write_bytes(docx_bytes(long))
    _indexer, store, spec = indexer_for(tmp_path, embedder, root)
    spec = _spec(spec)
    # Tighter than the settings' limits (4 Mi characters), so that a small document reaches it.
    indexer = Indexer(store, embedder, _indexer.settings, limits=FormatLimits(max_extracted_chars=600))
    report = indexer.index_corpus(spec)
    (problem,) = report["problems"]
    assert (problem["path"], problem["problem"], problem["indexed"]) == ("logbook.docx", "cut", True)
    assert problem["detail"] and report["files_skipped"] == 0
    texts = " ".join(row["text"] for row in store.file_rows(spec.store_key, "logbook.docx"))
    assert "Entry 0:" in texts and "Entry 39:" not in texts  # indexed up to the cut, not past it
    # The same file read whole: the problem goes.
    report = Indexer(store, embedder, _indexer.settings).index_corpus(spec, force=True)
    assert report["problems"] == []
