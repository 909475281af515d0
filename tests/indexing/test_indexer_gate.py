"""The indexer over a real store and the real model: change gate, deletions, skips."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hallouminate.indexing import Indexer


def counts(report: dict[str, Any]) -> tuple[int, ...]:
    keys = ("files_seen", "files_upserted", "files_touched", "files_deleted", "files_skipped")
    return tuple(report[k] for k in keys)


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_first_run_then_unchanged_then_touched_then_edited(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    events: list[dict[str, Any]] = []
    first = indexer.index_corpus(spec, events.append)
    assert counts(first) == (3, 3, 0, 0, 0)
    assert first["chunks_written"] == store.count_rows(spec.store_key) == 4
    assert set(first) == {
        "corpus", "files_seen", "files_upserted", "files_touched", "files_deleted", "files_skipped",
        "skipped", "renamed", "forced",
        "frontmatter_errors", "frontmatter_unparsed", "chunks_written", "chunks_total", "seconds", "problems",
    }  # fmt: skip
    total_bytes = sum(p.stat().st_size for p in wiki.rglob("*.md"))
    assert events[-1] == {
        "corpus": spec.name,
        "done": 3,
        "total": 3,
        "path": None,
        "bytes_done": total_bytes,
        "bytes_total": total_bytes,
        "chunks_done": 4,
    }

    assert counts(indexer.index_corpus(spec)) == (3, 0, 0, 0, 0)

    bump_mtime(wiki / "alpha.md")  # same bytes, new mtime: only the stat is refreshed
    touched = indexer.index_corpus(spec)
    assert counts(touched) == (3, 0, 1, 0, 0) and touched["chunks_written"] == 0
    assert store.file_states(spec.store_key)["alpha.md"].mtime_ns == (wiki / "alpha.md").stat().st_mtime_ns
    assert counts(indexer.index_corpus(spec)) == (3, 0, 0, 0, 0)

    (wiki / "alpha.md").write_text("# Alpha\n\nRewritten.\n")
    edited = indexer.index_corpus(spec)
    assert counts(edited) == (3, 1, 0, 0, 0) and edited["chunks_written"] == 1
    assert [r["text"] for r in store.file_rows(spec.store_key, "alpha.md")] == ["# Alpha\n\nRewritten."]


def test_deleted_files_lose_their_rows(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    (wiki / "sub" / "beta.md").unlink()
    report = indexer.index_corpus(spec)
    assert counts(report) == (2, 0, 0, 1, 0)
    assert set(store.file_states(spec.store_key)) == {"index.md", "alpha.md"}


def test_bad_files_are_skipped_and_keep_their_old_rows(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    before = store.file_rows(spec.store_key, "alpha.md")
    (wiki / "alpha.md").write_bytes(b"# Alpha\n\n\xff\xfe broken bytes\n")
    (wiki / "huge.md").write_text("# Huge\n\n" + "x " * 6000)
    report = indexer.index_corpus(spec)
    assert counts(report) == (4, 0, 0, 0, 2)
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}
    assert "UTF-8" in reasons["alpha.md"] and "[indexing] max_text_file_size" in reasons["huge.md"]
    assert store.file_rows(spec.store_key, "alpha.md") == before
    assert "huge.md" not in store.file_states(spec.store_key)
    problems = {p["path"]: p for p in report["problems"]}
    assert problems["alpha.md"]["problem"] == "not-utf8" and not problems["alpha.md"]["indexed"]
    assert problems["alpha.md"]["detail"].endswith("the rows of its last indexed version are kept")
    assert problems["huge.md"]["problem"] == "too-large"
    # Still skipped next time (the stored stat was not updated), and fixed files are picked up.
    assert counts(indexer.index_corpus(spec))[4] == 2
    (wiki / "alpha.md").write_text("# Alpha\n\nFixed.\n")
    fixed = indexer.index_corpus(spec)
    assert counts(fixed)[1] == 1 and [p["path"] for p in fixed["problems"]] == ["huge.md"]


def test_a_file_back_to_its_indexed_bytes_loses_its_skip(setup, wiki: Path) -> None:
    indexer, _store, spec = setup
    indexer.index_corpus(spec)
    original = (wiki / "alpha.md").read_bytes()
    (wiki / "alpha.md").write_bytes(b"\x00binary now")
    assert [p["problem"] for p in indexer.index_corpus(spec)["problems"]] == ["binary"]
    # The very bytes its rows were made from, under a new mtime: not merely "touched" with the skip kept.
    (wiki / "alpha.md").write_bytes(original)
    bump_mtime(wiki / "alpha.md")
    assert indexer.index_corpus(spec)["problems"] == []


def test_blank_file_drops_its_rows(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    (wiki / "alpha.md").write_text("\n")
    assert counts(indexer.index_corpus(spec)) == (3, 1, 0, 0, 0)
    assert "alpha.md" not in store.file_states(spec.store_key)
    # From then on skipped, with its reason: an index run cannot give it rows.
    again = indexer.index_corpus(spec)
    assert counts(again) == (3, 0, 0, 0, 1)
    assert [(p["path"], p["problem"], p["detail"]) for p in again["problems"]] == [
        ("alpha.md", "empty", "only whitespace")
    ]


def test_index_paths_refreshes_only_the_named_files(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    (wiki / "new.md").write_text("# New\n\nA new page.\n")
    (wiki / "sub" / "beta.md").unlink()
    (wiki / "alpha.md").write_text("# Alpha\n\nChanged but not named.\n")
    report = indexer.index_paths(spec, ["new.md", "sub/beta.md"])
    assert counts(report) == (1, 1, 0, 1, 0)
    assert set(store.file_states(spec.store_key)) == {"index.md", "alpha.md", "new.md"}
    assert "Changed" not in store.file_rows(spec.store_key, "alpha.md")[0]["text"]
    with pytest.raises(Exception, match="corpus-relative"):
        indexer.index_paths(spec, ["../escape.md"])


def test_many_files_embed_across_batches(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    for i in range(40):
        (wiki / f"page-{i:02}.md").write_text(f"# Page {i}\n\nBody {i}.\n\n## Part\n\nMore {i}.\n")
    report = indexer.index_corpus(spec)
    assert report["files_upserted"] == 43 and report["chunks_written"] == 84
    rows = store.file_rows(spec.store_key, "page-07.md")
    assert [(r["heading_path"], r["line_start"], r["line_end"]) for r in rows] == [
        (["Page 7"], 1, 3),
        (["Page 7", "Part"], 5, 7),
    ]


def test_chunk_budget_is_clamped_to_the_model(setup) -> None:
    from dataclasses import replace

    indexer, store, _ = setup
    assert indexer.budget == 254  # 256 model tokens minus [CLS] and [SEP]
    assert Indexer(store, indexer.embedder, replace(indexer.settings, chunk_tokens=4096)).budget == 254
    assert Indexer(store, indexer.embedder, replace(indexer.settings, chunk_tokens=64)).budget == 62
