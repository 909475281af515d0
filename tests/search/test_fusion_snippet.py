"""Domain parts of search: RRF, query terms, snippets, the top_files cut."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hallouminate.analysis import query_terms
from hallouminate.search import best_possible, make_snippet, rrf
from hallouminate.search.assembly import FileEntry, cut, rank_files
from hallouminate.search.fusion import tied_ranks


def test_rrf_weights_ranks_and_duplicates() -> None:
    fused = rrf([["a", "b", "a"], ["b", "c"]], [1.0, 2.0], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert fused["c"] == pytest.approx(2 / 62)
    assert max(fused, key=fused.__getitem__) == "b"
    assert best_possible([1.0, 2.0], 60) == pytest.approx(3 / 61)
    assert rrf([], []) == {}
    with pytest.raises(ValueError):
        rrf([["a"]], [])


def test_scores_a_float32_step_apart_share_a_rank() -> None:
    # A float32 matrix-vector product (an in-memory vector search) gives one vector cosines up to 2^-23
    # apart depending on its row in the matrix: identical chunks must still count as equal evidence.
    cosine = np.float32(0.8146525)
    up = np.nextafter(cosine, np.float32(1))
    down = np.nextafter(np.nextafter(cosine, np.float32(0)), np.float32(0))
    rows = [
        {"id": "twin-c", "score": float(down)},
        {"id": "twin-b", "score": float(up)},
        {"id": "twin-a", "score": float(cosine)},
        {"id": "other", "score": float(cosine) - 1e-4},
    ]
    assert len({row["score"] for row in rows}) == 4
    # Equal scores list by id; a chunk 1e-4 lower is other evidence.
    assert tied_ranks(rows) == [("twin-a", 1), ("twin-b", 1), ("twin-c", 1), ("other", 4)]


def test_query_terms_drop_stopwords_and_punctuation() -> None:
    assert query_terms("How do I reset MY password? password!") == ["reset", "password"]
    assert query_terms("the of and ??? ...") == []
    # Folded to ASCII and stemmed as BM25 indexes them; "_" splits words, as any non-alphanumeric does.
    assert query_terms("naïve café_au_lait") == ["naiv", "cafe", "au", "lait"]


def test_snippet_short_text_is_whole_and_heading_dropped() -> None:
    assert make_snippet("## Title\n\nShort   body\ntext.", ["body"], 100) == "Short body text."
    assert make_snippet("## Only a heading", [], 100) == "## Only a heading"


def test_snippet_centres_on_the_terms() -> None:
    words = " ".join(f"filler{i}" for i in range(100))
    text = f"{words} the rollback command reverts a migration {words}"
    snippet = make_snippet(text, query_terms("rollback migrations"), 80)
    assert len(snippet) <= 80
    assert "rollback" in snippet and "migration" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    head = make_snippet(text, query_terms("absent"), 60)
    assert head.startswith("filler0 ") and head.endswith("…") and len(head) <= 60


def test_snippet_shows_the_words_bm25_matched() -> None:
    # The words of "running jobs" as BM25 reads them: "run" and "job" (before, "runn" and "jobs": none).
    words = " ".join(f"filler{i}" for i in range(60))
    text = f"{words} how to run the job again {words}"
    snippet = make_snippet(text, query_terms("running jobs"), 60)
    assert "run the job" in snippet and snippet.startswith("…")


def test_snippet_never_exceeds_width() -> None:
    text = "word " * 500 + "target " + "x" * 400
    for width in (16, 17, 50, 239, 240):
        assert len(make_snippet(text, ["target"], width)) <= width


def _file(corpus: str, path: str, score: float) -> FileEntry[Any]:
    return FileEntry(corpus, path, score, abs_path=f"/{path}")


def test_ties_prefer_the_priority_corpus_then_path() -> None:
    files = [
        _file("b", "z.md", 0.5),
        _file("a", "y.md", 0.5),
        _file("wiki", "x.md", 0.5),
        _file("a", "a.md", 0.9),
    ]
    ranked = rank_files(files, "wiki")
    assert [(f.corpus, f.path) for f in ranked] == [
        ("a", "a.md"),
        ("wiki", "x.md"),
        ("a", "y.md"),
        ("b", "z.md"),
    ]


def test_priority_corpus_keeps_reserved_slots() -> None:
    others = [_file("docs", f"d{i}.md", 1.0 - i / 100) for i in range(10)]
    wiki = [_file("wiki", f"w{i}.md", 0.5 - i / 100) for i in range(3)]
    ranked = rank_files(others + wiki, "wiki")
    chosen = cut(ranked, 8, "wiki")
    assert len(chosen) == 8
    assert [f.path for f in chosen if f.corpus == "wiki"] == ["w0.md", "w1.md"]  # 8 // 4 slots
    assert [f.score for f in chosen] == sorted((f.score for f in chosen), reverse=True)
    assert cut(ranked, 8, None) == ranked[:8]
