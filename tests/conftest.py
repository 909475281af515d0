"""Shared fixtures: the real model, isolated XDG directories, short socket paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate import xdg

# Resolved at import time, before any test isolates the XDG variables, so every test shares the one real
# model that `make setup` provisioned (provisioning it here if it is missing).
_REAL_MODEL_CACHE = xdg.default_model_cache()


@pytest.fixture(scope="session")
def model_cache() -> Path:
    """The directory holding the real, provisioned embedding model."""
    from hallouminate.model import install

    install(_REAL_MODEL_CACHE)
    return _REAL_MODEL_CACHE
