"""The Word reader: its Markdown-like view, heading-section chunks rooted at the document title, the lines
each chunk names in that view, and the files it refuses (documents written by python-docx)."""

from __future__ import annotations

from hallouminate.indexing.documents import ChunkContext, FormatLimits, FunctionReader
from hallouminate.indexing.docx_reader import chunk_docx, extract_docx
from hallouminate.indexing.indexer import chunk_file
from hallouminate.indexing.readers import reader_for
from hallouminate.indexing.text_chunker import TextPage, UnparseableFile
from hallouminate.indexing.zipguard import OverBudget
from support.files import pdf_bytes
from support.office_files import docx_bytes, pptx_bytes, refused, with_member, zip_bomb


def words(text: str) -> int:
    return len(text.split())


def ctx(budget: int = 200, name: str = "design.docx", **limits: int) -> ChunkContext:
    return ChunkContext(name, name, words, budget, FormatLimits(**limits))


DESIGN = [
    ("title", "Storage Design"),
    ("p", "Why the store keeps every version."),
    ("h", 1, "Goals"),
    ("p", "Reads never block writes."),
    ("table", [["Goal", "Owner"], ["durability", "Ann Lee"], ["latency", "Bo\nChan"]]),
    ("p", "After the table."),
    ("bullet", "first point"),
    ("bullet", "second point"),
    ("number", "numbered point"),
    ("h", 2, "Risks"),
    ("p", "Disk full."),
    ("h", 1, "倉庫の設計"),
    ("p", "東京の倉庫は毎朝点検されます。"),
]

DESIGN_VIEW = """# Storage Design

Why the store keeps every version.

# Goals

Reads never block writes.

Goal | Owner
durability | Ann Lee
latency | Bo Chan

After the table.

- first point
- second point
- numbered point

## Risks

Disk full.

# 倉庫の設計

東京の倉庫は毎朝点検されます。
"""


def view(data: bytes, **limits: int) -> str:
    extracted = extract_docx(data, ctx(**limits))
    assert len(extracted.parts) == 1
    part = extracted.parts[0]
    assert (part.label, part.title) == ("", "")
    assert part.text is not None
    return part.text


def lines_of(text: str, start: int, end: int) -> str:
    return "\n".join(text.split("\n")[start - 1 : end])


def assert_agrees(data: bytes, page: TextPage, context: ChunkContext) -> None:
    """Every chunk is exactly its lines of the extracted view (heading-section chunks start and end on
    whole lines of it)."""
    text = extract_docx(data, context).parts[0].text
    assert text is not None
    for chunk in page.chunks:
        assert chunk.page is None
        block = lines_of(text, chunk.line_start, chunk.line_end)
        assert chunk.text in block, (chunk, block)


def test_the_view_keeps_body_order_with_tables_between_paragraphs() -> None:
    assert view(docx_bytes(DESIGN)) == DESIGN_VIEW


def test_heading_paths_are_rooted_at_the_core_title() -> None:
    data = docx_bytes(DESIGN, title="Platform Handbook")
    page = chunk_docx(data, ctx())
    assert page.title == "Platform Handbook"
    assert page.summary == "Platform Handbook - Why the store keeps every version."
    found = [(c.heading_path, c.line_start, c.line_end) for c in page.chunks]
    assert found == [
        (["Platform Handbook", "Storage Design"], 1, 3),
        (["Platform Handbook", "Goals"], 5, 17),
        (["Platform Handbook", "Goals", "Risks"], 19, 21),
        (["Platform Handbook", "倉庫の設計"], 23, 25),
    ]
    text = view(data)
    assert [c.text for c in page.chunks] == [lines_of(text, s, e) for _, s, e in found]
    # The root is embedded with the rest of the breadcrumb.
    assert page.chunks[2].embed_text == "Platform Handbook > Goals > Risks\n\n## Risks\n\nDisk full."


def test_without_a_core_title_the_first_title_paragraph_is_the_root() -> None:
    page = chunk_docx(docx_bytes(DESIGN), ctx())
    assert page.title == "Storage Design"
    assert [c.heading_path for c in page.chunks] == [
        ["Storage Design"],
        ["Storage Design", "Goals"],
        ["Storage Design", "Goals", "Risks"],
        ["Storage Design", "倉庫の設計"],
    ]
    assert page.chunks[0].embed_text.startswith("Storage Design\n\n# Storage Design\n")


def test_without_a_title_a_single_heading_1_is_the_root_but_one_of_several_chapters_is_not() -> None:
    single = docx_bytes([("h", 1, "Runbook *draft*"), ("p", "Steps."), ("h", 2, "Restart"), ("p", "Again.")])
    page = chunk_docx(single, ctx(name="runbook.docx"))
    # The root is the heading as Markdown reads it, so it is not repeated under itself.
    assert page.title == "Runbook draft"
    assert [c.heading_path for c in page.chunks] == [["Runbook draft"], ["Runbook draft", "Restart"]]
    chapters = docx_bytes([("h", 1, "Introduction"), ("p", "Why."), ("h", 1, "Design"), ("p", "How.")])
    page = chunk_docx(chapters, ctx(name="spec.docx"))
    assert page.title == "spec.docx"
    assert [c.heading_path for c in page.chunks] == [["spec.docx", "Introduction"], ["spec.docx", "Design"]]


def test_without_any_title_the_file_name_is_the_root() -> None:
    data = docx_bytes([("p", "Loose notes."), ("h", 2, "Later"), ("p", "More notes.")])
    page = chunk_docx(data, ctx(name="notes.docx"))
    assert page.title == "notes.docx"
    assert [(c.heading_path, c.text) for c in page.chunks] == [
        (["notes.docx"], "Loose notes."),
        (["notes.docx", "Later"], "## Later\n\nMore notes."),
    ]


def test_a_paragraph_that_looks_like_markdown_structure_stays_a_paragraph() -> None:
    # "---" first would open YAML frontmatter (and be dropped from the chunks), "#" would be a heading,
    # "===" under a line a setext heading, "[^1]:" a footnote moved to its citer, "```" a fence.
    data = docx_bytes(
        [
            ("p", "---\ntitle: not frontmatter\n---"),
            ("p", "# not a heading"),
            ("p", "a line\n==="),
            ("p", "See [^1] here."),
            ("p", "[^1]: not a footnote"),
            ("p", "```"),
            ("h", 1, "Real Heading"),
            ("p", "Body."),
        ]
    )
    text = view(data)
    assert text.startswith("\\---\ntitle: not frontmatter\n\\---\n\n\\# not a heading\n\na line\n\\===\n")
    assert "\n\\[^1]: not a footnote\n\n\\```\n\n# Real Heading\n" in text
    page = chunk_docx(data, ctx())
    assert [c.heading_path for c in page.chunks] == [["Real Heading"], ["Real Heading"]]
    assert page.chunks[0].line_start == 1  # nothing was taken for frontmatter
    assert "not frontmatter" in page.chunks[0].text and "not a footnote" in page.chunks[0].text
    assert_agrees(data, page, ctx())


def test_merged_cells_once_and_a_nested_table_flattened_into_its_cell() -> None:
    data = docx_bytes(
        [("table", [["Region", "Quarter totals", "<merge"], ["north", [["q1", "10"], ["q2", "12"]], "22"]])]
    )
    assert view(data) == "Region | Quarter totals\nnorth | q1 10 q2 12 | 22\n"


def test_hyperlinks_tracked_insertions_and_breaks_are_text_deletions_are_not() -> None:
    marked = (
        b'<w:r><w:t xml:space="preserve">Visit </w:t></w:r>'
        b'<w:hyperlink r:id="rId99"><w:r><w:t>the portal</w:t></w:r></w:hyperlink>'
        b'<w:ins w:id="1" w:author="Ann"><w:r><w:t xml:space="preserve"> today</w:t></w:r></w:ins>'
        b'<w:del w:id="2" w:author="Ann"><w:r><w:delText> never</w:delText></w:r></w:del>'
        b"<w:r><w:br/><w:t>then</w:t><w:tab/><w:t>rest</w:t></w:r>"
    )

    def mark(xml: bytes) -> bytes:
        assert xml.count(b"<w:r><w:t>KEEP</w:t></w:r>") == 1
        return xml.replace(b"<w:r><w:t>KEEP</w:t></w:r>", marked)

    data = with_member(docx_bytes([("p", "KEEP")]), "word/document.xml", mark)
    assert view(data) == "Visit the portal today\nthen\trest\n"


def test_small_budgets_split_sections_and_every_chunk_is_its_lines_of_the_view() -> None:
    prose = " ".join(f"Sentence {i} about replicas and quorum." for i in range(40))
    rows = [["key", "value"]] + [[f"k{i}", f"value {i} of the table"] for i in range(30)]
    data = docx_bytes([("title", "Big"), ("p", prose), ("h", 2, "Table"), ("table", rows), ("p", "End.")])
    context = ctx(budget=40)
    page = chunk_docx(data, context)
    assert len(page.chunks) > 6
    assert all(words(c.embed_text) <= 40 for c in page.chunks)
    assert_agrees(data, page, context)
    table_chunks = [c for c in page.chunks if c.heading_path == ["Big", "Table"]]
    assert len(table_chunks) > 1
    # Every row of the table is in some chunk of its section, whole.
    for i in range(30):
        assert any(f"k{i} | value {i} of the table" in c.text for c in table_chunks)


def test_the_view_stops_at_max_extracted_chars_and_says_so() -> None:
    data = docx_bytes(DESIGN)
    limit = DESIGN_VIEW.index("After the table.") + 5
    extracted = extract_docx(data, ctx(max_extracted_chars=limit))
    text = extracted.parts[0].text
    assert text is not None and len(text) <= limit + 1  # + the final newline
    # Cut at the last space before the limit: no half word.
    assert text == DESIGN_VIEW[: DESIGN_VIEW.index(" the table.")] + "\n"
    assert extracted.cut is not None and "max_extracted_chars" in extracted.cut
    page = chunk_docx(data, ctx(max_extracted_chars=limit))
    assert page.cut == extracted.cut
    assert page.chunks[-1].text.endswith("latency | Bo Chan\n\nAfter")
    assert_agrees(data, page, ctx(max_extracted_chars=limit))
    assert extract_docx(data, ctx()).cut is None and chunk_docx(data, ctx()).cut is None


def test_the_reader_is_registered_for_docx_files() -> None:
    data = docx_bytes(DESIGN, title="Handbook")
    page = chunk_file("guides/design.docx", data, words, 200, FormatLimits())
    assert isinstance(page, TextPage)
    assert page.chunks[0].heading_path == ["Handbook", "Storage Design"]
    reader = reader_for("guides/design.docx")
    assert reader is not None and reader.extract(data, ctx()).parts[0].text == DESIGN_VIEW


# -- hostile files ---------------------------------------------------------------------------------------
def refusal(data: bytes, **limits: int) -> UnparseableFile:
    return refused(FunctionReader(chunk_docx, extract_docx), data, ctx(**limits))


def test_a_truncated_docx_is_unparseable_with_its_reason() -> None:
    data = docx_bytes(DESIGN)
    error = refusal(data[: len(data) * 2 // 3])
    assert not isinstance(error, OverBudget)
    assert error.reason.startswith("not a valid .docx file (not a readable zip container")


def test_a_pdf_named_docx_is_unparseable() -> None:
    error = refusal(pdf_bytes(["Not a Word file."]))
    assert error.reason.startswith("not a valid .docx file (not a readable zip container")


def test_a_broken_document_part_is_unparseable() -> None:
    data = with_member(docx_bytes(DESIGN), "word/document.xml", b"<w:document><w:body><w:p>")
    assert refusal(data).reason.startswith("broken .docx file: XMLSyntaxError")


def test_an_entity_expansion_bomb_is_refused_not_expanded() -> None:
    # A billion laughs in document.xml: 10^9 "lol"s if expanded. The XML parser python-docx uses refuses
    # the amplification; the file is skipped as broken.
    entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))

    def laugh(xml: bytes) -> bytes:
        head, _, rest = xml.partition(b"?>")
        doctype = f"<!DOCTYPE w:document [{entities}]>".encode()
        return head + b"?>" + doctype + rest.replace(b"<w:t>KEEP</w:t>", b"<w:t>&l9;</w:t>")

    data = with_member(docx_bytes([("p", "KEEP")]), "word/document.xml", laugh)
    error = refusal(data)
    assert error.reason.startswith("broken .docx file: XMLSyntaxError") and "amplification" in error.reason


def test_a_slide_deck_named_docx_is_unparseable() -> None:
    error = refusal(pptx_bytes([]))
    assert error.reason.startswith("broken .docx file: ValueError: it is not a Word file, content type is")


def test_a_zip_bomb_is_over_budget_before_python_docx_reads_it() -> None:
    # 60 MiB of zeros declared in word/document.xml (~60 KiB on disk): over the default 50 MiB budget.
    # The member is not XML at all, so had python-docx opened the package it would have failed with a
    # parse error, not OverBudget: the check happens first, on the declared sizes, before inflating.
    bomb = zip_bomb("word/document.xml", 60 * 1024 * 1024)
    assert len(bomb) < 200_000
    error = refusal(bomb)
    assert isinstance(error, OverBudget)
    assert error.reason == (
        ".docx file decompresses to 62914560 bytes, more than max_decompressed_size (52428800);"
        " raise [indexing] max_decompressed_size to index it"
    )


def test_a_real_document_over_a_lowered_budget_is_over_budget() -> None:
    data = docx_bytes(DESIGN)
    assert isinstance(refusal(data, max_decompressed_size=10_000), OverBudget)
    assert chunk_docx(data, ctx(max_decompressed_size=10_000_000)).chunks
