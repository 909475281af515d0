"""The daemon's resolve cache: reused while nothing changed, never once a config or marker changed."""

from __future__ import annotations

from pathlib import Path

from conftest import write
from hallouminate.config import resolve
from hallouminate.config.cache import MAX_AGE_SECS, ResolveCache
from hallouminate.config.types import Resolved


class CountingResolver:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, cwd: Path) -> Resolved:
        self.calls += 1
        return resolve(cwd)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_repo(tmp_path: Path, top_files: int = 4) -> Path:
    repo = tmp_path / "proj"
    write(
        repo / ".hallouminate" / "config.toml",
        f'[search]\ntop_files = {top_files}\n\n[[repository]]\nname = "proj"\npath = "."\n',
    )
    (repo / "src").mkdir(parents=True, exist_ok=True)
    return repo


def test_an_unchanged_repository_is_resolved_once(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    resolver = CountingResolver()
    cache = ResolveCache(resolver, Clock())
    first = cache.resolve(repo / "src")
    assert cache.resolve(repo / "src") is first
    assert resolver.calls == 1


def test_an_edited_repo_config_is_seen_by_the_next_request(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, top_files=4)
    cache = ResolveCache(CountingResolver(), Clock())
    assert cache.resolve(repo).settings.top_files == 4
    # Same size and (on a coarse clock) possibly the same mtime: the inode/ctime still differ.
    make_repo(tmp_path, top_files=7)
    assert cache.resolve(repo).settings.top_files == 7


def test_an_edited_baseline_is_seen_by_the_next_request(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    cache = ResolveCache(CountingResolver(), Clock())
    assert cache.resolve(repo).settings.chunks_per_file == 3
    write(baseline, "[search]\nchunks_per_file = 5\n")
    assert cache.resolve(repo).settings.chunks_per_file == 5


def test_a_repo_layer_appearing_between_cwd_and_the_cached_root_wins(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    inner = repo / "src"
    cache = ResolveCache(CountingResolver(), Clock())
    assert cache.resolve(inner).repository_name == "proj"
    write(inner / ".hallouminate" / "config.toml", '[[repository]]\nname = "inner"\npath = "."\n')
    assert cache.resolve(inner).repository_name == "inner"


def test_entries_expire(baseline: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    resolver, clock = CountingResolver(), Clock()
    cache = ResolveCache(resolver, clock)
    cache.resolve(repo)
    clock.now += MAX_AGE_SECS + 0.1
    cache.resolve(repo)
    assert resolver.calls == 2


def test_requests_from_above_every_repository_are_not_cached(baseline: Path, tmp_path: Path) -> None:
    make_repo(tmp_path)
    resolver = CountingResolver()
    cache = ResolveCache(resolver, Clock())
    above = tmp_path
    assert "repo:proj:wiki" in cache.resolve(above).corpora  # discovered by scanning below
    cache.resolve(above)
    assert resolver.calls == 2
