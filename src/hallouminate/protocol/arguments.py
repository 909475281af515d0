"""The arguments of each operation, as the daemon reads them once ``ARGS[op]`` has checked them.

A request's ``args`` arrive as a plain map; the dispatcher validates them against the operation's schema
(protocol/schemas.py ``ARGS``) and only then hands them on typed as one of these. They say what the
schemas say, key for key (tests/protocol/test_result_types.py); the bounds (lengths, ranges) stay the
schemas' and the limits table's. No ``from __future__ import annotations``: see results.py.
"""

from typing import Literal, NotRequired, TypedDict, final


@final
class NoArgs(TypedDict):
    """``ping``, ``status``, ``shutdown``, ``http_reload``, ``list_corpora``."""


@final
class CorpusArgs(TypedDict):
    """``index``, ``list_files``, ``list_tree``, ``corpus_stats``: an optional corpus name."""

    corpus: NotRequired[str]


@final
class IndexArgs(TypedDict):
    """``index``: the corpus (all of cwd's when absent); ``force`` rebuilds (every file re-read and
    re-embedded); ``wait`` waits for another client's index of the corpus instead of being refused."""

    corpus: NotRequired[str]
    force: NotRequired[bool]
    # Drop the whole store and embed every corpus again (after a change of model: the store never mixes
    # vectors); the embedder is probed first.
    rebuild: NotRequired[bool]
    wait: NotRequired[bool]


@final
class BestPracticeArgs(TypedDict):
    """``get_best_practice``: the page of ``target`` named by ``[best_practice] path_templates``."""

    target: str
    corpus: NotRequired[str]
    category: NotRequired[str]


@final
class ListFilesArgs(TypedDict):
    """``list_files``: an optional corpus name; only files modified since (protocol/recency.py)."""

    corpus: NotRequired[str]
    changed_since: NotRequired[str]


@final
class GroundArgs(TypedDict):
    query: str
    corpus: NotRequired[str]
    top_files: NotRequired[int]
    chunks_per_file: NotRequired[int]
    limit: NotRequired[int]
    snippet_chars: NotRequired[int]
    match: NotRequired[Literal["ranked", "phrase"]]
    group_by: NotRequired[Literal["page"]]
    output: NotRequired[Literal["counts"]]
    footnotes: NotRequired[Literal["include", "exclude", "only"]]
    # The eligibility filters (search/filters.py; docs/tools/ground.md).
    category: NotRequired[str]
    topic: NotRequired[str]
    path_globs: NotRequired[list[str]]
    tags_any: NotRequired[list[str]]
    tags_all: NotRequired[list[str]]
    date_from: NotRequired[str]
    date_to: NotRequired[str]
    fields: NotRequired[dict[str, list[str]]]
    fields_not: NotRequired[dict[str, list[str]]]
    min_quality: NotRequired[float]
    include_low_quality: NotRequired[bool]
    changed_since: NotRequired[str]
    rerank: NotRequired[bool]
    mmr: NotRequired[bool]
    mmr_lambda: NotRequired[float]
    mmr_same_doc_penalty: NotRequired[float]
    parent: NotRequired[bool]
    min_confidence_ratio: NotRequired[float]


@final
class ReadMarkdownArgs(TypedDict):
    corpus: NotRequired[str]
    path: str
    line_numbers: NotRequired[bool]


@final
class BacklinksArgs(TypedDict):
    corpus: NotRequired[str]
    path: str


@final
class ConnectionGraphArgs(TypedDict):
    """``get_connection_graph``: out-of-range numbers are clamped by the engine (search/graph.py)."""

    corpus: NotRequired[str]
    start: str
    depth: NotRequired[int]
    fan_out: NotRequired[int]
    min_similarity: NotRequired[float]
    seed_strategy: NotRequired[Literal["all_chunks", "all-chunks", "centroid"]]
    dedup_by_path: NotRequired[bool]
    category: NotRequired[str]
    topic: NotRequired[str]
    exclude_paths: NotRequired[list[str]]
    max_nodes: NotRequired[int]
    max_seed_chunks: NotRequired[int]
    links: NotRequired[bool]


class LineRange(TypedDict):
    start: int
    end: int


@final
class AddMarkdownArgs(TypedDict):
    corpus: str
    path: str
    content: str
    overwrite: NotRequired[bool]
    # At most one section edit: under_heading (with position), replace_lines or replace_match.
    under_heading: NotRequired[str]
    position: NotRequired[Literal["append", "prepend"]]
    replace_lines: NotRequired[LineRange]
    replace_match: NotRequired[str]


# "from" is a Python keyword, hence the functional form.
MoveMarkdownArgs = TypedDict("MoveMarkdownArgs", {"corpus": str, "from": str, "to": str})


@final
class DeleteMarkdownArgs(TypedDict):
    corpus: str
    path: str


@final
class SearchArgs(TypedDict):
    """``search``: the GrooveSeek face's search, GrooveSeek's parameters (search/hits.py maps them onto
    ``ground``; docs/grooveseek-face.md)."""

    query: str
    corpus: NotRequired[str]
    limit: NotRequired[int]
    category: NotRequired[str]
    topic: NotRequired[str]
    path_globs: NotRequired[list[str]]
    tags_any: NotRequired[list[str]]
    tags_all: NotRequired[list[str]]
    date_from: NotRequired[str]
    date_to: NotRequired[str]
    fields: NotRequired[dict[str, list[str]]]
    fields_not: NotRequired[dict[str, list[str]]]
    rerank: NotRequired[bool]
    min_quality: NotRequired[float]
    include_low_quality: NotRequired[bool]
    min_confidence_ratio: NotRequired[float]
    mmr: NotRequired[bool]
    mmr_lambda: NotRequired[float]
    mmr_same_doc_penalty: NotRequired[float]
    parent_retriever: NotRequired[bool]


@final
class GetDocumentArgs(TypedDict):
    corpus: NotRequired[str]
    path: str


@final
class ReadResourceArgs(TypedDict):
    """``read_resource``: a ``kb://`` URI (``resource_groups`` takes ``NoArgs``)."""

    uri: str


@final
class SearchRagArgs(TypedDict):
    """``search_rag``: the KuraDB face's retrieval (search/rag.py; docs/kuradb-face.md): one corpus, each
    mode (``keyword``: BM25 alone, ``semantic``: vectors alone) up to ``limit`` chunks; no mode: both."""

    corpus: str
    query: str
    mode: NotRequired[Literal["keyword", "semantic"]]
    limit: NotRequired[int]
