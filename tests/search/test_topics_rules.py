"""``search.topics.list_topics`` on page heads as the reader hands them (one row per page): the rules the
MCP tests cannot reach cheaply (the titles cap, the fallbacks of a title and of a date) and the per-commit
cache keyed by the heads list's identity."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hallouminate.ports import ChunkRow
from hallouminate.protocol import limits
from hallouminate.search.topics import TopicsCache, list_topics

DAY_NS = int(datetime(2024, 2, 29, 23, 59, tzinfo=UTC).timestamp() * 1e9)


def head(path: str, front: dict[str, object] | None = None, heading: list[str] | None = None) -> ChunkRow:
    return {
        "path": path,
        "fields": json.dumps(front) if front is not None else None,
        "file_mtime_ns": DAY_NS,
        "heading_path": heading,
    }


def test_titles_are_capped_in_path_order_while_file_count_counts_every_page() -> None:
    many = [head(f"a/b/p{n:03d}.md", heading=[f"Page {n:03d}"]) for n in range(limits.TOPIC_TITLES_MAX + 7)]
    [entry] = list_topics(list(reversed(many)))
    assert entry["file_count"] == limits.TOPIC_TITLES_MAX + 7
    assert entry["titles"] == [f"Page {n:03d}" for n in range(limits.TOPIC_TITLES_MAX)]


def test_a_title_is_the_frontmatter_one_else_the_recorded_one_else_the_file_name() -> None:
    [entry] = list_topics(
        [
            head("a/b/one.md", {"title": "  Spaced   out  "}, ["Heading One"]),
            head("a/b/two.md", {}, ["Heading Two", "Section"]),
            head("a/b/three.md", None, []),
            head("a/b/.hidden", None, None),
        ]
    )
    # By path: .hidden, one.md, three.md, two.md.
    assert entry["titles"] == [".hidden", "Spaced out", "three", "Heading Two"]


def test_last_updated_prefers_the_frontmatter_date_and_falls_back_to_the_modification_day() -> None:
    entries = list_topics(
        [
            head("x/y/dated.md", {"date": "2020-01-05T10:00:00"}),
            head("x/z/undated.md", {"date": "soon"}),  # not a date: the file's day
        ]
    )
    assert [(e["topic"], e["last_updated"]) for e in entries] == [("y", "2020-01-05"), ("z", "2024-02-29")]
    # The newest of a group's dates wins, whichever source each came from.
    [entry] = list_topics([head("x/y/a.md", {"date": "2020-01-05"}), head("x/y/b.md")])
    assert entry["last_updated"] == "2024-02-29"


def test_the_cache_recomputes_only_for_a_new_heads_list() -> None:
    cache = TopicsCache()
    heads = [head("a/b/c.md")]
    first = cache.topics("corpus", heads)
    assert cache.topics("corpus", heads) is first
    moved = [head("a/b/c.md"), head("a/b/d/e.md")]
    second = cache.topics("corpus", moved)
    assert second is not first and second[0]["file_count"] == 2
    assert second[0]["children"] == [{"segment": "d", "file_count": 1, "children": []}]
