"""Text for ``move_markdown``'s result (the structured result carries the same data)."""

from __future__ import annotations

from hallouminate.protocol.results import MoveMarkdownResult


def render_move(result: MoveMarkdownResult) -> str:
    lines = [f"moved {result.get('from')} -> {result.get('to')} in {result.get('corpus')}"]
    rewritten = result.get("rewritten", [])
    if rewritten:
        lines.append(f"  links rewritten: {result.get('links_rewritten')} in {len(rewritten)} file(s)")
        lines += [f"    {entry['path']} ({entry['links']})" for entry in rewritten]
    else:
        lines.append("  no page linked to it")
    for index in result.get("index_files", []):
        lines.append(f"  {index['path']}: {index['action']}")
    reindexed = result.get("reindexed", [])
    if reindexed:
        lines.append(f"  re-indexed: {', '.join(reindexed)} ({result.get('chunks_written')} chunks written)")
    warnings = result.get("warnings", [])
    if warnings:
        lines.append(f"warnings ({len(warnings)}):")
        for warning in warnings:
            where = f"{warning['path']}" + (f" line {warning['line']}" if warning.get("line") else "")
            lines.append(f"  {warning['code']}: {where + ': ' if where else ''}{warning['message']}")
    return "\n".join(lines)
