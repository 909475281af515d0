"""init_repo: the repository layer and the wiki's index.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.config import INDEX_END, INDEX_START, init_repo, resolve
from hallouminate.errors import InvalidParams


def test_init_repo_writes_config_and_index(baseline: Path, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    written = init_repo(root, "proj")
    config = root / ".hallouminate" / "config.toml"
    index = root / ".hallouminate" / "wiki" / "index.md"
    assert written == [config, index]
    assert '[[repository]]\nname = "proj"\npath = "."\n' in config.read_text()
    text = index.read_text()
    assert text.startswith("# proj wiki\n")
    assert text.index(INDEX_START) < text.index(INDEX_END)

    resolved = resolve(root / "sub")
    assert resolved.default_corpus == "repo:proj:wiki"
    assert resolved.corpora["repo:proj:wiki"].roots == (root / ".hallouminate" / "wiki",)


def test_init_repo_refuses_existing_config(baseline: Path, tmp_path: Path) -> None:
    init_repo(tmp_path, "proj")
    with pytest.raises(InvalidParams) as err:
        init_repo(tmp_path, "other")
    assert "already exists" in err.value.message
    assert 'name = "proj"' in (tmp_path / ".hallouminate" / "config.toml").read_text()


def test_init_repo_keeps_an_existing_index(baseline: Path, tmp_path: Path) -> None:
    index = tmp_path / ".hallouminate" / "wiki" / "index.md"
    index.parent.mkdir(parents=True)
    index.write_text("# mine\n")
    assert init_repo(tmp_path, "proj") == [tmp_path / ".hallouminate" / "config.toml"]
    assert index.read_text() == "# mine\n"


@pytest.mark.parametrize("name", ["", "a:b", "two words", "tab\there", "nl\n"])
def test_init_repo_validates_the_name(baseline: Path, tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidParams):
        init_repo(tmp_path, name)
    assert not (tmp_path / ".hallouminate").exists()


def test_init_repo_quotes_odd_names(baseline: Path, tmp_path: Path) -> None:
    init_repo(tmp_path, 'we"ird\\näme')
    assert resolve(tmp_path).repository_name == 'we"ird\\näme'
