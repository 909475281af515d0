"""Text for ``list_topics``: one line per (category, topic) entry, its directories indented beneath."""

from __future__ import annotations

from hallouminate.protocol.results import ListTopicsResult, Topic, TopicNode

# Titles shown per entry in text (the structured result carries up to limits.TOPIC_TITLES_MAX).
TITLES_SHOWN = 5


def render_topics(result: ListTopicsResult) -> str:
    topics = result.get("topics", [])
    if not topics:
        lines = [f"{result.get('corpus')}: no indexed documents"]
    else:
        lines = [f"{result.get('corpus')}: {len(topics)} topic entr{'y' if len(topics) == 1 else 'ies'}"]
        for topic in topics:
            lines.extend(_entry(topic))
    indexing = result.get("indexing")
    if indexing is not None:
        total = indexing["files_total"]
        lines.append(
            f"indexing now: {indexing['files_done']}/{'?' if total is None else total} files compared "
            "(the topics above are from before this run)"
        )
    return "\n".join(lines)


def _entry(topic: Topic) -> list[str]:
    category = topic["category"] if topic["category"] is not None else "(none)"
    name = topic["topic"] if topic["topic"] is not None else "(none)"
    count = topic["file_count"]
    head = (
        f"category {category}  topic {name}  {count} document{'' if count == 1 else 's'}"
        f"  last updated {topic['last_updated'] or 'unknown'}"
    )
    lines = [head]
    titles = topic["titles"]
    if titles:
        more = count - min(len(titles), TITLES_SHOWN)
        shown = "; ".join(titles[:TITLES_SHOWN]) + (f"; … (+{more})" if more > 0 else "")
        lines.append(f"  titles: {shown}")
    lines.extend(_tree(topic["children"], 1))
    return lines


def _tree(nodes: list[TopicNode], depth: int) -> list[str]:
    lines = []
    for node in nodes:
        lines.append(f"{'  ' * depth}{node['segment']}/  ({node['file_count']})")
        lines.extend(_tree(node["children"], depth + 1))
    return lines
