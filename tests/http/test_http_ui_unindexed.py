"""The operator page over a repository nobody has indexed yet: the status band says how many files wait,
and a search shows the daemon's ``not-indexed`` warning in the page rather than an empty list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hallouminate import __version__
from support.browser import chromium
from support.http_world import HttpWorld, http_world


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[HttpWorld]:
    with http_world(model_cache, index=False) as world:
        yield world


def test_unindexed_corpus_is_said_in_the_band_and_the_results(world: HttpWorld) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1100, "height": 760})
        page = context.new_page()
        page.goto(world.base_url + "/ui")
        page.wait_for_function(
            "(v) => document.getElementById('f-version').textContent === v", arg=__version__
        )
        # The counts come once the model has loaded (2 s polls meanwhile).
        row = page.locator("#corpora-rows tr[data-corpus]").first
        page.wait_for_function(
            "() => /not indexed yet/.test(document.getElementById('corpora-rows').textContent)",
            timeout=120_000,
        )
        assert "5 files not indexed yet" in row.inner_text(), row.inner_text()
        assert row.locator("td").all_inner_texts()[1:3] == ["0", "0"]

        page.locator("body").press("/")
        page.keyboard.type("How does the MCP shim reach the daemon?")
        page.keyboard.press("Enter")
        warning = page.locator("#notice .notice-warn", has_text="not-indexed")
        warning.wait_for()
        assert "index" in warning.inner_text()
        context.close()
