"""`hallouminate config init|show|validate` as a user runs them: real processes, private XDG dirs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.sandbox import config_only_env


def _entry() -> list[str]:
    # Through `python -m hallouminate config` once the group is registered in cli/main.py; until then
    # through the click group itself (same code, same process boundary).
    from hallouminate.cli.main import cli

    if "config" in cli.commands:
        return ["-m", "hallouminate", "config"]
    return ["-c", "from hallouminate.cli.config_commands import config_group; config_group()"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return config_only_env(tmp_path)


def hm(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *_entry(), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_init_then_validate_passes_and_init_refuses_to_clobber(env: dict[str, str], tmp_path: Path) -> None:
    file = tmp_path / "config" / "hallouminate" / "config.toml"
    first = hm(env, tmp_path, "init")
    assert first.returncode == 0, first.stderr
    assert str(file) in first.stdout and file.is_file()
    ok = hm(env, tmp_path, "validate")
    assert ok.returncode == 0, ok.stderr
    assert f"ok: {file}" in ok.stdout

    file.write_text("# mine\n")
    again = hm(env, tmp_path, "init")
    assert again.returncode == 2 and "--force" in again.stderr  # a caller mistake (docs/cli.md)
    assert file.read_text() == "# mine\n"
    forced = hm(env, tmp_path, "init", "--force")
    assert forced.returncode == 0 and "[search]" in file.read_text()


def test_a_misspelled_key_fails_validation_naming_key_and_file(env: dict[str, str], tmp_path: Path) -> None:
    assert hm(env, tmp_path, "init").returncode == 0
    file = tmp_path / "config" / "hallouminate" / "config.toml"
    file.write_text(file.read_text() + "\n[search]\ntop_filez = 3\n")
    out = hm(env, tmp_path, "validate")
    assert out.returncode == 1
    assert "top_filez" in out.stderr and str(file) in out.stderr and "top_files" in out.stderr
    assert "Traceback" not in out.stderr


def test_validate_explicit_files_and_the_repo_layer(env: dict[str, str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    layer = repo / ".hallouminate" / "config.toml"
    layer.parent.mkdir(parents=True)
    layer.write_text('[[repository]]\nname = "repo"\npath = "."\n[indexing]\nchunk_token = 100\n')
    out = hm(env, repo, "validate")
    assert out.returncode == 1 and "chunk_token" in out.stderr and str(layer) in out.stderr
    good = tmp_path / "good.toml"
    good.write_text("[search]\nlimit = 5\n")
    assert hm(env, tmp_path, "validate", str(good)).returncode == 0
    both = hm(env, tmp_path, "validate", str(good), str(layer))
    assert both.returncode == 1 and "chunk_token" in both.stderr


def test_validate_with_no_files_is_fine(env: dict[str, str], tmp_path: Path) -> None:
    out = hm(env, tmp_path, "validate")
    assert out.returncode == 0 and "no config files" in out.stdout


def test_show_prints_the_merged_config_and_its_files(env: dict[str, str], tmp_path: Path) -> None:
    baseline = tmp_path / "config" / "hallouminate" / "config.toml"
    baseline.parent.mkdir(parents=True)
    baseline.write_text("[search]\ntop_files = 4\n")
    repo = tmp_path / "repo"
    layer = repo / ".hallouminate" / "config.toml"
    layer.parent.mkdir(parents=True)
    layer.write_text('[[repository]]\nname = "repo"\npath = "."\n')
    text = hm(env, repo, "show")
    assert text.returncode == 0, text.stderr
    assert str(baseline) in text.stdout and str(layer) in text.stdout
    assert f"top_files = 4  # {baseline}" in text.stdout
    assert "limit = 50  # default" in text.stdout
    assert "repo:repo:wiki" in text.stdout

    as_json = hm(env, repo, "show", "--format", "json")
    data = json.loads(as_json.stdout)
    assert data["cwd"] == str(repo.resolve())
    assert data["sources"] == [str(baseline), str(layer)]
    assert data["default_corpus"] == "repo:repo:wiki"

    layer.write_text('[[repository]]\nname = "repo"\npath = "."\n[search]\ntop_files = 9\n')
    conflict = hm(env, repo, "show")
    assert conflict.returncode == 2 and str(baseline) in conflict.stderr and str(layer) in conflict.stderr
