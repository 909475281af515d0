"""A repository's own `[search]` settings shape the `ground` answers of requests made inside it."""

from __future__ import annotations

from hallouminate.client import connect_or_spawn
from support.sandbox import SMALL_WIKI, Sandbox

QUESTION = "How does the MCP shim reach the daemon?"


async def test_the_repository_layer_search_defaults_apply_and_a_request_still_overrides(
    sandbox: Sandbox,
) -> None:
    plain = sandbox.make_repo("plain", pages=SMALL_WIKI)
    tuned = sandbox.make_repo("tuned", pages=SMALL_WIKI)
    config = tuned / ".hallouminate" / "config.toml"
    config.write_text(config.read_text() + "\n[search]\ntop_files = 2\nchunks_per_file = 1\n")
    conn = await connect_or_spawn()
    try:
        for repo in (plain, tuned):
            await conn.call("index", str(repo), {})  # a search answers from what is indexed: index first
        default = await conn.call("ground", str(plain), {"query": QUESTION})
        narrowed = await conn.call("ground", str(tuned), {"query": QUESTION})
        widened = await conn.call("ground", str(tuned), {"query": QUESTION, "top_files": 4})
    finally:
        await conn.close()
    assert len(default["docs"]) == len(SMALL_WIKI)  # the baseline's 10, of 5 pages
    assert len(narrowed["docs"]) == 2
    assert all(len(doc["chunks"]) == 1 for doc in narrowed["docs"])
    assert len(widened["docs"]) == 4
