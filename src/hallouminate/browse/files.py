"""``list_files`` and ``list_tree``: what a corpus holds, flat or as a pruned directory tree."""

from __future__ import annotations

from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.indexing.walker import walk_corpus
from hallouminate.protocol.results import ListFilesResult, ListTreeResult, TreeNode


def list_files(spec: CorpusSpec) -> ListFilesResult:
    """``{corpus, files: [{path, absolute_path}]}``, sorted by path.

    Paths are corpus-relative (relative to the root holding the file). When several roots hold the same
    relative path the first root wins, exactly as for indexing and ``read_markdown``.
    """
    return {
        "corpus": spec.name,
        "files": [{"path": rel, "absolute_path": str(path)} for rel, path in walk_corpus(spec)],
    }


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
