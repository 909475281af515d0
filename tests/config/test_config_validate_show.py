"""validate_file collects every problem; the template validates; describe_effective says where from."""

from __future__ import annotations

import re
from pathlib import Path

from hallouminate.config import (
    baseline_template,
    describe_effective,
    resolve,
    validate_file,
    validate_for,
)
from support.files import write


def test_the_template_validates_as_written_and_uncommented(tmp_path: Path) -> None:
    template = baseline_template()
    assert validate_file(write(tmp_path / "a.toml", template)) == []
    # Every "#key" line is a setting to uncomment; uncommenting them all must still be valid.
    uncommented = re.sub(r"(?m)^#(?! )", "", template)
    assert uncommented != template
    assert validate_file(write(tmp_path / "b.toml", uncommented)) == []


def test_every_problem_is_reported_with_key_and_file(tmp_path: Path) -> None:
    file = write(
        tmp_path / "c.toml",
        "[serch]\nlimit = 1\n\n[search]\ntop_file = 2\nlimit = 'many'\n\n"
        '[[corpus]]\nname = "docs"\npaths = ["/d"]\ncolour = "red"\nglobs = ["[z-a]"]\n',
    )
    problems = validate_file(file)
    assert len(problems) == 5, problems
    assert all(p.startswith(str(file)) for p in problems)
    joined = "\n".join(problems)
    for fragment in ["serch", "'search'", "top_file", "'top_files'", "limit", "colour", "[z-a]"]:
        assert fragment in joined


def test_duplicates_in_one_file_and_unreadable_files(tmp_path: Path) -> None:
    dup = write(
        tmp_path / "d.toml",
        '[[corpus]]\nname = "x"\npaths = ["/a"]\n[[corpus]]\nname = "x"\npaths = ["/b"]\n',
    )
    assert any("defined twice" in p for p in validate_file(dup))
    bad = write(tmp_path / "e.toml", "[search\n")
    (problem,) = validate_file(bad)
    assert "malformed TOML" in problem and "line 1" in problem
    assert validate_file(tmp_path / "missing.toml") == [f"{tmp_path / 'missing.toml'}: no such file"]


def test_repo_layers_are_checked_as_repo_layers(tmp_path: Path) -> None:
    layer = write(
        tmp_path / "r" / ".hallouminate" / "config.toml", '[[corpus]]\nname = "n"\npaths = ["notes"]\n'
    )
    assert validate_file(layer) == []  # relative paths are fine here...
    as_baseline = write(tmp_path / "plain.toml", '[[corpus]]\nname = "n"\npaths = ["notes"]\n')
    assert "absolute" in validate_file(as_baseline)[0]  # ...and not in a baseline
    write(layer, "[storage]\npath = '/x'\n")
    assert "baseline" in validate_file(layer)[0]


def test_validate_for_checks_the_layers_together(baseline: Path, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    write(baseline, "[search]\ntop_files = 5\n")
    layer = write(repo / ".hallouminate" / "config.toml", "[search]\ntop_files = 7\n")
    files, problems, at_fault = validate_for(repo)
    assert files == [baseline, layer] and at_fault == [baseline, layer]
    (problem,) = problems
    assert str(baseline) in problem and str(layer) in problem and "5" in problem and "7" in problem


def test_describe_effective_names_sources(baseline: Path, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    write(baseline, f'[search]\ntop_files = 5\n[[corpus]]\nname = "docs"\npaths = ["{tmp_path}"]\n')
    layer = write(
        repo / ".hallouminate" / "config.toml",
        '[indexing]\nchunk_tokens = 128\n[[repository]]\nname = "r"\npath = "."\n',
    )
    d = describe_effective(resolve(repo))
    assert d["sources"] == [str(baseline), str(layer)]
    assert d["settings"]["search"]["top_files"] == 5 and d["settings"]["search"]["limit"] == 50
    # A repository's [indexing] is not applied, so it is not reported as set (a warning says so).
    assert d["setting_sources"] == {"search.top_files": str(baseline)}
    assert [(c["name"], c["source"]) for c in d["corpora"]] == [
        ("docs", str(baseline)),
        ("repo:r:wiki", str(layer)),
    ]
    assert d["repository"] == "r" and d["default_corpus"] == "repo:r:wiki"
    assert d["repositories"] == [{"name": "r", "path": str(repo)}]
    assert d["settings"]["discovery"]["max_depth"] == 4
