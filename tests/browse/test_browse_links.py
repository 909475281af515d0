"""The links of a page that the connection graph follows (browse/links.py): wikilinks as backlinks resolves
them, relative Markdown links resolved against the page's directory, nothing in code, nothing outside the
corpus, no URL."""

from __future__ import annotations

from pathlib import Path

from hallouminate.browse.links import markdown_hrefs, page_links, relative_target
from hallouminate.config import CorpusSpec
from support.files import write

PAGE = """---
title: Guide
see: "[front](fm.md)"
---
# Guide

Read [setup](../setup.md#install), [the same](./sub/x%20y.md?v=1), [[stem]] and [[ops/run|running]].
Not links: `[code](code.md)`, [web](https://example.org/a.md), [root](/abs.md), [here](#top),
[out](../../outside.md).

```
[fenced](fenced.md) [[fenced-wiki]]
```

[ref]: ref.md
A [reference link][ref].
"""
PAGES = {
    "guides/page.md",
    "setup.md",
    "guides/sub/x y.md",
    "notes/stem.md",
    "ops/run.md",
    "code.md",
    "fenced.md",
    "fenced-wiki.md",
    "guides/ref.md",
    "fm.md",
}


def test_relative_targets_stay_in_the_corpus() -> None:
    assert relative_target("a/b.md", "../c.md#x") == "c.md"
    assert relative_target("a/b.md", "d/e%20f.md?q") == "a/d/e f.md"
    assert relative_target("a/b.md", "../../c.md") is None
    assert relative_target("a/b.md", "https://x.org/c.md") is None
    assert relative_target("a/b.md", "mailto:a@b.c") is None
    assert relative_target("a/b.md", "/c.md") is None
    assert relative_target("a/b.md", "#top") is None


def test_markdown_hrefs_skip_code_and_front_matter() -> None:
    hrefs = markdown_hrefs(PAGE)
    assert "code.md" not in hrefs and "fenced.md" not in hrefs and "fm.md" not in hrefs
    assert "../setup.md#install" in hrefs and "ref.md" in hrefs


def test_page_links_in_document_order_wikilinks_first(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write(root / "guides" / "page.md", PAGE)
    spec = CorpusSpec("c", "custom", (root,), ("**/*.md",), (), None)
    assert page_links(spec, "guides/page.md", PAGES) == [
        "notes/stem.md",
        "ops/run.md",
        "setup.md",
        "guides/sub/x y.md",
        "guides/ref.md",
    ]
    # A page that is not there, or not Markdown, links nowhere.
    assert page_links(spec, "guides/missing.md", PAGES) == []
    assert page_links(spec, "guides/page.pdf", PAGES) == []
