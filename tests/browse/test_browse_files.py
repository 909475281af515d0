"""list_files, list_tree, list_corpora and corpus_stats over real directories."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from hallouminate.browse import corpus_stats, list_corpora, list_files, list_tree
from hallouminate.config import CorpusSpec, resolve
from hallouminate.protocol.results import FileProblem
from support.files import touch


def spec(*roots: Path, globs: tuple[str, ...] = ("**/*.md",), exclude: tuple[str, ...] = ()) -> CorpusSpec:
    return CorpusSpec("docs", "custom", tuple(roots), globs, exclude, None)


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "docs"
    for rel in ["index.md", "guides/setup.md", "guides/deep/more.md", "guides/notes.txt", "img/logo.png"]:
        touch(root / rel)
    (root / "empty").mkdir()
    monkeypatch.chdir(tmp_path)  # globs must be resolved from the root, never from the process cwd
    return root


def test_list_files_honours_globs_per_root(docs: Path) -> None:
    result = list_files(spec(docs))
    assert result == {
        "corpus": "docs",
        "files": [
            {"path": "guides/deep/more.md", "absolute_path": str(docs / "guides/deep/more.md")},
            {"path": "guides/setup.md", "absolute_path": str(docs / "guides/setup.md")},
            {"path": "index.md", "absolute_path": str(docs / "index.md")},
        ],
    }
    anchored = list_files(spec(docs, globs=("guides/*.md",)))
    assert [f["path"] for f in anchored["files"]] == ["guides/setup.md"]
    excluded = list_files(spec(docs, exclude=("deep/",)))
    assert [f["path"] for f in excluded["files"]] == ["guides/setup.md", "index.md"]


def test_list_tree_groups_and_prunes(docs: Path) -> None:
    result = list_tree(spec(docs))
    assert result["corpus"] == "docs" and result["roots"] == [str(docs)]
    tree = result["tree"]
    assert (tree["path"], tree["absolute_path"]) == ("", str(docs))
    assert tree["files"] == [{"path": "index.md", "absolute_path": str(docs / "index.md")}]
    # `empty` and `img` hold no Markdown: pruned.
    (guides,) = tree["subdirs"]
    assert (guides["path"], guides["absolute_path"]) == ("guides", str(docs / "guides"))
    assert [f["path"] for f in guides["files"]] == ["guides/setup.md"]
    (deep,) = guides["subdirs"]
    assert deep == {
        "path": "guides/deep",
        "absolute_path": str(docs / "guides" / "deep"),
        "files": [{"path": "guides/deep/more.md", "absolute_path": str(docs / "guides/deep/more.md")}],
        "subdirs": [],
    }


def test_tree_levels_sort_by_name(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for rel in ["a-b.md", "a/x.md", "b.md", "a/c/d.md"]:
        touch(root / rel)
    tree = list_tree(spec(root))["tree"]
    assert [f["path"] for f in tree["files"]] == ["a-b.md", "b.md"]
    assert [d["path"] for d in tree["subdirs"]] == ["a"]
    assert [d["path"] for d in tree["subdirs"][0]["subdirs"]] == ["a/c"]


def test_several_roots_merge_first_root_wins(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    touch(one / "same.md")
    touch(one / "shared" / "a.md")
    touch(two / "same.md")
    touch(two / "shared" / "b.md")
    touch(two / "only" / "c.md")
    files = list_files(spec(one, two, tmp_path / "missing"))["files"]
    assert [(f["path"], f["absolute_path"]) for f in files] == [
        ("only/c.md", str(two / "only" / "c.md")),
        ("same.md", str(one / "same.md")),
        ("shared/a.md", str(one / "shared" / "a.md")),
        ("shared/b.md", str(two / "shared" / "b.md")),
    ]
    result = list_tree(spec(one, two))
    assert result["roots"] == [str(one), str(two)]
    tree = result["tree"]
    assert tree["absolute_path"] == str(one)
    only, shared = tree["subdirs"]
    assert only["absolute_path"] == str(two / "only")
    assert shared["absolute_path"] == str(one / "shared")
    assert [f["absolute_path"] for f in shared["files"]] == [
        str(one / "shared/a.md"),
        str(two / "shared/b.md"),
    ]


def test_empty_corpus(tmp_path: Path) -> None:
    assert list_files(spec(tmp_path / "nothing")) == {"corpus": "docs", "files": []}
    tree = list_tree(spec(tmp_path / "nothing"))["tree"]
    assert (tree["files"], tree["subdirs"]) == ([], [])


@dataclass
class State:
    indexed_at_ms: int


def test_corpus_stats_counts_indexed_and_unindexed(docs: Path) -> None:
    states = {"index.md": State(1000), "guides/setup.md": State(2500), "gone.md": State(1500)}
    assert corpus_stats(spec(docs), states, 7) == {
        "corpus": "docs",
        "indexed_files": 3,
        "total_chunks": 7,
        "last_indexed_ms": 2500,
        "first_indexed_ms": 1000,  # the oldest file state: KuraDB's createAt (list_rag)
        "unindexed_files": 1,  # guides/deep/more.md
        "skipped_files": 0,
        "problems": [],
    }
    assert corpus_stats(spec(docs), {}, 0) == {
        "corpus": "docs",
        "indexed_files": 0,
        "total_chunks": 0,
        "last_indexed_ms": None,
        "first_indexed_ms": None,
        "unindexed_files": 3,
        "skipped_files": 0,
        "problems": [],
    }
    # A file the indexer skipped (binary, empty, ...) is not waiting for an index run; a problem of a file
    # gone from disk is not shown.
    problems: dict[str, FileProblem] = {
        path: {"path": path, "problem": "binary", "detail": "d", "indexed": False, "found_ms": 1}
        for path in ("guides/deep/more.md", "gone.md", "elsewhere.md")
    }
    result = corpus_stats(spec(docs), states, 7, problems)
    assert (result["unindexed_files"], result["skipped_files"]) == (0, 1)
    assert [p["path"] for p in result.get("problems", [])] == ["guides/deep/more.md"]


def test_list_corpora_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    baseline = touch(
        tmp_path / "xdg" / "hallouminate" / "config.toml",
        f'[[corpus]]\nname = "notes"\npaths = ["{tmp_path / "n"}"]\n',
    )
    assert baseline.is_file()
    repo = tmp_path / "repo"
    touch(
        repo / ".hallouminate" / "config.toml",
        '[[repository]]\nname = "acme"\npath = "."\ncorpus_paths = ["docs"]\ncorpus_exclude = ["x/"]\n',
    )
    result = list_corpora(resolve(repo))
    assert result == {
        "corpora": [
            {
                "name": "notes",
                "kind": "custom",
                "paths": [str(tmp_path / "n")],
                "globs": ["**/*.md"],
                "exclude": [],
                "repository": None,
            },
            {
                "name": "repo:acme:wiki",
                "kind": "wiki",
                "paths": [str(repo / ".hallouminate" / "wiki")],
                "globs": ["**/*.md"],
                "exclude": [],
                "repository": "acme",
            },
            {
                "name": "repo:acme:corpus",
                "kind": "corpus",
                "paths": [str(repo / "docs")],
                "globs": ["**/*.md"],
                "exclude": ["x/"],
                "repository": "acme",
            },
        ],
        "default_corpus": "repo:acme:wiki",
        "repository": "acme",
        "warnings": [],
    }
