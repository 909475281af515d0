"""The indexer over a real store and the real model: a forced rebuild, renames, the new counters."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from hallouminate.embedding import Embedder
from support.indexer import indexer_for


def test_force_re_reads_and_re_embeds_every_file(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    first = indexer.index_corpus(spec)
    assert first["chunks_total"] == 4 and not first["forced"]
    stamps = {path: state.indexed_at_ms for path, state in store.file_states(spec.store_key).items()}
    assert indexer.index_corpus(spec)["files_upserted"] == 0  # unchanged: nothing to do
    forced = indexer.index_corpus(spec, force=True)
    assert forced["forced"] and forced["files_upserted"] == 3 and forced["chunks_written"] == 4
    assert forced["chunks_total"] == 4 and forced["renamed"] == 0 and forced["files_deleted"] == 0
    after = store.file_states(spec.store_key)
    assert all(after[path].indexed_at_ms >= stamps[path] for path in stamps)
    assert [r["text"] for r in store.file_rows(spec.store_key, "sub/beta.md")] == ["# Beta\n\nAbout beta."]


def test_a_renamed_page_keeps_its_rows_without_re_embedding(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    old_rows = store.file_writes(spec.store_key, "alpha.md")
    os.rename(wiki / "alpha.md", wiki / "sub" / "gamma.md")
    report = indexer.index_corpus(spec)
    assert report["renamed"] == 1
    # Nothing embedded, nothing counted as deleted or upserted: the rows moved.
    assert report["chunks_written"] == 0 and report["files_upserted"] == 0 and report["files_deleted"] == 0
    assert report["chunks_total"] == 4
    assert set(store.file_states(spec.store_key)) == {"index.md", "sub/beta.md", "sub/gamma.md"}
    moved = store.file_writes(spec.store_key, "sub/gamma.md")
    assert [r["vector"] for r in moved] == [r["vector"] for r in old_rows]
    assert [r["text"] for r in moved] == [r["text"] for r in old_rows]
    assert {r["abs_path"] for r in moved} == {str(wiki / "sub" / "gamma.md")}
    st = (wiki / "sub" / "gamma.md").stat()
    assert {(r["file_size"], r["file_mtime_ns"]) for r in moved} == {(st.st_size, st.st_mtime_ns)}
    # The stored stat is the new file's: the next run does not even read it.
    again = indexer.index_corpus(spec)
    assert (again["renamed"], again["files_upserted"], again["files_touched"]) == (0, 0, 0)


def test_a_rename_with_an_edit_is_re_embedded_and_a_deletion_still_counts(setup, wiki: Path) -> None:
    indexer, store, spec = setup
    indexer.index_corpus(spec)
    (wiki / "alpha.md").rename(wiki / "moved.md")
    (wiki / "moved.md").write_text((wiki / "moved.md").read_text() + "\nOne more line.\n")
    (wiki / "index.md").unlink()
    report = indexer.index_corpus(spec)
    assert (report["renamed"], report["files_upserted"], report["files_deleted"]) == (0, 1, 2)
    assert set(store.file_states(spec.store_key)) == {"moved.md", "sub/beta.md"}


def test_a_copy_is_not_a_rename_and_force_moves_nothing(setup, wiki: Path) -> None:
    indexer, _store, spec = setup
    indexer.index_corpus(spec)
    shutil.copy(wiki / "alpha.md", wiki / "copy.md")  # the old path stays: embedded as new
    report = indexer.index_corpus(spec)
    assert (report["renamed"], report["files_upserted"]) == (0, 1)
    (wiki / "copy.md").rename(wiki / "copy2.md")
    forced = indexer.index_corpus(spec, force=True)
    assert (forced["renamed"], forced["files_upserted"], forced["files_deleted"]) == (0, 4, 1)


def test_frontmatter_unparsed_counts_every_such_file_of_the_corpus(setup, wiki: Path) -> None:
    indexer, _store, spec = setup
    (wiki / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n\nBody.\n")
    first = indexer.index_corpus(spec)
    assert first["frontmatter_unparsed"] == 1 and [e["path"] for e in first["frontmatter_errors"]] == [
        "broken.md"
    ]
    # Unchanged since: not re-read (frontmatter_errors lists this run's), still counted.
    second = indexer.index_corpus(spec)
    assert second["frontmatter_errors"] == [] and second["frontmatter_unparsed"] == 1
    # Renamed: its problem goes with it, still one.
    (wiki / "broken.md").rename(wiki / "broken-too.md")
    moved = indexer.index_corpus(spec)
    assert moved["renamed"] == 1 and moved["frontmatter_unparsed"] == 1
    assert [p["path"] for p in moved["problems"]] == ["broken-too.md"]
    (wiki / "broken-too.md").write_text("---\ntitle: fixed\n---\n# Broken\n\nBody.\n")
    assert indexer.index_corpus(spec)["frontmatter_unparsed"] == 0


def test_a_non_markdown_rename_is_re_embedded(tmp_path: Path, embedder: Embedder) -> None:
    """A text file's chunks carry its file name (the title): moving its rows would keep the old name."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.txt").write_text("Plain notes about the walrus ledger.\n")
    indexer, _store, spec = indexer_for(tmp_path, embedder, root, max_file_bytes=10_000)
    spec = replace(spec, globs=("**/*.txt",))
    indexer.index_corpus(spec)
    (root / "a.txt").rename(root / "b.txt")
    report = indexer.index_corpus(spec)
    assert (report["renamed"], report["files_upserted"], report["files_deleted"]) == (0, 1, 1)
