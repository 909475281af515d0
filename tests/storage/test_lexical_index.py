"""The in-memory BM25 index: the one analyser (ADR 0019), corpus scoping that never scores, exact upkeep."""

from __future__ import annotations

import pyarrow as pa

from hallouminate.analysis import query_terms
from hallouminate.storage.lexical import LexicalIndex


def rows(corpus: str, path: str, *texts: str) -> pa.Table:
    return pa.table(
        {
            "id": [f"{corpus}|{path}|{i}" for i in range(len(texts))],
            "corpus": [corpus] * len(texts),
            "path": [path] * len(texts),
            "text": list(texts),
        }
    )


def ids(index: LexicalIndex, query: str, corpora: list[str], limit: int = 10) -> list[str]:
    """The hits for ``query``'s tokens, as ``ground`` asks."""
    return [row_id for row_id, _ in index.search(query_terms(query), corpora, limit)]


def test_words_match_by_stem_case_and_accents() -> None:
    index = LexicalIndex()
    index.add(rows("c", "a.md", "Configured the Café retries", "nothing relevant here"))
    assert ids(index, "configuring", ["c"]) == ["c|a.md|0"]
    assert ids(index, "cafe", ["c"]) == ["c|a.md|0"]
    assert ids(index, "RETRY", ["c"]) == ["c|a.md|0"]


def test_the_index_reads_text_with_the_one_analyser() -> None:
    # Issue 13: "running jobs" matched "how to run the job" here, and the gate then looked for other words.
    index = LexicalIndex()
    index.add(rows("c", "a.md", "how to run the job", "my_job_id"))
    assert ids(index, "running jobs", ["c"]) == ["c|a.md|0", "c|a.md|1"]  # "_" splits words too
    # Tokens are looked up as given, not analysed again: the stem "configur" is found, "configuring" is not.
    index.add(rows("c", "b.md", "configuring"))
    assert ids(index, "configuring", ["c"]) == ["c|b.md|0"]
    assert index.search(["configur"], ["c"], 10) and not index.search(["configuring"], ["c"], 10)


def test_stop_words_are_indexed_but_never_looked_for() -> None:
    index = LexicalIndex()
    index.add(rows("c", "a.md", "how do I get there", "the and of it"))
    # A query drops them (ours, not only Lucene's 33: "how", "do" and "i" are not among those) ...
    assert query_terms("how do I") == []
    # ... but the text keeps them, so a chunk's length in BM25 counts every word it holds.
    assert ids(index, "get", ["c"]) == ["c|a.md|0"]
    assert {row_id for row_id, _ in index.search(["the"], ["c"], 10)} == {"c|a.md|1"}


def test_the_corpus_scope_filters_without_adding_to_any_score() -> None:
    index = LexicalIndex()
    index.add(rows("one", "a.md", "rollback plan for migrations", "unrelated words"))
    index.add(rows("two", "a.md", "rollback plan for migrations"))
    both = dict(index.search(["rollback"], ["one", "two"], 10))
    assert set(both) == {"one|a.md|0", "two|a.md|0"}
    assert dict(index.search(["rollback"], ["one"], 10)) == {"one|a.md|0": both["one|a.md|0"]}
    assert index.search(["rollback"], [], 10) == []
    assert index.search(["rollback"], ["three"], 10) == []


def test_replacing_a_file_drops_its_old_chunks_and_only_its_own() -> None:
    index = LexicalIndex()
    index.add(rows("c", "a.md", "alpha", "alpha bravo"))
    index.add(rows("c", "b.md", "alpha"))
    index.replace_files("c", ["a.md"], rows("c", "a.md", "charlie"))
    assert ids(index, "alpha", ["c"]) == ["c|b.md|0"]
    assert ids(index, "charlie", ["c"]) == ["c|a.md|0"]
    index.replace_files("c", ["b.md"], None)
    assert ids(index, "alpha", ["c"]) == []


def test_paths_that_look_alike_are_different_files() -> None:
    index = LexicalIndex()
    index.add(rows("c", 'a "b".md', "delta"))
    index.add(rows("c", "a", "delta"))
    index.add(rows("c a", "md", "delta"))
    index.replace_files("c", ['a "b".md'], None)
    assert sorted(ids(index, "delta", ["c", "c a"])) == ["c a|md|0", "c|a|0"]


def test_deleting_a_corpus_leaves_the_others() -> None:
    index = LexicalIndex()
    index.add(rows("one", "a.md", "echo"))
    index.add(rows("two", "a.md", "echo"))
    index.delete_corpus("one")
    assert ids(index, "echo", ["one", "two"]) == ["two|a.md|0"]
    assert index.num_docs() == 1


def test_limit_keeps_the_best() -> None:
    index = LexicalIndex()
    index.add(rows("c", "a.md", "foxtrot", "foxtrot foxtrot foxtrot golf", "golf"))
    assert ids(index, "foxtrot", ["c"], limit=1) == ["c|a.md|1"]


def test_a_corpus_holding_every_chunk_is_searched_without_its_clause_and_others_stay_out() -> None:
    # The corpus clause is left out while the corpora asked for hold every chunk (lexical.py ``_covers``);
    # the moment another corpus has a chunk, it is back, so that corpus never leaks into the search.
    index = LexicalIndex()
    index.add(rows("a", "x.md", "retry budget", "retry storm"))
    assert ids(index, "retry", ["a"]) == ["a|x.md|0", "a|x.md|1"]
    index.add(rows("b", "y.md", "retry elsewhere"))
    assert ids(index, "retry", ["a"]) == ["a|x.md|0", "a|x.md|1"]
    assert ids(index, "retry", ["a", "b"]) == ["a|x.md|0", "a|x.md|1", "b|y.md|0"]
    index.delete_corpus("b")
    assert ids(index, "retry", ["a", "b"]) == ["a|x.md|0", "a|x.md|1"]
    index.replace_files("b", ["y.md"], rows("b", "y.md", "retry again"))
    assert ids(index, "retry", ["a"]) == ["a|x.md|0", "a|x.md|1"]
