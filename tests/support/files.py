"""Writing test files: parents created as needed."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def touch(path: Path, text: str = "# x\n") -> Path:
    """A small Markdown page at ``path`` (walker and browse tests need files, rarely their words)."""
    return write(path, text)
