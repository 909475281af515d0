"""``list_files`` and ``list_tree``: what a corpus holds, flat or as a pruned directory tree."""

from __future__ import annotations

import os
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.indexing.walker import walk_corpus
from hallouminate.protocol import recency
from hallouminate.protocol.results import FileRef, ListFilesResult, ListTreeResult, TreeNode


def list_files(spec: CorpusSpec, changed_since: str | None = None) -> ListFilesResult:
    """``{corpus, files: [{path, absolute_path}]}``, sorted by path.

    Paths are corpus-relative (relative to the root holding the file). When several roots hold the same
    relative path the first root wins, exactly as for indexing and ``read_markdown``. With
    ``changed_since`` (protocol/recency.py) only files modified at or after it are listed, and
    ``filter_applied`` says what instant that was.
    """
    since = None if changed_since is None else recency.since_ns(changed_since)
    files: list[FileRef] = []
    for rel, path in walk_corpus(spec):
        if since is not None and not _modified_since(path, since):
            continue
        files.append({"path": rel, "absolute_path": str(path)})
    result: ListFilesResult = {"corpus": spec.name, "files": files}
    if changed_since is not None and since is not None:
        result["filter_applied"] = {
            "changed_since": changed_since,
            "changed_since_utc": recency.iso_utc(since),
        }
    return result


def _modified_since(path: Path, since_ns: int) -> bool:
    try:
        # The walk saw a regular file; lstat, so a symlink swapped in since is not followed.
        return os.lstat(path).st_mtime_ns >= since_ns
    except OSError:
        return False  # gone since the walk


def list_tree(spec: CorpusSpec) -> ListTreeResult:
    """``{corpus, roots, tree}``: the files of ``list_files`` as nested ``{path, absolute_path, files, subdirs}``.

    ``tree`` is the corpus root (``path`` ""). Each node's ``files`` are ``{path, absolute_path}`` entries
    (corpus-relative paths, sorted), its ``subdirs`` nodes sorted by name; a directory with no corpus file
    beneath it does not appear. A corpus with several roots gives one merged tree, since its paths are
    corpus-relative: a directory's ``absolute_path`` is the one in the root of the first file listed
    beneath it, and the root node's is the first root (``roots`` lists them all).
    """
    first_root = str(spec.roots[0]) if spec.roots else None
    top = _node("", first_root)
    nodes: dict[str, TreeNode] = {"": top}
    for rel, path in walk_corpus(spec):
        parts = rel.split("/")
        parent = top
        for depth in range(1, len(parts)):
            dir_rel = "/".join(parts[:depth])
            node = nodes.get(dir_rel)
            if node is None:
                # The directory as it is in this file's root: strip the remaining segments.
                absolute = Path(path).parents[len(parts) - 1 - depth]
                node = _node(dir_rel, str(absolute))
                nodes[dir_rel] = node
                parent["subdirs"].append(node)
            parent = node
        parent["files"].append({"path": rel, "absolute_path": str(path)})
    _sort(top)
    return {"corpus": spec.name, "roots": [str(root) for root in spec.roots], "tree": top}


def _node(path: str, absolute: str | None) -> TreeNode:
    return {"path": path, "absolute_path": absolute, "files": [], "subdirs": []}


def _sort(node: TreeNode) -> None:
    # walk_corpus sorts whole paths ("a-b.md" < "a/x.md"); a tree sorts each level by name.
    node["files"].sort(key=lambda f: f["path"])
    node["subdirs"].sort(key=lambda d: d["path"])
    for sub in node["subdirs"]:
        _sort(sub)
