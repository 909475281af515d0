"""``list_topics``: the (category, topic) groups a corpus's indexed pages fall in, with the tree of
directories beneath each (domain; docs/tools/list_topics.md).

One pass over the corpus's distinct pages, each given as its first stored chunk (the reader's
``page_heads``: path, frontmatter, file mtime, heading breadcrumb). A page's category and topic are the
filters' own (``filters.category_topic``: path segments, frontmatter overrides), so every value listed is
one ``ground``'s ``category`` / ``topic`` filters accept. GrooveSeek's shape and rules:

- ``children``: the directories of a page's own path after its second segment, one node per segment,
  ``file_count`` counting every page under that prefix; a page whose frontmatter ``topic`` overrides the
  path still contributes them (so a segment need not exist under ``category/topic/``). Root pages,
  category-only pages and pages directly in the topic directory contribute none.
- ``last_updated``: the newest of its pages' dates, a page's date being its frontmatter ``date``
  (YYYY-MM-DD, as the date filters read it), else its file's modification day (UTC).
- ``titles``: its pages' titles in path order, at most ``limits.TOPIC_TITLES_MAX``: the frontmatter
  ``title``, else the page title the indexer recorded (the first entry of its first chunk's breadcrumb:
  the H1, a PDF's title, a text file's name), else the file name.

Entries are sorted by category then topic, a missing one (None) first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hallouminate.ports import ChunkRow
from hallouminate.protocol import limits
from hallouminate.protocol.results import Topic, TopicNode
from hallouminate.search.filters import category_topic, frontmatter, page_date


class _Node:
    __slots__ = ("children", "count")

    def __init__(self) -> None:
        self.count = 0
        self.children: dict[str, _Node] = {}

    def add(self, segments: Sequence[str]) -> None:
        node = self
        for segment in segments:
            child = node.children.get(segment)  # not setdefault: it would build a node per call
            if child is None:
                child = node.children[segment] = _Node()
            child.count += 1
            node = child

    def tree(self) -> list[TopicNode]:
        return [
            {"segment": name, "file_count": child.count, "children": child.tree()}
            for name, child in sorted(self.children.items())
        ]


@dataclass
class _Group:
    count: int = 0
    newest: str = ""
    titled: list[tuple[str, str]] = field(default_factory=list)  # (path, title), the first by path
    below: _Node = field(default_factory=_Node)


def list_topics(heads: Sequence[ChunkRow], *, titles_max: int = limits.TOPIC_TITLES_MAX) -> list[Topic]:
    """The topic entries of the pages ``heads`` (one row per page: ``path``, ``fields``,
    ``file_mtime_ns``, ``heading_path``), sorted by category then topic."""
    groups: dict[tuple[str | None, str | None], _Group] = {}
    for head in heads:
        path = head["path"]
        front = frontmatter(head.get("fields"))
        key = category_topic(path, front)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group()
        group.count += 1
        date = page_date(front) or _day(head.get("file_mtime_ns"))
        if date > group.newest:
            group.newest = date
        group.titled.append((path, _title(path, front, head.get("heading_path"))))
        segments = path.split("/")
        if len(segments) > 3:  # directories after the second segment (the last one is the file)
            group.below.add(segments[2:-1])
    out: list[Topic] = []
    for (category, topic), group in sorted(groups.items(), key=lambda item: _order(item[0])):
        titled = sorted(group.titled)[:titles_max]
        out.append(
            {
                "category": category,
                "topic": topic,
                "file_count": group.count,
                "last_updated": group.newest,
                "titles": [title for _path, title in titled],
                "children": group.below.tree(),
            }
        )
    return out


def _order(key: tuple[str | None, str | None]) -> tuple[bool, str, bool, str]:
    category, topic = key
    return (category is not None, category or "", topic is not None, topic or "")


def _day(mtime_ns: Any) -> str:
    """A file modification time (ns since the epoch) as its UTC day; "" when unknown."""
    if not isinstance(mtime_ns, int) or mtime_ns <= 0:
        return ""
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).strftime("%Y-%m-%d")


def _title(path: str, front: Any, heading_path: Any) -> str:
    own = front.get("title")
    if isinstance(own, str) and own.strip():
        return " ".join(own.split())
    if (
        isinstance(heading_path, list)
        and heading_path
        and isinstance(heading_path[0], str)
        and heading_path[0]
    ):
        return heading_path[0]
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


class TopicsCache:
    """Each corpus's ``list_topics`` entries, computed again only when the reader hands a new list of
    page heads (it keeps one per commit: the same list object until the next commit)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Sequence[ChunkRow], list[Topic]]] = {}

    def cached(self, corpus: str, heads: Sequence[ChunkRow]) -> list[Topic] | None:
        """The entries computed from this very list, if they are kept."""
        kept = self._kept.get(corpus)
        return kept[1] if kept is not None and kept[0] is heads else None

    def keep(self, corpus: str, heads: Sequence[ChunkRow], topics: list[Topic]) -> None:
        self._kept[corpus] = (heads, topics)

    def topics(self, corpus: str, heads: Sequence[ChunkRow]) -> list[Topic]:
        """``cached``, else computed here and kept."""
        topics = self.cached(corpus, heads)
        if topics is None:
            topics = list_topics(heads)
            self.keep(corpus, heads, topics)
        return topics
