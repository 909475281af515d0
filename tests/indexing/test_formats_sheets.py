"""The spreadsheet readers (xlsx, ods, csv, tsv): exact view lines, values as shown, header-repeating row
chunks whose locations open the view at their rows, and hostile files cut or skipped with a reason."""

from __future__ import annotations

import codecs
import datetime as dt
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.indexing.documents import ChunkContext, Extracted, FormatLimits
from hallouminate.indexing.indexer import chunk_file
from hallouminate.indexing.readers import reader_for
from hallouminate.indexing.sheet_model import MAX_ROWS
from hallouminate.indexing.sheet_values import cell_text
from hallouminate.indexing.text_chunker import TextChunk, TextPage, UnparseableFile
from hallouminate.indexing.zipguard import OverBudget
from hallouminate.protocol.schemas import RESULTS
from support.files import pdf_bytes
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sheet_files import inline_cell, ods_bytes, ods_cell, ods_row, raw_xlsx, with_padding, xlsx_bytes


def words(text: str) -> int:
    return len(text.split())


def ctx(path: str, budget: int = 200, limits: FormatLimits | None = None) -> ChunkContext:
    return ChunkContext(path, path.rsplit("/", 1)[-1], words, budget, limits or FormatLimits())


def extract(path: str, data: bytes, **kw: object) -> Extracted:
    reader = reader_for(path)
    assert reader is not None
    return reader.extract(data, ctx(path, **kw))  # type: ignore[arg-type]


def chunk(path: str, data: bytes, **kw: object) -> TextPage:
    reader = reader_for(path)
    assert reader is not None
    return reader.chunk(data, ctx(path, **kw))  # type: ignore[arg-type]


def assert_agree(page: TextPage, view: Extracted) -> None:
    """THE RULE: each chunk's page/lines open the view at its rows. Its text is those lines, after the
    repeated header line, or (a split row) a slice of its one line after the repeated header."""
    for c in page.chunks:
        part = view.parts[(c.page or 1) - 1]
        assert part.label == (f"sheet:{c.heading_path[1].split(':', 1)[1]}" if c.page else "")
        lines = (part.text or "").split("\n")
        span = "\n".join(lines[c.line_start - 1 : c.line_end])
        header = next(line for line in lines if line)
        if c.text == span or c.text == f"{header}\n{span}":
            continue
        # A piece of a split row: one row, a slice of its line (after the repeated header, cut or not).
        assert c.line_start == c.line_end, c
        piece = c.text.split("\n", 1)[-1]
        assert piece in lines[c.line_start - 1], (c.text, lines[c.line_start - 1])


# -- values as shown -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "number_format", "shown"),
    [
        (3.0, "General", "3"),
        (0.1 + 0.2, "General", "0.3"),
        (1 / 3, "General", "0.333333333333333"),
        (1e20, "General", "1E+20"),
        (42, None, "42"),
        (1234.5, "#,##0.00", "1,234.50"),
        (1234567, "#,##0", "1,234,567"),
        (1234567, "#,##0,", "1,235"),
        (2.675, "0.00", "2.68"),
        (0.256, "0%", "26%"),
        (0.256, "0.0%", "25.6%"),
        (1.5, "0.0#", "1.5"),
        (5, "000", "005"),
        (12345, "0.00E+00", "1.23E+04"),
        (-1234.5, "#,##0.00_);[Red](#,##0.00)", "(1,234.50)"),
        (-3, "0", "-3"),
        (0, '0.00;-0.00;"nil"', "nil"),
        (1234.5, '"$"#,##0.00', "$1,234.50"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        (1.5, "# ?/?", "1.5"),  # fractions fall back to General
        (dt.datetime(2024, 3, 1), "yyyy-mm-dd", "2024-03-01"),
        (dt.datetime(2024, 3, 1), "d/m/yyyy", "1/3/2024"),
        (dt.datetime(2024, 3, 1), "mmm d, yyyy", "Mar 1, 2024"),
        (dt.datetime(2024, 3, 1), "dddd", "Friday"),
        (dt.datetime(2024, 3, 1, 14, 30, 5), "h:mm AM/PM", "2:30 PM"),
        (dt.time(0, 5, 7), "mm:ss", "05:07"),
        (dt.datetime(2024, 3, 1, 1, 2, 3, 456000), "hh:mm:ss.00", "01:02:03.46"),
        (dt.timedelta(hours=30, minutes=5), "[h]:mm:ss", "30:05:00"),
        (dt.datetime(2024, 3, 1, 14, 30), "General", "2024-03-01 14:30:00"),
        # The built-in short dates (ids 14, 22) follow the reader's locale in the application: shown ISO.
        (dt.datetime(2024, 3, 1), "mm-dd-yy", "2024-03-01"),
        (dt.datetime(2024, 3, 1, 9, 5), "m/d/yy h:mm", "2024-03-01 9:05"),
        (True, None, "TRUE"),
        ("two\nlines", None, "two lines"),
    ],
)
def test_a_value_is_rendered_as_the_spreadsheet_shows_it(
    value: object, number_format: str, shown: str
) -> None:
    assert cell_text(value, number_format) == shown


# -- xlsx ------------------------------------------------------------------------------------------------


def budget_book() -> bytes:
    return xlsx_bytes(
        {
            "Budget": [
                ["Item", "Cost", "Due", "Share", "Paid", "Note"],
                [
                    "Rent",
                    (1234.5, "#,##0.00"),
                    (dt.datetime(2024, 3, 1), "yyyy-mm-dd"),
                    (0.256, "0.0%"),
                    True,
                ],
                [],
                ["Food", 3.0, (dt.datetime(2024, 3, 15), "d/m/yyyy"), (0.1 + 0.2, "General"), False, "=B2*2"],
                ["Notes", None, None, None, None, "first line\nsecond line"],
                [None, None, None, None, None, None],
            ],
            "Empty": [],
            "Times": [["Lap", "Time"], ["one", (dt.time(0, 5, 7), "mm:ss")]],
        },
        title="Household  Budget",
    )


def test_xlsx_view_is_one_part_per_sheet_with_line_k_the_row_k() -> None:
    view = extract("money/budget.xlsx", budget_book())
    assert view.title == "Household Budget" and view.cut is None
    assert [(p.label, p.title) for p in view.parts] == [
        ("sheet:Budget", "Sheet Budget"),
        ("sheet:Empty", "Sheet Empty"),
        ("sheet:Times", "Sheet Times"),
    ]
    # openpyxl writes formulas without a cached result: with data_only such a cell is empty (F4).
    assert view.parts[0].text == (
        "Item | Cost | Due | Share | Paid | Note\n"
        "Rent | 1,234.50 | 2024-03-01 | 25.6% | TRUE\n"
        "\n"
        "Food | 3 | 15/3/2024 | 0.3 | FALSE\n"
        "Notes |  |  |  |  | first line second line"
    )
    assert view.parts[1].text == ""
    assert view.parts[2].text == "Lap | Time\none | 05:07"


def test_a_formula_shows_its_cached_result_as_a_spreadsheet_application_saved_it() -> None:
    data = raw_xlsx(
        [
            f'<row r="1">{inline_cell("A1", "Total")}<c r="B1"><f>SUM(C1:C2)</f><v>42.5</v></c></row>',
            '<row r="3"><c r="A3" t="str"><f>"a"&amp;"b"</f><v>ab</v></c><c r="B3" t="e"><v>#DIV/0!</v></c></row>',
        ]
    )
    assert extract("calc.xlsm", data).parts[0].text == "Total | 42.5\n\nab | #DIV/0!"


def test_chunks_repeat_the_header_and_carry_their_row_range() -> None:
    rows = [["Code", "Description", "Owner"]] + [
        [f"C{n}", f"alpha{n} beta{n} gamma{n} delta{n}", f"owner{n}"] for n in range(2, 42)
    ]
    data = xlsx_bytes({"Intro": [["See the next sheet."]], "Codes": rows})
    page = chunk("ref/codes.xlsx", data, budget=40)
    assert page.title == "codes.xlsx" and page.cut is None
    codes = [c for c in page.chunks if c.page == 2]
    assert len(codes) > 3
    assert codes[0].line_start == 1 and codes[0].text.startswith("Code | Description | Owner\nC2 | ")
    expected_next = 1
    for c in codes:
        assert c.heading_path == ["codes.xlsx", "sheet:Codes", f"rows:{c.line_start}-{c.line_end}"]
        assert c.embed_text == f"codes.xlsx > sheet:Codes > rows:{c.line_start}-{c.line_end}\n\n{c.text}"
        assert words(c.embed_text) <= 40
        assert c.text.split("\n", 1)[0] == "Code | Description | Owner"
        assert c.line_start == expected_next
        expected_next = c.line_end + 1
        assert [line.split(" | ")[0] for line in c.text.split("\n")[1:]] == [
            f"C{n}" for n in range(max(c.line_start, 2), c.line_end + 1)
        ]
    assert expected_next == 42  # every row once, none twice
    assert [(c.page, c.line_start, c.text) for c in page.chunks if c.page == 1] == [
        (1, 1, "See the next sheet.")
    ]
    assert_agree(page, extract("ref/codes.xlsx", data))


def test_a_row_too_long_for_the_budget_is_split_at_its_cells() -> None:
    header = ["Key", *(f"h{n}" for n in range(1, 30))]
    long_row = ["wide", *(f"w{n}a w{n}b" for n in range(1, 30))]
    data = xlsx_bytes({"S": [header, ["short", "x"], long_row]})
    page = chunk("wide.xlsx", data, budget=30)
    pieces = [c for c in page.chunks if c.line_start == 3]
    assert len(pieces) > 2
    line = "wide | " + " | ".join(f"w{n}a w{n}b" for n in range(1, 30))
    for piece in pieces:
        assert piece.line_end == 3 and piece.heading_path[-1] == "rows:3-3"
        lead, body = piece.text.split("\n", 1)
        assert lead.startswith("Key | h1 | h2")  # the header, repeated (cut to what fits)
        assert body in line and words(piece.embed_text) <= 30
    # Every cell of the row is in some piece.
    assert all(any(f"w{n}a w{n}b" in p.text for p in pieces) for n in range(1, 30))
    assert_agree(page, extract("wide.xlsx", data))


def test_the_workbook_title_else_the_file_name_roots_the_breadcrumb() -> None:
    page = chunk("b.xlsx", budget_book())
    assert page.chunks[0].heading_path[:2] == ["Household Budget", "sheet:Budget"]
    assert page.summary.startswith("Household Budget - Item | Cost")
    assert_agree(page, extract("b.xlsx", budget_book()))


# -- ods -------------------------------------------------------------------------------------------------


def stock_ods() -> bytes:
    return ods_bytes(
        {
            "Stock": ods_row(ods_cell("Item"), ods_cell("Count"), ods_cell("Price"))
            + ods_row(ods_cell("apple"), ods_cell("1,234", value="1234"), ods_cell("€0.50", value="0.5"))
            + ods_row(ods_cell(repeat=3), repeat=2)
            + ods_row(ods_cell("pear"), ods_cell("x", repeat=3), ods_cell(repeat=1020))
            + '<table:table-row><table:table-cell><text:p>big<text:s text:c="3"/>gap</text:p>'
            "<text:p>second para</text:p><office:annotation><text:p>a comment</text:p></office:annotation>"
            "</table:table-cell><table:covered-table-cell/><table:table-cell><text:p>end</text:p>"
            "</table:table-cell></table:table-row>"
            # LibreOffice ends every sheet with the rest of the rows repeated empty: one element.
             + ods_row(ods_cell(repeat=1024), repeat=1_048_000),
            "Second": ods_row(ods_cell("only"), repeat=2),
        },
        title="Stock list",
    )


def test_ods_view_shows_the_cells_text_and_honours_repeats() -> None:
    view = extract("stock.ods", stock_ods())
    assert view.title == "Stock list" and view.cut is None
    assert [p.label for p in view.parts] == ["sheet:Stock", "sheet:Second"]
    assert view.parts[0].text == (
        "Item | Count | Price\napple | 1,234 | €0.50\n\n\npear | x | x | x\nbig gap second para |  | end"
    )
    assert view.parts[1].text == "only\nonly"
    page = chunk("stock.ods", stock_ods(), budget=12)
    assert page.title == "Stock list" and page.cut is None
    assert [(c.page, c.line_start, c.line_end) for c in page.chunks][-1] == (2, 1, 2)
    assert_agree(page, view)


def test_an_ods_cell_repeated_past_the_last_column_is_built_up_to_it() -> None:
    data = ods_bytes({"Wide": ods_row(ods_cell("x", repeat=5_000_000), ods_cell("beyond"))})
    view = extract("wide.ods", data)
    assert view.cut is None and view.parts[0].text == " | ".join(["x"] * 16_384)


def test_a_cut_names_three_sheets_and_counts_the_others() -> None:
    gap = ods_row(ods_cell("a")) + ods_row(ods_cell(), repeat=2_000) + ods_row(ods_cell("b"))
    view = extract("gaps.ods", ods_bytes({f"S{n}": gap for n in range(1, 6)}))
    assert [p.text for p in view.parts] == ["a"] * 5
    assert view.cut is not None and view.cut.count("comes after 2,000 empty rows") == 3
    assert view.cut.startswith("sheet 'S1' row 2,002 ") and view.cut.endswith("; and 2 more sheets cut")


def test_a_row_after_a_million_repeated_empty_rows_cuts_the_ods_sheet_there() -> None:
    data = ods_bytes(
        {
            "Big": ods_row(ods_cell("head"))
            + ods_row(ods_cell(), repeat=1_000_000)
            + ods_row(ods_cell("late")),
            "Next": ods_row(ods_cell("still read")),
        }
    )
    view = extract("big.ods", data)
    assert view.parts[0].text == "head" and view.parts[1].text == "still read"
    assert (
        view.cut
        == "sheet 'Big' row 1,000,002 comes after 1,000,000 empty rows: the sheet is indexed up to row 1"
    )
    page = chunk("big.ods", data)
    assert page.cut == view.cut and [c.text for c in page.chunks] == ["head", "still read"]


# -- csv / tsv -------------------------------------------------------------------------------------------


CSV = (
    "name,role,notes\r\n"
    'Ada,"engineer, lead","wrote the ""first"" program"\r\n'
    "\r\n"
    'Grace,admiral,"two\nline note"\r\n'
    "Linus,,\r\n"
    "\r\n"
)


def test_csv_is_one_unlabelled_part_with_line_k_the_record_k() -> None:
    view = extract("people.csv", codecs.BOM_UTF8 + CSV.encode())
    assert view.title == "" and [(p.label, p.title) for p in view.parts] == [("", "")]
    assert view.parts[0].text == (
        "name | role | notes\n"
        'Ada | engineer, lead | wrote the "first" program\n'
        "\n"
        "Grace | admiral | two line note\n"
        "Linus"
    )
    page = chunk("people.csv", CSV.encode(), budget=20)
    assert all(c.page is None for c in page.chunks)
    assert [c.heading_path for c in page.chunks][:2] == [
        ["people.csv", "rows:1-2"],
        ["people.csv", "rows:4-5"],
    ]
    assert page.chunks[1].text == "name | role | notes\nGrace | admiral | two line note\nLinus"
    assert_agree(page, extract("people.csv", CSV.encode()))


def test_tsv_and_semicolon_csv() -> None:
    tsv = 'a\tb\n"quoted\ttab"\tplain\n'
    assert extract("t.tsv", tsv.encode()).parts[0].text == "a | b\nquoted\ttab | plain"
    semi = "Name;Amount\nTea;1,50\n"
    assert extract("s.csv", semi.encode()).parts[0].text == "Name | Amount\nTea | 1,50"
    assert extract("c.csv", b"one,two\n1;2,3\n").parts[0].text == "one | two\n1;2 | 3"


def test_invalid_utf8_csv_is_unparseable_naming_the_byte() -> None:
    data = "name\ncafé\n".encode() + b"caf\xe9\n"
    with pytest.raises(UnparseableFile) as caught:
        extract("bad.csv", data)
    offset = data.index(b"\xe9")
    assert caught.value.reason == (
        f"a .csv file that is not valid UTF-8: byte 0xe9 at byte offset {offset} (line 3);"
        " save it as UTF-8 to index it"
    )
    with pytest.raises(UnparseableFile, match=r"byte offset 9 \(line 2\)"):
        extract("bom.tsv", codecs.BOM_UTF8 + b"ok\tok\n\xff")


def test_a_field_past_the_csv_limit_cuts_the_file_there() -> None:
    data = ("h\nfirst\n" + '"' + "x" * 200_000 + '"\nafter\n').encode()
    view = extract("huge.csv", data)
    assert view.parts[0].text == "h\nfirst"
    assert view.cut == (
        "row 3: field larger than field limit (131072) (the csv reader's limit); the file is indexed up to row 2"
    )
    assert chunk("huge.csv", data).cut == view.cut


def test_csv_rows_and_characters_are_capped() -> None:
    data = "".join(f"r{n}\n" for n in range(1, MAX_ROWS + 3)).encode()
    view = extract("many.csv", data)
    assert view.cut == f"more than {MAX_ROWS:,} non-empty rows: reading stopped at row {MAX_ROWS + 1:,}"
    assert view.parts[0].text.split("\n")[-1] == f"r{MAX_ROWS}"
    small = extract("many.csv", data[:1000], limits=FormatLimits(max_extracted_chars=100))
    assert small.cut == "more than max_extracted_chars (100) characters of text: reading stopped at row 28"
    assert len(small.parts[0].text) <= 100


# -- hostile workbooks -----------------------------------------------------------------------------------


def test_an_xlsx_with_a_million_empty_rows_stops_after_a_thousand() -> None:
    rows = [f'<row r="1">{inline_cell("A1", "head")}</row>', f'<row r="2">{inline_cell("A2", "data")}</row>']
    rows += [f'<row r="{n}"/>' for n in range(3, 1_000_001)]
    rows.append(f'<row r="1000001">{inline_cell("A1000001", "never read")}</row>')
    data = raw_xlsx(rows, dimension="A1:Z1048576")
    view = extract("empty.xlsx", data)
    assert view.parts[0].text == "head\ndata"
    assert view.cut == (
        "sheet 'Data' row 1,002: 1,000 empty rows after row 2; reading of the sheet stopped there"
        " (rows below it, if any, are not indexed)"
    )
    assert chunk("empty.xlsx", data).cut == view.cut


def test_a_dimension_claiming_the_whole_grid_is_ignored() -> None:
    # Trusted, the claim would pad each of the 700 rows to 16,384 cells: past the 10 million cells limit.
    rows = [f'<row r="{n}">{inline_cell(f"A{n}", f"v{n}")}</row>' for n in range(1, 701)]
    view = extract("claim.xlsx", raw_xlsx(rows, dimension="A1:XFD1048576"))
    assert view.cut is None
    assert view.parts[0].text == "\n".join(f"v{n}" for n in range(1, 701))


def test_broken_workbooks_are_unparseable_with_a_reason() -> None:
    with pytest.raises(UnparseableFile, match=r"not a valid \.xlsx workbook \(not a readable zip"):
        extract("report.xlsx", pdf_bytes(["I am a PDF."]))
    with pytest.raises(UnparseableFile, match=r"not a valid \.xlsx workbook"):
        extract("cut.xlsx", budget_book()[:3000])
    with pytest.raises(UnparseableFile, match=r"not a valid \.ods spreadsheet"):
        extract("cut.ods", stock_ods()[:200])
    with pytest.raises(UnparseableFile, match=r"not a readable \.ods spreadsheet: it has no content\.xml"):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        extract("hollow.ods", out.getvalue())


def test_an_entity_expansion_bomb_in_a_sheet_is_refused() -> None:
    laughs = '<!DOCTYPE worksheet [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    data = raw_xlsx([f'<row r="1">{inline_cell("A1", "x")}</row>'], doctype=laughs)
    with pytest.raises(UnparseableFile, match=r"^refused \.xlsx workbook: its XML declares entities"):
        extract("laughs.xlsx", data)


def test_a_zip_bomb_workbook_is_over_budget() -> None:
    data = with_padding(budget_book(), 60 * 1024 * 1024)
    assert len(data) < 200_000
    for path in ("bomb.xlsx", "bomb.ods"):
        with pytest.raises(OverBudget, match="more than max_decompressed_size"):
            extract(path, data)
    with pytest.raises(OverBudget):
        chunk_file("bomb.xlsx", data, words, 100)


def test_the_indexer_dispatches_every_sheet_format() -> None:
    assert chunk_file("a/b.csv", CSV.encode(), words, 100).chunks[0].heading_path[0] == "b.csv"
    assert chunk_file("a/b.tsv", b"x\ty\n", words, 100).chunks[0].text == "x | y"
    assert chunk_file("a/b.ods", stock_ods(), words, 100).chunks[0].page == 1
    first: TextChunk = chunk_file("a/b.xlsm", budget_book(), words, 100).chunks[0]  # type: ignore[assignment]
    assert first.page == 1 and first.heading_path[1] == "sheet:Budget"


# -- end to end: a real daemon, the real model, a real MCP client -----------------------------------------


PARTS_ROWS = [["Part", "Description", "Stock", "Unit price"]] + [
    [f"P-{n:03d}", f"spare component number {n}", (n * 10, "#,##0"), (n * 1.25, '"$"0.00')]
    for n in range(2, 22)
]
PARTS_ROWS[12][1] = "the vermilion gasket assembly for pumps"  # row 13


class World:
    def __init__(self, client: McpClient, acme: Path) -> None:
        self.client = client
        self.acme = acme
        self.skipped: dict[str, str] = {}

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = self.client.call(tool, {"cwd": str(self.acme), **args})
        jsonschema.validate(result.structured_content, RESULTS[tool])
        return dict(result.structured_content)


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache, "[indexing]\nchunk_tokens = 64\n") as box:
        acme = make_repo(
            box,
            "acme",
            '[[corpus]]\nname = "sheets"\npaths = ["sheets"]\nglobs = ["**/*.xlsx", "**/*.ods", "**/*.csv"]\n',
        )
        folder = acme / "sheets"
        folder.mkdir()
        (folder / "inventory.xlsx").write_bytes(
            xlsx_bytes({"Summary": [["Inventory of the workshop"]], "Parts": PARTS_ROWS}, title="Workshop")
        )
        (folder / "stock.ods").write_bytes(
            ods_bytes(
                {
                    "Notes": ods_row(ods_cell("nothing here")),
                    "Valves": ods_row(ods_cell("Name"), ods_cell("Size"))
                    + ods_row(ods_cell("gate valve"), ods_cell("2 in", value="2"))
                    + ods_row(ods_cell("saffron valve housing"), ods_cell("3 in", value="3"))
                    + ods_row(ods_cell(repeat=2), repeat=1_048_000),
                }
            )
        )
        (folder / "audit.csv").write_text(
            'who,what\nana,"a note\nover two lines"\nbo,weekly check\ncy,cobalt ledger audit\n'
        )
        # Hostile files: each skipped with its reason, the rest of the corpus indexed.
        (folder / "hostile").mkdir()
        (folder / "hostile" / "bomb.xlsx").write_bytes(with_padding(xlsx_bytes({"S": [["x"]]}), 60 << 20))
        (folder / "hostile" / "report.xlsx").write_bytes(pdf_bytes(["Not a workbook."]))
        (folder / "hostile" / "latin1.csv").write_bytes("name\ncaf\u00e9\n".encode("latin-1"))
        box.start_daemon()
        client = McpClient(box)
        try:
            report = client.call("index", {"cwd": str(acme), "corpus": "sheets"}).structured_content
            (corpus,) = report["corpora"]
            world = World(client, acme)
            world.skipped = {item["path"]: item["reason"] for item in corpus.get("skipped", [])}
            yield world
        finally:
            client.close()


def only_chunk(result: dict[str, Any], path: str) -> dict[str, Any]:
    doc = next(d for d in result["docs"] if d["path"] == path)
    return dict(doc["chunks"][0])


def numbered_line(world: World, path: str, section: str | None, number: int) -> str:
    """Line ``number`` of ``path``'s read_markdown view (of its ``## section`` when it has parts)."""
    content = world.call("read_markdown", corpus="sheets", path=path, line_numbers=True)["content"]
    if section is not None:
        content = content.split(f"## {section}\n\n", 1)[1].split("\n## ", 1)[0]
    return next(line for line in content.splitlines() if line.startswith(f"{number}: "))


def test_a_phrase_in_a_cell_is_found_at_its_sheet_and_row_and_read_there(world: World) -> None:
    hit = only_chunk(
        world.call("ground", query="vermilion gasket assembly", corpus="sheets"), "inventory.xlsx"
    )
    assert hit["page"] == 2 and hit["heading_path"][:2] == ["Workshop", "sheet:Parts"]
    assert hit["heading_path"][2] == f"rows:{hit['line_start']}-{hit['line_end']}"
    assert hit["line_start"] <= 13 <= hit["line_end"]
    line = numbered_line(world, "inventory.xlsx", "Sheet Parts", 13)
    assert line == "13: P-013 | the vermilion gasket assembly for pumps | 130 | $16.25"
    view = world.call("read_markdown", corpus="sheets", path="inventory.xlsx")
    assert view["format"] == "xlsx" and view["pages"] == 2
    assert view["content"].startswith("## Sheet Summary\n\nInventory of the workshop\n")

    phrase = world.call("ground", query="vermilion gasket assembly", match="phrase", corpus="sheets")
    assert [d["path"] for d in phrase["docs"]] == ["inventory.xlsx"]
    exact = only_chunk(phrase, "inventory.xlsx")
    location = [exact["page"], exact["line_start"], exact["line_end"]]
    assert location == [hit["page"], hit["line_start"], hit["line_end"]]
    counts = world.call("ground", query="vermilion gasket", match="phrase", output="counts", corpus="sheets")
    assert [(d["path"], d["coverage"]) for d in counts["docs"]] == [
        ("inventory.xlsx", {"chunks": 1, "pages": 1})
    ]


def test_ods_and_csv_hits_open_at_their_rows(world: World) -> None:
    ods = only_chunk(
        world.call("ground", query="saffron valve housing", match="phrase", corpus="sheets"), "stock.ods"
    )
    assert ods["page"] == 2 and ods["line_start"] <= 3 <= ods["line_end"]
    assert numbered_line(world, "stock.ods", "Sheet Valves", 3) == "3: saffron valve housing | 3 in"
    csv_hit = only_chunk(world.call("ground", query="cobalt ledger audit", corpus="sheets"), "audit.csv")
    assert "page" not in csv_hit and csv_hit["heading_path"][0] == "audit.csv"
    assert csv_hit["line_start"] <= 4 <= csv_hit["line_end"]
    # Record 2 spans two lines of the file: it is one line of the view, so record 4 is line 4.
    assert numbered_line(world, "audit.csv", None, 4) == "4: cy | cobalt ledger audit"
    counts = world.call(
        "ground", query="cobalt ledger audit", match="phrase", output="counts", corpus="sheets"
    )
    assert [(d["path"], d["coverage"]) for d in counts["docs"]] == [
        ("audit.csv", {"chunks": 1, "pages": None})
    ]


def test_hostile_sheet_files_are_skipped_with_their_reasons_and_the_rest_indexes(world: World) -> None:
    assert set(world.skipped) == {"hostile/bomb.xlsx", "hostile/report.xlsx", "hostile/latin1.csv"}
    assert "more than max_decompressed_size" in world.skipped["hostile/bomb.xlsx"]
    assert "not a valid .xlsx workbook (not a readable zip container" in world.skipped["hostile/report.xlsx"]
    assert world.skipped["hostile/latin1.csv"].startswith(
        "a .csv file that is not valid UTF-8: byte 0xe9 at byte offset 8 (line 2)"
    )
    listed = world.call("ground", query="weekly check", match="phrase", output="counts", corpus="sheets")
    assert [d["path"] for d in listed["docs"]] == ["audit.csv"]


def test_a_phrase_in_the_header_row_counts_once_though_every_chunk_repeats_it(world: World) -> None:
    # The header leads every row chunk's text, as overlap repeats text: phrase mode counts what the file
    # holds, so the header's words count once, in the chunk holding the header row itself.
    ranked = world.call("ground", query="vermilion gasket assembly", corpus="sheets")
    assert only_chunk(ranked, "inventory.xlsx")["line_start"] > 1  # a later chunk: it repeats the header
    counts = world.call("ground", query="Unit price", match="phrase", output="counts", corpus="sheets")
    (doc,) = [d for d in counts["docs"] if d["path"] == "inventory.xlsx"]
    assert doc["score"] == 1 and doc["coverage"] == {"chunks": 1, "pages": 1}
    phrase = world.call("ground", query="Unit price", match="phrase", corpus="sheets")
    assert [
        c["line_start"] for d in phrase["docs"] for c in d["chunks"] if d["path"] == "inventory.xlsx"
    ] == [1]
