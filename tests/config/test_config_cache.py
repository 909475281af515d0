"""The daemon's resolve cache: reused while nothing changed, never once a config or marker changed."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

from hallouminate.config import resolve
from hallouminate.config.cache import (
    DISCOVERY_MAX_AGE_SECS,
    MAX_AGE_SECS,
    MAX_WATCHED_ENTRIES,
    ResolveCache,
)
from hallouminate.config.discover import ScanObserver
from hallouminate.config.types import Resolved
from hallouminate.daemon.dirwatch import DirectoryWatch
from support.files import write


class CountingResolver:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, cwd: Path, observer: ScanObserver | None = None) -> Resolved:
        self.calls += 1
        return resolve(cwd, observer)


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


# -- answers from a discovery scan, cached under a real inotify watch ------------------------------------------
def make_above(tmp_path: Path) -> Path:
    """A directory above two repositories, with enough plain directories that a scan reads a few dozen."""
    work = tmp_path / "work"
    for name in ("one", "two"):
        write(
            work / "group" / name / ".hallouminate" / "config.toml",
            f'[[repository]]\nname = "{name}"\npath = "."\n',
        )
    for i in range(30):
        (work / "plain" / f"d{i}").mkdir(parents=True)
    return work


def watched_cache(resolver: CountingResolver, clock: Clock | None = None) -> ResolveCache:
    return ResolveCache(resolver, clock or Clock(), watch_factory=DirectoryWatch)


def test_a_discovery_is_cached_while_nothing_that_could_change_it_changes(
    baseline: Path, tmp_path: Path
) -> None:
    work = make_above(tmp_path)
    resolver = CountingResolver()
    cache = watched_cache(resolver)
    first = cache.resolve(work)
    assert sorted(first.repositories) == ["one", "two"]
    assert cache.resolve(work) is first
    # Files come and go in the directories scanned (code being edited): none can change the answer.
    write(work / "plain" / "d3" / "notes.txt", "draft\n")
    (work / "plain" / "d3" / "notes.txt").unlink()
    write(work / "group" / "one" / "README.md", "# one\n")
    assert cache.resolve(work) is first
    assert resolver.calls == 1
    assert cache.discoveries == 1
    cache.close()


def test_a_repository_created_below_is_found_by_the_next_request(baseline: Path, tmp_path: Path) -> None:
    work = make_above(tmp_path)
    resolver = CountingResolver()
    cache = watched_cache(resolver)
    assert "three" not in cache.resolve(work).repositories
    write(
        work / "plain" / "d7" / "three" / ".hallouminate" / "config.toml",
        '[[repository]]\nname = "three"\npath = "."\n',
    )
    assert (
        "three" in cache.resolve(work).repositories
    )  # no wait: inotify queued the event before mkdir returned
    # Removed again (a rename away counts too).
    (work / "plain" / "d7" / "three").rename(tmp_path / "three-moved")
    assert "three" not in cache.resolve(work).repositories
    assert resolver.calls == 3
    cache.close()


def test_a_scanned_directory_removed_and_made_again_at_once_is_seen_by_the_next_request(
    baseline: Path, tmp_path: Path
) -> None:
    # The corpus watcher's trap (ADR 0028): the new directory often gets the old one's inode number, and a
    # process inside the old one delays the kernel's report of its deletion. A discovery's watches still
    # see it: the parent's watch reports the removal at once, and a lost watch makes the answer stale.
    work = make_above(tmp_path)
    resolver = CountingResolver()
    cache = watched_cache(resolver)
    assert "two" in cache.resolve(work).repositories
    repo = work / "group" / "two"
    inside = subprocess.Popen(["sleep", "600"], cwd=repo / ".hallouminate")
    try:
        shutil.rmtree(repo)
        write(repo / ".hallouminate" / "config.toml", '[[repository]]\nname = "deux"\npath = "."\n')
        assert sorted(cache.resolve(work).repositories) == ["deux", "one"]
        assert inside.poll() is None  # the old directory was held all along
    finally:
        inside.kill()
        inside.wait()
    assert resolver.calls == 2
    cache.close()


def test_an_edited_discovered_config_or_ignore_file_is_seen_by_the_next_request(
    baseline: Path, tmp_path: Path
) -> None:
    work = make_above(tmp_path)
    cache = watched_cache(CountingResolver())
    assert set(cache.resolve(work).corpora) == {"repo:one:wiki", "repo:two:wiki"}
    # config.toml appears in a .hallouminate that had none: a repository where there was none.
    (work / "plain" / "d1" / ".hallouminate").mkdir()
    assert "late" not in cache.resolve(work).repositories
    write(
        work / "plain" / "d1" / ".hallouminate" / "config.toml", '[[repository]]\nname = "late"\npath = "."\n'
    )
    assert "late" in cache.resolve(work).repositories
    # A discovered repository's config gains a corpus.
    write(
        work / "group" / "one" / ".hallouminate" / "config.toml",
        '[[repository]]\nname = "one"\npath = "."\ncorpus_paths = ["docs"]\n',
    )
    assert "repo:one:corpus" in cache.resolve(work).corpora
    # An ignore file now hides a repository.
    write(work / "group" / ".gitignore", "two/\n")
    assert "two" not in cache.resolve(work).repositories
    cache.close()


def test_a_discovery_without_a_watch_is_not_cached(baseline: Path, tmp_path: Path) -> None:
    work = make_above(tmp_path)

    def refused() -> DirectoryWatch:
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    resolver = CountingResolver()
    cache = ResolveCache(resolver, Clock(), watch_factory=refused)
    lookup = cache.lookup(work)
    assert "one" in lookup.resolved.repositories and lookup.current_at is None
    cache.resolve(work)
    assert resolver.calls == 2


def test_a_config_edited_during_the_resolve_is_not_remembered_nor_called_current(
    baseline: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, top_files=4)

    def editing(cwd: Path, observer: ScanObserver | None = None) -> Resolved:
        resolved = resolve(cwd, observer)
        make_repo(tmp_path, top_files=9)  # lands after the read, before the answer is given
        return resolved

    cache = ResolveCache(editing, Clock())
    lookup = cache.lookup(repo)
    assert lookup.resolved.settings.top_files == 4 and lookup.current_at is None
    assert cache.lookup(repo).resolved.settings.top_files == 9


def test_watches_are_given_back(baseline: Path, tmp_path: Path) -> None:
    clock = Clock()
    cache = watched_cache(CountingResolver(), clock)
    before = inotify_fds()
    works = [make_above(tmp_path / f"w{i}") for i in range(MAX_WATCHED_ENTRIES + 1)]
    for work in works:
        cache.resolve(work)
    # At most MAX_WATCHED_ENTRIES answers hold watches: the oldest was dropped and its descriptor closed.
    assert len(inotify_fds() - before) == MAX_WATCHED_ENTRIES
    clock.now += DISCOVERY_MAX_AGE_SECS
    cache.resolve(make_repo(tmp_path))  # any lookup gives back the watches of answers too old to be used
    assert inotify_fds() - before == set()
    cache.resolve(works[0])
    assert len(inotify_fds() - before) == 1
    cache.close()
    assert inotify_fds() - before == set()


def inotify_fds() -> set[str]:
    found = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if os.readlink(fd) == "anon_inode:inotify":
                found.add(fd.name)
        except OSError:
            continue
    return found
