"""``match``, ``group_by`` and ``output``: what kind of ``ground`` a request asks for (domain; pure).

Checked here once for both modes; the ranked path only needs two hooks around its own assembly
(``candidates_per_file`` before, ``finish`` after), and ``match: "phrase"`` hands the whole request to
``search/phrase.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hallouminate.errors import InvalidArgument
from hallouminate.ports import ChunkRow
from hallouminate.protocol.results import GroundResult
from hallouminate.search.footnotes import FOOTNOTES, view_rows
from hallouminate.search.grouping import group_doc_chunks

MATCHES = ("ranked", "phrase")
GROUPINGS = ("page",)
OUTPUTS = ("counts",)
# Grouped ranked results keep every candidate of a file until the pages are formed: no file can hold more
# candidates than both signals return together.
_ALL_CANDIDATES_PER_SIGNAL = 2


@dataclass(frozen=True)
class Mode:
    match: str = "ranked"
    group_by: str | None = None
    output: str | None = None
    footnotes: str = "include"

    @property
    def phrase(self) -> bool:
        return self.match == "phrase"

    @property
    def counts(self) -> bool:
        return self.output == "counts"

    @classmethod
    def take(cls, params: dict[str, Any]) -> Mode:
        """Pop the mode parameters from ``ground``'s keyword arguments and check them together."""
        match = params.pop("match", None)
        group_by = params.pop("group_by", None)
        output = params.pop("output", None)
        footnotes = params.pop("footnotes", None) or "include"
        _one_of("footnotes", footnotes, FOOTNOTES)
        match = "ranked" if match is None else match
        _one_of("match", match, MATCHES)
        if group_by is not None:
            _one_of("group_by", group_by, GROUPINGS)
        if output is not None:
            _one_of("output", output, OUTPUTS)
        if output == "counts" and match != "phrase":
            raise InvalidArgument(
                'output "counts" needs match "phrase": counts are occurrence counts of a literal phrase; '
                'pass match: "phrase", or drop output to get ranked results',
                {"param": "output", "match": match},
            )
        return cls(match, group_by, output, footnotes)

    def view(self, rows: list[ChunkRow]) -> list[ChunkRow]:
        """Candidate rows as ``footnotes`` asks to read them (see search/footnotes.py)."""
        return view_rows(rows, self.footnotes)

    def candidates_per_file(self, chunks_per_file: int, limit: int) -> int:
        """The chunks a ranked assembly keeps per file: every candidate when they are to be grouped by page
        afterwards, so that each reaches the grouping."""
        return _ALL_CANDIDATES_PER_SIGNAL * limit if self.group_by == "page" else chunks_per_file

    def finish(self, result: GroundResult, chunks_per_file: int) -> GroundResult:
        """After a ranked assembly: every chunk names its corpus; pages grouped when asked."""
        for doc in result["docs"]:
            if "chunks" not in doc:  # a counts doc: phrase mode only
                continue
            if self.group_by == "page":
                group_doc_chunks(doc, chunks_per_file)
            for chunk in doc["chunks"]:
                chunk["corpus"] = doc["corpus"]
        return result


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidArgument(
            f"{name} must be one of {', '.join(repr(a) for a in allowed)}, got {value!r}",
            {"param": name, "allowed": list(allowed)},
        )
