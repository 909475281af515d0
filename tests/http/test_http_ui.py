"""The operator page (``GET /ui``) in a real browser: headless chromium over a real daemon's listener loads
the page, shows the status band (version, the scope's corpora with their document and chunk counts), and
answers a question typed after ``/`` through ``/mcp`` (the page speaks MCP Streamable HTTP itself); keys
move through the results; dark mode renders; nothing is fetched from anywhere but the listener."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hallouminate import __version__
from support.browser import chromium, save_screenshot
from support.http_world import HttpWorld, http_world
from support.sandbox import hm

QUESTION = "How does the MCP shim reach the daemon?"
VIEWPORT = {"width": 1100, "height": 760}


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[HttpWorld]:
    with http_world(model_cache) as world:
        yield world


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def corpus_figures(world: HttpWorld) -> dict[str, Any]:
    """The scope's corpus as the CLI's ``status`` reports it (over the daemon's socket): what the page
    must show."""
    done = hm(world.sandbox, "status", "--format", "json", cwd=world.repo)
    assert done.returncode == 0, done.stdout + done.stderr
    (figures,) = json.loads(done.stdout)["corpora"]  # the repository's wiki
    return dict(figures)


def luminance(css_rgb: str) -> float:
    """Relative luminance (0 black .. 1 white) of a computed ``rgb(r, g, b)`` colour."""
    r, g, b = (int(part) for part in css_rgb[css_rgb.index("(") + 1 : css_rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_page_shows_status_and_answers_a_question(world: HttpWorld, browser: Any, tmp_path: Path) -> None:
    context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = context.new_page()
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    page.goto(world.base_url + "/ui")

    # The status band: the daemon's version, the scope's corpus with the CLI's counts.
    page.wait_for_function("(v) => document.getElementById('f-version').textContent === v", arg=__version__)
    figures = corpus_figures(world)
    row = page.locator(f'#corpora-rows tr[data-corpus="{figures["corpus"]}"]')
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[1] == str(figures["indexed_files"]), cells
    assert cells[2] == f"{figures['total_chunks']:,}", cells
    assert figures["indexed_files"] == 5 and figures["total_chunks"] > 5, figures
    assert page.locator("#f-pid").inner_text().isdigit()
    assert page.locator("#f-watcher").inner_text() != "…"

    # `/` focuses the search box, Enter searches, the answer comes from /mcp.
    page.locator("body").press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    first = page.locator("#results .result").first
    first.wait_for()
    assert first.get_attribute("data-path") == "architecture.md"
    assert first.locator(".corpus").inner_text() == figures["corpus"]
    assert first.locator(".score").inner_text().startswith("score ")
    assert first.locator(".chunk .loc").first.inner_text().startswith("L")
    assert first.locator(".chunk .snippet").first.inner_text().strip()
    png = page.screenshot(full_page=False)
    stable = save_screenshot(png, tmp_path, "ui.png")
    assert stable.stat().st_size > 10_000

    # Arrow keys and j/k move through the results with a visible focus; Esc clears.
    count = page.locator("#results .result").count()
    assert count >= 2, count
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.path") == "architecture.md"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", outline
    page.keyboard.press("j")
    second = page.locator("#results .result").nth(1).get_attribute("data-path")
    assert page.evaluate("document.activeElement.dataset.path") == second
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.dataset.path") == "architecture.md"
    page.keyboard.press("Escape")
    assert page.locator("#results .result").count() == 0
    assert page.input_value("#q") == ""
    assert page.evaluate("document.activeElement.id") == "q"

    # The search spoke MCP Streamable HTTP on /mcp: initialize, then the session id on what followed.
    posts = [r for r in requests if r.url == world.base_url + "/mcp" and r.method == "POST"]
    methods = [json.loads(r.post_data)["method"] for r in posts]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/call"], methods
    assert "mcp-session-id" not in posts[0].headers
    assert all(r.headers.get("mcp-session-id") for r in posts[1:]), [r.headers for r in posts]
    call = json.loads(posts[2].post_data)["params"]
    assert call == {"name": "ground", "arguments": {"cwd": str(world.sandbox.root), "query": QUESTION}}
    # No external asset: every request went to the listener.
    assert all(r.url.startswith(world.base_url + "/") for r in requests), [r.url for r in requests]
    context.close()


def test_low_confidence_and_a_refusal_are_shown(world: HttpWorld, browser: Any) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(world.base_url + "/ui")
    page.locator("#q").fill("zorblax quintessence of marmalade trebuchets")
    page.keyboard.press("Enter")
    page.locator("#notice .notice-warn").first.wait_for()
    assert "Low confidence" in page.locator("#notice").inner_text()
    assert page.locator("#results .result .badge").first.inner_text() == "low confidence"

    # A query over the limit: the daemon's refusal, in the page.
    page.locator("#q").fill("x" * 2100)
    page.keyboard.press("Enter")
    error = page.locator("#notice .notice-error")
    error.wait_for()
    assert "2048" in error.inner_text(), error.inner_text()
    assert page.locator("#results .result").count() == 0
    context.close()


def test_dark_mode_renders(world: HttpWorld, browser: Any, tmp_path: Path) -> None:
    colours = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)
        page = context.new_page()
        page.goto(world.base_url + "/ui")
        page.wait_for_function(
            "(v) => document.getElementById('f-version').textContent === v", arg=__version__
        )
        colours[scheme] = page.evaluate(
            "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
        )
        if scheme == "dark":
            save_screenshot(page.screenshot(), tmp_path, "ui-dark.png")
        context.close()
    (light_bg, light_fg), (dark_bg, dark_fg) = colours["light"], colours["dark"]
    assert luminance(light_bg) > 0.8 and luminance(light_fg) < 0.3, colours
    assert luminance(dark_bg) < 0.2 and luminance(dark_fg) > 0.7, colours


def api_status(world: HttpWorld, query: str = "") -> dict[str, Any]:
    with urllib.request.urlopen(world.base_url + "/api/status" + query, timeout=60) as resp:
        assert resp.status == 200
        return dict(json.loads(resp.read()))


def test_status_figures_are_kept_until_a_write(world: HttpWorld) -> None:
    """The band polls every few seconds; ``corpus_stats`` (O(chunks)) runs again only after a write."""
    # Two polls 0.5 s apart: the figures' age must show they were kept, not computed again. A write just
    # before (an earlier test's, the watcher's) may still be due its one recomputation between the two
    # (at most every 5 s), so a pair is tried again; figures computed on every poll fail all three.
    pairs = []
    for _attempt in range(3):
        first = api_status(world)
        time.sleep(0.5)
        kept = api_status(world)
        pairs.append((first["figures_age_secs"], kept["figures_age_secs"]))
        if kept["figures_age_secs"] >= 0.5 + first["figures_age_secs"] - 0.05:
            break
    else:
        raise AssertionError(f"the figures were computed again at every poll: ages {pairs}")
    assert kept["corpora"] == first["corpora"]
    (corpus,) = first["corpora"]

    # A new page, picked up by the watcher: its counters move, the figures follow.
    page = world.repo / ".hallouminate" / "wiki" / "operator-notes.md"
    page.write_text("# Operator notes\n\nThe status band counts this page once the watcher has indexed it.\n")
    deadline = time.monotonic() + 120
    while True:
        now = api_status(world)
        (row,) = now["corpora"]
        if row["indexed_files"] == corpus["indexed_files"] + 1:
            break
        assert time.monotonic() < deadline, now
        time.sleep(0.2)
    assert row["total_chunks"] > corpus["total_chunks"], (corpus, row)
    assert now["watcher"]["files_upserted"] > first["watcher"]["files_upserted"], now
