"""The result of every operation, as the daemon builds it and its clients read it: the frozen shapes.

The engine (search, browse, wiki, indexing, daemon) builds these; the shim, the CLI, the renderers and
the evaluation read them. They are what `protocol/schemas.py` publishes as output schemas, key for key:
tests/protocol/test_result_types.py compares every property name, required key (``NotRequired`` here),
JSON type and enum (``Literal`` here) of both, and of the lighter schemas the MCP server publishes.

``NotRequired`` marks what the published schema does not promise, even where the daemon always sends it
today (``keywords`` on a doc, ``files_seen`` in an index report): clients may not rely on those keys.
Types only (no runtime cost): a result is a plain dict on the wire and in Python. No ``from __future__
import annotations`` here: with it, Python 3.11 reports ``NotRequired`` keys in ``__required_keys__``.
"""

from typing import Literal, NotRequired, TypedDict, final

# -- shared ------------------------------------------------------------------------------------------------


class ResultWarning(TypedDict):
    """An advisory of a result (``index``): the result is still complete and usable."""

    code: str
    message: str


# -- ground ------------------------------------------------------------------------------------------------


class IndexingState(TypedDict):
    """How far the index run in flight over a corpus is: files compared with the store so far, of the
    corpus' files (None until the run has listed them)."""

    files_done: int
    files_total: int | None


class UnindexedCorpus(TypedDict):
    """One corpus named by a not-indexed warning."""

    corpus: str
    # Nothing of it is searchable yet.
    empty: bool
    # An index run (an index call, a catch-up, a watcher's full pass) is bringing it up to date now; the
    # answer came from what was indexed before it ended.
    indexing: bool
    files_done: NotRequired[int]
    files_total: NotRequired[int | None]


class GroundWarning(TypedDict):
    code: str
    message: str
    # phrase-truncated: the bounds that cut the result (limit, top_files, chunks_per_file, scan_cap).
    bounds: NotRequired[list[str]]
    # not-indexed: each corpus it is about.
    corpora: NotRequired[list[UnindexedCorpus]]


class GroundStats(TypedDict):
    hits: int
    # Phrase mode only: the occurrences counted (``hits`` are the chunks holding them).
    occurrences: NotRequired[int]


class MatchSpan(TypedDict):
    """A query word in the chunk's text: UTF-8 byte offsets, ``[start, end)``."""

    start: int
    end: int


class ExpandedFrom(TypedDict):
    """parent: how the chunk's ``text`` was grown. ``adjacent``: the page's chunks ``from_index`` to
    ``to_index`` (0-based, inclusive), siblings under the same heading; ``whole_document``: all
    ``total_chunks`` of the page."""

    kind: Literal["adjacent", "whole_document"]
    from_index: NotRequired[int]
    to_index: NotRequired[int]
    total_chunks: NotRequired[int]


class GroundChunk(TypedDict):
    heading_path: list[str]
    line_start: int
    line_end: int
    # Ranked: 0..1; phrase mode: the chunk's occurrence count (an int).
    score: float
    snippet: str
    # Documents of labelled parts only (a PDF's page, a deck's slide, a workbook's sheet): the 1-based
    # part (line numbers are within its text).
    page: NotRequired[int]
    # Source-code chunks of a definition only: the grammar's word for it ("function_definition"); absent,
    # never null, on every other chunk.
    symbol_kind: NotRequired[str]
    corpus: NotRequired[str]
    # group_by "page": the page's matched chunks (this one is the best).
    chunk_count: NotRequired[int]
    # Ranked mode: the chunk's index-time quality, 0..1 in steps of 0.01 (ADR 0029).
    quality: NotRequired[float]
    # parent: the expanded text (line_start/line_end then span it) and how it was grown.
    text: NotRequired[str]
    expanded_from: NotRequired[ExpandedFrom]
    # The query's words in the chunk's text (``text`` when present, else the stored chunk text): absent
    # when not computed (no searchable word in the query, a text over 256 KiB).
    match_spans: NotRequired[list[MatchSpan]]


class Coverage(TypedDict):
    chunks: int
    pages: int | None


# Final: a doc is one or the other, and ``"chunks" in doc`` tells which.
@final
class ChunkedDoc(TypedDict):
    """A file of a ``ground`` result with its best chunks (every mode but output "counts")."""

    corpus: str
    path: str
    absolute_path: str
    score: float
    summary: str
    keywords: NotRequired[list[str]]
    stale: bool
    chunks: list[GroundChunk]
    # Ranked mode: kb://doc/<path> when the document is on offer as a resource (sandbox.formats.offered),
    # for the scope's default corpus only (docs/mcp.md#resources).
    uri: NotRequired[str]


@final
class CountsDoc(TypedDict):
    """A file of an output "counts" result: its coverage instead of summary, keywords and chunks."""

    corpus: str
    path: str
    absolute_path: str
    # The file's occurrence count (an int).
    score: float
    stale: bool
    coverage: Coverage


GroundDoc = ChunkedDoc | CountsDoc


class MissingWord(TypedDict):
    """A query word rare in general English that no chunk of the searched corpora holds."""

    word: str
    # Its Zipf frequency in general English (log10 of occurrences per billion words; wordfreq).
    zipf: float


class GroundConfidence(TypedDict):
    """The absolute signals behind ``low_confidence`` (ranked mode; search/confidence.py)."""

    # The highest cosine similarity of the query to any candidate chunk (null: no candidate).
    best_cosine: float | None
    # best_cosine over the candidates' mean cosine (GrooveSeek's min_confidence_ratio input).
    cosine_ratio: float | None
    # The query's content words, and how many of them any candidate chunk holds.
    terms: int
    terms_found: int
    # The largest rarity-weighted share (0..1) of the query's words one candidate chunk holds.
    best_share: float
    # The model's cosine floor the rule used (absent for a model with none known).
    cosine_floor: NotRequired[float]
    # The query's words rarer than zipf_floor in general English that no chunk holds (ADR 0030).
    missing_words: NotRequired[list[MissingWord]]
    zipf_floor: NotRequired[float]
    # The caller's min_confidence_ratio as applied (absent when not sent): low_confidence was then also
    # true when the best cosine is under this many times the candidates' mean (GrooveSeek's clause).
    min_confidence_ratio: NotRequired[float]


class FilterApplied(TypedDict):
    """The filters of a ``ground`` that took effect (search/filters.py), as the caller would send them;
    the query's own exclusions and quoted phrases too. Empty lists and unset filters are left out."""

    category: NotRequired[str]
    topic: NotRequired[str]
    path_globs: NotRequired[list[str]]
    tags_any: NotRequired[list[str]]
    tags_all: NotRequired[list[str]]
    date_from: NotRequired[str]
    date_to: NotRequired[str]
    fields: NotRequired[dict[str, list[str]]]
    fields_not: NotRequired[dict[str, list[str]]]
    # Only when the caller set it (or include_low_quality): the default floor is not echoed.
    min_quality: NotRequired[float]
    include_low_quality: NotRequired[bool]
    excluded_terms: NotRequired[list[str]]
    phrases: NotRequired[list[str]]
    # changed_since as sent, and the instant it named (UTC, to the second; a duration counts from the call).
    changed_since: NotRequired[str]
    changed_since_utc: NotRequired[str]


# mmr ran: its weights and the candidate chunks it reordered ("lambda" is a Python keyword, hence
# the functional form).
MmrInfo = TypedDict("MmrInfo", {"lambda": float, "same_doc_penalty": float, "pool": int})


class ParentApplied(TypedDict):
    """parent ran: its token bounds and how many chunks it grew."""

    short_tokens: int
    max_tokens: int
    expanded: int


class RerankInfo(TypedDict):
    """The rerank stage, when it re-ordered the result (search/rerank.py)."""

    # The reranker as the config names it ([embeddings] reranker).
    reranker: str
    # The fused candidates it re-scored: max(top_files x 5, 50), or fewer when fewer were found.
    candidates: int
    took_ms: float


class GroundResult(TypedDict):
    query: str
    took_ms: float
    stats: GroundStats
    docs: list[GroundDoc]
    warnings: list[GroundWarning]
    # True when no hit is a strong match for the query (then a weak-match warning says so). Phrase mode:
    # true exactly when nothing holds the phrase.
    low_confidence: NotRequired[bool]
    # Ranked mode only.
    confidence: NotRequired[GroundConfidence]
    # Ranked mode, when a reranker re-ordered the candidates (absent when it did not run or timed out).
    rerank: NotRequired[RerankInfo]
    # Ranked mode, when asked for: the post-retrieval stages that ran.
    mmr: NotRequired[MmrInfo]
    parent: NotRequired[ParentApplied]
    # Present when a filter (or a "-term" / "quoted phrase" of the query) took effect.
    filter_applied: NotRequired[FilterApplied]


# -- search (the GrooveSeek face) ----------------------------------------------------------------------------


class SearchHit(TypedDict):
    """One chunk of a GrooveSeek-face ``search`` (search/hits.py), GrooveSeek's keys."""

    # The chunk's ground score, 0..1 (hits are ranked by it).
    score: float
    path: str
    # Frontmatter title, else the page's first heading, else its file name.
    title: str
    # The chunk's own (deepest) heading; null before the page's first heading.
    heading: str | None
    # Ours, beyond GrooveSeek's keys: the chunk's heading breadcrumb from the page's top (ground's
    # heading_path), so a hit names its section as ground does (and eval reads it the same way).
    heading_path: list[str]
    topic: str | None
    # Frontmatter date as written; null without one.
    date: str | None
    tags: list[str]
    # The chunk's whole stored text (with parent_retriever: the expanded text).
    content: str
    match_spans: NotRequired[list[MatchSpan]]
    expanded_from: NotRequired[ExpandedFrom]
    uri: NotRequired[str]
    # GrooveSeek's source-code keys, on a chunk with a symbol_kind only (a definition in source code):
    # its lines (1-based, inclusive) and the grammar's word for the definition; absent on anything else.
    start_line: NotRequired[int]
    end_line: NotRequired[int]
    symbol_kind: NotRequired[str]


class SearchResult(TypedDict):
    results: list[SearchHit]
    low_confidence: bool
    # The filters that took effect ({} when none did): truthy exactly when a filter applied.
    filter_applied: FilterApplied


# -- index -------------------------------------------------------------------------------------------------


class SkippedFile(TypedDict):
    path: str
    reason: str


class RefusedChunks(TypedDict):
    """A file some of whose chunks the embedding endpoint refused (docs/model.md): indexed without them."""

    path: str
    chunks_refused: int
    chunks: int  # the file's chunks, refused ones included
    reason: str  # the endpoint's answer to the first refused one


# What the indexer found wrong with one file. "frontmatter": indexed all the same, as plain text; every other
# problem skips the file (no rows; rows it had before are kept, except an "empty" file's, which go).
FileProblemKind = Literal[
    "frontmatter",
    "binary",
    "not-utf8",
    "empty",
    "too-large",
    "unreadable",
    "unparseable",
    "chunk-failed",
    # A document reader stopped at a limit (indexing/documents.py): indexed as far as it got.
    "cut",
    # The embedding endpoint refused some of the file's chunks (HTTP 400/413/422): indexed without them;
    # or all of them: skipped.
    "refused",
]


class FileProblem(TypedDict):
    """A file's problem as its last index run found it; it goes at the file's next clean index."""

    path: str
    problem: FileProblemKind
    detail: str
    # True when the file has rows all the same (a frontmatter error: indexed as plain text; a cut: indexed
    # as far as its reader got).
    indexed: bool
    # When the run that found it read the file (ms since the epoch).
    found_ms: int


BackgroundSource = Literal["catch-up", "watcher"]


class BackgroundWork(TypedDict):
    """What the daemon indexed on its own in one corpus since the last ``index`` result for it: the start-up
    (or first-sight) catch-up, or the watcher. Without it, an ``index`` after a restart says "0 upserted"
    although the catch-up had just re-embedded every edited file."""

    by: BackgroundSource
    runs: int
    files_upserted: int
    files_touched: int
    files_deleted: int
    files_skipped: int
    chunks_written: int
    # The first and the last of those runs (ms since the epoch, when each ended).
    first_ms: int
    last_ms: int


class IndexReport(TypedDict):
    """One corpus of an ``index`` run."""

    corpus: str
    files_seen: NotRequired[int]
    files_upserted: int
    files_touched: int
    files_deleted: int
    files_skipped: int
    skipped: NotRequired[list[SkippedFile]]
    # Files indexed as plain text because their frontmatter is not valid YAML.
    frontmatter_errors: NotRequired[list[SkippedFile]]
    chunks_written: int
    # Markdown files whose bytes moved to a new path: their rows moved with them, not re-embedded (their
    # old paths are not in files_deleted, their new ones not in files_upserted).
    renamed: NotRequired[int]
    # Files of the corpus whose frontmatter does not parse now (frontmatter_errors lists this run's).
    frontmatter_unparsed: NotRequired[int]
    # The corpus' rows (chunks) in the store once the run ended.
    chunks_total: NotRequired[int]
    # Whether the run was a forced rebuild (every file re-read and re-embedded).
    forced: NotRequired[bool]
    # Chunks the embedding endpoint refused (HTTP 400/413/422), skipped; by file. Absent when none was.
    chunks_refused: NotRequired[int]
    refused: NotRequired[list[RefusedChunks]]
    seconds: float
    # The daemon's own runs (catch-up, watcher) since the last index result for this corpus; empty when
    # none. The counts above are this run's only.
    background: NotRequired[list[BackgroundWork]]
    # Every problem the corpus' files have now, this run's and those found earlier in files unchanged since.
    problems: NotRequired[list[FileProblem]]
    # [indexing] fail_on_frontmatter_error = true and frontmatter_unparsed > 0: why the run is an error (the
    # files are indexed all the same). Absent otherwise.
    error: NotRequired[str]


class IndexResult(TypedDict):
    corpora: list[IndexReport]
    seconds: float
    warnings: list[ResultWarning]


class BestPracticeResult(TypedDict):
    """``get_best_practice``: GrooveSeek's shape (``category`` only when one was asked for)."""

    target: str
    category: NotRequired[str]
    content: str


class ProgressEvent(TypedDict):
    """The ``progress`` event of a streaming ``index`` (not a result: sent before it)."""

    corpus: str
    done: int
    total: int
    # The file being indexed; None in the last event of a corpus.
    path: str | None
    # Set while this request waits for a run of the corpus already going (the events are that run's):
    # what started it, "index", "catch-up" or "watcher". The request's own pass follows.
    waiting_for: NotRequired[str]
    # Sent when the run reads files: the bytes of the new and changed files it reads, and how many of them
    # are done (a file's once its chunks are embedded), for an ETA that does not assume files of one size;
    # the chunks written so far.
    bytes_done: NotRequired[int]
    bytes_total: NotRequired[int]
    chunks_done: NotRequired[int]


# -- the read tools ----------------------------------------------------------------------------------------


class CorpusEntry(TypedDict):
    name: str
    kind: Literal["wiki", "corpus", "custom"]
    paths: list[str]
    globs: NotRequired[list[str]]
    exclude: NotRequired[list[str]]
    repository: str | None


class ListCorporaResult(TypedDict):
    corpora: list[CorpusEntry]
    default_corpus: NotRequired[str | None]
    repository: NotRequired[str | None]
    # Why a discovered repository is missing, if one is.
    warnings: NotRequired[list[str]]


class FileRef(TypedDict):
    path: str
    absolute_path: str


class ListFilesApplied(TypedDict):
    """``list_files``' filter, when given: ``changed_since`` as sent and the instant it named (UTC)."""

    changed_since: str
    changed_since_utc: str


class ListFilesResult(TypedDict):
    corpus: str
    files: list[FileRef]
    # Present when changed_since was given.
    filter_applied: NotRequired[ListFilesApplied]


class TreeNode(TypedDict):
    """A directory of ``list_tree`` (the root's ``path`` is ""); subdirs and files sorted by name."""

    path: str
    # The directory in the root of the first file beneath it; the root node's is the first root (None
    # for a corpus without roots).
    absolute_path: NotRequired[str | None]
    files: list[FileRef]
    subdirs: list["TreeNode"]


class ListTreeResult(TypedDict):
    corpus: str
    roots: NotRequired[list[str]]
    tree: TreeNode


class TopicNode(TypedDict):
    """A directory below a topic in ``list_topics``: its name, the documents under it (cumulative) and
    the directories below it, sorted by segment."""

    segment: str
    file_count: int
    children: list["TopicNode"]


class Topic(TypedDict):
    """One (category, topic) group of ``list_topics``; None where a document has none (search/topics.py)."""

    category: str | None
    topic: str | None
    file_count: int
    # The newest of its documents' dates: the frontmatter ``date`` (YYYY-MM-DD), else the file's
    # modification day (UTC).
    last_updated: str
    # Its documents' titles by path, at most limits.TOPIC_TITLES_MAX.
    titles: list[str]
    children: list[TopicNode]


class ListTopicsResult(TypedDict):
    corpus: str
    topics: list[Topic]
    # Present while an index run is bringing the corpus up to date: the topics are from before it.
    indexing: NotRequired[IndexingState]


# sandbox.formats.Format (protocol sits below sandbox, so the words are repeated; a test keeps them equal).
DocumentFormat = Literal[
    "markdown", "text", "json", "pdf", "docx", "pptx", "xlsx", "ods", "csv", "tsv", "html", "code"
]


class ReadMarkdownResult(TypedDict):
    corpus: str
    path: str
    absolute_path: str
    content: str
    bytes: int
    # A document format with a reader (PDF, Office, sheets, HTML, code; sandbox.formats.Format): content is
    # its extracted text, labelled parts (pages, slides, sheets) as "## <title>" sections.
    format: NotRequired[DocumentFormat]
    # The number of labelled parts; absent for a document of one unlabelled part (docx, HTML, CSV, code).
    pages: NotRequired[int]
    # Why the reader stopped early (a limit): the text shown is cut there. Absent when whole.
    cut: NotRequired[str]
    # "index" on a read-only daemon (the file is on the writer's machine): content is the page's indexed
    # text, chunk by chunk, and ``note`` says so. Absent when the file itself was read.
    served_from: NotRequired[Literal["index"]]
    note: NotRequired[str]


class GetDocumentResult(TypedDict):
    """``get_document``: GrooveSeek's keys (path .. truncated), then ours."""

    path: str
    # The frontmatter title; else the first "# " heading; else the file name without its extension. A
    # document format with a reader: the title it states (a PDF's /Title), else the file name.
    title: str
    # The frontmatter date as written (null without one); topic as search's filters derive it.
    date: str | None
    topic: str | None
    tags: list[str]
    content: str
    # A document's extracted text (PDF, Office, ...) cut at 1 MiB.
    truncated: bool
    corpus: str
    category: str | None
    format: DocumentFormat
    # The file's size on disk.
    bytes: int
    # kb://doc/<path>, when the document is on offer as a resource (docs/mcp.md#resources).
    uri: NotRequired[str]
    # Why the document's reader stopped early (a limit): the extracted text ends there. Absent when whole.
    cut: NotRequired[str]


class ResourceGroup(TypedDict):
    """A topic group of ``resource_groups``: a path's first one or two directories ("" the root)."""

    prefix: str
    name: str
    uri: str
    description: str
    documents: int


class ResourceGroupsResult(TypedDict):
    # The corpus the resources serve (the scope's default corpus), or null: no resources here.
    corpus: str | None
    groups: list[ResourceGroup]


class ReadResourceResult(TypedDict):
    uri: str
    mime_type: Literal["text/markdown", "text/plain"]
    text: str
    truncated: bool


class VectorIndexState(TypedDict):
    """The store's approximate vector index (docs/search.md): one for the whole store, built past a row
    threshold. ``none``: searches scan vectors exactly; ``building``: a build is running (searches go on,
    exact or on the previous index); ``ready``. ``rows_unindexed``: rows written since the index was built
    or refreshed, which searches scan exactly (found at once all the same)."""

    state: Literal["none", "building", "ready"]
    rows_indexed: int
    rows_unindexed: int


class CorpusStatsResult(TypedDict):
    corpus: str
    indexed_files: int
    total_chunks: int
    last_indexed_ms: int | None
    # When the oldest chunk the index holds for the corpus was written (null when nothing is indexed): the
    # time its index was built, later only once every file has been re-indexed since (a forced rebuild).
    # The KuraDB face's createAt (docs/kuradb-face.md).
    first_indexed_ms: NotRequired[int | None]
    # Files on disk with no rows and no recorded problem: an index run would pick them up.
    unindexed_files: int
    # Files the indexer skipped for a reason (binary, empty, too large, ...): re-indexing cannot help.
    skipped_files: NotRequired[int]
    # Every recorded problem of the corpus' files, skipped ones and those indexed as text, by path.
    problems: NotRequired[list[FileProblem]]
    # Present while an index run is bringing the corpus up to date: the figures above are from before it.
    indexing: NotRequired[IndexingState]
    # The store's approximate vector index (shared by every corpus of the store).
    vector_index: NotRequired[VectorIndexState]


class BacklinksResult(TypedDict):
    corpus: str
    path: str
    backlinks: list[str]


# -- get_connection_graph (GrooveSeek's shape, + edge and clamped) ----------------------------------------


class GraphNode(TypedDict):
    node_id: int
    # null: a child of the start page (which is not a node).
    parent_id: int | None
    depth: int
    chunk_id: str
    # Cosine similarity of the node's chunk to its parent's (the start's seeds: the best of them).
    score: float
    path: str
    heading: str | None
    title: str | None
    topic: str | None
    snippet: str
    # How the node was reached: vector similarity, or an explicit link of its parent's page.
    edge: Literal["similar", "link"]


class GraphTruncation(TypedDict):
    reason: Literal["seed_chunks", "node_budget"]
    limit: int
    detail: str


class GraphStats(TypedDict):
    total_nodes: int
    max_depth_reached: int
    knn_queries: int
    duration_ms: int
    seeds_used: int


class GraphClamp(TypedDict):
    """A parameter outside its bounds, and the value used instead (exclude_paths: item counts)."""

    param: str
    given: float
    used: float


class ConnectionGraphResult(TypedDict):
    start_path: str
    truncated: bool
    truncation: list[GraphTruncation]
    nodes: list[GraphNode]
    stats: GraphStats
    clamped: list[GraphClamp]


# -- the write tools ---------------------------------------------------------------------------------------


class WriteWarning(TypedDict):
    code: str
    message: str
    line: NotRequired[int]
    path: NotRequired[str]


IndexAction = Literal["scaffolded", "updated", "left-alone"]
WriteAction = Literal["created", "overwritten", "edited", "unchanged"]


class IndexFileAction(TypedDict):
    """An ancestor ``index.md`` a write touched."""

    path: str
    action: IndexAction


class ChangedLines(TypedDict):
    # 1-based, inclusive: the lines of the new text the edit wrote. Sent together, not promised apart.
    start: NotRequired[int]
    end: NotRequired[int]


# Final: the daemon tells a write's result from a delete's by ``"deleted" in result``.
@final
class AddMarkdownResult(TypedDict):
    corpus: str
    path: str
    absolute_path: str
    action: WriteAction
    # The section edit's mode (under_heading, replace_lines, replace_match), None for a whole-page write.
    edit: str | None
    changed_lines: ChangedLines | None
    bytes: int
    index_files: list[IndexFileAction]
    warnings: list[WriteWarning]
    reindexed: list[str]
    chunks_written: int


@final
class DeleteMarkdownResult(TypedDict):
    corpus: str
    path: str
    absolute_path: str
    deleted: bool
    index_files: list[IndexFileAction]
    warnings: list[WriteWarning]
    reindexed: list[str]


class RewrittenFile(TypedDict):
    """A page whose links ``move_markdown`` rewrote (the moved page under its new path), and how many."""

    path: str
    links: int


# "from" is a Python keyword, hence the functional form.
MoveMarkdownResult = TypedDict(
    "MoveMarkdownResult",
    {
        "corpus": str,
        "from": str,
        "to": str,
        "absolute_path": str,
        "rewritten": list[RewrittenFile],
        "links_rewritten": int,
        "index_files": list[IndexFileAction],
        "warnings": list[WriteWarning],
        "reindexed": list[str],
        "chunks_written": int,
    },
)


# -- the daemon's own operations (the CLI's; no MCP tool) --------------------------------------------------


class PingResult(TypedDict):
    version: str
    protocol: int
    pid: int


class ShutdownResult(TypedDict):
    stopping: bool
    pid: int


class RunningIndex(IndexingState):
    corpus: str
    # What started it: "index", "catch-up" or "watcher".
    kind: str


class StoreMismatch(TypedDict):
    """``status``: how the store's vectors differ from the configured embedder's, and the command that
    rebuilds it."""

    message: str
    held: dict[str, str]
    configured: dict[str, str]
    fix: str


class RuntimeStatus(TypedDict):
    """What the daemon's runtime reports of itself (``status`` adds the server's part)."""

    version: str
    pid: int
    # "loaded", "loading" or "failed: <reason>".
    model: str
    model_name: str
    model_cache_dir: str
    store_dir: str
    watched_roots: list[str]
    # Re-embedding done by the watcher and the write tools, discovery scans, shared resolves.
    counters: dict[str, int]
    # The recorded file problems of every corpus in the store, by corpus name and roots (its store key).
    file_problems: NotRequired[dict[str, list[FileProblem]]]
    # The whole-corpus index runs going now (searches answer meanwhile, naming them).
    indexing: NotRequired[list[RunningIndex]]
    # The store holds vectors made otherwise than the configured embedder makes them: searches, index runs
    # and writes are refused until `hallouminate index --rebuild` (or the old configuration is restored).
    store_mismatch: NotRequired[StoreMismatch]
    # Why the store was dropped and made anew when it opened (a schema version change of ours).
    store_rebuilt: NotRequired[str]
    # The store's approximate vector index, once the store is loaded.
    vector_index: NotRequired[VectorIndexState]
    # The store as configured ([store] path or uri, no secrets) and this daemon's mode ([store] mode, or
    # `daemon run --read-only`).
    store: NotRequired[str]
    store_mode: NotRequired[Literal["read-write", "read-only"]]
    # A read-only daemon: the table version it serves, and when it last checked the writer's (unix time).
    followed_version: NotRequired[int]
    followed_at: NotRequired[float]


class StatusResult(RuntimeStatus):
    socket: str
    uptime_secs: float
    connections: int
    in_flight: int
    idle_exit_secs: float
    # The HTTP listener's base URL while it listens; why it does not, when [http] enabled it and it
    # could not start (docs/http.md).
    http_url: NotRequired[str]
    http_error: NotRequired[str]


class HttpReloadResult(TypedDict):
    """``http_reload``: the listener's base URL after the baseline's ``[http]`` was applied; None when
    HTTP is disabled."""

    url: str | None


# Any operation's result (the dispatcher's handlers return one of these).
# -- search_rag: the KuraDB face's retrieval (search/rag.py; docs/kuradb-face.md) --------------------------
class RagMatch(TypedDict):
    # The chunk's ordinal in its file (0 = the file's first chunk).
    chunk: int
    # The chunk's whole stored text.
    content: str


class RagSource(TypedDict):
    """One file's chunks among a mode's hits: its absolute path, its chunks best first."""

    source: str
    matches: list[RagMatch]


class SearchRagResult(TypedDict):
    """Each mode that ran: its chunks grouped by file, files in the order of their best chunk. A mode
    that did not run is absent."""

    keyword: NotRequired[list[RagSource]]
    semantic: NotRequired[list[RagSource]]


OpResult = (
    GroundResult
    | SearchResult
    | SearchRagResult
    | IndexResult
    | BestPracticeResult
    | ListCorporaResult
    | ListFilesResult
    | ListTreeResult
    | ReadMarkdownResult
    | GetDocumentResult
    | ResourceGroupsResult
    | ReadResourceResult
    | CorpusStatsResult
    | ListTopicsResult
    | BacklinksResult
    | ConnectionGraphResult
    | AddMarkdownResult
    | DeleteMarkdownResult
    | MoveMarkdownResult
    | PingResult
    | ShutdownResult
    | StatusResult
    | HttpReloadResult
)
