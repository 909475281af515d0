"""The PDF chunker: page-by-page text, page:N breadcrumbs, overlap within a page (PDFs made with fpdf2)."""

from __future__ import annotations

import io

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from hallouminate.indexing.pdf_text import chunk_pdf
from hallouminate.indexing.text_chunker import UnparseableFile
from support.files import pdf_bytes


def words(text: str) -> int:
    return len(text.split())


def flat(text: str) -> str:
    return " ".join(text.split())


def page_prose(n: int) -> str:
    # Distinct words per page (p2w17...), sentences of 9 words, two paragraphs.
    sentences = [" ".join(f"p{n}w{k * 9 + i}" for i in range(9)) + "." for k in range(16)]
    return " ".join(sentences[:8]) + "\n\n" + " ".join(sentences[8:])


PAGES = [page_prose(n) for n in (1, 2, 3)]


@pytest.fixture(scope="module")
def report() -> bytes:
    return pdf_bytes(PAGES, title="Field Guide")


def test_every_chunk_carries_its_page(report: bytes) -> None:
    page = chunk_pdf(report, words, 64, title="guide.pdf")
    assert page.title == "Field Guide"
    assert page.summary.startswith("Field Guide - p1w0 p1w1")
    numbers = sorted({c.page for c in page.chunks if c.page is not None})
    assert numbers == [1, 2, 3]
    for chunk in page.chunks:
        assert chunk.heading_path == ["Field Guide", f"page:{chunk.page}"]
        assert chunk.embed_text.startswith(f"Field Guide > page:{chunk.page}\n\n")
        assert words(chunk.embed_text) <= 64
        # Never text of two pages in one chunk.
        assert {w.split("w")[0] for w in chunk.text.split()} == {f"p{chunk.page}"}
    per_page = [[c for c in page.chunks if c.page == n] for n in (1, 2, 3)]
    assert all(len(chunks) > 2 for chunks in per_page)


def test_a_phrase_across_every_split_within_a_page_is_whole_in_some_chunk(report: bytes) -> None:
    page = chunk_pdf(report, words, 64, title="guide.pdf")
    reader = PdfReader(io.BytesIO(report))
    for number in (1, 2, 3):
        chunks = [c for c in page.chunks if c.page == number]
        source_words = reader.pages[number - 1].extract_text().split()
        index = {w: i for i, w in enumerate(source_words)}
        bodies = [f" {flat(c.text)} " for c in chunks]
        for chunk in chunks[:-1]:
            split = index[chunk.text.split()[-1]] + 1
            for n in range(5, 9):
                for before in range(1, n):
                    phrase = " ".join(source_words[split - before : split - before + n])
                    assert any(f" {phrase} " in b for b in bodies), (number, phrase)


def test_line_numbers_are_lines_of_the_extracted_page_text(report: bytes) -> None:
    page = chunk_pdf(report, words, 64, title="guide.pdf")
    reader = PdfReader(io.BytesIO(report))
    for chunk in page.chunks:
        assert chunk.page is not None
        lines = reader.pages[chunk.page - 1].extract_text().replace("\r\n", "\n").split("\n")
        block = "\n".join(lines[chunk.line_start - 1 : chunk.line_end])
        at = block.find(chunk.text)
        assert 0 <= at <= len(lines[chunk.line_start - 1])
        assert at + len(chunk.text) >= len(block) - len(lines[chunk.line_end - 1])


def test_without_a_title_the_file_name_is_the_root_of_the_breadcrumb() -> None:
    data = pdf_bytes(["Café naïve résumé, Grüße aus Köln.", "Second page."])
    page = chunk_pdf(data, words, 100, title="scan.pdf")
    assert page.title == "scan.pdf"
    assert [(c.heading_path, c.page, c.line_start, c.text) for c in page.chunks] == [
        (["scan.pdf", "page:1"], 1, 1, "Café naïve résumé, Grüße aus Köln."),
        (["scan.pdf", "page:2"], 2, 1, "Second page."),
    ]
    assert page.summary == "scan.pdf - Café naïve résumé, Grüße aus Köln."


def test_a_page_without_text_yields_no_chunk() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 5, "Only the second page has words.")
    page = chunk_pdf(bytes(pdf.output()), words, 100, title="x.pdf")
    assert [(c.page, c.heading_path) for c in page.chunks] == [(2, ["x.pdf", "page:2"])]


@pytest.mark.parametrize("data", [b"", b"not a pdf at all", b"%PDF-1.7\n1 0 obj\n<<"])
def test_broken_pdfs_are_unparseable(data: bytes) -> None:
    with pytest.raises(UnparseableFile) as caught:
        chunk_pdf(data, words, 100, title="bad.pdf")
    assert caught.value.reason.startswith("broken PDF")


def test_a_truncated_pdf_is_unparseable(report: bytes) -> None:
    with pytest.raises(UnparseableFile):
        chunk_pdf(report[: len(report) // 3], words, 100, title="cut.pdf")


def _encrypt(data: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_password_protected_pdf_is_unparseable_with_its_reason(report: bytes) -> None:
    with pytest.raises(UnparseableFile, match="encrypted PDF: a password is needed"):
        chunk_pdf(_encrypt(report, "secret"), words, 100, title="locked.pdf")


def test_a_pdf_with_an_empty_user_password_opens_like_any_viewer_would(report: bytes) -> None:
    page = chunk_pdf(_encrypt(report, ""), words, 100, title="restricted.pdf")
    assert page.chunks and page.chunks[0].text.startswith("p1w0 p1w1")
