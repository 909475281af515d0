"""get_document, the kb:// resources and the `uri` of ranked hits, through the SDK's stdio client driving
`hallouminate serve` (started in the repository, as an MCP host does), over one real daemon and model.

Every rule of docs/tools/get_document.md and docs/mcp.md#resources: the spelling rules (malformed names
refused before the disk is looked at, other spellings not found, both the same whether or not a file is
there), symlinks and hard links, the size caps and the PDF truncation, the listing and the reads, the
percent-encoding, resource_not_found, and hits and listing agreeing; plus a kb-scope call and the CLI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.client.connection import DaemonConnection
from hallouminate.errors import NotFound
from hallouminate.protocol.schemas import RESOURCE_RESULTS, RESULTS
from support.sandbox import Sandbox, hm, mcp_session, private_world

MIB = 1024 * 1024
PAGES = {
    "index.md": "---\ntitle: The Front Page\ndate: 2026-11-02\ntags: [intro, map]\n---\n# Welcome\n\n"
    "The saffron albatross nests on the front page.\n",
    "guides/setup.md": "# Setting Up\n\nInstall the teal kettle before brewing anything.\n",
    # No "# " title outside a code fence: the title falls back to the file name.
    "guides/deep/tuning.md": "---\ntopic: performance\n---\n```\n# not a title\n```\n\n"
    "Only the cobalt walrus tunes the engine.\n",
    "guides/deep/more/far.md": "# Far Away\n\nThe indigo heron lives far down the tree.\n",
    "notes/café menu.md": "# Café\n\nThe ochre lemur orders an espresso.\n",
    "Tilde~ok_x-y.md": "# Tilde\n\nThe magenta gecko keeps unreserved characters.\n",
    # Indexed (one chunk: the padding is blank) but over 1 MiB on disk: not offered, refused.
    "big.md": "# Big\n\nThe vermilion pangolin sleeps here." + " " * (MIB + 4096) + "\n",
}


def one_line_pdf(text: str) -> bytes:
    """A real PDF whose one page holds ``text`` on one line (``multi_cell`` would wrap and drop spaces)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.cell(0, 5, text)
    return bytes(pdf.output())


def write_repo(root: Path) -> Path:
    repo = root / "kbres"
    wiki = repo / ".hallouminate" / "wiki"
    wiki.mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text(
        '[[repository]]\nname = "kbres"\npath = "."\ncorpus_paths = ["library"]\ncorpus_globs = ["**/*.pdf"]\n'
    )
    for rel, text in PAGES.items():
        (wiki / rel).parent.mkdir(parents=True, exist_ok=True)
        (wiki / rel).write_text(text)
    # A hard link: the same file under a second name, outside the wiki.
    outside = root / "outside"
    outside.mkdir()
    (outside / "linked-source.md").write_text("# Hard\n\nThe amber yak is HARD-LINKED-SECRET.\n")
    (wiki / "links").mkdir()
    os.link(outside / "linked-source.md", wiki / "links" / "hard.md")
    # A symlinked directory: its files are on disk under another spelling, never indexed.
    (wiki / "aliased").symlink_to(wiki / "guides", target_is_directory=True)
    library = repo / "library"
    library.mkdir()
    # A PDF whose extracted text is over 1 MiB (blank padding, so it is still one small chunk).
    (library / "report.pdf").write_bytes(
        one_line_pdf("The crimson okapi report." + " " * (MIB + 4096) + "end")
    )
    return repo


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    # Index runs report progress through the pause hook: a test may hold one (``progress.pause``).
    pause = {"HALLOUMINATE_TEST_INDEX_PAUSE": "{root}/pause"}
    with private_world(
        model_cache,
        prefix="hm-kr-",
        in_process=False,
        extra_env=lambda root: {k: v.format(root=root) for k, v in pause.items()},
    ) as box:
        (box.root / "pause").mkdir()
        repo = write_repo(box.root)
        assert hm(box, "index", cwd=repo).returncode == 0
        (box.root / "empty").mkdir()
        kb = box.root / "kbdir"
        (kb / "deploy").mkdir(parents=True)
        (kb / "deploy" / "rollback.md").write_text(
            "---\ntitle: Rolling Back\ntags: ops\n---\nRoll a release back with the blue-green switch.\n"
        )
        yield box


def repo_of(world: Sandbox) -> Path:
    return world.root / "kbres"


async def get_document(session: Any, repo: Path, path: str, **extra: Any) -> dict[str, Any]:
    result = await session.call_tool("get_document", {"cwd": str(repo), "path": path, **extra})
    return dict(result.structured_content)


async def refusal(session: Any, repo: Path, path: str) -> MCPError:
    with pytest.raises(MCPError) as info:
        await session.call_tool("get_document", {"cwd": str(repo), "path": path})
    assert info.value.code == INVALID_PARAMS, path
    return info.value


def same_answer(first: MCPError, second: MCPError, path_one: str, path_two: str) -> None:
    """Two refusals that differ only by the path they quote (so nothing else about the disk shows)."""
    data_one = {k: v for k, v in (first.data or {}).items() if k != "path"}
    data_two = {k: v for k, v in (second.data or {}).items() if k != "path"}
    assert data_one == data_two, (path_one, path_two)
    assert first.message.replace(repr(path_one), "P") == second.message.replace(repr(path_two), "P")


# -- get_document -------------------------------------------------------------------------------------------
async def test_get_document_returns_the_whole_document_and_its_metadata(world: Sandbox) -> None:
    repo = repo_of(world)
    wiki = repo / ".hallouminate" / "wiki"
    async with mcp_session(world, cwd=repo) as session:
        front = await get_document(session, repo, "index.md")
        assert front["content"] == (wiki / "index.md").read_text()
        assert (front["title"], front["date"], front["tags"]) == (
            "The Front Page",
            "2026-11-02",
            ["intro", "map"],
        )
        assert (front["topic"], front["category"], front["truncated"]) == (None, None, False)
        assert (front["format"], front["bytes"], front["uri"]) == (
            "markdown",
            (wiki / "index.md").stat().st_size,
            "kb://doc/index.md",
        )
        setup = await get_document(session, repo, "guides/setup.md")
        # No frontmatter title: the first "# " heading; category and topic as the filters derive them.
        assert (setup["title"], setup["category"], setup["topic"], setup["date"], setup["tags"]) == (
            "Setting Up",
            "guides",
            None,
            None,
            [],
        )
        tuning = await get_document(session, repo, "guides/deep/tuning.md")
        # The "# " inside a code fence is not a title: the file name is; frontmatter topic overrides "deep".
        assert (tuning["title"], tuning["category"], tuning["topic"]) == ("tuning", "guides", "performance")


MALFORMED = [
    # (the name of something that exists, the same form naming nothing), for each malformed form
    ("./index.md", "./absent.md"),
    ("guides//setup.md", "guides//absent.md"),
    ("guides/./setup.md", "guides/./absent.md"),
    ("guides/../index.md", "guides/../absent.md"),
    ("../kbres/.hallouminate/wiki/index.md", "../kbres/absent.md"),
    ("guides/", "absent/"),
    ("guides\\setup.md", "guides\\absent.md"),
    ("index.md\t", "absent.md\t"),
    ("index.md\x00", "absent.md\x00"),
    ("notes/café menu.md\x1b", "notes/absent.md\x1b"),
]


@pytest.mark.parametrize(("there", "absent"), MALFORMED)
async def test_a_malformed_name_is_refused_the_same_way_whether_or_not_it_exists(
    world: Sandbox, there: str, absent: str
) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        first, second = await refusal(session, repo, there), await refusal(session, repo, absent)
    assert (first.data or {})["problem"] not in ("not-indexed", None)
    same_answer(first, second, there, absent)


async def test_empty_absolute_and_unserved_names_are_refused_from_the_string(world: Sandbox) -> None:
    repo = repo_of(world)
    wiki = repo / ".hallouminate" / "wiki"
    async with mcp_session(world, cwd=repo) as session:
        assert ((await refusal(session, repo, "")).data or {})["problem"] == "empty"
        first = await refusal(session, repo, str(wiki / "index.md"))
        second = await refusal(session, repo, str(wiki / "absent.md"))
        assert (first.data or {})["problem"] == "absolute"
        same_answer(first, second, str(wiki / "index.md"), str(wiki / "absent.md"))
        # An extension the indexer does not parse by name: refused before the index is asked.
        (repo / ".hallouminate" / "wiki" / "secret.env").write_text("TOKEN=abc\n")
        env, other = await refusal(session, repo, "secret.env"), await refusal(session, repo, "absent.env")
        assert (env.data or {})["problem"] == "extension" and "TOKEN" not in env.message
        same_answer(env, other, "secret.env", "absent.env")


@pytest.mark.parametrize(
    "spelling",
    [
        "Guides/setup.md",  # another case of a directory
        "guides/Setup.md",  # of the file
        "INDEX.md",
        "aliased/setup.md",  # through a symlinked directory: the file is there, under another name
    ],
)
async def test_another_spelling_is_not_found_like_a_name_that_names_nothing(
    world: Sandbox, spelling: str
) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        found = await refusal(session, repo, spelling)
        nothing = await refusal(session, repo, "guides/absent.md")
    assert (found.data or {})["problem"] == "not-indexed"
    same_answer(found, nothing, spelling, "guides/absent.md")
    assert "kettle" not in found.message


async def test_a_hard_link_is_refused(world: Sandbox) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        error = await refusal(session, repo, "links/hard.md")
    assert (error.data or {})["problem"] == "hard-link"
    assert "HARD-LINKED-SECRET" not in error.message


async def test_markdown_over_one_mib_is_refused_and_a_pdf_is_cut_at_one_mib(world: Sandbox) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        big = await refusal(session, repo, "big.md")
        assert (big.data or {})["limit"] == MIB and "pangolin" not in big.message
        report = await get_document(session, repo, "report.pdf", corpus="repo:kbres:corpus")
    assert report["truncated"] is True and report["format"] == "pdf"
    assert MIB - 4 <= len(report["content"].encode("utf-8")) <= MIB
    assert report["content"].startswith("## Page 1\n\nThe crimson okapi report.")
    assert "end" not in report["content"][-100:]
    # Not the resources' corpus (the scope's default one): no uri.
    assert "uri" not in report


# -- resources -------------------------------------------------------------------------------------------
EXPECTED_GROUPS = {
    "(root)": ("kb://topic/", 2),  # index.md, Tilde~ok_x-y.md; big.md is over 1 MiB: not offered
    "guides": ("kb://topic/guides", 1),
    "guides/deep": ("kb://topic/guides/deep", 2),
    "links": ("kb://topic/links", 1),
    "notes": ("kb://topic/notes", 1),
}


async def test_resources_list_the_topic_groups_and_the_document_template(world: Sandbox) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        capabilities = session.server_capabilities
        listed = (await session.list_resources()).resources
        templates = (await session.list_resource_templates()).resource_templates
    got = {r.name: (r.uri, r.description, r.mime_type) for r in listed}
    assert got == {
        name: (uri, f"{count} indexed document(s) under {name}", "text/markdown")
        for name, (uri, count) in EXPECTED_GROUPS.items()
    }
    assert [t.uri_template for t in templates] == ["kb://doc/{path}"]
    assert capabilities is not None and capabilities.resources is not None
    assert not capabilities.resources.subscribe and not capabilities.resources.list_changed


async def test_reading_a_topic_lists_its_documents_and_reading_a_document_serves_it(world: Sandbox) -> None:
    repo = repo_of(world)
    wiki = repo / ".hallouminate" / "wiki"
    async with mcp_session(world, cwd=repo) as session:
        deep = (await session.read_resource("kb://topic/guides/deep")).contents
        root = (await session.read_resource("kb://topic/")).contents
        cafe = (await session.read_resource("kb://doc/notes/caf%C3%A9%20menu.md")).contents
        lower = (await session.read_resource("kb://doc/notes/caf%c3%a9%20menu.md")).contents
        tilde = (await session.read_resource("kb://doc/Tilde~ok_x-y.md")).contents
    assert [(c.uri, c.mime_type) for c in deep] == [("kb://topic/guides/deep", "text/markdown")]
    assert deep[0].text == (
        "- `guides/deep/more/far.md` — kb://doc/guides/deep/more/far.md\n"
        "- `guides/deep/tuning.md` — kb://doc/guides/deep/tuning.md\n"
    )
    assert root[0].text == (
        "- `Tilde~ok_x-y.md` — kb://doc/Tilde~ok_x-y.md\n- `index.md` — kb://doc/index.md\n"
    )
    assert (cafe[0].mime_type, cafe[0].text) == (
        "text/markdown",
        (wiki / "notes" / "café menu.md").read_text(),
    )
    assert lower[0].text == cafe[0].text  # hex digits of either case decode to the same path
    assert tilde[0].text == (wiki / "Tilde~ok_x-y.md").read_text()


@pytest.mark.parametrize(
    "uri",
    [
        "kb://doc/absent.md",
        "kb://doc/Guides/setup.md",  # another spelling
        "kb://doc/aliased/setup.md",  # through a symlinked directory
        "kb://doc/..%2Findex.md",  # a malformed name, encoded
        "kb://doc/guides%2F%2Fsetup.md",
        "kb://doc/big.md",  # indexed, over 1 MiB: not on offer
        "kb://doc/links/hard.md",  # on offer by its recorded size, refused by the read's checks
        "kb://doc/%FF.md",  # not UTF-8
        "kb://doc/",
        "kb://topic/nope",
        "kb://topic/guides/deep/more",  # a directory, not a group
        "kb://other/index.md",
        "file:///etc/passwd",
    ],
)
async def test_anything_not_on_offer_is_resource_not_found(world: Sandbox, uri: str) -> None:
    repo = repo_of(world)
    async with mcp_session(world, cwd=repo) as session:
        with pytest.raises(MCPError) as info:
            await session.read_resource(uri)
    assert info.value.code == INVALID_PARAMS  # MCP SDK 2.x / SEP-2164: resource not found is -32602
    assert (info.value.data or {})["problem"] == "resource_not_found"
    assert (info.value.data or {})["uri"] == uri
    assert "HARD-LINKED-SECRET" not in info.value.message and "pangolin" not in info.value.message


async def test_hits_carry_the_uri_exactly_when_the_listing_offers_the_document(world: Sandbox) -> None:
    repo = repo_of(world)
    queries = [
        "saffron albatross",
        "teal kettle",
        "cobalt walrus",
        "indigo heron",
        "ochre lemur espresso",
        "magenta gecko",
        "vermilion pangolin",
        "amber yak",
        "crimson okapi report",
    ]
    async with mcp_session(world, cwd=repo) as session:
        groups = (await session.list_resources()).resources
        offered: dict[str, str] = {}
        for group in groups:
            text = (await session.read_resource(group.uri)).contents[0].text
            for line in text.splitlines():
                path, uri = line.removeprefix("- `").split("` — ")
                offered[path] = uri
        hits: list[dict[str, Any]] = []
        for query in queries:
            found = await session.call_tool("ground", {"cwd": str(repo), "query": query, "top_files": 10})
            hits.extend(found.structured_content["docs"])
    seen = {(d["corpus"], d["path"]) for d in hits}
    assert ("repo:kbres:wiki", "big.md") in seen and ("repo:kbres:corpus", "report.pdf") in seen
    for doc in hits:
        if doc["corpus"] == "repo:kbres:wiki":
            assert doc.get("uri") == offered.get(doc["path"]), doc["path"]
        else:
            assert "uri" not in doc, doc["path"]  # only the scope's default corpus is on offer
    assert offered["notes/café menu.md"] == "kb://doc/notes/caf%C3%A9%20menu.md"
    assert offered["Tilde~ok_x-y.md"] == "kb://doc/Tilde~ok_x-y.md"
    assert "big.md" not in offered
    assert sum(count for _, count in EXPECTED_GROUPS.values()) == len(offered)


async def test_a_directory_without_a_corpus_offers_no_resources(world: Sandbox) -> None:
    async with mcp_session(world, cwd=world.root / "empty") as session:
        assert (await session.list_resources()).resources == []
        with pytest.raises(MCPError) as info:
            await session.read_resource("kb://topic/")
    assert info.value.code == INVALID_PARAMS and (info.value.data or {})["problem"] == "resource_not_found"


# -- the knowledge-base scope (serve --kb-path), and the CLI ------------------------------------------
async def test_a_kb_scope_serves_its_directory_as_corpus_kb(world: Sandbox) -> None:
    kb = str(world.root / "kbdir")
    conn = await DaemonConnection.open(world.socket)
    try:
        await conn.call("index", kb, {}, kb=True)
        document = await conn.call("get_document", kb, {"path": "deploy/rollback.md"}, kb=True)
        groups = await conn.call("resource_groups", kb, {}, kb=True)
        read = await conn.call("read_resource", kb, {"uri": "kb://doc/deploy/rollback.md"}, kb=True)
        found = await conn.call("ground", kb, {"query": "roll back a release"}, kb=True)
        with pytest.raises(NotFound):
            await conn.call("get_document", kb, {"path": "Deploy/rollback.md"}, kb=True)
    finally:
        await conn.close()
    assert (document["corpus"], document["title"], document["tags"], document["category"]) == (
        "kb",
        "Rolling Back",
        ["ops"],
        "deploy",
    )
    assert document["uri"] == "kb://doc/deploy/rollback.md"
    assert groups == {
        "corpus": "kb",
        "groups": [
            {
                "prefix": "deploy",
                "name": "deploy",
                "uri": "kb://topic/deploy",
                "description": "1 indexed document(s) under deploy",
                "documents": 1,
            }
        ],
    }
    assert read["mime_type"] == "text/markdown" and "blue-green" in read["text"]
    for op, result in (("resource_groups", groups), ("read_resource", read)):
        jsonschema.validate(result, RESOURCE_RESULTS[op])
    jsonschema.validate(document, RESULTS["get_document"])
    assert found["docs"][0]["uri"] == "kb://doc/deploy/rollback.md"


async def test_a_miss_while_the_corpus_is_first_indexed_says_so(world: Sandbox) -> None:
    fresh = world.root / "kbfresh"
    fresh.mkdir()
    (fresh / "late.md").write_text("# Late\n\nThe plum marmot arrives late.\n")
    pause = world.root / "pause"
    (pause / "progress.pause").touch()  # holds the catch-up this call starts, before it stores a row
    conn = await DaemonConnection.open(world.socket)
    try:
        with pytest.raises(NotFound) as info:
            await conn.call("get_document", str(fresh), {"path": "late.md"}, kb=True)
    finally:
        (pause / "progress.pause").unlink(missing_ok=True)
        (pause / "progress.go").touch()
        await conn.close()
    assert info.value.data["problem"] == "not-indexed" and info.value.data["indexing"] is True
    assert "being indexed now" in info.value.message


def test_the_doc_command_prints_the_document_and_refuses_another_spelling(world: Sandbox) -> None:
    repo = repo_of(world)
    shown = hm(world, "doc", "guides/setup.md", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "title: Setting Up" in shown.stdout and "teal kettle" in shown.stdout
    as_json = hm(world, "doc", "guides/setup.md", "--format", "json", cwd=repo)
    assert as_json.returncode == 0 and '"uri": "kb://doc/guides/setup.md"' in as_json.stdout
    other = hm(world, "doc", "Guides/setup.md", cwd=repo)
    assert other.returncode == 2 and "not an indexed document" in other.stderr
