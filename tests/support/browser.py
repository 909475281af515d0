"""A real headless browser for the operator page: Debian's chromium, driven by the ``playwright`` package.

Never ``playwright install``: no browser download works here; the system's ``/usr/bin/chromium`` is the
browser (``make test`` installs it with apt-get when it is missing). A missing browser FAILS the test that
asked for it, saying what to install: a page nobody loaded is not a page that works.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path(os.environ.get("HALLOUMINATE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Screenshots that outlive the test's tmp dir (gitignored): the last run's, for a person to look at.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """A headless chromium for one test module."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} not found: the operator page is tested in a real browser. Install Debian's chromium "
            "(`apt-get install chromium`, which `make test` does when run as root) or point "
            "HALLOUMINATE_CHROMIUM at a Chromium binary.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def save_screenshot(png: bytes, tmp_dir: Path, name: str) -> Path:
    """``png`` under the test's tmp dir and as ``test-artifacts/<name>``; the stable copy's path."""
    (tmp_dir / name).write_bytes(png)
    ARTIFACTS.mkdir(exist_ok=True)
    stable = ARTIFACTS / name
    stable.write_bytes(png)
    return stable
