"""`[best_practice] path_templates`: validation with clear errors, the merge with the repository layer
(its templates first), and `config show`'s provenance of each template."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hallouminate.config import describe_effective, resolve, validate_file
from hallouminate.errors import ConfigError
from support.files import write

REPO_LAYER = '[[repository]]\nname = "proj"\npath = "."\n'


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("guides/{taget}.md", "lacks the placeholder {target}"),
        ("guides/best.md", "lacks the placeholder {target}"),
        ("guides/{target}-{x}.md", "brace outside {target}"),
        ("/etc/{target}.md", "is absolute"),
        ("~/{target}.md", "is absolute"),
        ("../{target}.md", "'..' segment"),
        ("guides//{target}.md", "empty, '.' or '..' segment"),
        ("guides\\\\{target}.md", "backslash"),
        ("guides/\\u0007{target}.md", "control character"),
    ],
)
def test_a_bad_template_is_refused_naming_file_key_and_fix(
    baseline: Path, tmp_path: Path, template: str, problem: str
) -> None:
    write(baseline, f'[best_practice]\npath_templates = ["{template}"]\n')
    with pytest.raises(ConfigError) as info:
        resolve(tmp_path)
    message = info.value.message
    assert message.startswith(f"{baseline}: [best_practice] path_templates[0] ")
    assert problem in message and 'e.g. "best-practices/{target}.md"' in message
    assert validate_file(baseline) == [message]


@pytest.mark.parametrize(
    ("value", "problem"),
    [("'guides/{target}.md'", "must be a list of strings"), ("[]", "must not be empty")],
)
def test_the_key_takes_a_non_empty_list(baseline: Path, tmp_path: Path, value: str, problem: str) -> None:
    write(baseline, f"[best_practice]\npath_templates = {value}\n")
    with pytest.raises(ConfigError, match=problem):
        resolve(tmp_path)


def test_an_unknown_key_gets_a_did_you_mean(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[best_practice]\npath_template = ["a/{target}.md"]\n')
    with pytest.raises(ConfigError, match="did you mean 'path_templates'"):
        resolve(tmp_path)


def test_the_layers_merge_the_repository_s_first_and_show_each_source(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[best_practice]\npath_templates = ["shared/{target}.md", "common/{target}.md"]\n')
    repo = tmp_path / "proj"
    layer = write(
        repo / ".hallouminate" / "config.toml",
        REPO_LAYER + '\n[best_practice]\npath_templates = ["ours/{target}.md", "common/{target}.md"]\n',
    )
    resolved = resolve(repo)
    # No conflict although the values differ: merged, the repository's first, each once.
    assert resolved.settings.best_practice_templates == (
        "ours/{target}.md",
        "common/{target}.md",
        "shared/{target}.md",
    )
    shown = describe_effective(resolved)
    assert shown["settings"]["best_practice"]["path_templates"] == list(
        resolved.settings.best_practice_templates
    )
    assert shown["list_sources"]["best_practice.path_templates"] == [
        {"value": "ours/{target}.md", "source": str(layer)},
        {"value": "common/{target}.md", "source": str(layer)},
        {"value": "shared/{target}.md", "source": str(baseline)},
    ]
    # Outside the repository only the baseline's apply; with none set, nothing is shown.
    assert resolve(tmp_path).settings.best_practice_templates == ("shared/{target}.md", "common/{target}.md")
    write(baseline, "")
    assert "best_practice" not in describe_effective(resolve(tmp_path))["settings"]


def test_config_show_prints_each_template_with_its_file(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[best_practice]\npath_templates = ["shared/{target}.md"]\n')
    repo = tmp_path / "proj"
    layer = write(
        repo / ".hallouminate" / "config.toml",
        REPO_LAYER + '\n[best_practice]\npath_templates = ["ours/{target}.md"]\n',
    )
    run = [sys.executable, "-m", "hallouminate", "config", "show"]
    text = subprocess.run(run, cwd=repo, capture_output=True, text=True, check=True).stdout
    assert f'[best_practice]\npath_templates = [\n  "ours/{{target}}.md",  # {layer}\n' in text
    assert f'  "shared/{{target}}.md",  # {baseline}\n]\n' in text
    shown = json.loads(
        subprocess.run(
            [*run, "--format", "json"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout
    )
    assert [v["source"] for v in shown["list_sources"]["best_practice.path_templates"]] == [
        str(layer),
        str(baseline),
    ]
