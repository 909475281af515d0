"""Page keywords (pure): frontmatter tags first, then distinctive content words, deterministic."""

from __future__ import annotations

from hallouminate.indexing import chunk_markdown
from hallouminate.indexing.indexer import file_keywords
from hallouminate.indexing.keywords import MAX_KEYWORDS, frontmatter_tags, page_keywords, tags_from_fields
from hallouminate.indexing.text_chunker import chunk_text


def words(text: str) -> int:
    return len(text.split())


def md_keywords(text: str) -> list[str]:
    page = chunk_markdown(text, words, 200)
    return page_keywords(page.chunks, tags=frontmatter_tags(text))


PAGE = """# Cache eviction

The cache drops entries when memory runs short. Eviction follows the policy of the cache.

## Policies

Two policies exist: LRU eviction and TTL eviction. Each policy is configured per cache; configuring
a policy twice keeps the last one. The caches share 3 pools and 2048 slots.

## Metrics

Hit ratio and eviction counts are exported every 10 seconds.
"""


def test_frequent_words_and_heading_words_lead() -> None:
    keywords = md_keywords(PAGE)
    # "Policies" is a heading (weight 3) and written once more, "policy" three times: one word, shown
    # in the form written most.
    assert keywords[:3] == ["cache", "eviction", "policies"]
    assert "metrics" in keywords  # a heading word, mentioned once, outranks body words mentioned once
    assert len(keywords) == MAX_KEYWORDS


def test_stop_words_numbers_and_filler_are_dropped() -> None:
    keywords = md_keywords(PAGE)
    for dropped in ("the", "and", "of", "when", "each", "two", "3", "2048", "10"):
        assert dropped not in keywords


def test_inflected_forms_count_once_in_the_form_used_most() -> None:
    text = "# Notes\n\nIndexing indexes the index. The index is indexed; index again.\n"
    keywords = md_keywords(text)
    assert keywords.count("index") == 1
    assert not {"indexes", "indexing", "indexed"} & set(keywords)
    assert md_keywords("# P\n\nCaches and caching: a cache caches.\n")[0] == "caches"


def test_frontmatter_tags_come_first_as_written() -> None:
    text = '---\ntitle: X\ntags: [PostgreSQL, Backups]\nkeywords:\n  - restore\n  - "wal"\n---\n' + PAGE
    keywords = md_keywords(text)
    assert keywords[:4] == ["PostgreSQL", "Backups", "restore", "wal"]
    assert keywords[4:7] == ["cache", "eviction", "policies"]
    assert len(keywords) == MAX_KEYWORDS
    # The frontmatter itself is not prose: its keys never become keywords.
    assert "title" not in keywords and "tags" not in keywords


def test_frontmatter_forms() -> None:
    assert frontmatter_tags("---\ntags: a, b , c\n---\n# T\n") == ["a", "b", "c"]
    assert frontmatter_tags("---\ntags: [a, 'b']  # note\nkeywords: [A, d]\n---\n") == ["a", "b", "d"]
    assert frontmatter_tags("\ufeff---\r\ntags:\r\n- x\r\n- y\r\n---\r\n") == ["x", "y"]
    assert frontmatter_tags("# T\n\ntags: [a]\n") == []  # not at the top: not frontmatter
    assert frontmatter_tags("---\ntags: [a]\n") == []  # never closed
    # A tag that repeats a content word is not listed twice.
    assert md_keywords("---\ntags: [Caching]\n---\n# Caches\n\nCache caches.\n") == ["Caching"]


def test_tags_from_a_parsed_frontmatter_mapping() -> None:
    fields = {"title": "X", "tags": ["db", "Ops", 2024, {"nested": 1}], "keywords": "ops, backups"}
    assert tags_from_fields(fields) == ["db", "Ops", "2024", "backups"]
    assert tags_from_fields({"tags": None}) == [] and tags_from_fields({}) == []


def test_the_indexer_puts_frontmatter_tags_first_for_markdown_only() -> None:
    data = b"---\ntags: [Runbook]\n---\n# Deploys\n\nDeploys roll out in waves.\n"
    page = chunk_markdown(data.decode(), words, 200)
    assert file_keywords("ops/deploys.md", data, page)[:2] == ["Runbook", "deploys"]
    text_page = chunk_text("Pager rota. The rota rotates.", words, 50, title="rota.txt")
    assert file_keywords("rota.txt", b"", text_page)[0] == "rota"


def test_code_and_link_targets_are_not_keywords() -> None:
    text = (
        "# Deploy\n\nSee [the runbook](https://example.org/runbooks/deploy.html) for rollout steps.\n\n"
        "```python\nimport subprocess\nsubprocess.run(['kubectl', 'apply'])\nsubprocess.run([])\n```\n"
    )
    keywords = md_keywords(text)
    assert keywords[0] == "deploy"
    assert not {"https", "example", "runbooks", "html", "subprocess", "kubectl", "import"} & set(keywords)
    # A page of code alone still gets keywords from it.
    assert "subprocess" in md_keywords("```python\nsubprocess.run(['a'])\nsubprocess.call([])\n```\n")


def test_plain_text_ignores_the_file_name_breadcrumb() -> None:
    page = chunk_text("Gardening notes. Tomatoes need sun; tomatoes need water.", words, 50, title="log.txt")
    keywords = page_keywords(page.chunks, headings=False)
    assert keywords[0] == "tomatoes"
    assert "log" not in keywords and "txt" not in keywords


def test_deterministic_and_bounded() -> None:
    assert md_keywords(PAGE) == md_keywords(PAGE)
    # Equal scores: first appearance decides.
    assert md_keywords("Zebra yak xylophone.\n") == ["zebra", "yak", "xylophone"]
    assert page_keywords([], tags=["a", "b"], limit=1) == ["a"]
    assert md_keywords("") == [] and md_keywords("# 2024\n\n42 17.\n") == []
