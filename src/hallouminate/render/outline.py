"""The ripgrep-style outline of a ``ground`` result."""

from __future__ import annotations

from hallouminate.protocol.results import GroundResult


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else prefix.rstrip() for line in text.splitlines())


def _score(value: float) -> str:
    # Phrase mode scores are occurrence counts: shown as the integers they are.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else f"{value:.4f}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def render_ground(result: GroundResult) -> str:
    """``<query>  <ms>ms  <hits> hits``, then per file its path, score and summary, per chunk its lines.

    A file of output "counts" shows its coverage instead of a summary and chunks.
    """
    docs = result.get("docs", [])
    hits = result.get("stats", {}).get("hits", 0)
    lines = [f"{result.get('query', '')}  {result.get('took_ms', 0):.0f}ms  {_count(hits, 'hit')}"]
    if "occurrences" in result.get("stats", {}):  # phrase mode
        lines[0] += f"  {_count(result['stats']['occurrences'], 'occurrence')}"
    if "rerank" in result:
        lines[0] += f"  reranked by {result['rerank']['reranker']}"
    several = len({doc.get("corpus") for doc in docs}) > 1
    for doc in docs:
        lines.append("")
        where = f"[{doc['corpus']}] " if several else ""
        stale = "  [stale: run index]" if doc.get("stale") else ""
        lines.append(f"{where}{doc['path']}  ({_score(doc['score'])}){stale}")
        if "coverage" in doc:  # output "counts": no summary, no chunks
            pages = doc["coverage"].get("pages")
            on_pages = f" on {pages} page{'s' if pages != 1 else ''}" if pages is not None else ""
            chunks = doc["coverage"].get("chunks", 0)
            lines.append(f"  {chunks} chunk{'s' if chunks != 1 else ''}{on_pages}")
            continue
        if doc.get("summary"):
            lines.append(_indent(doc["summary"], "  "))
        for chunk in doc.get("chunks", []):
            crumb = " > ".join(chunk.get("heading_path") or []) or "(top)"
            grouped = f"  [{chunk['chunk_count']} on this page]" if chunk.get("chunk_count") else ""
            lines.append(
                f"  L{chunk['line_start']}-{chunk['line_end']}  {crumb}  ({_score(chunk['score'])}){grouped}"
            )
            if "text" in chunk:  # parent: the expanded text, as written (it is what was asked for)
                lines.append(_indent(chunk["text"], "      "))
                continue
            snippet = " ".join(str(chunk.get("snippet", "")).split())
            if snippet:
                lines.append(f"      {snippet}")
    if not docs:
        lines.append("")
        lines.append("no matches")
    for warning in result.get("warnings", []):
        lines.append(f"warning [{warning.get('code')}]: {warning.get('message')}")
    return "\n".join(lines)
