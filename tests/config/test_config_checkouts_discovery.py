"""Which repository a cwd belongs to: checkout boundaries, linked worktrees, discovery from above."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hallouminate.browse import list_files
from hallouminate.config import corpus_for, discover_repositories, find_repo_root, resolve
from hallouminate.errors import InvalidParams
from support.files import write

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def make_repo(root: Path, name: str, pages: tuple[str, ...] = ("index.md",), extra: str = "") -> Path:
    write(root / ".hallouminate" / "config.toml", f'[[repository]]\nname = "{name}"\npath = "."\n{extra}')
    for page in pages:
        write(root / ".hallouminate" / "wiki" / page, f"# {page}\n")
    return root


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def wiki_files(cwd: Path) -> list[str]:
    return [f["path"] for f in list_files(corpus_for(resolve(cwd), None))["files"]]


# -- checkout boundaries ------------------------------------------------------------------------------------
def test_sibling_repositories_each_see_only_their_own_wiki(baseline: Path, tmp_path: Path) -> None:
    one = make_repo(tmp_path / "one", "one", ("alpha.md",))
    two = make_repo(tmp_path / "two", "two", ("beta.md",))
    (one / "src").mkdir()
    r1 = resolve(one / "src")
    assert (list(r1.corpora), r1.default_corpus) == (["repo:one:wiki"], "repo:one:wiki")
    assert wiki_files(one / "src") == ["alpha.md"]
    assert wiki_files(two) == ["beta.md"]


def test_the_repo_layer_search_stops_at_the_checkout_root(baseline: Path, tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer", "outer")
    git(outer, "init", "-q")
    nested = outer / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "src").mkdir()
    # A nested checkout without a layer of its own does not inherit the enclosing one's.
    assert find_repo_root(nested / "src") is None
    assert resolve(nested / "src").corpora == {}
    # Inside the outer checkout proper, the outer layer applies.
    assert find_repo_root(outer / "vendor") == outer
    # A directory that is not a checkout inherits from above as before.
    plain = make_repo(tmp_path / "plain", "plain")
    (plain / "a" / "b").mkdir(parents=True)
    assert find_repo_root(plain / "a" / "b") == plain


def test_a_linked_worktree_is_its_own_repository(baseline: Path, tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "proj", ("shared.md",))
    git(main, "init", "-q")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "init")
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt))
    assert (wt / ".git").is_file()
    write(wt / ".hallouminate" / "wiki" / "only-in-worktree.md", "# New\n")
    write(main / ".hallouminate" / "wiki" / "only-in-main.md", "# Main\n")
    (wt / "src").mkdir()

    from_wt = resolve(wt / "src")
    assert from_wt.corpora["repo:proj:wiki"].roots == (wt / ".hallouminate" / "wiki",)
    assert from_wt.repositories == {"proj": wt}
    assert wiki_files(wt / "src") == ["only-in-worktree.md", "shared.md"]
    assert wiki_files(main) == ["only-in-main.md", "shared.md"]
    # Same corpus name in both checkouts; the store key tells their rows apart.
    main_wiki, wt_wiki = resolve(main).corpora["repo:proj:wiki"], from_wt.corpora["repo:proj:wiki"]
    assert main_wiki.name == wt_wiki.name and main_wiki.store_key != wt_wiki.store_key

    # The baseline registering the main checkout under the same name gives way inside the worktree
    # (same git repository, another checkout) instead of clashing with the worktree's own layer.
    write(baseline, f'[[repository]]\nname = "proj"\npath = "{main}"\n')
    assert resolve(wt).corpora["repo:proj:wiki"].roots == (wt / ".hallouminate" / "wiki",)
    assert resolve(main).corpora["repo:proj:wiki"].roots == (main / ".hallouminate" / "wiki",)


def test_a_same_named_unrelated_repository_still_clashes(baseline: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other", "proj")
    git(other, "init", "-q")
    mine = make_repo(tmp_path / "mine", "proj")
    git(mine, "init", "-q")
    write(baseline, f'[[repository]]\nname = "proj"\npath = "{other}"\n')
    with pytest.raises(InvalidParams) as err:
        resolve(mine)
    assert "defined twice" in err.value.message


# -- discovery ------------------------------------------------------------------------------------------
def test_above_all_repositories_discovered_ones_contribute_corpora(baseline: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    make_repo(work / "a", "a")
    make_repo(work / "group" / "b", "b", extra='corpus_paths = ["docs"]\n')
    make_repo(work / "x1" / "x2" / "x3" / "d4", "depth4")
    make_repo(work / "y1" / "y2" / "y3" / "y4" / "d5", "depth5")
    make_repo(work / ".hidden" / "h", "hidden")
    make_repo(work / "node_modules" / "pkg", "ignored")
    write(work / ".gitignore", "node_modules/\n")
    resolved = resolve(work)
    assert sorted(resolved.repositories) == ["a", "b", "depth4"]
    assert set(resolved.corpora) == {"repo:a:wiki", "repo:b:wiki", "repo:b:corpus", "repo:depth4:wiki"}
    assert resolved.corpora["repo:b:corpus"].roots == (work / "group" / "b" / "docs",)
    assert resolved.discovered == (work / "a", work / "group" / "b", work / "x1" / "x2" / "x3" / "d4")
    # cwd is in no repository: no default corpus, and the error lists what there is.
    assert resolved.default_corpus is None
    with pytest.raises(InvalidParams) as err:
        corpus_for(resolved, None)
    assert "repo:a:wiki" in err.value.message

    write(baseline, "[discovery]\nmax_depth = 5\n")
    assert "depth5" in resolve(work).repositories
    write(baseline, "[discovery]\nmax_depth = 0\n")
    assert resolve(work).corpora == {}


def test_discovery_skips_broken_and_clashing_repositories_with_warnings(
    baseline: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    make_repo(work / "clone1", "proj")
    make_repo(work / "clone2", "proj")  # a second clone of the same project
    make_repo(work / "broken", "broken", extra="[search]\ntop_file = 3\n")
    make_repo(work / "fine", "fine", extra="[search]\ntop_files = 3\n")
    make_repo(work / "other", "other", extra="[search]\ntop_files = 7\n")
    resolved = resolve(work)
    assert sorted(resolved.repositories) == ["fine", "other", "proj"]
    assert resolved.repositories["proj"] == work / "clone1"
    assert resolved.settings.top_files == 10  # a discovered layer's settings are for inside it
    text = "\n".join(resolved.warnings)
    assert "broken" in text and "top_file" in text
    assert "clone2" in text and "defined twice" in text


def test_no_discovery_inside_a_checkout_or_a_repository(baseline: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    make_repo(checkout / "sub", "sub")
    git(checkout, "init", "-q")
    assert resolve(checkout).corpora == {}
    repo = make_repo(tmp_path / "repo", "repo")
    make_repo(repo / "inner", "inner")
    assert list(resolve(repo).corpora) == ["repo:repo:wiki"]


def test_discovery_is_bounded_and_does_not_follow_symlinks(tmp_path: Path) -> None:
    work = tmp_path / "work"
    make_repo(work / "real", "real")
    os.symlink(work / "real", work / "link")
    os.symlink(work, work / "loop")
    assert discover_repositories(work, 4) == ([work / "real"], False)
    for i in range(30):
        (work / f"d{i}").mkdir()
    found, truncated = discover_repositories(work, 4, max_dirs=10)
    assert truncated and len(found) <= 1


def test_discovery_settings_are_baseline_only(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", "r", extra="[discovery]\nmax_depth = 2\n")
    with pytest.raises(InvalidParams) as err:
        resolve(repo)
    assert "[discovery]" in err.value.message and "baseline" in err.value.message


def test_discovery_tells_its_observer_of_every_directory_it_reads(tmp_path: Path) -> None:
    work = tmp_path.resolve() / "work"
    make_repo(work / "a", "a")
    (work / "plain" / "x").mkdir(parents=True)
    (work / "chk" / "sub").mkdir(parents=True)
    git(work / "chk", "init", "-q")
    (work / "node_modules" / "pkg").mkdir(parents=True)
    write(work / ".gitignore", "node_modules/\n")

    class Recorder:
        def __init__(self) -> None:
            self.told: list[Path] = []

        def entering(self, directory: Path) -> None:
            self.told.append(directory)

    recorder = Recorder()
    assert discover_repositories(work, 4, observer=recorder) == ([work / "a"], False)
    told = set(recorder.told)
    # Each directory listed (its ignore files are read there), each .hallouminate, a checkout's info/exclude.
    for directory in (
        work,
        work / "a",
        work / "plain",
        work / "plain" / "x",
        work / "chk",
        work / "chk" / "sub",
    ):
        assert directory in told
    assert work / "a" / ".hallouminate" in told
    assert work / "chk" / ".git" / "info" in told
    # Nothing it does not read: ignored and hidden directories are not entered.
    assert not any("node_modules" in d.parts for d in told)
    # Told before it is read: the cwd first.
    assert recorder.told[0] == work
