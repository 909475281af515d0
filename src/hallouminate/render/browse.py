"""Text for the read tools' results (the structured result carries the same data)."""

from __future__ import annotations

from datetime import UTC, datetime

from hallouminate.protocol.results import (
    BacklinksResult,
    CorpusStatsResult,
    ListCorporaResult,
    ListFilesResult,
    ListTreeResult,
    ReadMarkdownResult,
    TreeNode,
)
from hallouminate.render.problems import render_problems


def render_corpora(result: ListCorporaResult) -> str:
    default = result.get("default_corpus")
    lines = []
    for corpus in result.get("corpora", []):
        mark = "  (default)" if corpus["name"] == default else ""
        lines.append(f"{corpus['name']}  [{corpus['kind']}]  {', '.join(corpus['paths'])}{mark}")
    if not lines:
        lines.append("no corpora configured: run `hallouminate init-repo NAME` or add a [[corpus]]")
    for warning in result.get("warnings", []):
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def render_files(result: ListFilesResult) -> str:
    files = result.get("files", [])
    if not files:
        return f"{result.get('corpus')}: no files"
    return "\n".join(entry["path"] for entry in files)


def render_tree(result: ListTreeResult) -> str:
    lines = [f"{result.get('corpus')}/"]

    def walk(node: TreeNode, depth: int) -> None:
        for sub in node.get("subdirs", []):
            lines.append("  " * depth + sub["path"].rsplit("/", 1)[-1] + "/")
            walk(sub, depth + 1)
        for entry in node.get("files", []):
            lines.append("  " * depth + entry["path"].rsplit("/", 1)[-1])

    walk(result.get("tree", {}), 1)
    return "\n".join(lines)


def render_read(result: ReadMarkdownResult) -> str:
    return str(result.get("content", ""))


def render_stats(result: CorpusStatsResult) -> str:
    keys = ("indexed_files", "total_chunks", "last_indexed_ms", "unindexed_files")
    lines = [str(result.get("corpus")), *(_stat(key, result.get(key)) for key in keys)]
    if "skipped_files" in result:
        # Skipped for a reason named below: indexing again does not help, fixing the file does.
        lines.append(f"  skipped_files: {result['skipped_files']}")
    lines.extend(render_problems(result.get("problems", [])))
    indexing = result.get("indexing")
    if indexing is not None:
        total = indexing["files_total"]
        lines.append(
            f"  indexing now: {indexing['files_done']}/{'?' if total is None else total} files compared "
            "(the figures above are from before this run)"
        )
    return "\n".join(lines)


def _stat(key: str, value: object) -> str:
    if key.endswith("_ms") and key.startswith("last_"):  # a time in epoch milliseconds: shown as a date
        name = key.removesuffix("_ms")
        return f"  {name}: {when(value) if isinstance(value, int) else 'never'}"
    return f"  {key}: {value}"


def when(epoch_ms: int) -> str:
    """An epoch-milliseconds time as a UTC date to the second, e.g. ``2026-12-03 13:02:11 UTC``."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def render_backlinks(result: BacklinksResult) -> str:
    links = result.get("backlinks", [])
    if not links:
        return f"no page links to {result.get('path')}"
    return "\n".join(links)
