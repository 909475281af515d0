"""ground's post-retrieval stages, in GrooveSeek's order around the per-file roll-up: ``mmr`` reorders the
fused candidates before it (search/mmr.py); after the ``top_files`` cut, ``parent`` grows the chunks shown
(search/parent.py) and ``match_spans`` marks the query's words in them (search/spans.py). Each is off
unless asked for, but spans: they are computed whenever the query has searchable words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hallouminate.errors import InvalidArgument
from hallouminate.protocol.results import GroundResult, MmrInfo
from hallouminate.search import mmr
from hallouminate.search.fusion import pool_size
from hallouminate.search.parent import TokenCounter, estimate_tokens, expand_chunks
from hallouminate.search.spans import SpanFinder

if TYPE_CHECKING:
    from hallouminate.ports import ChunkRow, ReaderPort, Vector
    from hallouminate.protocol.results import GroundChunk


@dataclass
class Stages:
    """One request's stage parameters, checked; and what assembly hands over to the stages after it."""

    mmr: mmr.MmrParams | None = None
    parent: bool = False
    count_tokens: TokenCounter = estimate_tokens
    # Set before assembly when mmr is on: the candidates' unit vectors, and each chunk id's row there.
    vectors: Vector | None = None
    vector_row: dict[str, int] = field(default_factory=dict)
    mmr_applied: MmrInfo | None = None
    # Set by assembly: every chunk row formatted into the result, by the chunk it became.
    shown: dict[tuple[str, int | None, int, int], ChunkRow] = field(default_factory=dict)

    @classmethod
    def take(cls, params: dict[str, Any], *, phrase: bool) -> Stages:
        """Pop the stage parameters (and the daemon's ``count_tokens``) from ``ground``'s arguments."""
        diversify = mmr.take(params)
        parent = params.pop("parent", None)
        if parent is not None and not isinstance(parent, bool):
            raise InvalidArgument(f"parent must be true or false, got {parent!r}", {"param": "parent"})
        count = params.pop("count_tokens", None) or estimate_tokens
        if phrase and (diversify or parent):
            name = "mmr" if diversify else "parent"
            raise InvalidArgument(
                f'{name} needs match "ranked": phrase mode lists every chunk holding the phrase by its '
                f"occurrences; drop {name}, or drop match",
                {"param": name},
            )
        return cls(diversify, bool(parent), count)

    async def fetch_vectors(self, reader: ReaderPort, rows: list[ChunkRow], corpora: list[str]) -> None:
        """The candidates' vectors, read before the (synchronous) assembly when mmr is on."""
        if self.mmr is None:
            return
        self.vector_row = {row_id: i for i, row_id in enumerate(dict.fromkeys(row["id"] for row in rows))}
        self.vectors = await reader.chunk_vectors(list(self.vector_row), corpora)

    def diversify(self, fused: dict[str, float], rows: dict[str, ChunkRow], top_files: int) -> dict[str, int]:
        """mmr's pick order of the pool (the ``pool_size`` best fused chunks) as chunk id -> position."""
        if self.mmr is None:
            return {}
        pool = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))[: pool_size(top_files)]
        assert self.vectors is not None  # fetched before assembly: every candidate has its row
        vectors = self.vectors[[self.vector_row[chunk_id] for chunk_id in pool]]
        docs = [(rows[chunk_id]["corpus"], rows[chunk_id]["path"]) for chunk_id in pool]
        picked = mmr.order([fused[chunk_id] for chunk_id in pool], docs, vectors, self.mmr)
        self.mmr_applied = {
            "lambda": self.mmr.lam,
            "same_doc_penalty": self.mmr.same_doc_penalty,
            "pool": len(pool),
        }
        return {pool[index]: position for position, index in enumerate(picked)}

    def remember(self, row: ChunkRow, chunk: GroundChunk) -> None:
        self.shown[_place(row["abs_path"], chunk)] = row

    async def finish(self, reader: ReaderPort, result: GroundResult, terms: list[str]) -> GroundResult:
        """After assembly and the mode's finish: parent, then spans, on the chunks the result shows."""
        if self.mmr_applied is not None:
            result["mmr"] = self.mmr_applied
        chunks: list[tuple[str, ChunkRow, GroundChunk]] = []
        for doc in result["docs"]:
            if "chunks" not in doc:  # output "counts": phrase mode only
                continue
            for chunk in doc["chunks"]:
                row = self.shown.get(_place(doc["absolute_path"], chunk))
                if row is not None:
                    chunks.append((row["corpus"], row, chunk))
        if self.parent:
            result["parent"] = await expand_chunks(reader, chunks, self.count_tokens)
        finder = SpanFinder(terms)
        for _key, row, chunk in chunks:
            spans = finder.spans(chunk.get("text", row["text"] or ""))
            if spans is not None:
                chunk["match_spans"] = spans
        return result


def _place(abs_path: str, chunk: GroundChunk) -> tuple[str, int | None, int, int]:
    """A shown chunk by its file, page and lines: the same for a chunk and the copy a page grouping makes."""
    return abs_path, chunk.get("page"), chunk["line_start"], chunk["line_end"]
