"""`hallouminate config validate` and `config show` messages, as a user reads them: the TOML line (end of
file included), only the files at fault in the summary, and a conflict naming both values and the file to
change. Real processes, private XDG dirs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.sandbox import config_only_env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return config_only_env(tmp_path)


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    file = tmp_path / "config" / "hallouminate" / "config.toml"
    file.parent.mkdir(parents=True)
    file.write_text("[search]\ntop_files = 5\n")
    return file


def repo_layer(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "repo" / ".hallouminate" / "config.toml"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text('[[repository]]\nname = "r"\npath = "."\n' + text)
    return file


def hallouminate(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hallouminate", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        ("[search]\ntop_files = [1,\n", 5, "line 5 (end of file)"),  # an unclosed array: no position given
        ('[search]\nsnippet_chars = "open\n\n\n', 5, "line 5"),  # an unterminated string
        ("[search\n", 4, "line 4"),
    ],
)
def test_malformed_toml_names_its_line_and_only_the_file_at_fault(
    env: dict[str, str], tmp_path: Path, baseline: Path, text: str, line: int, said: str
) -> None:
    layer = repo_layer(tmp_path, text)
    out = hallouminate(env, layer.parent.parent, "config", "validate")
    assert out.returncode != 0
    problem, summary = out.stderr.strip().splitlines()
    assert problem.startswith(f"{layer}: {said}: malformed TOML: "), problem
    assert "::" not in problem
    assert summary == f"1 problem(s) in {layer}"  # the baseline is fine: not named as at fault
    assert out.stdout == f"ok: {baseline}\n"
    shown = hallouminate(env, layer.parent.parent, "config", "show")
    assert shown.returncode != 0 and f"{layer}: line {line}" in shown.stderr


def test_explicit_files_summary_names_only_the_broken_one(
    env: dict[str, str], tmp_path: Path, baseline: Path
) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('[search]\ntop_files = "ten\n')
    out = hallouminate(env, tmp_path, "config", "validate", str(baseline), str(broken))
    assert out.returncode != 0
    assert out.stderr.strip().splitlines()[-1] == f"1 problem(s) in {broken}"
    assert f"{broken}: line 2: malformed TOML" in out.stderr


def test_a_baseline_and_repo_conflict_names_both_values_and_the_file_to_change(
    env: dict[str, str], tmp_path: Path, baseline: Path
) -> None:
    layer = repo_layer(tmp_path, "[search]\ntop_files = 7\n")
    out = hallouminate(env, layer.parent.parent, "config", "validate")
    assert out.returncode != 0
    problem = out.stderr.splitlines()[0]
    assert f"set to 5 in {baseline} and to 7 in {layer}" in problem
    assert f"remove top_files from {layer} (which then gets 5)" in problem


def test_a_corpus_defined_twice_names_what_differs_and_the_file_to_change(
    env: dict[str, str], tmp_path: Path, baseline: Path
) -> None:
    baseline.write_text(f'[[corpus]]\nname = "notes"\npaths = ["{tmp_path}/a"]\n')
    layer = repo_layer(tmp_path, '[[corpus]]\nname = "notes"\npaths = ["b"]\n')
    out = hallouminate(env, layer.parent.parent, "config", "validate")
    assert out.returncode != 0
    problem = out.stderr.splitlines()[0]
    assert (
        f"in {baseline} with paths ['{tmp_path}/a']; in {layer} with paths ['{tmp_path}/repo/b']" in problem
    )
    assert f"make the definition in {layer} the same, or give it another name" in problem
