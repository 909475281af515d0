"""The source-code reader: one chunk per definition (tree-sitter), exact kinds, lines and qualified names per
language, signatures repeated in split pieces, module text kept, hostile files refused or cut; then a real
daemon finds a Go function by meaning, by phrase and by counts, and read_markdown shows its lines."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.indexing.code import MINIFIED_LINE_CHARS, chunk_code, extract_code
from hallouminate.indexing.documents import ChunkContext, FormatLimits
from hallouminate.indexing.indexer import chunk_file
from hallouminate.indexing.readers import reader_for
from hallouminate.indexing.text_chunker import TextPage, UnparseableFile
from support import code_samples as samples
from support.files import write
from support.mcp_world import McpClient, make_repo, module_sandbox


def words(text: str) -> int:
    return len(text.split())


def chunk(name: str, source: str, budget: int = 400, limits: FormatLimits | None = None) -> TextPage:
    ctx = ChunkContext(name, name, words, budget, limits or FormatLimits())
    return chunk_code(source.encode(), ctx)


def table(page: TextPage) -> list[tuple[str | None, int, int, str]]:
    """(symbol_kind, line_start, line_end, qualified name or "") of every chunk, in order."""
    return [
        (c.symbol_kind, c.line_start, c.line_end, c.heading_path[1] if len(c.heading_path) > 1 else "")
        for c in page.chunks
    ]


EXPECTED: dict[str, tuple[str, list[tuple[str | None, int, int, str]]]] = {
    "rate.py": (
        samples.PYTHON,
        [
            (None, 1, 6, ""),
            ("class_definition", 9, 14, "Bucket"),  # decorator, header, docstring, fields
            ("function_definition", 16, 17, "Bucket.refill"),
            ("function_definition", 19, 22, "Bucket.empty"),  # its comment and decorator
            ("function_definition", 25, 28, "allow"),
            (None, 31, 32, ""),
        ],
    ),
    "settings.js": (
        samples.JAVASCRIPT,
        [
            (None, 1, 3, ""),
            ("function_declaration", 5, 9, "loadSettings"),  # doc comment and `export`
            ("lexical_declaration", 11, 15, "retry"),
            ("class_declaration", 17, 17, "Cache"),
            ("method_definition", 18, 20, "Cache.constructor"),
            ("method_definition", 22, 24, "Cache.get"),
            (None, 27, 27, ""),
        ],
    ),
    "users.ts": (
        samples.TYPESCRIPT,
        [
            (None, 1, 1, ""),
            ("interface_declaration", 3, 7, "User"),
            ("type_alias_declaration", 9, 9, "UserId"),
            ("enum_declaration", 11, 14, "Role"),
            ("class_declaration", 16, 17, "UserStore"),
            ("method_definition", 19, 21, "UserStore.find"),
            ("function_declaration", 24, 26, "handle"),
        ],
    ),
    "badge.tsx": (
        samples.TSX,
        [
            (None, 1, 1, ""),
            ("type_alias_declaration", 3, 3, "Props"),
            ("lexical_declaration", 5, 5, "Badge"),
            ("function_declaration", 7, 13, "Panel"),
        ],
    ),
    "queue.go": (
        samples.GO,
        [
            (None, 1, 10, ""),
            ("type_declaration", 12, 16, "Job"),
            ("type_declaration", 18, 21, "Queue"),
            ("method_declaration", 23, 31, "Queue.Push"),
            ("function_declaration", 33, 36, "New"),
        ],
    ),
    "config.rs": (
        samples.RUST,
        [
            (None, 1, 1, ""),
            ("struct_item", 3, 7, "Config"),  # doc comment and #[derive]
            ("enum_item", 9, 12, "Source"),
            ("impl_item", 14, 14, "Config"),
            ("function_item", 15, 18, "Config.get"),
            ("function_item", 20, 22, "Config.set"),
            ("trait_item", 25, 27, "Loader"),
            ("mod_item", 29, 29, "tests"),
            ("function_item", 30, 30, "tests.parses"),
            ("function_item", 33, 36, "parse"),
        ],
    ),
    "InvoiceTotals.java": (
        samples.JAVA,
        [
            (None, 1, 3, ""),
            ("class_declaration", 5, 7, "InvoiceTotals"),
            ("constructor_declaration", 9, 11, "InvoiceTotals.InvoiceTotals"),
            ("method_declaration", 13, 17, "InvoiceTotals.total"),
            ("interface_declaration", 20, 20, "Priced"),
            ("method_declaration", 21, 21, "Priced.price"),
            ("enum_declaration", 24, 25, "Currency"),
            ("method_declaration", 27, 29, "Currency.symbol"),
            ("record_declaration", 32, 32, "Line"),
        ],
    ),
    "buffer.c": (
        samples.C,
        [
            (None, 1, 4, ""),
            ("struct_specifier", 6, 10, "buffer"),
            ("type_definition", 12, 15, "point_t"),
            ("enum_specifier", 17, 17, "color"),
            (None, 19, 19, ""),
            ("function_definition", 21, 26, "buffer_push"),
            ("function_definition", 28, 32, "main"),
        ],
    ),
    "geo.hpp": (
        samples.CPP,
        [
            (None, 1, 2, ""),
            ("namespace_definition", 4, 4, "geo"),
            ("class_specifier", 6, 8, "geo.Point"),
            ("function_definition", 9, 9, "geo.Point.Point"),
            ("function_definition", 11, 13, "geo.Point.norm"),
            ("class_specifier", 15, 17, "geo.Point"),  # the class's rest: private fields, closing brace
            ("function_definition", 19, 22, "geo.clamp"),  # template<...> included
            ("namespace_definition", 24, 24, "geo"),
            ("function_definition", 26, 28, "area"),
        ],
    ),
    "rotate.sh": (
        samples.BASH,
        [
            (None, 1, 4, ""),
            ("function_definition", 6, 9, "log"),
            ("function_definition", 11, 13, "rotate"),
            (None, 15, 16, ""),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_chunk_of_each_language_has_its_exact_kind_lines_and_name(name: str) -> None:
    source, expected = EXPECTED[name]
    page = chunk(name, source)
    assert table(page) == expected
    assert page.cut is None
    for c in page.chunks:
        assert c.heading_path[0] == name and len(c.heading_path) <= 2
        assert c.page is None


RESTS = {("geo.hpp", 15): "class Point {", ("geo.hpp", 24): "namespace geo {"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chunks_are_the_views_own_lines(name: str) -> None:
    source, _ = EXPECTED[name]
    ctx = ChunkContext(name, name, words, 400)
    extracted = extract_code(source.encode(), ctx)
    assert [(p.label, p.title) for p in extracted.parts] == [("", "")]
    view = extracted.parts[0].text
    assert view == source
    lines = view.split("\n")
    for c in chunk_code(source.encode(), ctx).chunks:
        assert c.text == "\n".join(lines[c.line_start - 1 : c.line_end])
        head = " > ".join(c.heading_path) + "\n\n"
        # A container's rest below its first member repeats the container's signature.
        signature = RESTS.get((name, c.line_start))
        if signature:
            assert c.embed_text == head + signature + "\n" + c.text
        else:
            assert c.embed_text == head + c.text


def test_the_reader_is_registered_for_every_code_extension() -> None:
    for suffix in (".py", ".pyi", ".mjs", ".cjs", ".jsx", ".mts", ".cts", ".tsx", ".h", ".hxx", ".bash"):
        assert reader_for(f"src/x{suffix}") is not None, suffix
    page = chunk_file("lib/queue.go", samples.GO.encode(), words, 400)
    assert [c.symbol_kind for c in page.chunks][1:] == [
        "type_declaration",
        "type_declaration",
        "method_declaration",
        "function_declaration",
    ]


def test_a_c_header_is_read_with_the_cpp_grammar() -> None:
    header = "#ifndef GEO_H\n#define GEO_H\n\nnamespace geo {\nclass Box {\n  int w;\n};\n}\n\n#endif\n"
    assert table(chunk("geo.h", header)) == [
        (None, 1, 2, ""),
        ("namespace_definition", 4, 4, "geo"),
        ("class_specifier", 5, 7, "geo.Box"),
        (None, 10, 10, ""),
    ]


# -- over budget ------------------------------------------------------------------------------------------

LONG_GO = (
    "package billing\n\n"
    "// Reconcile matches every ledger entry against the bank statement.\n"
    "func Reconcile(ledger []Entry, statement []Line) (matched int, err error) {\n"
    + "".join(
        f"\tif ledger[{i}].Amount != statement[{i}].Amount {{\n"
        f'\t\treturn matched, fmt.Errorf("entry {i} differs from line {i}")\n'
        f"\t}}\n\tmatched += {i}\n\n"
        for i in range(40)
    )
    + "\treturn matched, nil\n}\n"
)


def test_an_oversize_definition_is_split_with_its_signature_repeated() -> None:
    page = chunk("ledger.go", LONG_GO, budget=80)
    pieces = [c for c in page.chunks if c.symbol_kind]
    assert len(pieces) > 3
    signature = "func Reconcile(ledger []Entry, statement []Line) (matched int, err error) {"
    lines = LONG_GO.split("\n")
    assert pieces[0].line_start == 3  # the doc comment
    assert pieces[-1].line_end == len(lines) - 1
    covered: set[int] = set()
    for n, piece in enumerate(pieces):
        assert piece.symbol_kind == "function_declaration"
        assert piece.heading_path == ["ledger.go", "Reconcile"]
        assert words(piece.embed_text) <= 80
        # text: the file's own lines, verbatim
        block = "\n".join(lines[piece.line_start - 1 : piece.line_end])
        assert piece.text in block and block.endswith(piece.text)
        head = "ledger.go > Reconcile\n\n"
        if n == 0:
            assert piece.embed_text == head + piece.text
        else:
            assert piece.embed_text == head + signature + "\n" + piece.text
            assert signature not in piece.text
        covered.update(range(piece.line_start, piece.line_end + 1))
    assert covered == set(range(3, len(lines)))
    # Pieces overlap by whole lines: each after the first starts at or before where the last one ended.
    for before, after in pairwise(pieces):
        assert after.line_start <= before.line_end


def test_a_split_class_rest_repeats_the_class_header() -> None:
    fields = "".join(f"    limit_{i}: int = {i}\n" for i in range(60))
    source = (
        f'class Limits:\n    """Every limit."""\n\n{fields}\n    def total(self) -> int:\n        return 0\n'
    )
    page = chunk("limits.py", source, budget=60)
    rest = [c for c in page.chunks if c.heading_path == ["limits.py", "Limits"]]
    assert len(rest) > 2 and all(c.symbol_kind == "class_definition" for c in rest)
    for c in rest[1:]:
        assert c.embed_text.startswith("limits.py > Limits\n\nclass Limits:\n    limit_")
    assert table(page)[-1] == ("function_definition", 65, 66, "Limits.total")


# -- module text, broken code ------------------------------------------------------------------------------


def test_module_level_text_between_definitions_is_kept() -> None:
    page = chunk("rate.py", samples.PYTHON)
    module = [c for c in page.chunks if c.symbol_kind is None]
    assert [c.heading_path for c in module] == [["rate.py"], ["rate.py"]]
    assert "DEFAULT_RATE = 10" in module[0].text and "import time" in module[0].text
    assert module[1].text.startswith('if __name__ == "__main__":')


def test_a_file_with_syntax_errors_still_yields_its_definitions() -> None:
    broken = textwrap.dedent(
        """\
        def first(a):
            return a + 1


        def broken(a):
            return a +


        class Unfinished
            pass


        def last(b):
            return b * 2
        """
    )
    found = table(chunk("broken.py", broken))
    assert ("function_definition", 1, 2, "first") in found
    assert ("function_definition", 5, 6, "broken") in found
    assert (None, 9, 10, "") in found  # what the parser could not read is kept as text
    assert ("function_definition", 13, 14, "last") in found
    js = "function ok() {\n  return 1;\n}\n\nfunction bad( {\n  if (\n}\n\nclass Fine {\n  m() { return 2; }\n}\n"
    kinds = {(k, n) for k, _, _, n in table(chunk("bad.js", js))}
    assert ("function_declaration", "ok") in kinds


def test_an_empty_file_has_no_chunks() -> None:
    assert chunk("empty.py", "").chunks == []
    assert chunk("blank.go", "\n\n  \n").chunks == []


def test_crlf_line_ends_count_as_lines() -> None:
    page = chunk("w.py", "import os\r\n\r\ndef f():\r\n    return os.sep\r\n")
    assert table(page) == [(None, 1, 1, ""), ("function_definition", 3, 4, "f")]
    assert page.chunks[1].text == "def f():\n    return os.sep"


# -- hostile files ----------------------------------------------------------------------------------------


def minified_js(size: int) -> str:
    unit = "function a{0}(b,c){{var d=b+c;if(d>10){{return d*2}}return{{v:d,w:'x{0}'}}}};"
    parts: list[str] = []
    total = 0
    while total < size:
        parts.append(unit.format(len(parts)))
        total += len(parts[-1])
    return "/*! app v1 */\n" + "".join(parts) + "\n"


def test_a_minified_5mb_javascript_file_is_refused_before_it_is_parsed() -> None:
    source = minified_js(5 * 1024 * 1024)
    with pytest.raises(UnparseableFile, match="minified or generated code") as info:
        chunk("app.min.js", source)
    assert f"over {MINIFIED_LINE_CHARS} characters" in info.value.reason
    # The view still opens: the file's text, cut at whole lines within max_extracted_chars.
    ctx = ChunkContext("app.min.js", "app.min.js", words, 400)
    view = extract_code(source.encode(), ctx)
    assert view.parts[0].text == "/*! app v1 */\n" and view.cut is not None


def test_one_long_line_in_ordinary_code_does_not_count_as_minified() -> None:
    blob = "x" * (MINIFIED_LINE_CHARS * 3)
    source = f'KEY = "{blob}"\n\n' + "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(300))
    page = chunk("keys.py", source)
    assert sum(c.symbol_kind == "function_definition" for c in page.chunks) == 300


def test_a_long_line_is_cut_at_spaces_not_by_bisecting_its_characters() -> None:
    # A 100 kB line of numbers in an ordinary file (under half its characters: not "minified").
    line = "TABLE = [" + ", ".join(str(i) for i in range(16_000)) + "]\n\n\n"
    body = "".join(f'def f{i}(a):\n    """Add {i}."""\n    return a + {i}\n\n\n' for i in range(3_000))
    source = line + body
    assert len(line) * 2 < len(source)
    counted = 0

    def counting(text: str) -> int:
        nonlocal counted
        counted += len(text)
        return len(text.split())

    page = chunk_code(source.encode(), ChunkContext("table.py", "table.py", counting, 64))
    table_chunks = [c for c in page.chunks if c.line_start == 1]
    assert len(table_chunks) > 100 and all(words(c.embed_text) <= 64 for c in table_chunks)
    assert "".join(c.text for c in table_chunks).replace(" ", "") == line.strip().replace(" ", "")
    # Cut by bisection, every step tokenized the rest of the line: 63 times the file here; by spaces 2.5.
    assert counted < 10 * len(source), counted / len(source)


def test_invalid_utf8_is_refused_with_its_offset_as_for_any_text_file() -> None:
    data = b"def f():\n    return '\xff'\n"
    ctx = ChunkContext("bad.py", "bad.py", words, 400)
    for read in (chunk_code, extract_code):
        with pytest.raises(UnicodeDecodeError) as info:
            read(data, ctx)
        assert info.value.start == 21


def test_text_past_max_extracted_chars_is_cut_at_a_line_end() -> None:
    source = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(100))
    limits = FormatLimits(max_extracted_chars=1000)
    page = chunk("many.py", source, limits=limits)
    assert page.cut is not None and "max_extracted_chars is 1000" in page.cut
    last_line = source[:1000].rfind("\n")
    kept_lines = source[: last_line + 1].count("\n")
    assert page.chunks and max(c.line_end for c in page.chunks) <= kept_lines
    assert page.cut.startswith(f"cut after line {kept_lines}:")
    extracted = extract_code(source.encode(), ChunkContext("many.py", "many.py", words, 400, limits))
    assert extracted.cut == page.cut and len(extracted.parts[0].text) <= 1000


def test_deep_nesting_is_walked_without_python_recursion() -> None:
    # Run with a tiny recursion limit: any recursion proportional to the nesting would fail.
    script = textwrap.dedent(
        """\
        import sys
        from hallouminate.indexing.code import chunk_code
        from hallouminate.indexing.documents import ChunkContext

        def run(name, source):
            ctx = ChunkContext(name, name, lambda s: len(s.split()), 256)
            return chunk_code(source.encode(), ctx)

        n = 10_000
        cases = {
            "brackets.py": "x = " + "[\\n" * n + "]\\n" * n + "\\n\\ndef after():\\n    return 1\\n",
            "blocks.c": "int f(void) {\\n" + "{\\n" * n + "}\\n" * n + "}\\nint g(void) { return 0; }\\n",
            "spaces.cpp": "namespace a {\\n" * n + "int f() { return 1; }\\n" + "}\\n" * n,
            "ifdefs.h": "#ifdef A\\n" * 2000 + "int f(void) { return 1; }\\n" + "#endif\\n" * 2000,
        }
        sys.setrecursionlimit(150)
        for name, source in cases.items():
            page = run(name, source)
            kinds = sorted({c.symbol_kind for c in page.chunks if c.symbol_kind})
            print(name, len(page.chunks), ",".join(kinds))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr
    found = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()}
    assert found["brackets.py"][1] == "function_definition"
    assert found["blocks.c"][1] == "function_definition"
    assert found["spaces.cpp"][1] == "namespace_definition"  # nesting past MAX_NESTING stays whole
    assert found["ifdefs.h"][1] == "function_definition"  # inside 2,000 nested #ifdef


def test_no_grammar_is_fetched_over_the_network() -> None:
    # A fresh process whose every socket and URL open is refused and recorded, loading every grammar.
    script = textwrap.dedent(
        """\
        import sys
        seen = []

        def audit(event, args):
            if event.startswith(("socket.", "urllib.")) or event in ("http.client.connect",):
                seen.append(event)
                raise PermissionError(f"network refused: {event}")

        sys.addaudithook(audit)
        from hallouminate.indexing.code import chunk_code
        from support import code_samples as s

        files = {"a.py": s.PYTHON, "a.js": s.JAVASCRIPT, "a.ts": s.TYPESCRIPT, "a.tsx": s.TSX,
                 "a.go": s.GO, "a.rs": s.RUST, "A.java": s.JAVA, "a.c": s.C, "a.cpp": s.CPP,
                 "a.sh": s.BASH}
        from hallouminate.indexing.documents import ChunkContext
        total = 0
        for name, source in files.items():
            page = chunk_code(source.encode(), ChunkContext(name, name, lambda t: len(t.split()), 400))
            assert any(c.symbol_kind for c in page.chunks), name
            total += len(page.chunks)
        print(total, seen)
        """
    )
    tests_dir = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tests_dir,
        env={**os.environ, "PYTHONPATH": str(tests_dir)},
    )
    assert out.returncode == 0, out.stderr
    count, seen = out.stdout.split(maxsplit=1)
    assert int(count) > 40 and seen.strip() == "[]"


# -- through a real daemon --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[tuple[McpClient, Path]]:
    with module_sandbox(model_cache, "[indexing]\nchunk_tokens = 128\n") as box:
        repo = make_repo(
            box,
            "svc",
            '[[corpus]]\nname = "src"\npaths = ["src"]\nglobs = ["**/*.go", "**/*.py", "**/*.rs", "**/*.js"]\n',
        )
        write(repo / "src" / "queue" / "queue.go", samples.GO)
        write(repo / "src" / "rate.py", samples.PYTHON)
        write(repo / "src" / "config.rs", samples.RUST)
        write(repo / "src" / "app.min.js", minified_js(30_000))
        write(repo / "src" / "notes.txt", "ignored: not in the globs")
        (repo / "src" / "latin1.py").write_bytes(b"# caf\xe9\ndef f():\n    return 1\n")
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(repo)}).structured_content
            src = next(c for c in report["corpora"] if c["corpus"] == "src")
            assert src["files_upserted"] == 3 and src["files_skipped"] == 2, report
            skipped = {s["path"]: s["reason"] for s in src["skipped"]}
            assert skipped["latin1.py"] == "not valid UTF-8 (byte 5)"
            assert skipped["app.min.js"].startswith("minified or generated code: 100% of its characters")
            yield client, repo
        finally:
            client.close()


def _ground(world: tuple[McpClient, Path], **args: Any) -> dict[str, Any]:
    client, repo = world
    result = client.call("ground", {"cwd": str(repo), "corpus": "src", **args})
    assert not result.is_error, result
    return result.structured_content


def test_ground_finds_a_go_method_with_its_lines_and_kind(world: tuple[McpClient, Path]) -> None:
    found = _ground(world, query="push a job onto the queue unless the context is done")
    doc = found["docs"][0]
    assert doc["path"] == "queue/queue.go"
    hit = doc["chunks"][0]
    assert (hit["line_start"], hit["line_end"]) == (23, 31)
    assert hit["heading_path"] == ["queue.go", "Queue.Push"]
    assert hit["symbol_kind"] == "method_declaration"
    # Module text has no kind: the key is absent, never null.
    module = _ground(world, query="import context and errors; ErrClosed is returned once the queue is closed")
    text_hit = next(c for d in module["docs"] for c in d["chunks"] if c["line_start"] == 1)
    assert text_hit["heading_path"] == ["queue.go"] and "symbol_kind" not in text_hit
    # read_markdown shows those lines, and the phrase is on them.
    client, repo = world
    read = client.call(
        "read_markdown", {"cwd": str(repo), "corpus": "src", "path": "queue/queue.go", "line_numbers": True}
    ).structured_content
    shown = read["content"].splitlines()[22:31]
    assert shown[0] == "23: // Push adds a job unless the context is done."
    assert shown[-1] == "31: }"


def test_a_file_of_invalid_utf8_is_skipped_and_its_read_names_the_offset(
    world: tuple[McpClient, Path],
) -> None:
    client, repo = world
    with pytest.raises(MCPError) as info:
        client.call("read_markdown", {"cwd": str(repo), "corpus": "src", "path": "latin1.py"})
    assert info.value.error.code == INVALID_PARAMS
    assert "invalid byte at offset 5" in info.value.error.message
    assert info.value.error.data["offset"] == 5


def test_phrase_mode_and_counts_find_the_go_method(world: tuple[McpClient, Path]) -> None:
    phrase = _ground(world, query="case <-ctx.Done():", match="phrase")
    assert [d["path"] for d in phrase["docs"]] == ["queue/queue.go"]
    hit = phrase["docs"][0]["chunks"][0]
    assert (hit["line_start"], hit["line_end"]) == (23, 31)
    assert hit["symbol_kind"] == "method_declaration"
    counts = _ground(world, query="case <-ctx.Done():", match="phrase", output="counts")
    entry = next(d for d in counts["docs"] if d["path"] == "queue/queue.go")
    assert entry["score"] == 1 and entry["coverage"]["chunks"] == 1
