"""``footnotes``: whether a chunk's footnote definitions count as its text (domain; pure).

The Markdown chunker appends each footnote definition to the chunk that cites it (after a blank line), so
a note is found with the sentence it supports. ``include`` (the default) keeps that; ``exclude`` reads
only the body (a chunk of nothing but definitions drops out); ``only`` reads only the definitions (a
chunk without any drops out). The view decides what is matched (BM25's word gate, phrase counts) and
what the snippet shows; vector scores are the whole chunk's, as embedded.
"""

from __future__ import annotations

import re

from hallouminate.ports import ChunkRow

FOOTNOTES = ("include", "exclude", "only")
_DEFINITION = re.compile(r"\[\^[^\]\s]+\]:")
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")


def split_notes(text: str) -> tuple[str, str]:
    """(body, definitions) of a chunk's text: paragraphs starting ``[^label]:`` are definitions, and so
    are the indented paragraphs continuing one."""
    body: list[str] = []
    notes: list[str] = []
    in_note = False
    for paragraph in _PARAGRAPHS.split(text):
        stripped = paragraph.lstrip("\n")
        if _DEFINITION.match(stripped):
            in_note = True
        elif not (in_note and stripped.startswith(("    ", "\t"))):
            in_note = False
        (notes if in_note else body).append(paragraph)
    return "\n\n".join(body), "\n\n".join(notes)


def view(text: str, footnotes: str) -> str:
    if footnotes == "include":
        return text
    body, notes = split_notes(text)
    return body if footnotes == "exclude" else notes


def view_rows(rows: list[ChunkRow], footnotes: str) -> list[ChunkRow]:
    """The rows as seen through ``footnotes``: text replaced by the view, rows with an empty view gone."""
    if footnotes == "include":
        return rows
    seen: list[ChunkRow] = []
    for row in rows:
        text = view(row.get("text") or "", footnotes)
        if text.strip():
            seen.append({**row, "text": text})
    return seen
