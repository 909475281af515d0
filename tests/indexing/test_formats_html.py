"""The HTML reader: a Markdown-like view of a page's main text, chunked like Markdown; hostile pages; and
a page through a real daemon (ground, phrase, counts, read_markdown on the hit's lines)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser

from hallouminate.indexing.chunker import chunk_markdown
from hallouminate.indexing.documents import ChunkContext, FormatLimits
from hallouminate.indexing.html_reader import (
    MAX_DEPTH,
    escape_line,
    flatten_depth,
    html_chunk,
    html_extract,
    html_view,
)
from hallouminate.indexing.markdown_tree import parse_blocks
from hallouminate.indexing.readers import reader_for
from hallouminate.indexing.text_chunker import UnparseableFile
from support.files import write
from support.html_files import ARTICLE, PHRASE, deep_divs, giant_text, tiny_elements, unclosed_bold
from support.mcp_world import McpClient, make_repo, module_sandbox


def words(text: str) -> int:
    return len(text.split())


def ctx(budget: int = 200, limit: int | None = None, path: str = "page.html") -> ChunkContext:
    limits = FormatLimits() if limit is None else FormatLimits(max_extracted_chars=limit)
    return ChunkContext(path, path.rsplit("/", 1)[-1], words, budget, limits)


def view(html: str, **kwargs: Any) -> str:
    return html_view(html.encode(), ctx(**kwargs)).text


def body(inner: str) -> str:
    return f"<html><head><title>T</title></head><body>{inner}</body></html>"


def assert_chunks_agree(data: bytes, context: ChunkContext) -> None:
    """Every chunk's text is on its lines of the extracted view (what read_markdown shows)."""
    lines = html_extract(data, context).parts[0].text.split("\n")  # type: ignore[union-attr]
    for chunk in html_chunk(data, context).chunks:
        assert chunk.page is None and chunk.symbol_kind is None
        assert chunk.text in "\n".join(lines[chunk.line_start - 1 : chunk.line_end]), chunk
        assert words(chunk.embed_text) <= context.budget


# -- the view ---------------------------------------------------------------------------------------------
def test_the_view_keeps_the_main_text_as_markdown_and_drops_the_chrome() -> None:
    assert view(ARTICLE) == (
        "# Night Operations\n\n"
        "Every vessel entering after dusk reports to the harbour master by radio.\n\n"
        "## Fog Signals\n\n"
        f"When visibility drops below one mile, {PHRASE} a minute.\n\n"
        "Keepers log each signal & its time.\n\n"
        "## Berth Table\n\n"
        "Berth | Depth\nNorth quay | 12 m\nSouth quay | 9 m\n\n"
        "### Checklist\n\n"
        "- Lights on\n- Radio on channel 16\n\n"
        "```\nhorn --pattern long,long\n     --every 60s\n```\n"
    )
    extracted = html_extract(ARTICLE.encode(), ctx())
    assert extracted.title == "Harbour Handbook" and extracted.cut is None
    assert [(p.label, p.title) for p in extracted.parts] == [("", "")]
    assert reader_for("site/handbook.HTM") is not None and reader_for("a.html") is not None


def test_scripts_styles_hidden_and_chrome_are_dropped_wherever_they_are() -> None:
    page = body(
        "<nav>nav words</nav><header>page banner</header>"
        "<div role='navigation'>role nav</div><div role='banner'>role banner</div>"
        "<p>kept one</p><script>script words</script><style>p{}</style><noscript>noscript words</noscript>"
        "<template><p>template words</p></template><svg><text>svg words</text></svg>"
        "<iframe>iframe words</iframe><p hidden>hidden words</p><p aria-hidden='true'>aria words</p>"
        "<form><label>Your name</label><input value='input words'><select><option>option words</option>"
        "</select><textarea>textarea words</textarea><button>button words</button></form>"
        "<p hidden='until-found'>found words</p>"
        "<aside>aside words</aside><div role='contentinfo'>role footer</div><footer>page footer</footer>"
    )
    assert view(page) == "kept one\n\nYour name\n\nfound words\n"


def test_main_is_preferred_then_role_main_then_a_single_article() -> None:
    around = "<p>outside</p>"
    assert view(body(f"{around}<main><p>in main</p></main>{around}")) == "in main\n"
    assert view(body(f"{around}<div role='main'><p>in role</p></div>")) == "in role\n"
    assert view(body(f"{around}<article><p>one</p><article><p>reply</p></article></article>")) == (
        "one\n\nreply\n"
    )
    assert view(body(f"{around}<article><p>a</p></article><article><p>b</p></article>")) == (
        "outside\n\na\n\nb\n"
    )
    # A main with no text (filled by a script in a browser) does not hide the page's text.
    assert view(body(f"{around}<main><script>x</script></main>")) == "outside\n"


def test_a_header_inside_an_article_is_its_title_not_chrome() -> None:
    page = body(
        "<header>Site name</header><article><header><h1>Post title</h1><p>By Ann</p></header>"
        "<p>Text.</p><footer>Filed under fog</footer></article><footer>Site footer</footer>"
    )
    assert view(page) == "# Post title\n\nBy Ann\n\nText.\n\nFiled under fog\n"


def test_inline_text_headings_lists_tables_and_breaks() -> None:
    page = body(
        "<h2>  A  <em>spaced</em>\n heading </h2>"
        "<p>one<b>two</b> three\n\n  four<br>next line<br><br><br>after gap</p>"
        "<ol><li>first <p>para inside</p></li><li>second<ul><li>nested</li></ul>tail</li></ol>"
        "<table><caption>Caption</caption><thead><tr><th>h1</th><th>h2</th></tr></thead>"
        "<tr><td>a <br>b</td><td></td></tr><tr><td></td><td></td></tr><tr><td>x</td><td>y</td></tr>"
        "</table><div>div text</div><span>inline</span>"
    )
    assert view(page) == (
        "## A spaced heading\n\n"
        "onetwo three four\nnext line\n\nafter gap\n\n"
        "- first para inside\n- second\n  - nested\n  tail\n\n"
        "Caption\n\n"
        "h1 | h2\na b | \nx | y\n\n"
        "div text\n\ninline\n"
    )


def test_entities_are_decoded_and_pre_is_verbatim_in_a_fence_it_cannot_close() -> None:
    page = body(
        "<p>caf&eacute; &amp; cr&#232;me &lt;b&gt; &nbsp;x</p>"
        "<pre><code>  if a &lt; b:\n\treturn ```x```\n```\n</code></pre>"
    )
    assert view(page) == "café & crème <b> x\n\n````\n  if a < b:\n\treturn ```x```\n```\n````\n"


@pytest.mark.parametrize(
    "text",
    [
        "# not a heading",
        "## nor this",
        "---",
        "***",
        "> not a quote",
        "- not a list",
        "+ nor this",
        "1. not a list",
        "2) nor this",
        "| a | b |",
        "<div> not html",
        "[ref]: /not-a-definition",
        "[^1]: not a footnote",
        "```not a fence",
        "~~~ nor this",
        "=== not an underline",
        ": not a definition",
        "\\* a backslash",
    ],
)
def test_text_that_looks_like_markdown_stays_a_paragraph(text: str) -> None:
    page = body(f"<h2>Head</h2><p>lead words</p><p>{text.replace('<', '&lt;')}</p><p>{text}<br>---</p>")
    html = page.replace("<p><div> not html<br>", "<p>&lt;div> not html<br>")
    shown = view(html)
    blocks = parse_blocks(shown)
    # Three paragraphs under the heading, whatever their text: nothing became a list, rule or table.
    assert [b.kind for b in blocks] == ["heading", "paragraph", "paragraph", "paragraph"], shown
    chunked = chunk_markdown(shown, words, 200)
    assert [c.heading_path for c in chunked.chunks] == [["Head"]]
    assert escape_line(text).lstrip("\\") in shown


def test_headings_read_back_exactly_as_their_text() -> None:
    texts = ["C# and F#", "Item #", "a_b *c* [d](e) <f> &amp; `g` ~~h~~ \\i", "x #"]
    page = body("".join(f"<h2>{t.replace('&', '&amp;').replace('<', '&lt;')}</h2><p>p</p>" for t in texts))
    chunks = html_chunk(page.encode(), ctx()).chunks
    assert [c.heading_path[-1] for c in chunks] == texts
    # Only what would be read as markup is escaped: a lone "&" or "<" stays readable.
    assert view(body("<h2>Fog &amp; light &lt; 3 miles</h2>")) == "## Fog & light < 3 miles\n"
    nested = html_chunk(body("<ul><li>item" * 40).encode(), ctx(budget=40))
    assert nested.chunks and all(c.heading_path == ["T"] for c in nested.chunks)
    assert_chunks_agree(body("<ul><li>item" * 40).encode(), ctx(budget=40))


# -- titles and heading paths ------------------------------------------------------------------------------
def test_chunks_hang_under_the_title_with_their_heading_paths() -> None:
    page = html_chunk(ARTICLE.encode(), ctx(budget=40))
    assert page.title == "Harbour Handbook"
    assert page.summary.startswith("Harbour Handbook - Every vessel entering after dusk")
    paths = [(c.heading_path, c.line_start, c.line_end) for c in page.chunks]
    root = ["Harbour Handbook", "Night Operations"]
    assert paths == [
        (root, 1, 3),
        ([*root, "Fog Signals"], 5, 9),
        ([*root, "Berth Table"], 11, 15),
        ([*root, "Berth Table", "Checklist"], 17, 25),
    ]
    fog = page.chunks[1]
    assert PHRASE in fog.text
    assert fog.embed_text.startswith("Harbour Handbook > Night Operations > Fog Signals\n\n## Fog Signals")
    assert_chunks_agree(ARTICLE.encode(), ctx(budget=40))


def test_the_title_falls_back_to_the_first_h1_then_the_file_name() -> None:
    h1 = "<html><body><h2>Intro</h2><p>x</p><h1>Real Title</h1><p>y</p></body></html>"
    page = html_chunk(h1.encode(), ctx(path="docs/a.html"))
    assert page.title == "Real Title"
    assert [c.heading_path for c in page.chunks] == [["Real Title", "Intro"], ["Real Title"]]
    bare = html_chunk(b"<p>Just text.</p>", ctx(path="docs/bare.htm"))
    assert bare.title == "bare.htm" and [c.heading_path for c in bare.chunks] == [["bare.htm"]]
    assert html_extract(b"<p>Just text.</p>", ctx()).title == ""
    titled = "<html><head><title>Site | Page</title></head><body><h1>Page</h1><p>x</p></body></html>"
    assert [c.heading_path for c in html_chunk(titled.encode(), ctx()).chunks] == [["Site | Page", "Page"]]


def test_a_long_section_is_split_within_the_budget_and_agrees_with_the_view() -> None:
    paragraphs = "".join(f"<p>{' '.join(f's{k}w{i}' for i in range(30))}.</p>" for k in range(20))
    page = body(f"<h1>Long</h1>{paragraphs}<h2>Short</h2><p>end</p>").encode()
    chunked = html_chunk(page, ctx(budget=64))
    assert len(chunked.chunks) > 5
    assert_chunks_agree(page, ctx(budget=64))
    assert html_chunk(b"", ctx()).chunks == [] and html_view(b"", ctx()).text == ""


# -- decoding ---------------------------------------------------------------------------------------------
def test_a_declared_legacy_charset_is_honoured() -> None:
    latin = '<meta charset="windows-1252"><p>café € naïve</p>'.encode("cp1252")
    assert view_bytes(latin) == "café € naïve\n"
    equiv = (
        b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
        b"<p>\x93quoted\x94 cr\xe8me</p>"
    )
    assert view_bytes(equiv) == "\u201cquoted\u201d crème\n"  # as browsers read Latin-1: windows-1252
    sjis = '<meta charset="shift_jis"><p>霧笛</p>'.encode("shift_jis")
    assert view_bytes(sjis) == "霧笛\n"
    assert view_bytes(b"\xef\xbb\xbf<p>bom \xc3\xa9</p>") == "bom é\n"
    assert view_bytes(b'<meta charset="no-such-thing"><p>plain \xc3\xa9</p>') == "plain é\n"
    assert view_bytes(b'<meta charset="utf-16"><p>utf8 \xc3\xa9</p>') == "utf8 é\n"


def view_bytes(data: bytes) -> str:
    return html_view(data, ctx()).text


def test_invalid_bytes_make_the_page_unparseable_naming_the_offset() -> None:
    with pytest.raises(UnparseableFile, match=r"not valid UTF-8 .*invalid byte at offset 12;"):
        html_chunk(b"<p>good and \xff bad</p>", ctx())
    with pytest.raises(UnparseableFile, match=r"not valid shift_jis .*declares charset 'shift_jis'"):
        html_extract(b'<meta charset="shift_jis"><p>\x81\x20</p>', ctx())


# -- hostile pages ----------------------------------------------------------------------------------------
def _depth(html: str) -> int:
    """The deepest element of the parsed tree (walked iteratively)."""
    node = LexborHTMLParser(html).root
    depth = deepest = 0
    while node is not None:
        child = node.child
        if child is not None:
            node, depth = child, depth + 1
            deepest = max(deepest, depth)
            continue
        while node is not None and node.next is None:
            node, depth = node.parent, depth - 1
        node = node.next if node is not None else None
    return deepest


def test_the_depth_guard_bounds_what_the_parser_sees_and_spares_real_pages() -> None:
    flattened, dropped = flatten_depth(deep_divs(2_000))
    assert dropped == 2_000 - MAX_DEPTH and _depth(flattened) <= MAX_DEPTH + 3
    assert _depth(deep_divs(2_000)) > 2_000  # what lexbor builds unguarded (quadratic time at 100,000)
    icons = "<svg>" + '<path d="M0 0"/>' * 2_000 + "</svg>"
    real = body(f"<div><ul>{'<li><p>item<p>more' * 2_000}</ul>{icons}<br/>{'<img src=x>' * 500}</div>")
    assert flatten_depth(real) == (real, 0)
    commented = "<!--" + "<div>" * 1_000 + "--><script>" + "<div>" * 1_000 + "</script><p>x</p>"
    assert flatten_depth(commented) == (commented, 0)
    quoted = '<p title="' + "<div>" * 1_000 + '">x</p>'
    assert flatten_depth(quoted) == (quoted, 0)


def test_a_hundred_thousand_nested_divs_are_read_without_recursion() -> None:
    data = deep_divs(100_000).encode()
    assert view_bytes(data) == "deep inner sentence\n\nafter the nest\n"
    assert_chunks_agree(data, ctx())
    # The text is whole, the structure past the depth is not: said, so the file's problem names it.
    reason = html_view(data, ctx()).cut
    assert reason is not None and f"nested deeper than {MAX_DEPTH} elements" in reason
    assert f"{100_000 - MAX_DEPTH:,} start tags" in reason


def test_the_walk_is_iterative_a_shallow_stack_reads_the_deepest_page_allowed() -> None:
    # MAX_DEPTH elements deep with 60 frames to spare: a recursive walk would need a frame per level.
    data = deep_divs(MAX_DEPTH).encode()
    spare = 60 + len(inspect.stack(0))
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(spare)
    try:
        shown = view_bytes(data)
    finally:
        sys.setrecursionlimit(old)
    assert shown == "deep inner sentence\n\nafter the nest\n"


def test_a_hundred_thousand_unclosed_bold_tags_are_read() -> None:
    data = unclosed_bold(100_000).encode()
    assert view_bytes(data) == "bold to the end\n"
    assert [c.text for c in html_chunk(data, ctx()).chunks] == ["bold to the end"]


def test_a_giant_text_node_is_cut_at_the_limit_with_a_reason() -> None:
    data = giant_text(4 * 1024 * 1024).encode()
    whole = html_view(data, ctx())
    assert whole.cut is None and len(whole.text) > 4_000_000
    cut = html_view(data, ctx(limit=100_000))
    assert cut.cut is not None and "max_extracted_chars (100,000 characters)" in cut.cut
    assert 99_000 < len(cut.text) <= 100_001 and cut.text.startswith("lorem ipsum")
    page = html_chunk(data, ctx(budget=254, limit=20_000))
    assert page.cut == cut.cut.replace("100,000", "20,000") and page.chunks
    assert sum(len(c.text) for c in page.chunks) < 30_000


def test_many_tiny_elements_are_read_and_cut_at_the_limit() -> None:
    data = tiny_elements(100_000).encode()
    shown = html_view(data, ctx())
    assert shown.cut is None and shown.text.startswith("w0\n\nw1\n\n") and shown.text.endswith("w99999\n")
    limited = html_view(data, ctx(limit=1_000))
    assert limited.cut is not None and len(limited.text) <= 1_001
    assert limited.text.endswith("\n") and limited.text.split()[-1].startswith("w")
    assert_chunks_agree(tiny_elements(2_000).encode(), ctx(budget=50))


def test_a_cut_never_leaves_a_fence_open() -> None:
    page = body("<p>lead</p><pre>" + "code line\n" * 500 + "</pre>")
    shown = html_view(page.encode(), ctx(limit=200))
    assert shown.cut is not None and shown.text.endswith("code line\n```\n")
    assert [b.kind for b in parse_blocks(shown.text)] == ["paragraph", "fence"]


# -- through a real daemon --------------------------------------------------------------------------------
@dataclass
class World:
    repo: Path
    client: McpClient
    report: dict[str, Any]

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.client.call(tool, {"cwd": str(self.repo), **arguments}).structured_content
        assert result is not None
        return result


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        repo = make_repo(
            box, "harbour", '[[corpus]]\nname = "site"\npaths = ["site"]\nglobs = ["**/*.html", "**/*.htm"]\n'
        )
        write(repo / "site" / "handbook.html", ARTICLE)
        write(repo / "site" / "deep.htm", deep_divs(100_000))
        (repo / "site" / "latin.html").write_bytes(b"<p>caf\xe9 au lait</p>")
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo), "corpus": "site"}).structured_content
            assert report is not None
            yield World(repo, client, report)
        finally:
            client.close()


def test_a_phrase_in_an_html_section_is_found_on_the_lines_read_markdown_shows(world: World) -> None:
    (site,) = [c for c in world.report["corpora"] if c["corpus"] == "site"]
    assert site["files_upserted"] == 2, site
    (skip,) = site["skipped"]
    assert skip["path"] == "latin.html" and "invalid byte at offset 6" in skip["reason"]
    found = world.call("ground", query="when does the fog horn sound", corpus="site", top_files=1)
    (doc,) = found["docs"]
    assert doc["path"] == "handbook.html"
    hit = doc["chunks"][0]
    assert hit["heading_path"] == ["Harbour Handbook", "Night Operations", "Fog Signals"]
    assert (hit["line_start"], hit["line_end"]) == (5, 9)
    assert "page" not in hit or hit["page"] is None
    read = world.call("read_markdown", corpus="site", path="handbook.html")
    assert read["format"] == "html" and read["content"] == view(ARTICLE)
    lines = read["content"].split("\n")[hit["line_start"] - 1 : hit["line_end"]]
    assert lines[0] == "## Fog Signals" and any(PHRASE in line for line in lines)
    numbered = world.call("read_markdown", corpus="site", path="handbook.html", line_numbers=True)
    assert f"7: When visibility drops below one mile, {PHRASE} a minute." in numbered["content"]


def test_phrase_mode_and_counts_find_the_html_phrase(world: World) -> None:
    phrase = world.call("ground", query=PHRASE, match="phrase", corpus="site")
    (doc,) = phrase["docs"]
    assert doc["path"] == "handbook.html" and doc["chunks"][0]["heading_path"][-1] == "Fog Signals"
    assert (doc["chunks"][0]["line_start"], doc["chunks"][0]["line_end"]) == (5, 9)
    counts = world.call("ground", query=PHRASE, match="phrase", output="counts", corpus="site")
    assert counts["stats"] == {"hits": 1, "occurrences": 1}
    assert [(d["path"], d["coverage"]) for d in counts["docs"]] == [
        ("handbook.html", {"chunks": 1, "pages": None})
    ]
    deep = world.call("ground", query="deep inner sentence", match="phrase", corpus="site")
    assert [d["path"] for d in deep["docs"]] == ["deep.htm"]
    assert (
        world.call("ground", query="script words never indexed", match="phrase", corpus="site")["docs"] == []
    )
    assert world.call("ground", query="Sidebar advert", match="phrase", corpus="site")["docs"] == []
