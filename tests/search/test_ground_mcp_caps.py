"""``ground``'s hard caps through a real MCP client and daemon: 2,000 files of counts, the 10,000-match scan
cap, and an answer over the 4 MiB frame limit. The caps are constants, not settings, so the corpora are
as large as the caps: 2,001 one-line wiki pages whose paths are ~0.9 kB long (2,000 counts entries fit a
frame), and 100 pages whose paths are ~4 kB long (with them first, 2,000 entries do not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INTERNAL_ERROR

from support.mcp_world import McpClient, make_repo, module_sandbox

WIKI = "repo:bulk:wiki"
PAGES = 2_001  # one more than output "counts" lists
WIKI_DIR = "/".join(f"{n:x}" * 225 for n in range(4))  # ~1.95 kB per counts entry: 2,000 fit in 4 MiB
DEEP_PAGES = 100  # ~8.2 kB each: 100 of them + 1,900 wiki pages do not
# 16 directories of 250 characters: paths of ~4,020 characters, absolute paths just under PATH_MAX.
DEEP_DIR = "/".join(f"{n:x}" * 250 for n in range(16))


class Bulk:
    def __init__(self, client: McpClient, repo: Path) -> None:
        self.client = client
        self.repo = repo

    def phrase(self, query: str, **args: Any) -> dict[str, Any]:
        arguments = {"cwd": str(self.repo), "query": query, "match": "phrase", **args}
        return self.client.call("ground", arguments).structured_content


@pytest.fixture(scope="module")
def bulk(model_cache: Path) -> Iterator[Bulk]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(box, "bulk", '[[corpus]]\nname = "deep"\npaths = ["deep"]\n')
        wiki = repo / ".hallouminate" / "wiki" / WIKI_DIR
        wiki.mkdir(parents=True)
        for n in range(PAGES):
            (wiki / f"f{n:04d}.md").write_text("alpha beta beta beta beta beta\n")
        deep = repo / "deep" / DEEP_DIR
        deep.mkdir(parents=True)
        for n in range(DEEP_PAGES):
            (deep / f"d{n:03d}.md").write_text("alpha alpha\n")
        assert len(str(deep / "d000.md")) < 4096
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}, timeout=600).structured_content
            written = {c["corpus"]: c["chunks_written"] for c in report["corpora"]}
            assert written == {WIKI: PAGES, "deep": DEEP_PAGES}, report
            yield Bulk(client, repo)
        finally:
            client.close()


def test_counts_list_at_most_2000_files(bulk: Bulk) -> None:
    result = bulk.phrase("alpha", corpus=WIKI, output="counts")
    assert result["stats"] == {"hits": PAGES, "occurrences": PAGES}
    assert len(result["docs"]) == 2_000
    # Equal counts: files by path, so the last one is the one left out.
    assert result["docs"][0]["path"] == f"{WIKI_DIR}/f0000.md"
    assert result["docs"][-1]["path"] == f"{WIKI_DIR}/f1999.md"
    assert all(doc["coverage"] == {"chunks": 1, "pages": None} for doc in result["docs"])
    (warning,) = result["warnings"]
    assert warning["code"] == "counts-truncated" and "2,001 files" in warning["message"]


def test_the_scan_stops_at_10000_matches(bulk: Bulk) -> None:
    # Five occurrences per page: the first 2,000 pages hold the 10,000 the scan counts.
    counts = bulk.phrase("beta", corpus=WIKI, output="counts")
    assert counts["stats"]["occurrences"] == 10_000 and len(counts["docs"]) == 2_000
    assert all(doc["score"] == 5 for doc in counts["docs"])
    (warning,) = counts["warnings"]
    assert warning["code"] == "phrase-truncated" and warning["bounds"] == ["scan_cap"]
    assert "10,000-match cap" in warning["message"]
    ranked = bulk.phrase("beta", corpus=WIKI)
    assert [b for w in ranked["warnings"] for b in w.get("bounds", [])] == ["limit", "top_files", "scan_cap"]
    assert len(ranked["docs"]) == 10 and all(doc["score"] == 5 for doc in ranked["docs"])


def test_a_counts_answer_over_the_frame_limit_is_an_error(bulk: Bulk) -> None:
    # Across both corpora the deep pages (two occurrences each) come first, then 1,900 wiki pages.
    few = bulk.phrase("alpha", top_files=3)
    assert [doc["corpus"] for doc in few["docs"]] == ["deep"] * 3
    assert few["docs"][0]["path"].startswith(DEEP_DIR)
    with pytest.raises(MCPError) as info:
        bulk.phrase("alpha", output="counts")
    assert info.value.code == INTERNAL_ERROR
    assert "too large" in info.value.message and "frame limit" in info.value.message
