"""PathMatcher (the walk's per-file pattern test) gives pathspec's own verdict on every path, and skips
pathspec's per-call work when only positive patterns can match (issue 20: the no-op walk at 136k files)."""

from __future__ import annotations

from pathlib import Path

import pathspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hallouminate.config import CorpusSpec
from hallouminate.ignore import PathMatcher, compile_gitignore
from hallouminate.indexing.walker import corpus_files
from support.files import touch

# Pieces of gitignore patterns: names, wildcards, character classes, escapes, a dot suffix.
_PATTERN_PIECES = [
    "a",
    "b",
    "x",
    "drafts",
    "*",
    "**",
    "?",
    "*.md",
    "x.md",
    "[ab]",
    "[!a]",
    "[a-c]*",
    r"\*",
    r"\!",
    ".md",
]
# Whole patterns the walks of real corpora use, and the odd lines (comments, blanks, escapes, a bad range).
_WHOLE_PATTERNS = [
    "**/*.md",
    "*.md",
    "drafts/",
    "**/x",
    "a/**/b",
    "/a",
    "/a/",
    "!a",
    "!drafts/",
    "!*.md",
    "#comment",
    r"\#a",
    r"\!a",
    "",
    "   ",
    "a ",
    "**",
    "**/",
    "*/",
    "[z-a]",
    "[",
]

_segments = st.lists(st.sampled_from(_PATTERN_PIECES), min_size=1, max_size=4).map("/".join)
_built = st.tuples(st.booleans(), st.booleans(), _segments, st.booleans()).map(
    lambda t: ("!" if t[0] else "") + ("/" if t[1] else "") + t[2] + ("/" if t[3] else "")
)
patterns = st.lists(st.one_of(st.sampled_from(_WHOLE_PATTERNS), _built), max_size=5)
positive_patterns = st.lists(
    st.one_of(st.sampled_from([p for p in _WHOLE_PATTERNS if not p.startswith("!")]), _built), max_size=5
).map(lambda lines: [line.lstrip("!") for line in lines])

_PATH_PIECES = [
    "a",
    "b",
    "x",
    "drafts",
    "c.md",
    "x.md",
    ".md",
    "ab",
    "*",
    "!a",
    "#a",
    "a b",
    "[a]",
    ".hidden",
]
paths = st.tuples(
    st.sampled_from(["", "", "", "/", "./"]),  # what normalize_file strips goes to pathspec itself
    st.lists(st.sampled_from(_PATH_PIECES), min_size=1, max_size=5).map("/".join),
    st.booleans(),  # a directory, as the walk asks about one
).map(lambda t: t[0] + t[1] + ("/" if t[2] else ""))


def _same_verdicts(lines: list[str], candidates: list[str]) -> None:
    spec = compile_gitignore(lines)
    matcher = PathMatcher(spec)
    for path in candidates:
        assert matcher.verdict(path) is spec.check_file(path).include, (lines, path)
        assert matcher.match(path) is spec.match_file(path), (lines, path)


@settings(max_examples=300, deadline=None)
@given(patterns, st.lists(paths, min_size=1, max_size=8))
@example(["drafts/", "!drafts/keep.md"], ["drafts/keep.md", "drafts/", "drafts/x.md", "a/drafts/keep.md"])
@example(["*.md", "!x.md", "x.md"], ["x.md", "a/x.md", "c.md"])
@example(["a/**/b", "/a"], ["a/b", "a/x/b", "a", "a/", "b/a", "a/b/c.md"])
def test_any_patterns_same_verdict_as_pathspec(lines: list[str], candidates: list[str]) -> None:
    _same_verdicts(lines, candidates)


@settings(max_examples=300, deadline=None)
@given(positive_patterns, st.lists(paths, min_size=1, max_size=8))
def test_positive_patterns_same_verdict_as_pathspec(lines: list[str], candidates: list[str]) -> None:
    _same_verdicts(lines, candidates)


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the spec was asked")


def test_positive_specs_never_ask_pathspec_for_a_normalised_path(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = compile_gitignore(["**/*.md", "drafts/", "# a comment", ""])
    matcher = PathMatcher(spec)
    monkeypatch.setattr(spec, "check_file", _refuse)
    monkeypatch.setattr(spec, "match_file", _refuse)
    asked = ["a.md", "x/b.md", "a.txt", "drafts/", "drafts/a.txt", "x/drafts/"]
    assert [matcher.match(p) for p in asked] == [True, True, False, True, True, True]
    assert [matcher.verdict(p) for p in ["a.md", "a.txt"]] == [True, None]


def test_a_negation_that_matches_goes_to_pathspec() -> None:
    matcher = PathMatcher(pathspec.GitIgnoreSpec.from_lines(["*.md", "!keep.md"]))
    assert matcher.verdict("keep.md") is False
    assert matcher.verdict("drop.md") is True
    assert matcher.verdict("a.txt") is None
    assert matcher.match("keep.md") is False


def test_walk_lists_what_pathspec_would(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    rels = ["a.md", "b.txt", "drafts/d.md", "x/drafts/e.md", "keep/k.md", "keep/skip.md", "n/x.md", "n/y.md"]
    for rel in rels:
        touch(root / rel)
    touch(root / ".gitignore", "drafts/\n*.tmp\nskip.md\n")
    touch(root / "n" / ".gitignore", "*.md\n!y.md\n")
    spec = CorpusSpec("c", "custom", (root,), ("**/*.md", "**/*.txt"), ("b.*",), None)
    assert [rel for rel, _ in corpus_files(spec)] == ["a.md", "keep/k.md", "n/y.md"]
