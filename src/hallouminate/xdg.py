"""Where hallouminate keeps things, following the XDG base directory spec.

Every location derives from an XDG variable (or its documented default), so a test or a user can move
everything by pointing ``XDG_CONFIG_HOME``, ``XDG_CACHE_HOME``, ``XDG_STATE_HOME`` and ``XDG_DATA_HOME``
at other directories. Nothing here touches the filesystem.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "hallouminate"


def _base(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "")
    # The spec says relative values are invalid and must be ignored.
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def config_home() -> Path:
    return _base("XDG_CONFIG_HOME", ".config") / APP


def cache_home() -> Path:
    return _base("XDG_CACHE_HOME", ".cache") / APP


def state_home() -> Path:
    return _base("XDG_STATE_HOME", ".local/state") / APP


def data_home() -> Path:
    return _base("XDG_DATA_HOME", ".local/share") / APP


def baseline_config_file() -> Path:
    return config_home() / "config.toml"


def default_model_cache() -> Path:
    return cache_home() / "models"


def default_store_dir() -> Path:
    return data_home() / "lancedb"


def socket_path() -> Path:
    """``$HALLOUMINATE_SOCKET`` when set, else ``$XDG_STATE_HOME/hallouminate/daemon.sock``."""
    explicit = os.environ.get("HALLOUMINATE_SOCKET", "")
    if explicit:
        return Path(explicit)
    return state_home() / "daemon.sock"


def log_file() -> Path:
    return state_home() / "daemon.log"
