"""The store never mixes vectors: a store built with one model, a daemon started with another (here the
OpenAI-compatible endpoint provider, tests/support/embedding_endpoint.py) refuses searches, index runs and
writes with a -32602 naming what the store holds, what is configured and the command that rebuilds; it
still serves what needs no vectors; `status` says it; nothing is dropped until `hallouminate index
--rebuild`, which re-embeds every corpus with the configured model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from hallouminate.client import stop_daemon
from hallouminate.errors import Conflict
from support.embedding_endpoint import Endpoint, endpoint_config, serving
from support.embedding_endpoint import daemon_call as call
from support.sandbox import Sandbox, hm, mcp_session

LOCAL = "sentence-transformers/all-MiniLM-L6-v2"
# Two pages: each is embedded twice (by the local model, then through the endpoint after the rebuild).
PAGES = ("architecture.md", "daemon-lifecycle.md")


@pytest.fixture
def endpoint(embedder: Any) -> Iterator[Endpoint]:
    with serving(embedder) as served:
        yield served


async def test_another_model_is_refused_with_the_rebuild_command_until_it_rebuilds(
    sandbox: Sandbox, endpoint: Endpoint, model_cache: Path
) -> None:
    repo = sandbox.make_repo(pages=PAGES)
    wiki = repo / ".hallouminate" / "wiki"
    sandbox.start_daemon()
    await call("index", repo)
    held = (await call("corpus_stats", repo))["total_chunks"]
    assert held > 0
    assert await stop_daemon()

    sandbox.write_config(endpoint_config(endpoint, str(model_cache), key_env=None))
    sandbox.start_daemon()
    # ground, index and the write tools: refused, naming held and configured models and the command.
    with pytest.raises(Conflict) as refused:
        await call("ground", repo, {"query": "daemon lifecycle"})
    error = refused.value
    assert "hallouminate index --rebuild" in error.message and LOCAL in error.message
    assert "openai-compatible:minilm-over-http" in error.message
    assert error.data["problem"] == "store-mismatch" and error.data["fix"] == "hallouminate index --rebuild"
    assert error.data["store"]["held"]["model"] == LOCAL
    assert error.data["store"]["configured"]["model"] == "openai-compatible:minilm-over-http"
    assert "go back" in error.message and f'model = "{LOCAL}"' in error.message
    with pytest.raises(Conflict):
        await call("index", repo)
    with pytest.raises(Conflict):
        await call(
            "add_markdown", repo, {"corpus": "repo:sample:wiki", "path": "new.md", "content": "# New\n"}
        )
    assert not (wiki / "new.md").exists()  # refused before anything was written
    assert not endpoint.seen  # nothing was embedded with the other model

    # Over MCP, the refusal is -32602 with the same message.
    async with mcp_session(sandbox, cwd=repo) as session:
        with pytest.raises(MCPError) as over_mcp:
            await session.call_tool("ground", {"query": "daemon lifecycle", "cwd": str(repo)})
        assert over_mcp.value.code == -32602 and "index --rebuild" in over_mcp.value.message

    # What needs no vectors still answers, and nothing was dropped.
    assert (await call("corpus_stats", repo))["total_chunks"] == held
    listed = await call("list_files", repo, {})
    assert {f["path"] for f in listed["files"]} >= set(PAGES)
    assert "Architecture" in (await call("read_markdown", repo, {"path": "architecture.md"}))["content"]
    status = await call("status", repo)
    assert status["store_mismatch"]["fix"] == "hallouminate index --rebuild"
    assert status["store_mismatch"]["held"]["model"] == LOCAL
    shown = hm(sandbox, "status", cwd=repo)
    assert "index --rebuild" in shown.stdout, shown

    # The CLI names the command too (exit 2: the caller's to fix).
    done = hm(sandbox, "index", cwd=repo)
    assert done.returncode == 2 and "hallouminate index --rebuild" in done.stderr, done

    rebuilt = hm(sandbox, "index", "--rebuild", cwd=repo)
    assert rebuilt.returncode == 0, rebuilt
    assert sum(len(s.inputs) for s in endpoint.seen) >= held  # every chunk embedded by the endpoint
    found = await call("ground", repo, {"query": "which process owns the LanceDB store and loads the model"})
    assert found["docs"][0]["path"] == "architecture.md"
    assert "store_mismatch" not in await call("status", repo)
    assert (await call("corpus_stats", repo))["total_chunks"] > 0
