"""The write engine's corners that the MCP tests do not reach: no hard links, marker edge cases, the sweep."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from hallouminate.config import CorpusSpec
from hallouminate.errors import InvalidParams
from hallouminate.wiki.index_lists import page_entry, render, splice, subdir_entry
from hallouminate.wiki.journal import Journal, new_temp_name
from hallouminate.wiki.writes import add_markdown

START = "<!-- HALLOUMINATE:INDEX-START -->"
END = "<!-- HALLOUMINATE:INDEX-END -->"


def wiki_spec(root: Path) -> CorpusSpec:
    return CorpusSpec("repo:unit:wiki", "wiki", (root.resolve(),), ("**/*.md",), (), "unit")


def test_a_filesystem_without_hard_links_still_creates_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "wiki"
    root.mkdir()
    journal = Journal(tmp_path / "journal")

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    outcome = add_markdown(wiki_spec(root), {"path": "page.md", "content": "# Page\n"}, journal)
    assert outcome.result["action"] == "created" and (root / "page.md").read_text() == "# Page\n"
    with pytest.raises(InvalidParams) as info:
        add_markdown(wiki_spec(root), {"path": "page.md", "content": "# Other\n"}, journal)
    assert info.value.data["problem"] == "exists" and (root / "page.md").read_text() == "# Page\n"
    assert sorted(p.name for p in root.iterdir()) == ["index.md", "page.md"]
    assert list((tmp_path / "journal").iterdir()) == []


def test_splice_keeps_everything_outside_the_markers() -> None:
    entries = [subdir_entry("a b", True, "Spaced (dir)"), page_entry("x[1].md", None)]
    assert render(entries) == "- [a b/](./a%20b/index.md) - Spaced (dir)\n- [x\\[1\\]](./x%5B1%5D.md)\n"
    same_line = f"# T\n\nBefore {START}{END} after\n"
    assert splice(same_line, entries) == f"# T\n\nBefore {START}\n{render(entries)}{END} after\n"
    crlf = f"# T\r\n{START}\r\n- old\r\n  {END}\r\ntail\r\n"
    assert (
        splice(crlf, entries) == f"# T\r\n{START}\r\n{render(entries, chr(13) + chr(10))}  {END}\r\ntail\r\n"
    )
    assert splice(f"# T\n{END}\n{START}\n", entries) is None  # END before START: not a list of ours
    assert splice(f"# T\n{START}\n", entries) is None
    assert splice(f"{START}\n- x\n{END}\n", []) == f"{START}\n{END}\n"


def test_the_sweep_removes_only_our_regular_temp_files(tmp_path: Path) -> None:
    directory = tmp_path / "dir"
    directory.mkdir()
    ours = new_temp_name()
    (directory / ours).write_text("half a page")
    (directory / ".hallouminate-write.not-hex.tmp").write_text("someone else's")
    (directory / "page.md").write_text("# Page\n")
    link = new_temp_name()
    (directory / link).symlink_to(directory / "page.md")
    journal = Journal(tmp_path / "journal")
    journal.begin(str(directory))
    removed = journal.recover()
    assert removed == [str(directory / ours)]
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [".hallouminate-write.not-hex.tmp", "page.md", link]
    )
    assert list((tmp_path / "journal").iterdir()) == []
