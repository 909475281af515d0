"""Config: baseline + repo layer discovery, validation, merging, corpus lookup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hallouminate import xdg
from hallouminate.config import corpus_for, load_baseline, resolve
from hallouminate.errors import InvalidParams
from support.files import write


def repo_config(root: Path, text: str) -> Path:
    return write(root / ".hallouminate" / "config.toml", text)


def test_defaults_without_any_file(baseline: Path, tmp_path: Path) -> None:
    resolved = resolve(tmp_path)
    s = resolved.settings
    assert (s.top_files, s.chunks_per_file, s.limit, s.snippet_chars) == (10, 3, 50, 240)
    assert s.model_name == "sentence-transformers/all-MiniLM-L6-v2"
    assert s.model_cache_dir == xdg.default_model_cache()
    assert s.store_dir == xdg.default_store_dir()
    assert s.idle_exit_secs == 900
    assert s.chunk_tokens <= 256 and s.max_file_bytes > 0
    assert resolved.corpora == {}
    assert (resolved.repository_name, resolved.default_corpus, resolved.sources) == (None, None, ())


def test_layers_merge_lists_append_and_relative_paths(baseline: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(
        baseline,
        f'[search]\ntop_files = 5\n\n[[corpus]]\nname = "docs"\npaths = ["{docs}"]\n',
    )
    repo = tmp_path / "proj"
    layer = repo_config(
        repo,
        '[indexing]\nchunk_tokens = 128\n\n[[repository]]\nname = "proj"\npath = "."\n\n'
        '[[corpus]]\nname = "notes"\npaths = ["notes", "~/more"]\nglobs = ["*.md"]\nexclude = ["tmp/"]\n',
    )
    (repo / "src" / "deep").mkdir(parents=True)
    resolved = resolve(repo / "src" / "deep")
    assert list(resolved.corpora) == ["docs", "notes", "repo:proj:wiki"]
    notes = resolved.corpora["notes"]
    assert notes.roots == (repo / "notes", tmp_path / "home" / "more")
    assert (notes.globs, notes.exclude, notes.kind, notes.repository) == (
        ("*.md",),
        ("tmp/",),
        "custom",
        None,
    )
    wiki = resolved.corpora["repo:proj:wiki"]
    assert (wiki.kind, wiki.roots, wiki.globs, wiki.repository) == (
        "wiki",
        (repo / ".hallouminate" / "wiki",),
        ("**/*.md",),
        "proj",
    )
    assert resolved.corpora["docs"].globs == ("**/*.md",)
    assert (resolved.settings.top_files, resolved.settings.chunk_tokens) == (5, 128)
    assert (resolved.repository_name, resolved.default_corpus) == ("proj", "repo:proj:wiki")
    assert resolved.sources == (baseline, layer)
    assert corpus_for(resolved, None) is wiki
    assert resolved.repositories == {"proj": repo}


def test_conflicting_scalars_name_both_values_and_files(baseline: Path, tmp_path: Path) -> None:
    write(baseline, "[search]\ntop_files = 5\n")
    layer = repo_config(tmp_path / "r", "[search]\ntop_files = 7\n")
    with pytest.raises(InvalidParams) as err:
        resolve(tmp_path / "r")
    message = err.value.message
    assert "top_files" in message and "5" in message and "7" in message
    assert str(baseline) in message and str(layer) in message
    assert err.value.data["files"] == [str(baseline), str(layer)]


def test_equal_scalars_in_both_layers_are_fine(baseline: Path, tmp_path: Path) -> None:
    write(baseline, "[search]\nlimit = 20\n")
    repo_config(tmp_path / "r", "[search]\nlimit = 20\n")
    assert resolve(tmp_path / "r").settings.limit == 20


def test_repo_layer_cannot_move_daemon_wide_settings(baseline: Path, tmp_path: Path) -> None:
    layer = repo_config(tmp_path / "r", '[storage]\npath = "store"\n')
    with pytest.raises(InvalidParams) as err:
        resolve(tmp_path / "r")
    assert str(layer) in err.value.message and "[storage]" in err.value.message


def test_repo_layer_indexing_is_reported_as_not_applied(baseline: Path, tmp_path: Path) -> None:
    write(baseline, "[indexing]\nmax_file_bytes = 4096\n")
    layer = repo_config(
        tmp_path / "r", "[indexing]\nchunk_tokens = 64\nmax_file_bytes = 99\n[search]\nlimit = 20\n"
    )
    resolved = resolve(tmp_path / "r")
    # Index runs use the baseline's values, and the resolved settings say so (no conflict either).
    assert (resolved.settings.chunk_tokens, resolved.settings.max_file_bytes) == (128, 4096)
    assert resolved.settings.limit == 20
    assert "indexing.chunk_tokens" not in resolved.setting_sources
    (warning,) = resolved.warnings
    assert "chunk_tokens, max_file_bytes" in warning and str(layer) in warning and "baseline" in warning


def test_baseline_sets_daemon_settings(baseline: Path, tmp_path: Path) -> None:
    write(
        baseline,
        f'[embeddings]\ncache_dir = "{tmp_path / "m"}"\nmodel = "x/y"\n[storage]\npath = "~/store"\n'
        "[daemon]\nidle_exit_secs = 30\n",
    )
    s = load_baseline().settings
    assert (s.model_cache_dir, s.model_name, s.idle_exit_secs) == (tmp_path / "m", "x/y", 30.0)
    assert s.store_dir == tmp_path / "home" / "store"


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("[search]\ntop_file = 3\n", ["top_file", "top_files"]),
        ("[serch]\nlimit = 3\n", ["serch", "search"]),
        ('[search]\nlimit = "many"\n', ["[search] limit", "integer from 1 to 1000", "'many'"]),
        ("[search]\nlimit = true\n", ["[search] limit", "integer from 1 to 1000"]),
        ("[search]\ntop_files = 5000\n", ["[search] top_files", "from 1 to 100,", "5000"]),
        ("[search]\nsnippet_chars = 19\n", ["[search] snippet_chars", "from 20 to 4000", "19"]),
        (f'[[corpus]]\nname = "{"c" * 257}"\npaths = ["/a"]\n', ["[[corpus]] #1 name", "257", "1 to 256"]),
        (
            f'[[repository]]\nname = "{"r" * 245}"\npath = "/r"\n',
            ["[[repository]] #1 name", "257", "1 to 256"],
        ),
        ("[indexing]\nchunk_tokens = 4\n", ["chunk_tokens", "at least"]),
        ('[[corpus]]\nname = "x"\n', ["paths", "missing"]),
        ('[[corpus]]\nname = "x"\npaths = "/a"\n', ["paths", "list of strings"]),
        ('[[corpus]]\nname = "x"\npaths = ["/a"]\ncolour = 1\n', ["colour"]),
        ('[[corpus]]\nname = "a:b"\npaths = ["/a"]\n', ["a:b", "':'"]),
        ('[[corpus]]\nname = "docs"\npaths = ["relative"]\n', ["relative", "absolute"]),
        ('[[repository]]\nname = "has space"\npath = "/r"\n', ["has space", "whitespace"]),
    ],
)
def test_bad_baseline_values_name_key_and_file(baseline: Path, text: str, fragments: list[str]) -> None:
    write(baseline, text)
    with pytest.raises(InvalidParams) as err:
        load_baseline()
    assert str(baseline) in err.value.message
    for fragment in fragments:
        assert fragment in err.value.message


def test_malformed_toml_names_file_and_line(baseline: Path) -> None:
    write(baseline, "[search]\nlimit = 3\n[broken\n")
    with pytest.raises(InvalidParams) as err:
        load_baseline()
    assert str(baseline) in err.value.message and "line 3" in err.value.message
    assert err.value.data["line"] == 3


def test_duplicate_corpus_names_refused_identical_repeat_allowed(baseline: Path, tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    write(baseline, f'[[repository]]\nname = "proj"\npath = "{repo}"\n')
    repo_config(repo, '[[repository]]\nname = "proj"\npath = "."\n')
    assert list(resolve(repo).corpora) == ["repo:proj:wiki"]

    write(baseline, f'[[corpus]]\nname = "docs"\npaths = ["{tmp_path / "a"}"]\n')
    repo_config(repo, '[[corpus]]\nname = "docs"\npaths = ["b"]\n')
    with pytest.raises(InvalidParams) as err:
        resolve(repo)
    assert "docs" in err.value.message and str(baseline) in err.value.message


def test_deepest_repository_is_the_default(baseline: Path, tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    write(
        baseline,
        f'[[repository]]\nname = "outer"\npath = "{outer}"\n\n'
        f'[[repository]]\nname = "inner"\npath = "{inner}"\nwiki = "docs/wiki"\n',
    )
    assert resolve(inner / "src").default_corpus == "repo:inner:wiki"
    assert resolve(inner).corpora["repo:inner:wiki"].roots == (inner / "docs" / "wiki",)
    assert resolve(outer / "other").repository_name == "outer"
    assert resolve(tmp_path / "outer-sibling").repository_name is None


def test_no_repository_means_no_default_corpus(baseline: Path, tmp_path: Path) -> None:
    write(baseline, f'[[corpus]]\nname = "docs"\npaths = ["{tmp_path}"]\n')
    resolved = resolve(tmp_path / "elsewhere")
    assert (resolved.repository_name, resolved.default_corpus) == (None, None)
    with pytest.raises(InvalidParams) as err:
        corpus_for(resolved, None)
    assert "docs" in err.value.message and "corpus" in err.value.message
    assert err.value.data["corpora"] == ["docs"]


def test_unknown_corpus_lists_corpora_and_closest(baseline: Path, tmp_path: Path) -> None:
    write(
        baseline,
        f'[[corpus]]\nname = "docs"\npaths = ["{tmp_path}"]\n[[corpus]]\nname = "notes"\npaths = ["{tmp_path}"]\n',
    )
    resolved = resolve(tmp_path)
    with pytest.raises(InvalidParams) as err:
        corpus_for(resolved, "dcos")
    assert err.value.data == {"corpora": ["docs", "notes"], "closest": "docs"}
    assert "'docs'" in err.value.message and "notes" in err.value.message
    assert corpus_for(resolved, "notes").name == "notes"


def test_corpus_paths_derive_a_repo_corpus(baseline: Path, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo_config(
        repo, '[[repository]]\nname = "r"\npath = "."\ncorpus_paths = ["docs"]\ncorpus_exclude = ["x/"]\n'
    )
    spec = resolve(repo).corpora["repo:r:corpus"]
    assert (spec.kind, spec.roots, spec.globs, spec.exclude) == (
        "corpus",
        (repo / "docs",),
        ("**/*.md",),
        ("x/",),
    )


def test_relative_cwd_is_refused(baseline: Path) -> None:
    with pytest.raises(InvalidParams):
        resolve(Path("relative/dir"))


def test_default_model_name_matches_the_model_package() -> None:
    from hallouminate.config import defaults
    from hallouminate.model import MODEL_NAME

    assert defaults.MODEL_NAME == MODEL_NAME


def test_config_imports_nothing_heavy() -> None:
    code = (
        "import sys, hallouminate.config, hallouminate.embedding, hallouminate.storage;"
        "heavy = {'lancedb', 'fastembed', 'numpy', 'pyarrow', 'onnxruntime', 'tokenizers'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
