"""The embedding adapter (fastembed + tokenizers). Heavy imports happen when an Embedder is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hallouminate.embedding.embedder import Embedder

__all__ = ["Embedder"]


def __getattr__(name: str) -> Any:
    # Lazy: importing the package must not pull numpy/fastembed into light callers.
    if name == "Embedder":
        from hallouminate.embedding.embedder import Embedder

        return Embedder
    raise AttributeError(name)
