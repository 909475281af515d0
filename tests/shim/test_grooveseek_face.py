"""The GrooveSeek face (`hallouminate serve --dialect grooveseek --kb-path DIR`) through the real MCP stdio
client, a real daemon and the real model, over the GrooveSeek-style fixture (tests/fixtures/grooveseek_kb:
English and Japanese pages with title/topic/category/tags/date frontmatter in nested directories)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.types import INVALID_PARAMS

from support.code_samples import GO
from support.sandbox import Sandbox, mcp_session, private_world, shim_host_pid

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "grooveseek_kb"
HIT_KEYS = {"score", "path", "title", "heading", "heading_path", "topic", "date", "tags", "content"}
SIX = {"search", "list_topics", "get_document", "get_best_practice", "rebuild_index", "get_connection_graph"}


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One daemon and warm shim host; the knowledge base is a copy of the fixture (no init-repo)."""
    with private_world(model_cache, prefix="hm-gs-", in_process=False) as box:
        shutil.copytree(FIXTURE, box.root / "kb")
        yield box


@contextlib.asynccontextmanager
async def face(sandbox: Sandbox, kb: Path | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "hallouminate",
            "serve",
            "--dialect",
            "grooveseek",
            "--kb-path",
            str(kb or sandbox.root / "kb"),
        ],
        env=sandbox.env,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def search(session: ClientSession, **args: Any) -> dict[str, Any]:
    result = await session.call_tool("search", args)
    assert not result.is_error, result.content
    structured = result.structured_content
    assert structured is not None
    return structured


async def test_the_face_serves_exactly_grooveseeks_six_tools_over_the_warm_host(world: Sandbox) -> None:
    async with face(world) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == SIX
        schema = listed["search"].input_schema
        assert "cwd" not in schema["properties"] and "corpus" not in schema["properties"]
        assert schema["required"] == ["query"]
        assert {
            "query",
            "limit",
            "category",
            "topic",
            "path_globs",
            "tags_any",
            "tags_all",
            "date_from",
            "date_to",
            "fields",
            "fields_not",
            "rerank",
            "min_quality",
            "include_low_quality",
            "min_confidence_ratio",
            "mmr",
            "mmr_lambda",
            "mmr_same_doc_penalty",
            "parent_retriever",
        } == set(schema["properties"])
        assert set(listed["rebuild_index"].input_schema["properties"]) == {"force"}
        assert listed["get_document"].input_schema["required"] == ["path"]
        # The four prompts, in this face's words (shim/prompts.py): they name search, not ground.
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        assert prompts == {"summarize_topic", "deep_dive", "whats_new", "find_gaps"}
        text = (await session.get_prompt("deep_dive", {"question": "why RRF?"})).messages[0].content
        assert "`search`" in getattr(text, "text", "") and "`ground`" not in getattr(text, "text", "")
    # The launch went through the warm host, which forked this face's server; the default face still
    # comes out of the same host.
    assert shim_host_pid(world) is not None
    async with mcp_session(world) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert "ground" in names and "search" not in names


async def test_without_the_warm_host_the_launched_process_serves_the_face(world: Sandbox) -> None:
    cold = Sandbox(world.root, {**world.env, "HALLOUMINATE_SHIM_HOST": "0"}, world.socket, world.config_file)
    async with face(cold) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == SIX
        await ready(session)
        assert (await search(session, query="バックアップ", limit=1))["results"][0]["path"].startswith("ja/")


async def test_instructions_say_what_the_face_is_and_is_not(world: Sandbox) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hallouminate", "serve", "--dialect", "grooveseek", "--kb-path", str(world.root / "kb")],
        env=world.env,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
    text = init.instructions or ""
    assert "GrooveSeek" in text and "read-only" in text and "no" in text and "conversation memory" in text


async def ready(session: ClientSession) -> dict[str, Any]:
    """The knowledge base indexed (a no-op once it is): a search answers from what is indexed."""
    result = await session.call_tool("rebuild_index", {})
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


async def refused(session: ClientSession, tool: str, args: dict[str, Any]) -> str:
    """The call is a JSON-RPC -32602 error (GrooveSeek's caller errors); its message."""
    with pytest.raises(MCPError) as caught:
        await session.call_tool(tool, args)
    assert caught.value.error.code == INVALID_PARAMS, caught.value.error
    return caught.value.error.message


def paths(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["results"]]


async def test_search_answers_grooveseeks_flat_ranked_chunk_hits(world: Sandbox) -> None:
    kb = world.root / "kb"
    async with face(world) as session:
        await ready(session)
        out = await search(session, query="how are vector and keyword results merged")
        assert set(out) == {"results", "low_confidence", "filter_applied"}
        assert out["filter_applied"] == {} and out["low_confidence"] is False
        hits = out["results"]
        assert len(hits) == 5  # GrooveSeek's default limit
        assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
        # Chunk hits: a page may give several, each its own section.
        assert len({(h["path"], h["heading"]) for h in hits}) == 5 and len(set(paths(out))) < 5
        top = hits[0]
        assert set(top) - {"match_spans", "expanded_from", "uri"} == HIT_KEYS
        assert top["path"] == "deep-dive/search/hybrid-ranking.md"
        assert (top["title"], top["topic"], top["date"], top["tags"]) == (
            "Hybrid ranking",
            "search",
            "2026-04-12",
            ["search", "ranking"],
        )
        # content is the chunk's whole text, as stored (the page's lines), not a snippet.
        page = (kb / top["path"]).read_text()
        assert top["content"] in page and top["content"].startswith("# Hybrid ranking")
        assert "reciprocal rank fusion (RRF)." in top["content"]
        # match_spans are byte offsets into content, quoting the query's words.
        raw = top["content"].encode()
        quoted = {raw[s["start"] : s["end"]].decode().lower() for s in top["match_spans"]}
        assert quoted and quoted <= {"vector", "keyword", "results", "merged", "merges"}
        for hit in hits:  # GrooveSeek's source-code keys are absent on documents
            assert not {"start_line", "end_line", "symbol_kind"} & set(hit)

        # The frontmatter topic overrides the path's, and the hit says so.
        conf = await search(session, query="settings live in a TOML file", limit=1)
        assert conf["results"][0]["path"] == "guides/setup/configuration.md"
        assert conf["results"][0]["topic"] == "config"
        # A page with no heading before its text, and a title from its frontmatter, in Japanese.
        ja = await search(session, query="バックアップの保存期間", limit=3)
        assert ja["results"][0]["path"] == "ja/運用/バックアップ.md"
        assert ja["results"][0]["title"] == "バックアップ手順" and ja["results"][0]["topic"] == "運用"
        assert "三十日間保存" in ja["results"][0]["content"]
        fusion = await search(session, query="ベクトル検索と全文検索の統合", limit=1)
        assert paths(fusion) == ["ja/検索/概要.md"] and fusion["results"][0]["tags"] == ["search", "日本語"]


async def test_query_is_bounded_in_bytes_and_limit_is_clamped_silently(world: Sandbox) -> None:
    async with face(world) as session:
        counters = await ready(session)
        # 342 characters but 1,026 bytes of UTF-8: over GrooveSeek's 1 KiB, refused, naming bytes.
        message = await refused(session, "search", {"query": "検索" * 171})
        assert "1026 bytes" in message and "1024" in message
        exactly = ("backup restore " * 80)[:1024]
        assert len(exactly.encode()) == 1024
        await search(session, query=exactly)  # at the bound: answered
        assert len((await search(session, query="search ranking", limit=2))["results"]) == 2
        assert len((await search(session, query="search ranking", limit=0))["results"]) == 1
        # Far over 1000: clamped, not refused; every eligible chunk fits.
        many = await search(session, query="search ranking", limit=5000)
        assert 5 < len(many["results"]) <= counters["total_chunks"]
        await refused(session, "search", {"query": "x", "limit": -1})  # not a count: schema error
        await refused(session, "search", {"limit": 3})  # query is required


async def test_every_filter_of_search(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        q = "how does search find documents"
        assert {p.split("/")[0] for p in paths(await search(session, query=q, category="guides"))} == {
            "guides"
        }
        # topic: the path's second segment, unless the frontmatter says otherwise.
        assert set(paths(await search(session, query=q, topic="config", limit=50))) == {
            "guides/setup/configuration.md"
        }
        assert set(paths(await search(session, query=q, topic="setup", limit=50))) == {
            "guides/setup/installation.md"
        }
        globbed = await search(
            session, query=q, limit=50, path_globs=["deep-dive/**", "!deep-dive/mcp-server/**"]
        )
        assert set(paths(globbed)) == {"deep-dive/search/hybrid-ranking.md", "deep-dive/search/reranking.md"}
        assert globbed["filter_applied"]["path_globs"] == ["deep-dive/**", "!deep-dive/mcp-server/**"]
        await refused(session, "search", {"query": q, "path_globs": []})  # GrooveSeek rejects []
        assert set(paths(await search(session, query=q, limit=50, tags_any=["stdio", "rerank"]))) == {
            "deep-dive/mcp-server/transports/stdio.md",
            "deep-dive/search/reranking.md",
        }
        both = await search(session, query=q, limit=50, tags_all=["search", "日本語"])
        assert set(paths(both)) == {"ja/検索/概要.md"}
        dated = await search(session, query=q, limit=50, date_from="2026-05-01", date_to="2026-07-20")
        assert set(paths(dated)) == {
            "deep-dive/mcp-server/overview.md",
            "deep-dive/mcp-server/transports/stdio.md",
            "deep-dive/search/reranking.md",
        }
        assert dated["filter_applied"] == {"date_from": "2026-05-01", "date_to": "2026-07-20"}
        drafts = await search(session, query=q, limit=50, fields={"status": ["draft"]})
        assert set(paths(drafts)) == {"deep-dive/mcp-server/transports/stdio.md"}
        published = await search(session, query=q, limit=50, fields_not={"status": ["draft"]})
        assert "deep-dive/mcp-server/transports/stdio.md" not in paths(published) and paths(published)
        # GrooveSeek compares dates as strings: one that is not YYYY-MM-DD, or a from after a to,
        # matches nothing (no error).
        for bad in ({"date_from": "2026/01/01"}, {"date_from": "2026-09-01", "date_to": "2026-01-01"}):
            empty = await search(session, query=q, **bad)
            assert empty["results"] == [] and empty["filter_applied"] == bad
        # The query's own syntax: a -term group excludes chunks holding it.
        excluded = await search(session, query="keyword search -fusion", limit=50)
        assert excluded["results"] and all("fusion" not in h["content"].lower() for h in excluded["results"])


async def test_quality_floor_confidence_ratio_and_rerank(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        # notes.md's "## Later" section is a stub (a lone link, quality 0): under the default floor 0.3
        # it is found only with include_low_quality.
        stub = "later notes"

        def later(result: dict[str, Any]) -> bool:
            return any(h["heading"] == "Later" for h in result["results"])

        assert not later(await search(session, query=stub, limit=50))
        low = await search(session, query=stub, limit=50, include_low_quality=True)
        assert later(low) and low["filter_applied"]["include_low_quality"] is True
        # min_quality is clamped to 0-1 (GrooveSeek), not refused.
        assert later(await search(session, query=stub, limit=50, min_quality=-3))
        strict = await search(session, query=stub, limit=50, min_quality=7)
        assert strict["filter_applied"]["min_quality"] == 1.0 and not later(strict)
        # The page has no frontmatter and no heading before its text: its title is its file name.
        note = next(h for h in low["results"] if h["path"] == "notes.md" and h["heading"] is None)
        assert (note["title"], note["topic"], note["date"], note["tags"]) == ("notes", None, None, [])

        q = "how are vector and keyword results merged"
        assert (await search(session, query=q, min_confidence_ratio=0))["low_confidence"] is False
        # A ratio no candidate can reach: every answer is low confidence.
        assert (await search(session, query=q, min_confidence_ratio=1000))["low_confidence"] is True
        off = await search(session, query="banana bread recipe with walnuts")
        assert off["low_confidence"] is True

        # rerank is a per-call override, ignored with no reranker loaded: the same ranking.
        plain = await search(session, query=q, limit=10)
        assert (await search(session, query=q, limit=10, rerank=True))["results"] == plain["results"]


async def test_mmr_and_parent_retriever(world: Sandbox) -> None:
    kb = world.root / "kb"
    async with face(world) as session:
        await ready(session)
        q = "how are vector and keyword results merged"
        for bad in ({"mmr_lambda": 1.5}, {"mmr_same_doc_penalty": -0.1}):
            await refused(session, "search", {"query": q, "mmr": True, **bad})
        diverse = await search(session, query=q, limit=6, mmr=True, mmr_lambda=0.5, mmr_same_doc_penalty=0.3)
        pages = paths(diverse)
        distinct = list(dict.fromkeys(pages))
        # With mmr each page's best chunk comes first, in mmr's page order, before any second chunk.
        assert pages[: len(distinct)] == distinct and len(distinct) >= 2
        grown = await search(
            session, query="stdio diagnostics standard error", limit=3, parent_retriever=True
        )
        for hit in grown["results"]:
            assert hit["expanded_from"]["kind"] in {"adjacent", "whole_document"}
            assert hit["content"] in (kb / hit["path"]).read_text()
        whole = next(h for h in grown["results"] if h["expanded_from"]["kind"] == "whole_document")
        text = (kb / whole["path"]).read_text()
        assert whole["content"] == text[text.index("# ") :].rstrip("\n")


async def test_list_topics_answers_grooveseeks_bare_list(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        result = await session.call_tool("list_topics", {})
        assert not result.is_error and result.structured_content is None  # a list cannot be structured
        topics = json.loads(result.content[0].text)
        assert isinstance(topics, list)
        by_key = {(t["category"], t["topic"]): t for t in topics}
        mcp = by_key[("deep-dive", "mcp-server")]
        assert mcp["file_count"] == 2 and [c["segment"] for c in mcp["children"]] == ["transports"]
        assert by_key[("guides", "config")]["titles"] == ["Configuration"]  # the frontmatter topic
        assert by_key[("ja", "運用")]["titles"] == ["バックアップ手順"]


async def test_hits_carry_their_kb_uri(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        out = await search(session, query="バックアップの保存期間", limit=1)
        assert out["results"][0]["uri"] == (
            "kb://doc/ja/%E9%81%8B%E7%94%A8/%E3%83%90%E3%83%83%E3%82%AF%E3%82%A2%E3%83%83%E3%83%97.md"
        )
        # The face serves the kb:// resources of its knowledge base: the hit's uri reads the document,
        # and get_document gives it by the hit's path, with the hit's title.
        hit = out["results"][0]
        read = await session.read_resource(hit["uri"])
        assert "三十日間保存" in getattr(read.contents[0], "text", "")
        doc = (await session.call_tool("get_document", {"path": hit["path"]})).structured_content
        assert doc is not None and doc["path"] == hit["path"] and doc["title"] == hit["title"]
        groups = [r.name for r in (await session.list_resources()).resources]
        assert groups, "the face lists its knowledge base's topic groups"


async def test_rebuild_index_reports_grooveseeks_counters(world: Sandbox) -> None:
    kb = world.root / "kb-rebuild"
    shutil.copytree(FIXTURE, kb)
    async with face(world, kb) as session:
        first = (await session.call_tool("rebuild_index", {})).structured_content
        assert first is not None
        assert set(first) == {
            "total_documents",
            "updated",
            "renamed",
            "deleted",
            "skipped",
            "total_chunks",
            "duration_ms",
            "frontmatter_unparsed",
        }
        assert first["total_documents"] == 11 and first["total_chunks"] >= 11
        again = (await session.call_tool("rebuild_index", {})).structured_content
        assert again is not None and again["updated"] == 0 and again["total_documents"] == 11
        (kb / "guides" / "troubleshooting.md").write_text("# Troubleshooting\n\nRestart it.\n")
        (kb / "drafts" / "ideas.md").unlink()
        (kb / "broken.md").write_text(
            "---\ntitle: [unclosed\n---\n# Broken\n\nFrontmatter that is not YAML.\n"
        )
        changed = (await session.call_tool("rebuild_index", {})).structured_content
        assert changed is not None
        assert (changed["updated"], changed["deleted"], changed["total_documents"]) == (2, 1, 11)
        assert changed["frontmatter_unparsed"] == 1


async def test_rebuild_index_force_and_one_at_a_time(world: Sandbox) -> None:
    kb = world.root / "kb-force"
    shutil.copytree(FIXTURE, kb)
    async with face(world, kb) as first, face(world, kb) as second:
        await ready(first)
        forced = (await first.call_tool("rebuild_index", {"force": True})).structured_content
        assert forced is not None and forced["updated"] == 11 and forced["total_documents"] == 11
        # Two forced rebuilds at once: GrooveSeek's rule, the second is refused (-32602) naming how long
        # the running one has been going. The refusal is itself the proof that the two overlapped.
        answers = await asyncio.gather(
            first.call_tool("rebuild_index", {"force": True}),
            second.call_tool("rebuild_index", {"force": True}),
            return_exceptions=True,
        )
        refusals = [a for a in answers if isinstance(a, MCPError)]
        done = [a for a in answers if not isinstance(a, BaseException)]
        assert len(refusals) == 1 and len(done) == 1, answers
        assert refusals[0].error.code == INVALID_PARAMS and "running" in refusals[0].error.message


def test_serve_refuses_a_bad_kb_path(tmp_path: Path) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hallouminate", "serve", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
            timeout=60,
        )

    (tmp_path / "file.md").write_text("# A file\n")
    cases = {
        ("--dialect", "grooveseek"): "add --kb-path DIR",
        ("--dialect", "grooveseek", "--kb-path", str(tmp_path / "missing")): "does not exist",
        ("--dialect", "grooveseek", "--kb-path", "file.md"): "is not a directory",
        ("--kb-path", str(tmp_path)): "add --dialect grooveseek",
        ("--dialect", "fuzzy"): "'fuzzy' is not one of",
    }
    for args, message in cases.items():
        done = serve(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)


# -- navigation through the face: get_document, get_connection_graph, get_best_practice, kb:// resources --


async def test_get_document_serves_only_the_exact_indexed_spelling(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        doc = (
            await session.call_tool("get_document", {"path": "deep-dive/search/hybrid-ranking.md"})
        ).structured_content
        assert doc is not None
        assert (doc["path"], doc["title"], doc["date"], doc["tags"]) == (
            "deep-dive/search/hybrid-ranking.md",
            "Hybrid ranking",
            "2026-04-12",
            ["search", "ranking"],
        )
        assert doc["topic"] == "search" and doc["truncated"] is False
        assert doc["content"] == (FIXTURE / "deep-dive" / "search" / "hybrid-ranking.md").read_text()
        japanese = (
            await session.call_tool("get_document", {"path": "ja/運用/バックアップ.md"})
        ).structured_content
        assert japanese is not None and japanese["title"] == "バックアップ手順"
        # A name the index cannot hold is refused before the disk is looked at: the same answer whether
        # or not a file is there.
        for there, absent in [
            ("./notes.md", "./absent.md"),
            ("guides//troubleshooting.md", "guides//absent.md"),
            ("guides/../notes.md", "guides/../absent.md"),
            (str(world.root / "kb" / "notes.md"), str(world.root / "kb" / "absent.md")),
            ("guides\\troubleshooting.md", "guides\\absent.md"),
        ]:
            first = await refused(session, "get_document", {"path": there})
            second = await refused(session, "get_document", {"path": absent})
            assert first.replace("notes", "X").replace("troubleshooting", "X") == second.replace(
                "absent", "X"
            ), (there, first, second)
        # Another spelling the index could hold is looked up and answered "not found", like a miss.
        for other in ["Notes.md", "GUIDES/troubleshooting.md", "deep-dive/search/Hybrid-Ranking.md"]:
            message = await refused(session, "get_document", {"path": other})
            assert "not" in message and "index" in message, message
        assert "not" in await refused(session, "get_document", {"path": "absent.md"})


async def test_get_connection_graph_clamps_and_reports_its_bounds(world: Sandbox) -> None:
    start = "deep-dive/search/hybrid-ranking.md"
    async with face(world) as session:
        await ready(session)

        async def graph(**args: Any) -> dict[str, Any]:
            result = await session.call_tool("get_connection_graph", {"start": start, **args})
            assert not result.is_error and result.structured_content is not None, result.content
            return result.structured_content

        walk = await graph()
        assert walk["start_path"] == start and walk["nodes"] and walk["truncated"] is False
        assert {"total_nodes", "max_depth_reached", "knn_queries", "duration_ms", "seeds_used"} <= set(
            walk["stats"]
        )
        assert all(node["path"] != start for node in walk["nodes"])
        node = walk["nodes"][0]
        assert {
            "node_id",
            "parent_id",
            "depth",
            "chunk_id",
            "score",
            "path",
            "heading",
            "title",
            "topic",
            "snippet",
        } <= set(node)
        assert node["depth"] == 1 and node["parent_id"] is None
        # Out-of-range values are clamped, as GrooveSeek does, and the clamping is reported.
        clamped = await graph(depth=9, fan_out=50, max_nodes=5000, max_seed_chunks=0, min_similarity=2)
        used = {c["param"]: (c["given"], c["used"]) for c in clamped["clamped"]}
        assert used["depth"] == (9, 3) and used["fan_out"] == (50, 20) and used["max_nodes"] == (5000, 2000)
        assert used["max_seed_chunks"] == (0, 1) and used["min_similarity"][1] == 1
        assert (await graph(max_nodes=0))["nodes"] == []
        # The node budget and the seed bound cut the walk short and say so.
        budget = await graph(max_nodes=2, min_similarity=0)
        assert len(budget["nodes"]) == 2 and budget["truncated"] is True
        assert [t["reason"] for t in budget["truncation"]] == ["node_budget"]
        seeds = await graph(max_seed_chunks=1, min_similarity=0)
        assert seeds["stats"]["seeds_used"] == 1 and "seed_chunks" in [
            t["reason"] for t in seeds["truncation"]
        ]
        # GrooveSeek's spelling of the strategy, the centroid, dedup and exclusions.
        assert (await graph(seed_strategy="all-chunks"))["nodes"]
        centroid = await graph(seed_strategy="centroid", min_similarity=0)
        assert centroid["nodes"] and centroid["stats"]["seeds_used"] == walk["stats"]["seeds_used"]
        # One neighbour query for the start's mean vector instead of one per seed chunk.
        assert centroid["stats"]["knn_queries"] < (await graph(min_similarity=0))["stats"]["knn_queries"]
        dedup = await graph(dedup_by_path=True, min_similarity=0, depth=3)
        dedup_paths = [n["path"] for n in dedup["nodes"]]
        assert len(dedup_paths) == len(set(dedup_paths))
        excluded = await graph(exclude_paths=["deep-dive/search/reranking.md"], min_similarity=0)
        assert "deep-dive/search/reranking.md" not in {n["path"] for n in excluded["nodes"]}
        only_ja = await graph(category="ja", min_similarity=0)
        assert only_ja["nodes"] and {n["path"].split("/")[0] for n in only_ja["nodes"]} == {"ja"}
        missing = await refused(session, "get_connection_graph", {"start": "deep-dive/search/absent.md"})
        assert "deep-dive/search/absent.md" in missing


async def test_get_best_practice_reads_the_configured_page_without_revealing_it(world: Sandbox) -> None:
    kb = world.root / "kb-practice"
    shutil.copytree(FIXTURE, kb)
    (kb / "practices").mkdir()
    (kb / "practices" / "claude-code.md").write_text(
        "# Claude Code\n\nGeneral advice.\n\n## Prompts\n\nKeep prompts short.\n\n## Testing\n\nRun the tests.\n"
    )
    async with face(world, kb) as session:
        await ready(session)
        assert "not configured" in await refused(session, "get_best_practice", {"target": "claude-code"})
        baseline = world.config_file.read_text() if world.config_file.exists() else ""
        world.write_config(baseline + '\n[best_practice]\npath_templates = ["practices/{target}.md"]\n')
        try:
            whole = (
                await session.call_tool("get_best_practice", {"target": "claude-code"})
            ).structured_content
            assert whole is not None and whole["target"] == "claude-code"
            assert whole["content"].startswith("# Claude Code") and "Run the tests." in whole["content"]
            section = (
                await session.call_tool("get_best_practice", {"target": "claude-code", "category": "TESTING"})
            ).structured_content
            assert section is not None and "Run the tests." in section["content"]
            assert "Keep prompts short." not in section["content"]
            miss = await refused(
                session, "get_best_practice", {"target": "claude-code", "category": "deploy"}
            )
            assert "Prompts" in miss and "Testing" in miss
            for bad in ["../notes", "a/b"]:
                assert "practices/" not in await refused(session, "get_best_practice", {"target": bad})
            assert "practices/" not in await refused(session, "get_best_practice", {"target": "absent"})
        finally:
            world.write_config(baseline)


async def test_the_face_lists_and_reads_its_knowledge_base_as_kb_resources(world: Sandbox) -> None:
    async with face(world) as session:
        await ready(session)
        listed = {r.name: r for r in (await session.list_resources()).resources}
        assert listed["(root)"].description == "1 indexed document(s) under (root)"
        assert str(listed["(root)"].uri) == "kb://topic/"
        assert listed["deep-dive/search"].description == "2 indexed document(s) under deep-dive/search"
        assert str(listed["ja/運用"].uri) == "kb://topic/ja/%E9%81%8B%E7%94%A8"
        assert {r.mime_type for r in listed.values()} == {"text/markdown"}
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["kb://doc/{path}"]
        group = await session.read_resource("kb://topic/deep-dive/search")
        assert getattr(group.contents[0], "text", "") == (
            "- `deep-dive/search/hybrid-ranking.md` — kb://doc/deep-dive/search/hybrid-ranking.md\n"
            "- `deep-dive/search/reranking.md` — kb://doc/deep-dive/search/reranking.md\n"
        )
        page = await session.read_resource("kb://doc/notes.md")
        assert getattr(page.contents[0], "text", "") == (FIXTURE / "notes.md").read_text()
        assert page.contents[0].mime_type == "text/markdown"
        for uri in ["kb://doc/Notes.md", "kb://doc/absent.md", "kb://doc/../notes.md", "kb://other/notes.md"]:
            with pytest.raises(MCPError) as caught:
                await session.read_resource(uri)
            assert caught.value.error.code == INVALID_PARAMS, uri


async def test_knowledge_base_globs_take_in_source_code_whose_hits_carry_lines_and_kind(
    world: Sandbox,
) -> None:
    # GrooveSeek's [parsers] enabled, as globs: with Go files taken in, a code hit carries GrooveSeek's
    # start_line/end_line/symbol_kind; the Markdown beside it still does not.
    kb = world.root / "kb-code"
    (kb / "queue").mkdir(parents=True)
    (kb / "queue" / "queue.go").write_text(GO)
    (kb / "queue.md").write_text("# Queue\n\nThe job queue hands jobs to workers in arrival order.\n")
    baseline = world.config_file.read_text() if world.config_file.exists() else ""
    async with face(world, kb) as session:
        first = await ready(session)
        assert (first["total_documents"], first["updated"]) == (1, 1)  # Markdown only by default
        world.write_config(baseline + '\n[knowledge_base]\nglobs = ["**/*.md", "**/*.go"]\n')
        try:
            report = await ready(session)
            assert (report["total_documents"], report["updated"], report["skipped"]) == (2, 1, 0), report
            out = await search(session, query="Push adds a job unless the context is done", limit=5)
            code = [hit for hit in out["results"] if hit["path"] == "queue/queue.go"]
            assert code and code[0]["symbol_kind"] == "method_declaration"
            assert (code[0]["start_line"], code[0]["end_line"]) == (23, 31)
            assert code[0]["heading_path"] == ["queue.go", "Queue.Push"]
            lines = GO.splitlines()[code[0]["start_line"] - 1 : code[0]["end_line"]]
            assert lines[0] == "// Push adds a job unless the context is done." and lines[-1] == "}"
            for hit in out["results"]:
                if hit["path"].endswith(".md"):
                    assert not {"start_line", "end_line", "symbol_kind"} & set(hit)
        finally:
            world.write_config(baseline)
