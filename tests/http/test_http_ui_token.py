"""The operator page when ``[http] token_file`` is set: it asks for the token once, before its first
request, keeps it in the tab (sessionStorage) and sends it as ``Authorization: Bearer`` on every request,
``/api/status`` and ``/mcp`` alike, in a real headless chromium."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hallouminate import __version__
from support.browser import chromium
from support.http_world import HttpWorld, http_world

TOKEN = "s3cret-operator-token"
QUESTION = "How does the MCP shim reach the daemon?"


@pytest.fixture(scope="module")
def world(model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpWorld]:
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with http_world(model_cache, extra_http=f'token_file = "{token_file}"\n') as world:
        yield world


def test_page_asks_for_the_token_once_and_sends_it(world: HttpWorld) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1100, "height": 760})
        page = context.new_page()
        requests: list[Any] = []
        page.on("request", lambda request: requests.append(request))
        page.goto(world.base_url + "/ui")

        # Asked before anything is requested of the daemon.
        dialog = page.locator("#token-dialog")
        dialog.wait_for(state="visible")
        assert page.evaluate("document.activeElement.id") == "token"
        assert not [r.url for r in requests if "/api/" in r.url or r.url.endswith("/mcp")]
        page.keyboard.press("Escape")  # cannot be dismissed: nothing works without it
        assert dialog.is_visible()
        page.keyboard.type(TOKEN)
        page.keyboard.press("Enter")
        dialog.wait_for(state="hidden")

        page.wait_for_function(
            "(v) => document.getElementById('f-version').textContent === v", arg=__version__
        )
        page.locator("body").press("/")
        page.keyboard.type(QUESTION)
        page.keyboard.press("Enter")
        first = page.locator("#results .result").first
        first.wait_for()
        assert first.get_attribute("data-path") == "architecture.md"
        assert page.evaluate("sessionStorage.getItem('hallouminate.token')") == TOKEN

        daemon = [
            r
            for r in requests
            if r.url.startswith(world.base_url + "/api/") or r.url == world.base_url + "/mcp"
        ]
        assert {r.url.split("?")[0] for r in daemon} >= {
            world.base_url + "/api/status",
            world.base_url + "/mcp",
        }
        assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in daemon), [
            (r.url, r.headers.get("authorization")) for r in daemon
        ]
        methods = [json.loads(r.post_data)["method"] for r in daemon if r.method == "POST"]
        assert methods[:3] == ["initialize", "notifications/initialized", "tools/call"], methods

        # Kept for the tab: a reload does not ask again.
        page.reload()
        page.wait_for_function(
            "(v) => document.getElementById('f-version').textContent === v", arg=__version__
        )
        assert not dialog.is_visible()
        context.close()


def test_a_wrong_token_is_refused_and_asked_again(world: HttpWorld) -> None:
    # The guard refuses what reads something; the page's own files load without the token.
    for path, status in (("/ui", 200), ("/ui/page.js", 200), ("/api/status", 401)):
        try:
            with urllib.request.urlopen(world.base_url + path, timeout=30) as resp:
                got = resp.status
        except urllib.error.HTTPError as exc:
            got = exc.code
        assert got == status, (path, got)
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1100, "height": 760})
        page = context.new_page()
        page.goto(world.base_url + "/ui")
        dialog = page.locator("#token-dialog")
        dialog.wait_for(state="visible")
        page.keyboard.type("not-the-token")
        page.keyboard.press("Enter")
        # The daemon's 401 brings the question back, saying why.
        page.wait_for_function("() => document.getElementById('token-why').textContent.includes('401')")
        assert dialog.is_visible()
        assert "bearer token is wrong" in page.locator("#token-why").inner_text()
        page.keyboard.type(TOKEN)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(v) => document.getElementById('f-version').textContent === v", arg=__version__
        )
        assert page.evaluate("sessionStorage.getItem('hallouminate.token')") == TOKEN
        context.close()
