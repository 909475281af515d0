"""The path sandbox: corpus-relative paths that cannot escape their root, read without following symlinks.

Domain code with no dependency beyond ``errors``; the read tools use it now and the write tools will too.
See docs/adr/0009-path-sandbox.md.
"""

from __future__ import annotations

from hallouminate.sandbox.paths import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    PathMissing,
    check_leaf,
    check_relative_path,
    open_for_read,
    resolve_inside,
)

__all__ = [
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "PathMissing",
    "check_leaf",
    "check_relative_path",
    "open_for_read",
    "resolve_inside",
]
