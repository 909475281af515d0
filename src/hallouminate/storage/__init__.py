"""The storage adapter: the only package that imports lancedb and pyarrow (lazily, on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hallouminate.storage.store import FileState, Store

__all__ = ["FileState", "Store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hallouminate.storage import store

        return getattr(store, name)
    raise AttributeError(name)
