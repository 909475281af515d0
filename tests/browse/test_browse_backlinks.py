"""backlinks and wikilink parsing: paths, stems, aliases, headings; nothing inside code counts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hallouminate.browse import backlinks, parse_wikilinks
from hallouminate.config import CorpusSpec
from support.files import touch

SAMPLE_WIKI = Path(__file__).resolve().parents[2] / ".hallouminate" / "wiki"


def spec(*roots: Path) -> CorpusSpec:
    return CorpusSpec("wiki", "wiki", tuple(roots), ("**/*.md",), (), "r")


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki"
    touch(root / "guides" / "setup.md", "# Setup\n\nSee [[setup]] (myself).\n")
    touch(root / "setup.md", "# Top-level setup\n")
    touch(root / "by-path.md", "# A\n\nRead [[guides/setup]] first.\n")
    touch(root / "by-path-md.md", "# B\n\nRead [[guides/setup.md|the setup guide]].\n")
    touch(root / "by-heading.md", "# C\n\n- item [[/guides/setup#Install]]\n")
    touch(root / "by-stem.md", "# D\n\n| a | b |\n|---|---|\n| [[setup\\|alias]] | x |\n")
    touch(
        root / "in-code.md",
        "# E\n\n`[[guides/setup]]`\n\n```md\n[[guides/setup]]\n```\n\n    [[guides/setup]]\n\n"
        "<div>\n[[guides/setup]]\n</div>\n",
    )
    touch(root / "front.md", "---\nsee: '[[guides/setup]]'\n---\n# F\n")
    touch(root / "other.md", "# G\n\n[[unrelated]] and [[guides/setupx]]\n")
    touch(root / "embed.md", "# H\n\n![[guides/setup]]\n")
    return root


def test_links_by_path_alias_heading_and_embed_count_code_does_not(wiki: Path) -> None:
    result = backlinks(spec(wiki), "guides/setup.md")
    assert result == {
        "corpus": "wiki",
        "path": "guides/setup.md",
        "backlinks": ["by-heading.md", "by-path-md.md", "by-path.md", "embed.md"],
    }


def test_a_bare_stem_resolves_to_the_exact_path_first(wiki: Path) -> None:
    # [[setup]] names setup.md exactly: it is not a link to guides/setup.md, and a page is not its own
    # backlink.
    assert backlinks(spec(wiki), "setup.md")["backlinks"] == ["by-stem.md", "guides/setup.md"]
    (wiki / "setup.md").unlink()
    # Without a top-level setup.md the stem is ambiguous no more: it names guides/setup.md.
    assert "by-stem.md" in backlinks(spec(wiki), "guides/setup.md")["backlinks"]


def test_path_without_md_and_missing_targets(wiki: Path) -> None:
    assert backlinks(spec(wiki), "guides/setup")["path"] == "guides/setup.md"
    touch(wiki / "dangling.md", "# X\n\nSee [[gone-page]].\n")
    assert backlinks(spec(wiki), "gone-page.md") == {
        "corpus": "wiki",
        "path": "gone-page.md",
        "backlinks": ["dangling.md"],
    }
    assert backlinks(spec(wiki), "nobody/links/here.md")["backlinks"] == []


def test_parse_wikilinks_fields_and_lines() -> None:
    text = "---\nx: 1\n---\n# T\n\nA [[a|Alias]] b\nc [[d#H|e]] `[[no]]`\n\n[[#local]]\n"
    links = parse_wikilinks(text)
    assert [(link.target, link.alias, link.heading, link.line) for link in links] == [
        ("a", "Alias", None, 6),
        ("d", "e", "H", 7),
        (None, None, "local", 9),
    ]
    assert parse_wikilinks("no links") == []
    assert [link.target for link in parse_wikilinks("[[unclosed and [[x]]")] == ["x"]
    assert parse_wikilinks("[[split\nover lines]]") == []


def test_the_sample_wiki(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    shutil.copytree(SAMPLE_WIKI, root)
    # configuration.md has `[[corpus]]` in code and TOML fences: no link to a page "corpus".
    assert backlinks(spec(root), "corpus.md")["backlinks"] == []
    assert "ground-search.md" in backlinks(spec(root), "indexing.md")["backlinks"]
    assert "guides/writing-pages.md" in backlinks(spec(root), "indexing.md")["backlinks"]
