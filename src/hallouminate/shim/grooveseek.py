"""The GrooveSeek face (``hallouminate serve --dialect grooveseek --kb-path DIR``): GrooveSeek's six tools,
with its names, parameters, defaults, bounds and result shapes, each forwarded to a daemon operation.

Every call goes to the daemon with ``cwd`` = the knowledge base's directory and ``kb: true``: the directory
is one corpus of its own, ``kb`` (no ``init-repo``). The same daemon serves both faces. The server wiring
(tools/list, tools/call, errors) is shim/server.py's; this module is the table. docs/grooveseek-face.md.
"""

from __future__ import annotations

import copy
from typing import Any

from hallouminate.protocol.published import published
from hallouminate.protocol.schemas import ARGS, RESULTS
from hallouminate.shim.face import Call, FaceTool

INSTRUCTIONS = """\
This server is a GrooveSeek-compatible face of hallouminate: semantic + keyword search over one local \
Markdown knowledge base (the directory it was started with), indexed by hallouminate's daemon.

Use `search` to find what the knowledge base says (hybrid ranking; filters by category, topic, path \
globs, tags, date and frontmatter fields); cite each hit's `path`. `list_topics` shows which category and \
topic values exist; `get_document` reads a whole document by the exact path a hit gives; \
`get_connection_graph` follows related material from a document; `get_best_practice` fetches a configured \
best-practice page; `rebuild_index` re-scans the knowledge base after many files changed outside it (edits \
are normally picked up on their own).

What it is not: it is read-only over the knowledge base (no tool writes a document), it keeps no \
conversation memory, session or profile, and it has no code intelligence: source files the knowledge base \
is configured to index are searched as text, with no code navigation (no references, types, call graphs \
or builds). When `search` answers with \
`low_confidence: true`, or with nothing, say the knowledge base is silent rather than answering from \
general knowledge.
"""


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _output(op: str) -> dict[str, Any] | None:
    """The op's published result schema, once the daemon has the op (other branches add some)."""
    full = RESULTS.get(op)
    return published(full) if full is not None else None


# -- search ------------------------------------------------------------------------------------------------
def _search_input() -> dict[str, Any]:
    schema = copy.deepcopy(ARGS["search"])
    del schema["properties"]["corpus"]  # the face serves one knowledge base
    return schema


async def _search(call: Call, args: dict[str, Any]) -> Any:
    return await call("search", args)


# -- list_topics ---------------------------------------------------------------------------------------------
async def _list_topics(call: Call, args: dict[str, Any]) -> Any:
    result = await call("list_topics", {})
    return result["topics"]  # GrooveSeek answers the bare list


# -- get_document, get_best_practice ---------------------------------------------------------------------------
async def _get_document(call: Call, args: dict[str, Any]) -> Any:
    return await call("get_document", {"path": args["path"]})


async def _get_best_practice(call: Call, args: dict[str, Any]) -> Any:
    return await call("get_best_practice", args)


# -- rebuild_index ------------------------------------------------------------------------------------------------
async def _rebuild_index(call: Call, args: dict[str, Any]) -> Any:
    """GrooveSeek's counters from our index report and the corpus's figures after it."""
    # force only when asked: a daemon without the single-flight/force change refuses an unknown key, and
    # wait is never sent: a second call while one runs is refused, as GrooveSeek does.
    result = await call("index", {"force": True} if args.get("force") else {})
    stats = await call("corpus_stats", {})
    return rebuild_counters(result, stats)


def rebuild_counters(result: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
    """``{total_documents, updated, renamed, deleted, skipped, total_chunks, duration_ms,
    frontmatter_unparsed}`` from an IndexResult (one corpus, ``kb``) and its corpus_stats."""
    reports = result.get("corpora") or [{}]
    report = reports[0]
    unparsed = report.get("frontmatter_unparsed")
    if unparsed is None:  # before the counter existed: the files indexed as text for their frontmatter
        unparsed = len(report.get("frontmatter_errors") or [])
    counters: dict[str, Any] = {
        "total_documents": int(stats.get("indexed_files", 0)),
        "updated": int(report.get("files_upserted", 0)),
        "renamed": int(report.get("renamed", 0)),
        "deleted": int(report.get("files_deleted", 0)),
        "skipped": int(report.get("files_skipped", 0)),
        "total_chunks": int(stats.get("total_chunks", 0)),
        "duration_ms": round(float(result.get("seconds", report.get("seconds", 0.0))) * 1000),
        "frontmatter_unparsed": int(unparsed),
    }
    if isinstance(report.get("error"), str):  # [indexing] fail_on_frontmatter_error: beside the counters
        counters["error"] = report["error"]
    return counters


_COUNT = {"type": "integer", "minimum": 0}
# GrooveSeek's rebuild counters, every one always present.
_REBUILD_COUNTERS = (
    "total_documents",
    "updated",
    "renamed",
    "deleted",
    "skipped",
    "total_chunks",
    "duration_ms",
    "frontmatter_unparsed",
)
REBUILD_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        **dict.fromkeys(_REBUILD_COUNTERS, _COUNT),
        # GrooveSeek's: under fail_on_frontmatter_error, why the rebuild is an error (the files are indexed).
        "error": {"type": "string"},
    },
    "required": list(_REBUILD_COUNTERS),
}


# -- get_connection_graph ---------------------------------------------------------------------------------------
async def _connection_graph(call: Call, args: dict[str, Any]) -> Any:
    args = dict(args)
    if args.get("seed_strategy") == "all-chunks":  # GrooveSeek accepts both spellings
        args["seed_strategy"] = "all_chunks"
    return await call("get_connection_graph", args)


_STRING = {"type": "string", "minLength": 1}
FACE_TOOLS: dict[str, FaceTool] = {
    tool.name: tool
    for tool in (
        FaceTool(
            name="search",
            op="search",
            description=(
                "Hybrid search (vector + full-text) merged via Reciprocal Rank Fusion, optionally followed "
                "by cross-encoder reranking, MMR diversity re-rank and parent retriever content expansion. "
                "Returns { results, low_confidence, filter_applied } with chunks ranked by relevance; each "
                "result carries score, path, title, heading, topic, date, tags and content, and may carry "
                "match_spans, expanded_from (parent retriever) and uri, and a source-code chunk of one "
                "definition start_line, end_line and symbol_kind. A whitespace-delimited group led "
                "by - (e.g. -async) excludes it instead of searching for it; under three characters after "
                "the - it excludes nothing."
            ),
            input_schema=_search_input(),
            output_schema=_output("search"),
            run=_search,
        ),
        FaceTool(
            name="list_topics",
            op="list_topics",
            description=(
                "List all indexed topics and categories with document counts. Call it to learn which "
                "category and topic values the search filters accept. Each entry carries children: the "
                "directory tree beneath that category/topic, one node per path segment, each with segment, "
                "file_count (cumulative) and its own children; [] for root, category-only and flat topics."
            ),
            input_schema=_object({}),
            output_schema=None,  # GrooveSeek answers a bare list: MCP structured content must be an object
            run=_list_topics,
        ),
        FaceTool(
            name="get_document",
            op="get_document",
            description=(
                "Get the full content and metadata of a document by its relative path, exactly as search "
                "returns it (relative to the knowledge base, /-separated). Any other spelling of the same "
                "file is answered not found; a name the index cannot hold is refused before the disk is "
                "touched."
            ),
            input_schema=_object(
                {"path": {"type": "string", "description": 'e.g. "deep-dive/mcp/overview.md"'}}, ["path"]
            ),
            output_schema=_output("get_document"),
            run=_get_document,
        ),
        FaceTool(
            name="get_best_practice",
            op="get_best_practice",
            description=(
                "Opt-in: when [best_practice].path_templates is configured, fetch a best-practices "
                "document for the given target and optionally extract one h2 section. Without "
                "configuration it returns a not configured error."
            ),
            input_schema=_object(
                {
                    "target": {**_STRING, "description": 'e.g. "claude-code"'},
                    "category": {**_STRING, "description": "An h2 section to extract (case-insensitive)."},
                },
                ["target"],
            ),
            output_schema=_output("get_best_practice"),
            run=_get_best_practice,
        ),
        FaceTool(
            name="rebuild_index",
            op="index",
            description=(
                "Rebuild the search index by scanning all source files. One at a time: a call arriving "
                "while a rebuild is running is refused with an error naming how long the running one has "
                "been going. Returns the counters total_documents, updated, renamed, deleted, skipped, "
                "total_chunks, duration_ms, frontmatter_unparsed, and error when "
                "[indexing] fail_on_frontmatter_error is set and some frontmatter does not parse. force: "
                "true rebuilds from scratch."
            ),
            input_schema=_object(
                {"force": {"type": "boolean", "description": "Rebuild from scratch (default false)."}}
            ),
            output_schema=REBUILD_RESULT,
            run=_rebuild_index,
            read_only=False,
        ),
        FaceTool(
            name="get_connection_graph",
            op="get_connection_graph",
            description=(
                "BFS-expand semantically related chunks starting from a document path. Use it after search "
                "when the answer may sit in documents the query's wording did not reach. Returns a flat "
                "list of nodes with parent_id / depth / score / snippet, plus truncated / truncation[] "
                "when a bound cut the walk short. Out-of-range values are clamped. A snippet is an "
                "excerpt; call get_document for a node's full text."
            ),
            input_schema=_object(
                {
                    "start": {**_STRING, "description": "The document path to walk from."},
                    "depth": {"type": "integer", "description": "Default 2, max 3."},
                    "fan_out": {"type": "integer", "description": "Default 5, max 20."},
                    "min_similarity": {"type": "number", "description": "Default 0.3 (0-1)."},
                    "seed_strategy": {
                        "type": "string",
                        "enum": ["all_chunks", "all-chunks", "centroid"],
                        "description": "Default all_chunks.",
                    },
                    "dedup_by_path": {"type": "boolean", "description": "Default false."},
                    "category": {"type": "string"},
                    "topic": {"type": "string"},
                    "exclude_paths": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "At most 64; the start is always excluded.",
                    },
                    "max_nodes": {"type": "integer", "description": "Default 100, max 2000; 0: empty."},
                    "max_seed_chunks": {"type": "integer", "description": "Default 32 (1-1000)."},
                },
                ["start"],
            ),
            output_schema=_output("get_connection_graph"),
            run=_connection_graph,
        ),
    )
}
