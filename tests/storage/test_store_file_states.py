"""The file states a store keeps between index runs are, after any sequence of its writes, exactly what a
fresh read of the table gives (ADR 0061): a no-op re-index trusts them to skip every unchanged file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hallouminate.storage import Store
from support.store_rows import DIM, chunk_rows

PATHS = ["a.md", "b.md", "dir/c.md", "dir/d.md"]
CORPORA = ["one", "two"]

write = st.one_of(
    st.tuples(
        st.just("replace"),
        st.sampled_from(CORPORA),
        st.dictionaries(st.sampled_from(PATHS), st.integers(0, 3), min_size=1, max_size=3),
        st.integers(0, 9),
    ),
    st.tuples(st.just("delete"), st.sampled_from(CORPORA), st.lists(st.sampled_from(PATHS), max_size=3)),
    st.tuples(
        st.just("stats"),
        st.sampled_from(CORPORA),
        st.dictionaries(st.sampled_from(PATHS), st.integers(1, 500), min_size=1, max_size=3),
    ),
    st.tuples(st.just("drop"), st.sampled_from(CORPORA)),
    st.tuples(st.just("read"), st.sampled_from(CORPORA)),
)


def apply(store: Store, step: tuple) -> None:  # type: ignore[type-arg]
    kind, corpus = step[0], step[1]
    if kind == "replace":
        files, version = step[2], step[3]
        store.replace_files(
            corpus,
            {
                path: chunk_rows(path, [f"{path} v{version} #{i}" for i in range(n)], digest=f"h{version}")
                for path, n in files.items()
            },
        )
    elif kind == "delete":
        store.delete_files(corpus, step[2])
    elif kind == "stats":
        store.update_stats_many(corpus, {path: (size, size * 7) for path, size in step[2].items()})
    elif kind == "drop":
        store.delete_corpus(corpus)
    else:
        store.file_states(corpus)  # fills what the store keeps for that corpus


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(write, min_size=1, max_size=10))
def test_kept_states_equal_a_fresh_read_after_any_writes(tmp_path_factory, steps) -> None:  # type: ignore[no-untyped-def]
    path: Path = tmp_path_factory.mktemp("db")
    store = Store(path, DIM)
    for corpus in CORPORA:
        store.file_states(corpus)  # kept from the start: every write below must keep it true
    for step in steps:
        apply(store, step)
    fresh = Store(path, DIM)
    for corpus in CORPORA:
        assert store.file_states(corpus) == fresh.file_states(corpus), (corpus, steps)


def test_a_caller_gets_its_own_copy(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["one"])})
    states = store.file_states("c")
    store.replace_files("c", {"b.md": chunk_rows("b.md", ["two"])})
    store.delete_files("c", ["a.md"])
    assert set(states) == {"a.md"}  # taken before the writes: unchanged by them
    assert set(store.file_states("c")) == {"b.md"}


def test_each_kind_of_write_keeps_the_states_true(tmp_path: Path) -> None:
    store = Store(tmp_path / "db", DIM)
    fresh = lambda: Store(tmp_path / "db", DIM).file_states("c")  # noqa: E731 - a read by a new handle
    store.file_states("c")
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["a1", "a2"]), "b.md": chunk_rows("b.md", ["b"])})
    assert store.file_states("c") == fresh()  # appended (new files)
    store.replace_files("c", {"a.md": chunk_rows("a.md", ["a new"], digest="h2")})
    assert store.file_states("c") == fresh() and store.file_states("c")["a.md"].content_hash == "h2"  # merged
    store.update_stats_many("c", {"b.md": (555, 777), "gone.md": (1, 2)})
    assert store.file_states("c") == fresh() and store.file_states("c")["b.md"].size == 555
    store.replace_files("c", {"b.md": []})
    assert store.file_states("c") == fresh() and set(store.file_states("c")) == {"a.md"}
    store.delete_files("c", ["a.md"])
    assert store.file_states("c") == fresh() == {}
    store.replace_files("c", {"d.md": chunk_rows("d.md", ["d"])})
    store.delete_corpus("c")
    assert store.file_states("c") == fresh() == {}
    store.replace_files("c", {"e.md": chunk_rows("e.md", ["e"])})
    store.rebuild()
    assert store.file_states("c") == fresh() == {}
