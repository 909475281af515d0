"""The ripgrep-style outline of a ``ground`` result."""

from __future__ import annotations

from typing import Any


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else prefix.rstrip() for line in text.splitlines())


def render_ground(result: dict[str, Any]) -> str:
    """``<query>  <ms>ms  <hits> hits``, then per file its path, score and summary, per chunk its lines."""
    docs = result.get("docs", [])
    hits = result.get("stats", {}).get("hits", 0)
    lines = [f"{result.get('query', '')}  {result.get('took_ms', 0):.0f}ms  {hits} hits"]
    several = len({doc.get("corpus") for doc in docs}) > 1
    for doc in docs:
        lines.append("")
        where = f"[{doc['corpus']}] " if several else ""
        stale = "  [stale: run index]" if doc.get("stale") else ""
        lines.append(f"{where}{doc['path']}  ({doc['score']:.4f}){stale}")
        if doc.get("summary"):
            lines.append(_indent(doc["summary"], "  "))
        for chunk in doc.get("chunks", []):
            crumb = " > ".join(chunk.get("heading_path") or []) or "(top)"
            lines.append(f"  L{chunk['line_start']}-{chunk['line_end']}  {crumb}  ({chunk['score']:.4f})")
            snippet = " ".join(str(chunk.get("snippet", "")).split())
            if snippet:
                lines.append(f"      {snippet}")
    if not docs:
        lines.append("")
        lines.append("no matches")
    for warning in result.get("warnings", []):
        lines.append(f"warning [{warning.get('code')}]: {warning.get('message')}")
    return "\n".join(lines)
