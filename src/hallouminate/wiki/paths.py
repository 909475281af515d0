"""Which paths a write may touch: the read sandbox's rules plus the write-only ones.

On top of ``hallouminate.sandbox`` (no absolute path, no ``.``/``..``/empty segment, no NUL, backslash or
control character, no symlink anywhere on the way): a write goes to the corpus' first root, which must
exist, at a path that names one of the corpus' own files (its globs, excludes and ignore files; ``.md``
in a wiki), nothing under ``.git``, and none of our reserved temp names.
"""

from __future__ import annotations

from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.errors import NotFound, UnsafePath
from hallouminate.ignore import path_ignored
from hallouminate.indexing.walker import compile_patterns
from hallouminate.sandbox import check_relative_path, is_wiki_page, refuse, resolve_inside
from hallouminate.sandbox.formats import WIKI_PAGE_SUFFIX
from hallouminate.wiki.journal import TEMP_PREFIX


def write_root(spec: CorpusSpec) -> Path:
    """The root a write goes to: the corpus' first (the spec's rule); later roots are never written."""
    if not spec.roots:
        raise NotFound(
            f"corpus {spec.name!r} has no root to write to: give it a path in the configuration",
            {"corpus": spec.name, "problem": "no-root"},
        )
    root = spec.roots[0]
    if not root.is_dir():
        which = "first root (where writes go)" if len(spec.roots) > 1 else "root"
        raise NotFound(
            f"the {which} of corpus {spec.name!r}, {root}, does not exist or is not a directory: create it "
            "first (`hallouminate init-repo NAME` creates a repository's wiki)",
            {"corpus": spec.name, "root": str(root), "problem": "no-root"},
        )
    return root


def check_write_path(spec: CorpusSpec, root: Path, path: str) -> list[str]:
    """The segments of ``path`` if a write may touch ``root/path``; ``UnsafePath`` naming why not.

    Cheapest first: the string, then the filesystem (``lstat`` from the root, no symlink on the way, an
    existing leaf a regular file), then the page-name rule, the corpus' patterns and ignore files.
    """
    segments = check_relative_path(path)
    for segment in segments:
        if segment == ".git":
            raise refuse(path, "it leads into a .git directory, which is never corpus content", "git-dir")
        if segment.startswith(TEMP_PREFIX):
            raise refuse(
                path,
                f"names starting with {TEMP_PREFIX!r} are reserved for hallouminate's temp files",
                "reserved",
            )
    # Before the page-name rule: "guides" is refused as the directory it is, not as a bad page name.
    resolve_inside(root, path, must_exist=False, leaf_file=True)
    if spec.kind == "wiki" and not is_wiki_page(path):
        stem = segments[-1].rsplit(".", 1)[0] or "page"
        raise UnsafePath(
            f"{path!r} cannot be a page of wiki {spec.name!r}: a wiki page must end in '{WIKI_PAGE_SUFFIX}' "
            f"(lower case), e.g. {'/'.join([*segments[:-1], stem + WIKI_PAGE_SUFFIX])!r}",
            {"corpus": spec.name, "path": path, "problem": "not-markdown"},
        )
    if not compile_patterns(spec.globs).match_file(path):
        raise UnsafePath(
            f"{path!r} does not match the globs of corpus {spec.name!r} {list(spec.globs)}: it would not be "
            "one of the corpus' files; pick a path the globs cover",
            {"corpus": spec.name, "path": path, "problem": "not-in-corpus"},
        )
    if compile_patterns(spec.exclude).match_file(path):
        raise UnsafePath(
            f"{path!r} is excluded from corpus {spec.name!r} by {list(spec.exclude)}: it would not be one "
            "of the corpus' files; pick another path",
            {"corpus": spec.name, "path": path, "problem": "not-in-corpus"},
        )
    if path_ignored(root, path):
        raise UnsafePath(
            f"{path!r} is ignored by a .gitignore, .ignore or .git/info/exclude rule of corpus "
            f"{spec.name!r}: it would not be indexed; pick another path",
            {"corpus": spec.name, "path": path, "problem": "not-in-corpus"},
        )
    return segments
