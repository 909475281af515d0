"""The extracted-text view of a document format with a reader: what read_markdown and get_document show.

Through the real readers (a PDF made by fpdf2); the generic rendering of parts is checked on
``Extracted`` values built here, since it is a pure function of them.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from hallouminate.browse import read_markdown
from hallouminate.browse.document import read_document
from hallouminate.browse.read import extracted_text
from hallouminate.config import CorpusSpec
from hallouminate.errors import BadEncoding
from hallouminate.indexing.documents import Extracted, Part
from hallouminate.indexing.pdf_text import page_texts
from support.files import pdf_bytes
from support.office_files import docx_bytes

PAGE_ONE = "The lighthouse keeper logs every ship.\nThe second line of page one."
PAGE_TWO = "Fog signals sound twice a minute."


def spec(root: Path) -> CorpusSpec:
    globs = ("**/*.md", "**/*.pdf", "**/*.docx", "**/*.pptx", "**/*.xlsx")
    return CorpusSpec("library", "custom", (root,), globs, (), None)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    root.mkdir()
    (root / "keeper.pdf").write_bytes(pdf_bytes([PAGE_ONE, "", PAGE_TWO], title="The Keeper"))
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is no PDF at all\n")
    # Not a zip at all: whichever reader serves .docx (or none, in a build without one) cannot read it.
    (root / "broken.docx").write_bytes(b"PK\x03\x04 but nothing of a Word document after it")
    return root


def test_a_pdf_reads_as_one_page_section_each_as_it_always_did(root: Path) -> None:
    texts = page_texts((root / "keeper.pdf").read_bytes())
    assert texts[0] is not None and texts[2] is not None and not (texts[1] or "").strip()
    result = read_markdown(spec(root), "keeper.pdf")
    # The wording of the read view of a PDF before the view was made generic, byte for byte.
    assert result["content"] == (
        f"## Page 1\n\n{texts[0].rstrip(chr(10))}\n"
        "\n## Page 2\n\n_(no text could be extracted from this page)_\n"
        f"\n## Page 3\n\n{texts[2].rstrip(chr(10))}\n"
    )
    assert (result["format"], result["pages"]) == ("pdf", 3)
    assert "cut" not in result
    numbered = read_markdown(spec(root), "keeper.pdf", line_numbers=True)["content"]
    assert numbered.startswith("## Page 1\n\n1: The lighthouse keeper logs every ship.\n2: ")
    assert "\n## Page 3\n\n1: Fog signals sound twice a minute.\n" in numbered


def test_get_document_serves_the_same_view_and_the_title_the_pdf_states(root: Path) -> None:
    document = read_document(spec(root), "keeper.pdf", None)
    assert document["content"] == read_markdown(spec(root), "keeper.pdf")["content"]
    assert (document["title"], document["format"], document["truncated"]) == ("The Keeper", "pdf", False)


def test_a_broken_pdf_keeps_its_problem_word(root: Path) -> None:
    for read in (
        lambda: read_markdown(spec(root), "broken.pdf"),
        lambda: read_document(spec(root), "broken.pdf", None),
    ):
        with pytest.raises(BadEncoding) as err:
            read()
        assert err.value.data["problem"] == "unreadable-pdf"
        assert "'broken.pdf' is a PDF whose text cannot be extracted" in err.value.message


def test_another_unreadable_document_names_the_path_and_the_reason(root: Path) -> None:
    for read in (
        lambda: read_markdown(spec(root), "broken.docx"),
        lambda: read_document(spec(root), "broken.docx", None),
    ):
        with pytest.raises(BadEncoding) as err:
            read()
        assert err.value.kind == "invalid_params"  # -32602
        assert err.value.data["problem"] == "unreadable-document"
        assert err.value.data["path"] == "broken.docx" and err.value.data["reason"]
        assert err.value.message.startswith(
            "'broken.docx' is a docx document whose text cannot be extracted: "
        )
        assert err.value.data["reason"] in err.value.message


def test_one_unlabelled_part_is_shown_as_is_without_pages() -> None:
    one = Extracted([Part("", "", "# Design\n\nThe body.\n")], title="Design")
    assert extracted_text(one) == ("# Design\n\nThe body.\n", None)
    assert extracted_text(one, line_numbers=True) == ("1: # Design\n2: \n3: The body.\n", None)


def test_labelled_parts_are_sections_numbered_from_one_each() -> None:
    deck = Extracted(
        [
            Part("slide:1", "Slide 1: Roadmap", "Q1 ships\nQ2 scales"),
            Part("slide:2", "Slide 2: Empty", None),
            Part("sheet:Budget", "", "a | b\n"),
        ]
    )
    content, pages = extracted_text(deck, line_numbers=True)
    assert pages == 3
    assert content == (
        "## Slide 1: Roadmap\n\n1: Q1 ships\n2: Q2 scales\n"
        "\n## Slide 2: Empty\n\n_(no text could be extracted from this slide)_\n"
        "\n## sheet:Budget\n\n1: a | b\n"
    )


def test_a_binary_document_over_the_read_limit_on_disk_is_read_when_its_text_fits(root: Path) -> None:
    data = docx_bytes([("h", 1, "Photos"), ("p", "The harbour at dawn, with the keeper's boat.")])
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a") as archive:  # a picture's worth of bytes no reader looks at
        archive.writestr("word/media/image1.bin", os.urandom(4 * 1024 * 1024), zipfile.ZIP_STORED)
    (root / "photos.docx").write_bytes(out.getvalue())
    assert (root / "photos.docx").stat().st_size > 4 * 1024 * 1024
    result = read_markdown(spec(root), "photos.docx", max_bytes=3 * 1024 * 1024)
    assert result["content"] == "# Photos\n\nThe harbour at dawn, with the keeper's boat.\n"
    assert result["bytes"] == (root / "photos.docx").stat().st_size
