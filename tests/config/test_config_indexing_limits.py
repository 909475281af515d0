"""`[indexing]` size caps, decompression budget and fail_on_frontmatter_error: defaults, the old name
`max_file_bytes`, clear errors from `config validate`, and `config show`'s provenance."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hallouminate.config import describe_effective, resolve, validate_file
from hallouminate.config.types import Settings
from hallouminate.errors import ConfigError
from hallouminate.indexing.documents import MAX_DECOMPRESSED_SIZE
from hallouminate.protocol.limits import DOCUMENT_BINARY_MAX_BYTES
from support.files import write

MIB = 1024 * 1024


def test_defaults(baseline: Path, tmp_path: Path) -> None:
    s = resolve(tmp_path).settings
    assert (s.max_file_bytes, s.max_binary_file_size, s.max_decompressed_size) == (
        4 * MIB,
        50 * MIB,
        50 * MIB,
    )
    assert s.fail_on_frontmatter_error is False
    # The config repeats the limits other packages own (it sits below them): they must stay equal.
    assert s.max_decompressed_size == MAX_DECOMPRESSED_SIZE
    assert s.max_binary_file_size == DOCUMENT_BINARY_MAX_BYTES
    # A Settings built in code (tests, tools) gets the same defaults.
    built = Settings(
        model_name="m", model_cache_dir=tmp_path, store_dir=tmp_path, idle_exit_secs=1.0, top_files=1,
        chunks_per_file=1, limit=1, snippet_chars=20, chunk_tokens=64, max_file_bytes=1,
    )  # fmt: skip
    assert (built.max_binary_file_size, built.max_decompressed_size, built.fail_on_frontmatter_error) == (
        s.max_binary_file_size,
        s.max_decompressed_size,
        False,
    )


def test_the_baseline_sets_each_and_config_show_names_the_file(baseline: Path, tmp_path: Path) -> None:
    write(
        baseline,
        "[indexing]\nmax_text_file_size = 1000\nmax_binary_file_size = 2000\nmax_decompressed_size = 3000\n"
        "fail_on_frontmatter_error = true\n",
    )
    resolved = resolve(tmp_path)
    s = resolved.settings
    assert (s.max_file_bytes, s.max_binary_file_size, s.max_decompressed_size) == (1000, 2000, 3000)
    assert s.fail_on_frontmatter_error is True
    shown = describe_effective(resolved)
    assert shown["settings"]["indexing"] == {
        "chunk_tokens": 128,
        "max_text_file_size": 1000,
        "max_binary_file_size": 2000,
        "max_decompressed_size": 3000,
        "fail_on_frontmatter_error": True,
    }
    for key in (
        "max_text_file_size",
        "max_binary_file_size",
        "max_decompressed_size",
        "fail_on_frontmatter_error",
    ):
        assert shown["setting_sources"][f"indexing.{key}"] == str(baseline)
    text = subprocess.run(
        [sys.executable, "-m", "hallouminate", "config", "show"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"max_binary_file_size = 2000  # {baseline}\n" in text
    assert f"fail_on_frontmatter_error = true  # {baseline}\n" in text


def test_max_file_bytes_is_still_read_as_the_text_cap(baseline: Path, tmp_path: Path) -> None:
    write(baseline, "[indexing]\nmax_file_bytes = 4096\n")
    resolved = resolve(tmp_path)
    assert resolved.settings.max_file_bytes == 4096
    assert validate_file(baseline) == []
    # Shown under its current name, set by the file that gave the old one.
    shown = describe_effective(resolved)
    assert shown["settings"]["indexing"]["max_text_file_size"] == 4096
    assert shown["setting_sources"]["indexing.max_text_file_size"] == str(baseline)
    assert "max_file_bytes" not in shown["settings"]["indexing"]


@pytest.mark.parametrize("order", ["old first", "new first"])
def test_both_names_in_one_file_are_refused_naming_both(baseline: Path, tmp_path: Path, order: str) -> None:
    lines = ["max_file_bytes = 4096", "max_text_file_size = 8192"]
    if order == "new first":
        lines.reverse()
    write(baseline, "[indexing]\n" + "\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as err:
        resolve(tmp_path)
    message = err.value.message
    assert message.startswith(f"{baseline}: [indexing] max_file_bytes and max_text_file_size are both set")
    assert "keep max_text_file_size only" in message
    assert err.value.data["keys"] == ["max_file_bytes", "max_text_file_size"]
    (problem,) = validate_file(baseline)
    assert "max_file_bytes and max_text_file_size" in problem


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("max_text_file_size = 0", ["[indexing] max_text_file_size", "positive integer", "0"]),
        ("max_file_bytes = -1", ["[indexing] max_file_bytes", "positive integer"]),
        ('max_binary_file_size = "50MB"', ["[indexing] max_binary_file_size", "positive integer", "'50MB'"]),
        ("max_decompressed_size = 1.5", ["[indexing] max_decompressed_size", "positive integer"]),
        ('fail_on_frontmatter_error = "yes"', ["[indexing] fail_on_frontmatter_error", "true or false"]),
        ("fail_on_frontmatter_error = 1", ["[indexing] fail_on_frontmatter_error", "true or false"]),
        ("max_binary_file_sise = 1", ["max_binary_file_sise", "did you mean 'max_binary_file_size'"]),
    ],
)
def test_config_validate_names_the_key_and_the_fix(baseline: Path, line: str, fragments: list[str]) -> None:
    write(baseline, f"[indexing]\n{line}\n")
    (problem,) = validate_file(baseline)
    assert problem.startswith(str(baseline))
    for fragment in fragments:
        assert fragment in problem
