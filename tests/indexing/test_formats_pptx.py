"""The slide reader: one part per slide in reading order, notes marked, slide:N breadcrumbs, chunks that
never cross a slide, and the files it refuses (decks written by python-pptx)."""

from __future__ import annotations

import re
from itertools import pairwise

from hallouminate.indexing.documents import ChunkContext, FormatLimits, FunctionReader
from hallouminate.indexing.indexer import chunk_file
from hallouminate.indexing.pptx_reader import chunk_pptx, extract_pptx
from hallouminate.indexing.readers import reader_for
from hallouminate.indexing.text_chunker import TextPage, UnparseableFile
from hallouminate.indexing.zipguard import OverBudget
from support.files import pdf_bytes
from support.office_files import Box, Slide, docx_bytes, pptx_bytes, refused, with_member, zip_bomb


def words(text: str) -> int:
    return len(text.split())


def ctx(budget: int = 200, name: str = "deck.pptx", **limits: int) -> ChunkContext:
    return ChunkContext(name, name, words, budget, FormatLimits(**limits))


DECK = [
    Slide(
        "Quarterly Roadmap",
        # Placed out of order on purpose: reading order is top, then left.
        boxes=[Box(5, 3, "right column"), Box(1, 3, "left column\nsecond line"), Box(1, 6, "footer text")],
        table=(1, 4.5, [["Team", "Goal"], ["storage", "fewer pages"], ["search", "<merge"]]),
        notes="Mention the budget freeze.\nThen take questions.",
    ),
    Slide(None, boxes=[Box(1, 1, "An untitled slide.")]),
    Slide(
        "分散ストレージ", group=[Box(4, 2, "grouped right"), Box(1, 2, "grouped left")], notes="日本語のメモ"
    ),
]

SLIDE_1 = """Quarterly Roadmap

left column
second line

right column

Team | Goal
storage | fewer pages
search

footer text

Notes:
Mention the budget freeze.
Then take questions."""


def parts(data: bytes, **limits: int) -> list[tuple[str, str, str | None]]:
    return [(p.label, p.title, p.text) for p in extract_pptx(data, ctx(**limits)).parts]


def lines_of(text: str, start: int, end: int) -> str:
    return "\n".join(text.split("\n")[start - 1 : end])


def test_one_part_per_slide_in_reading_order_with_notes_marked() -> None:
    assert parts(pptx_bytes(DECK)) == [
        ("slide:1", "Slide 1: Quarterly Roadmap", SLIDE_1),
        ("slide:2", "Slide 2", "An untitled slide."),
        (
            "slide:3",
            "Slide 3: 分散ストレージ",
            "分散ストレージ\n\ngrouped left\n\ngrouped right\n\nNotes:\n日本語のメモ",
        ),
    ]


def test_chunks_carry_the_slide_number_and_breadcrumb_and_notes_are_their_own_chunks() -> None:
    page = chunk_pptx(pptx_bytes(DECK, title="Q3 Review"), ctx())
    assert page.title == "Q3 Review"
    assert page.summary == "Q3 Review - Quarterly Roadmap"
    assert [(c.page, c.heading_path, c.line_start, c.line_end) for c in page.chunks] == [
        (1, ["Q3 Review", "slide:1", "Quarterly Roadmap"], 1, 12),
        (1, ["Q3 Review", "slide:1", "Quarterly Roadmap", "notes"], 14, 16),
        (2, ["Q3 Review", "slide:2"], 1, 1),
        (3, ["Q3 Review", "slide:3", "分散ストレージ"], 1, 5),
        (3, ["Q3 Review", "slide:3", "分散ストレージ", "notes"], 7, 8),
    ]
    notes = page.chunks[1]
    assert notes.text == "Notes:\nMention the budget freeze.\nThen take questions."
    assert notes.embed_text.startswith("Q3 Review > slide:1 > Quarterly Roadmap > notes\n\nNotes:\n")


def test_without_a_core_title_the_file_name_is_the_root() -> None:
    page = chunk_pptx(pptx_bytes(DECK[1:2]), ctx(name="talk.pptx"))
    assert page.title == "talk.pptx"
    assert [c.heading_path for c in page.chunks] == [["talk.pptx", "slide:1"]]


def test_small_budgets_split_within_a_slide_never_across_and_chunks_are_their_lines() -> None:
    def prose(n: int) -> str:
        return "\n".join(" ".join(f"s{n}w{k * 8 + i}" for i in range(8)) + "." for k in range(12))

    data = pptx_bytes(
        [
            Slide(f"Part {n}", boxes=[Box(1, 2, prose(n))], notes=f"speaker s{n}n1 s{n}n2 s{n}n3")
            for n in (1, 2, 3)
        ]
    )
    context = ctx(budget=30)
    page = chunk_pptx(data, context)
    texts = {i: p.text for i, p in enumerate(extract_pptx(data, context).parts, start=1)}
    assert sorted({c.page for c in page.chunks}) == [1, 2, 3]
    assert len(page.chunks) > 9
    for chunk in page.chunks:
        assert chunk.page is not None
        assert words(chunk.embed_text) <= 30
        block = lines_of(texts[chunk.page] or "", chunk.line_start, chunk.line_end)
        assert chunk.text in block, (chunk, block)
        # Never text of two slides in one chunk (the title words "Part N" aside).
        marks = {w.split("w")[0].split("n")[0] for w in chunk.text.split() if w[0] == "s" and w[1].isdigit()}
        assert marks <= {f"s{chunk.page}"}, chunk
    # The overlap repeats words of the previous chunk of the same slide: a phrase across a cut is whole.
    one = [c for c in page.chunks if c.page == 1 and "notes" not in c.heading_path]
    assert len(one) > 2
    assert all(set(a.text.split()) & set(b.text.split()) for a, b in pairwise(one))


def test_a_shape_python_pptx_cannot_type_is_still_read() -> None:
    # A rectangle stripped of its geometry is no autoshape, freeform or text box to python-pptx, whose
    # shape_type then raises: the reader must not depend on it (the deck was unparseable when it did).
    def strip_geometry(xml: bytes) -> bytes:
        stripped, count = re.subn(rb"<a:prstGeom [^>]*>.*?</a:prstGeom>", b"", xml, flags=re.DOTALL)
        assert count == 1
        return stripped

    deck = pptx_bytes([Slide("Odd", rectangles=[Box(1, 2, "text in a shape of no known type")])])
    data = with_member(deck, "ppt/slides/slide1.xml", strip_geometry)
    assert parts(data) == [("slide:1", "Slide 1: Odd", "Odd\n\ntext in a shape of no known type")]


def test_slides_stop_at_max_extracted_chars_and_say_so() -> None:
    data = pptx_bytes(DECK)
    limit = len(SLIDE_1) + 10
    extracted = extract_pptx(data, ctx(max_extracted_chars=limit))
    assert [(p.label, p.text) for p in extracted.parts] == [("slide:1", SLIDE_1), ("slide:2", "An")]
    assert extracted.cut is not None and "max_extracted_chars" in extracted.cut and "slide 2" in extracted.cut
    page = chunk_pptx(data, ctx(max_extracted_chars=limit))
    assert page.cut == extracted.cut
    assert [c.page for c in page.chunks] == [1, 1, 2] and page.chunks[-1].text == "An"
    assert extract_pptx(data, ctx()).cut is None


def test_the_reader_is_registered_for_pptx_files() -> None:
    data = pptx_bytes(DECK)
    page = chunk_file("talks/q3.pptx", data, words, 200, FormatLimits())
    assert isinstance(page, TextPage)
    assert page.chunks[0].heading_path == ["q3.pptx", "slide:1", "Quarterly Roadmap"]
    reader = reader_for("talks/q3.pptx")
    assert reader is not None and reader.extract(data, ctx()).parts[0].text == SLIDE_1


# -- hostile files ---------------------------------------------------------------------------------------
def refusal(data: bytes, **limits: int) -> UnparseableFile:
    return refused(FunctionReader(chunk_pptx, extract_pptx), data, ctx(**limits))


def test_a_truncated_pptx_is_unparseable() -> None:
    data = pptx_bytes(DECK)
    error = refusal(data[: len(data) // 2])
    assert not isinstance(error, OverBudget)
    assert error.reason.startswith("not a valid .pptx file (not a readable zip container")


def test_a_pdf_named_pptx_is_unparseable() -> None:
    assert refusal(pdf_bytes(["Not slides."])).reason.startswith("not a valid .pptx file")


def test_a_slide_with_broken_xml_is_unparseable_with_its_reason() -> None:
    data = with_member(pptx_bytes(DECK), "ppt/slides/slide2.xml", b"<p:sld><p:cSld><p:spTree>")
    assert refusal(data).reason.startswith("broken .pptx file: XMLSyntaxError")


def test_a_word_document_named_pptx_is_unparseable() -> None:
    error = refusal(docx_bytes([("p", "Words.")]))
    assert error.reason.startswith("broken .pptx file: ValueError: it is not a PowerPoint file")


def test_a_zip_bomb_is_over_budget_before_python_pptx_reads_it() -> None:
    # A slide part declared at 2 MiB of zeros against a 1 MiB budget: zeros are no XML, so only the
    # budget check, which runs on the declared sizes before anything is inflated, can give OverBudget.
    bomb = with_member(pptx_bytes(DECK), "ppt/slides/slide1.xml", b"\0" * (2 << 20))
    error = refusal(bomb, max_decompressed_size=1 << 20)
    assert isinstance(error, OverBudget)
    assert (
        error.reason.startswith(".pptx file decompresses to ")
        and "max_decompressed_size (1048576)" in error.reason
    )
    assert isinstance(refusal(zip_bomb("ppt/presentation.xml", 60 << 20)), OverBudget)
