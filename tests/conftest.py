"""Shared fixtures: the real model, isolated XDG directories, short socket paths.

Fixtures only: the plain helpers they are built on live in the ``tests/support`` package, which test
modules import by name (``from support.sandbox import Sandbox``); no test module imports another, nor this
file.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hallouminate import xdg
from support.sandbox import Sandbox, private_world
from support.schedule import longest_files_first

if TYPE_CHECKING:
    from hallouminate.embedding import Embedder
    from support.s3 import S3Server

# Resolved at import time, before any test isolates the XDG variables, so every test shares the one real
# model that `make setup` provisioned (provisioning it here if it is missing).
_REAL_MODEL_CACHE = xdg.default_model_cache()


@pytest.fixture(scope="session")
def model_cache() -> Path:
    """The directory holding the real, provisioned embedding model."""
    from hallouminate.model import install

    install(_REAL_MODEL_CACHE)
    return _REAL_MODEL_CACHE


@pytest.fixture(scope="session")
def embedder(model_cache: Path) -> Embedder:
    """The real model, loaded once for the whole run (a load costs ~1 s of CPU): for the tests that embed in
    process and do not configure a model of their own. Embedding is safe from several threads."""
    from hallouminate.embedding import Embedder

    return Embedder(model_cache)


@pytest.fixture(scope="session", autouse=True)
def _no_orphaned_shim_hosts() -> Iterator[None]:
    """At the end of the run, stop every warm shim host whose sandbox is gone (a module fixture that
    forgot it): they would otherwise idle for 15 minutes after the suite."""
    yield
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"hallouminate.shim.host" not in (entry / "cmdline").read_bytes():
                continue
            env = dict(
                item.split(b"=", 1) for item in (entry / "environ").read_bytes().split(b"\0") if b"=" in item
            )
        except OSError:
            continue
        sock = env.get(b"HALLOUMINATE_SOCKET", b"").decode()
        if sock.startswith("/tmp/") and not Path(sock).parent.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGTERM)


@pytest.fixture
def sandbox(model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    with private_world(model_cache, monkeypatch=monkeypatch) as box:
        yield box


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server (SeaweedFS's ``weed mini`` on loopback, ``support.s3``) with its bucket,
    for the whole run of a worker: started by the first test that asks (~1 s), its process group killed at
    the end. Tests keep to prefixes of their own; one that takes it down or freezes it brings it back."""
    from support.s3 import s3_server as started

    with started(tmp_path_factory.mktemp("s3")) as server:
        yield server


# -- configuration tests ------------------------------------------------------------------------------------
@pytest.fixture
def baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Isolated XDG dirs and HOME; returns the (not yet written) baseline config path."""
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / "xdg" / var.lower()))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = tmp_path / "xdg" / "xdg_config_home" / "hallouminate" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


# -- scheduling ---------------------------------------------------------------------------------------------
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the longest test files first (``support.schedule``); a plain run keeps the
    collection order."""
    if hasattr(config, "workerinput"):
        items[:] = longest_files_first(items)
