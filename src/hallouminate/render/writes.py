"""Text for the write tools' results (the structured result carries the same data)."""

from __future__ import annotations

from hallouminate.protocol.results import AddMarkdownResult, DeleteMarkdownResult


def render_write(result: AddMarkdownResult) -> str:
    lines = [
        f"{result.get('action')} {result.get('path')} ({result.get('bytes')} bytes) in {result.get('corpus')}"
    ]
    changed = result.get("changed_lines")
    if changed:
        lines.append(f"  {result.get('edit')}: wrote lines {changed['start']}-{changed['end']}")
    lines += _common(result)
    return "\n".join(lines)


def render_delete(result: DeleteMarkdownResult) -> str:
    return "\n".join([f"deleted {result.get('path')} from {result.get('corpus')}", *_common(result)])


def _common(result: AddMarkdownResult | DeleteMarkdownResult) -> list[str]:
    lines = []
    for index in result.get("index_files", []):
        lines.append(f"  {index['path']}: {index['action']}")
    reindexed = result.get("reindexed", [])
    if reindexed:
        chunks = result.get("chunks_written")
        suffix = f" ({chunks} chunks written)" if chunks is not None else ""
        lines.append(f"  re-indexed: {', '.join(reindexed)}{suffix}")
    warnings = result.get("warnings", [])
    if warnings:
        lines.append(f"warnings ({len(warnings)}, advisory):")
        for warning in warnings:
            where = f"line {warning['line']}: " if warning.get("line") else ""
            lines.append(f"  {warning['code']}: {where}{warning['message']}")
    return lines
