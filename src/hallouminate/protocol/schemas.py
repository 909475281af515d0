"""JSON schemas of each operation's arguments and results: one definition for the daemon and the shim.

The daemon validates every request's ``args`` against these; the shim publishes them (plus ``cwd``) as
MCP tool input schemas and validates before forwarding; MCP clients re-validate ``structuredContent``
against the output schemas, so these must match what the daemon returns exactly.
"""

from __future__ import annotations

from typing import Any, get_args

from hallouminate.protocol.limits import (
    BEST_PRACTICE_TARGET_CHARS,
    CATEGORY_CHARS,
    CHANGED_SINCE_CHARS,
    CHUNKS_PER_FILE,
    CONTENT_CHARS,
    CORPUS_NAME_CHARS,
    COUNTS_MAX_FILES,
    FILTER_ITEM_BYTES,
    FILTER_ITEMS,
    FILTER_KEYS,
    GRAPH_ANY_INT,
    GRAPH_DEPTH,
    GRAPH_EXCLUDE_PATHS,
    GRAPH_FAN_OUT,
    GRAPH_MAX_NODES,
    GRAPH_MAX_SEED_CHUNKS,
    GRAPH_MIN_SIMILARITY,
    GROOVESEEK_LIMIT,
    GROOVESEEK_QUERY_BYTES,
    KB_URI_CHARS,
    LIMIT,
    MIN_CONFIDENCE_RATIO_DEFAULT,
    MIN_QUALITY,
    MIN_QUALITY_DEFAULT,
    MMR_LAMBDA,
    MMR_SAME_DOC_PENALTY,
    NEGATION_MIN_CHARS,
    PAGE_MAX_BYTES,
    PARENT_MAX_TOKENS,
    PARENT_SHORT_TOKENS,
    PATH_CHARS,
    PHRASE_CHARS,
    QUERY_CHARS,
    RAG_LIMIT,
    RAG_MODES,
    REPLACE_LINE,
    REPLACE_MATCH_CHARS,
    SCAN_CAP,
    SNIPPET_CHARS,
    TOP_FILES,
    TOPIC_CHARS,
    UNDER_HEADING_CHARS,
    Range,
)
from hallouminate.protocol.results import FileProblemKind

CORPUS_PROP: dict[str, Any] = {
    "type": "string",
    **CORPUS_NAME_CHARS.length_schema(),
    "description": "Corpus name (see list_corpora). Omit to use the default for the operation.",
}

# The bounds live in protocol/limits.py; these two names remain for callers that know them.
QUERY_MAX_CHARS = QUERY_CHARS.high
PAGE_MAX_CHARS = PAGE_MAX_BYTES

# ground's eligibility filters (search/filters.py): applied before retrieval, AND-ed; docs/tools/ground.md.
_FILTER_STRING: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": FILTER_ITEM_BYTES.high}
_FILTER_LIST: dict[str, Any] = {"type": "array", "items": _FILTER_STRING, "maxItems": FILTER_ITEMS.high}
_FILTER_MAP: dict[str, Any] = {
    "type": "object",
    "additionalProperties": _FILTER_LIST,
    "maxProperties": FILTER_KEYS.high,
}
_DATE: dict[str, Any] = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
_FILTER_PROPS: dict[str, Any] = {
    "category": {
        "type": "string",
        **CATEGORY_CHARS.length_schema(),
        "description": "Only pages of this category: the first path segment (paths of 2+ segments) or "
        "the frontmatter's category. Exact.",
    },
    "topic": {
        "type": "string",
        **TOPIC_CHARS.length_schema(),
        "description": "Only pages of this topic: the second path segment (paths of 3+ segments) or the "
        "frontmatter's topic. Exact.",
    },
    "path_globs": {
        **_FILTER_LIST,
        "minItems": 1,
        "description": "Globs on the path relative to the corpus root (* and ? within a segment, ** "
        "across); a leading ! excludes. A page passes if it matches any include (or none is given) "
        "and no exclude.",
    },
    "tags_any": {**_FILTER_LIST, "description": "Only pages whose frontmatter tags hold one of these."},
    "tags_all": {**_FILTER_LIST, "description": "Only pages whose frontmatter tags hold all of these."},
    "date_from": {
        **_DATE,
        "description": "YYYY-MM-DD: only pages whose frontmatter date is on or after it (undated pages "
        "are dropped).",
    },
    "date_to": {
        **_DATE,
        "description": "YYYY-MM-DD: only pages whose frontmatter date is on or before it (undated pages "
        "are dropped).",
    },
    "fields": {
        **_FILTER_MAP,
        "description": "Frontmatter key -> accepted values: a page passes if, for every key, its value "
        f"(or one of its list's) is among them. At most {FILTER_ITEMS.high} values of "
        f"{FILTER_ITEM_BYTES.high} bytes per key.",
    },
    "fields_not": {
        **_FILTER_MAP,
        "description": "Frontmatter key -> refused values: a page holding any of them under that key is "
        "dropped.",
    },
    "min_quality": {
        "type": "number",
        **MIN_QUALITY.number_schema(),
        "description": f"Chunks whose index-time quality is below this are not candidates (default "
        f"{MIN_QUALITY_DEFAULT}; chunks without a quality pass).",
    },
    "include_low_quality": {
        "type": "boolean",
        "description": "true: min_quality 0, low-quality chunks (stubs, link lists) are candidates too.",
    },
    "changed_since": {
        "type": "string",
        **CHANGED_SINCE_CHARS.length_schema(),
        "description": "Only files modified (file mtime) at or after this: an ISO date (2026-11-30, "
        "midnight UTC), an ISO datetime (2026-11-30T09:00:00Z; no zone = UTC) or a duration back from now "
        "(12h, 7d, 2w). Needs no frontmatter date.",
    },
}
# How the query's own syntax reads (ranked mode; docs/search.md, "Query syntax").
QUERY_SYNTAX = (
    f'A group "-word" excludes chunks holding that word ({NEGATION_MIN_CHARS}+ characters after the -); '
    'a "quoted phrase" must appear verbatim (case-insensitive).'
)

_MIN_CONFIDENCE_RATIO: dict[str, Any] = {
    "type": "number",
    "description": "Also report low_confidence when the best candidate's cosine is under this many times "
    "the candidates' mean (GrooveSeek's rule: at least two candidates, mean above 0). 0 disables it; a "
    f"non-finite value means {MIN_CONFIDENCE_RATIO_DEFAULT}. Default: not applied (our own rule alone). "
    "Ranked mode only.",
}

ARGS: dict[str, dict[str, Any]] = {
    "ping": {"type": "object", "properties": {}, "additionalProperties": False},
    "status": {"type": "object", "properties": {}, "additionalProperties": False},
    "shutdown": {"type": "object", "properties": {}, "additionalProperties": False},
    # Re-read the baseline config's [http] and stop, start or restart the listener (the CLI's `http`, `port`).
    "http_reload": {"type": "object", "properties": {}, "additionalProperties": False},
    "index": {
        "type": "object",
        "properties": {
            "corpus": {
                **CORPUS_PROP,
                "description": "Corpus to (re)index. Omit to index every corpus configured for cwd.",
            },
            "force": {
                "type": "boolean",
                "default": False,
                "description": "Rebuild: read and embed every file again, even unchanged ones (slow; "
                "searches keep answering from the rows there meanwhile).",
            },
            "rebuild": {
                "type": "boolean",
                "default": False,
                "description": "Drop the whole store (every corpus's rows) and embed every corpus again "
                "with the configured model: the fix when the store refuses to mix vectors of another "
                "model. The embedder is probed first; a failing one leaves the store as it is.",
            },
            "wait": {
                "type": "boolean",
                "default": False,
                "description": "When another client's index of the corpus is running: wait for it, then "
                "index. Without it such a call is refused, naming how long the running one has gone.",
            },
        },
        "additionalProperties": False,
    },
    "get_best_practice": {
        "type": "object",
        "properties": {
            "target": {
                "type": "string",
                **BEST_PRACTICE_TARGET_CHARS.length_schema(),
                "description": 'What the best practices are for, e.g. "claude-code": the page named by '
                "[best_practice] path_templates with {target} replaced by it. No '/', '..' or control "
                "characters.",
            },
            "category": {
                "type": "string",
                **CATEGORY_CHARS.length_schema(),
                "description": "One H2 section of the page (its heading, case-insensitive). Omit for "
                "the whole page.",
            },
            "corpus": {
                **CORPUS_PROP,
                "description": "The corpus holding the pages. Omit for the default corpus (the "
                "repository's wiki).",
            },
        },
        "required": ["target"],
        "additionalProperties": False,
    },
    "ground": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                **QUERY_CHARS.length_schema(),
                "description": f"What to look for, in natural language or keywords. {QUERY_SYNTAX}",
            },
            "corpus": {
                **CORPUS_PROP,
                "description": "Pin the search to one corpus. Omit to search every corpus, the "
                "repository's own wiki first on ties.",
            },
            "top_files": {
                "type": "integer",
                **TOP_FILES.integer_schema(),
                "description": f"How many files to return (default {TOP_FILES.default}).",
            },
            "chunks_per_file": {
                "type": "integer",
                **CHUNKS_PER_FILE.integer_schema(),
                "description": f"How many chunks to show per file (default {CHUNKS_PER_FILE.default}).",
            },
            "limit": {
                "type": "integer",
                **LIMIT.integer_schema(),
                "description": f"Candidate chunks drawn from each ranking signal (default {LIMIT.default}).",
            },
            "snippet_chars": {
                "type": "integer",
                **SNIPPET_CHARS.integer_schema(),
                "description": f"Maximum snippet length per chunk (default {SNIPPET_CHARS.default}).",
            },
            "match": {
                "type": "string",
                "enum": ["ranked", "phrase"],
                "description": "ranked (default): hybrid semantic + keyword ranking. phrase: exact lookup "
                "(a URL, a title, an error message): case-insensitive literal match of the whole query "
                f"({PHRASE_CHARS.low}-{PHRASE_CHARS.high} characters) in chunk text, any whitespace run "
                "matching any other; no embedding. Hits rank by occurrence count, which is their score. A "
                "phrase-truncated warning names the bound (limit, top_files, chunks_per_file, "
                f"{SCAN_CAP:,}-match scan cap) that cut the result.",
            },
            "group_by": {
                "type": "string",
                "enum": ["page"],
                "description": "page: one entry per PDF page (its best chunk, with chunk_count); "
                "chunks_per_file then caps pages. Chunks without a page stay single entries.",
            },
            "output": {
                "type": "string",
                "enum": ["counts"],
                "description": 'counts (needs match "phrase"): per matching file only coverage '
                "{chunks, pages} and its occurrence count as score, no chunks or snippets; ignores "
                f"top_files, chunks_per_file and limit; at most {COUNTS_MAX_FILES:,} files.",
            },
            "footnotes": {
                "type": "string",
                "enum": ["include", "exclude", "only"],
                "description": "Markdown footnote definitions travel with the chunk citing them. include "
                "(default): they are part of its text. exclude: matched and shown without them (a chunk "
                "of only definitions drops out). only: search and show the definitions alone (sources, "
                "citations); chunks without any drop out.",
            },
            **_FILTER_PROPS,
            "rerank": {
                "type": "boolean",
                "description": "Re-score the best fused candidates (max(top_files x 5, 50) chunks) with the "
                "configured reranker (a cross-encoder, or the quality model all-mpnet-base-v2) before the "
                "per-file cut (default: on when a cross-encoder is configured, off for the quality model; "
                "with none, true only adds a rerank-unavailable warning). Past "
                "the time budget the fused order is returned with a rerank-timeout warning. Ranked mode "
                "only.",
            },
            "mmr": {
                "type": "boolean",
                "description": "Diversify (maximal marginal relevance): reorder the best "
                "max(top_files x 5, 50) candidate chunks so near-duplicates of a chunk already ranked "
                "fall back; files rank where their first chunk is picked. Default false. Ranked mode only.",
            },
            "mmr_lambda": {
                "type": "number",
                **MMR_LAMBDA.number_schema(),
                "description": f"mmr: weight of relevance against novelty, 1 = relevance only (default "
                f"{MMR_LAMBDA.default}).",
            },
            "mmr_same_doc_penalty": {
                "type": "number",
                **MMR_SAME_DOC_PENALTY.number_schema(),
                "description": "mmr: subtracted from a chunk's score once a chunk of the same page is "
                f"picked (default {MMR_SAME_DOC_PENALTY.default}).",
            },
            "parent": {
                "type": "boolean",
                "description": f"Expand each returned chunk into text: under {PARENT_SHORT_TOKENS} tokens "
                f"to its whole page, else to its neighbouring chunks under the same heading, at most "
                f"{PARENT_MAX_TOKENS:,} tokens; adds text and expanded_from, widens line_start/line_end; "
                "score and order unchanged. Default false. Ranked mode only.",
            },
            "min_confidence_ratio": _MIN_CONFIDENCE_RATIO,
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}

_WARNINGS: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        "required": ["code", "message"],
    },
}

_GROUND_WARNINGS: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            # phrase-truncated: which bounds cut the result (limit, top_files, chunks_per_file, scan_cap).
            "bounds": {"type": "array", "items": {"type": "string"}},
            # not-indexed: each corpus it is about, empty and/or being indexed now (with its counts).
            "corpora": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "corpus": {"type": "string"},
                        "empty": {"type": "boolean"},
                        "indexing": {"type": "boolean"},
                        "files_done": {"type": "integer", "minimum": 0},
                        "files_total": {"type": ["integer", "null"], "minimum": 0},
                    },
                    "required": ["corpus", "empty", "indexing"],
                },
            },
        },
        "required": ["code", "message"],
    },
}

_INDEXING_STATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files_done": {"type": "integer", "minimum": 0},
        "files_total": {"type": ["integer", "null"], "minimum": 0},
    },
    "required": ["files_done", "files_total"],
}

# The store's approximate vector index (corpus_stats, status).
_VECTOR_INDEX_STATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "state": {"type": "string", "enum": ["none", "building", "ready"]},
        "rows_indexed": {"type": "integer", "minimum": 0},
        "rows_unindexed": {"type": "integer", "minimum": 0},
    },
    "required": ["state", "rows_indexed", "rows_unindexed"],
}

GROUND_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "took_ms": {"type": "number"},
        "stats": {
            "type": "object",
            # occurrences: phrase mode only, the occurrences counted (hits are the chunks holding them).
            "properties": {"hits": {"type": "integer"}, "occurrences": {"type": "integer"}},
            "required": ["hits"],
        },
        "docs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "corpus": {"type": "string"},
                    "path": {"type": "string"},
                    "absolute_path": {"type": "string"},
                    "score": {"type": "number"},
                    "summary": {"type": "string"},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                    "stale": {"type": "boolean"},
                    # Ranked mode: kb://doc/<path> when the document is on offer as a resource.
                    "uri": {"type": "string"},
                    "chunks": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "heading_path": {"type": "array", "items": {"type": "string"}},
                                "line_start": {"type": "integer"},
                                "line_end": {"type": "integer"},
                                "score": {"type": "number"},
                                "snippet": {"type": "string"},
                                "page": {"type": "integer", "minimum": 1},
                                # A definition in source code: the grammar's word for it (absent else).
                                "symbol_kind": {"type": "string"},
                                "corpus": {"type": "string"},
                                # group_by "page": the page's matched chunks (this is the best).
                                "chunk_count": {"type": "integer", "minimum": 1},
                                # Ranked mode: the chunk's index-time quality (ADR 0029).
                                "quality": {"type": "number", "minimum": 0, "maximum": 1},
                                # parent: the expanded text and how it was grown.
                                "text": {"type": "string"},
                                "expanded_from": {
                                    "type": "object",
                                    "properties": {
                                        "kind": {"type": "string", "enum": ["adjacent", "whole_document"]},
                                        "from_index": {"type": "integer", "minimum": 0},
                                        "to_index": {"type": "integer", "minimum": 0},
                                        "total_chunks": {"type": "integer", "minimum": 1},
                                    },
                                    "required": ["kind"],
                                },
                                # UTF-8 byte offsets of the query's words in the chunk's text.
                                "match_spans": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "start": {"type": "integer", "minimum": 0},
                                            "end": {"type": "integer", "minimum": 0},
                                        },
                                        "required": ["start", "end"],
                                    },
                                },
                            },
                            "required": ["heading_path", "line_start", "line_end", "score", "snippet"],
                        },
                    },
                    # output "counts" only, instead of summary, keywords and chunks.
                    "coverage": {
                        "type": "object",
                        "properties": {
                            "chunks": {"type": "integer", "minimum": 1},
                            "pages": {"type": ["integer", "null"], "minimum": 1},
                        },
                        "required": ["chunks", "pages"],
                    },
                },
                "required": ["corpus", "path", "absolute_path", "score", "stale"],
                "anyOf": [{"required": ["summary", "chunks"]}, {"required": ["coverage"]}],
            },
        },
        "warnings": _GROUND_WARNINGS,
        "filter_applied": {
            "type": "object",
            "properties": {
                "category": {"type": "string"},
                "topic": {"type": "string"},
                "path_globs": {"type": "array", "items": {"type": "string"}},
                "tags_any": {"type": "array", "items": {"type": "string"}},
                "tags_all": {"type": "array", "items": {"type": "string"}},
                "date_from": {"type": "string"},
                "date_to": {"type": "string"},
                "fields": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
                "fields_not": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
                "min_quality": {"type": "number"},
                "include_low_quality": {"type": "boolean"},
                "excluded_terms": {"type": "array", "items": {"type": "string"}},
                "phrases": {"type": "array", "items": {"type": "string"}},
                "changed_since": {"type": "string"},
                "changed_since_utc": {"type": "string"},
            },
        },
        # True when no hit is a strong match (with a weak-match warning); phrase mode: nothing matched.
        "low_confidence": {"type": "boolean"},
        # Ranked mode: the absolute signals low_confidence rests on (docs/search.md, "Low confidence").
        "confidence": {
            "type": "object",
            "properties": {
                "best_cosine": {"type": ["number", "null"]},
                "cosine_ratio": {"type": ["number", "null"]},
                "terms": {"type": "integer", "minimum": 0},
                "terms_found": {"type": "integer", "minimum": 0},
                "best_share": {"type": "number", "minimum": 0, "maximum": 1},
                "cosine_floor": {"type": "number"},
                "missing_words": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"word": {"type": "string"}, "zipf": {"type": "number"}},
                        "required": ["word", "zipf"],
                    },
                },
                "zipf_floor": {"type": "number"},
                "min_confidence_ratio": {"type": "number"},
            },
            "required": ["best_cosine", "cosine_ratio", "terms", "terms_found", "best_share"],
        },
        # The rerank stage, when it re-ordered the candidates (docs/search.md, "Rerank").
        "rerank": {
            "type": "object",
            "properties": {
                "reranker": {"type": "string"},
                "candidates": {"type": "integer", "minimum": 0},
                "took_ms": {"type": "number"},
            },
            "required": ["reranker", "candidates", "took_ms"],
        },
        # mmr ran (docs/search.md, "Diversity"): its weights and the candidate chunks it reordered.
        "mmr": {
            "type": "object",
            "properties": {
                "lambda": {"type": "number"},
                "same_doc_penalty": {"type": "number"},
                "pool": {"type": "integer", "minimum": 0},
            },
            "required": ["lambda", "same_doc_penalty", "pool"],
        },
        # parent ran: its token bounds and how many chunks it expanded.
        "parent": {
            "type": "object",
            "properties": {
                "short_tokens": {"type": "integer"},
                "max_tokens": {"type": "integer"},
                "expanded": {"type": "integer", "minimum": 0},
            },
            "required": ["short_tokens", "max_tokens", "expanded"],
        },
    },
    "required": ["query", "took_ms", "stats", "docs", "warnings"],
}

FILE_PROBLEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "problem": {
            "type": "string",
            "enum": list(get_args(FileProblemKind)),
        },
        "detail": {"type": "string"},
        "indexed": {"type": "boolean"},
        "found_ms": {"type": "integer"},
    },
    "required": ["path", "problem", "detail", "indexed", "found_ms"],
}

_BACKGROUND_WORK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "by": {"type": "string", "enum": ["catch-up", "watcher"]},
        "runs": {"type": "integer"},
        "files_upserted": {"type": "integer"},
        "files_touched": {"type": "integer"},
        "files_deleted": {"type": "integer"},
        "files_skipped": {"type": "integer"},
        "chunks_written": {"type": "integer"},
        "first_ms": {"type": "integer"},
        "last_ms": {"type": "integer"},
    },
    "required": [
        "by",
        "runs",
        "files_upserted",
        "files_touched",
        "files_deleted",
        "files_skipped",
        "chunks_written",
        "first_ms",
        "last_ms",
    ],
}

_INDEX_REPORT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "corpus": {"type": "string"},
        "files_seen": {"type": "integer"},
        "files_upserted": {"type": "integer"},
        "files_touched": {"type": "integer"},
        "files_deleted": {"type": "integer"},
        "files_skipped": {"type": "integer"},
        "skipped": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["path", "reason"],
            },
        },
        "frontmatter_errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["path", "reason"],
            },
        },
        "chunks_written": {"type": "integer"},
        "renamed": {"type": "integer"},
        "frontmatter_unparsed": {"type": "integer"},
        "chunks_total": {"type": "integer"},
        "forced": {"type": "boolean"},
        "chunks_refused": {"type": "integer", "minimum": 0},
        "refused": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "chunks_refused": {"type": "integer", "minimum": 1},
                    "chunks": {"type": "integer", "minimum": 1},
                    "reason": {"type": "string"},
                },
                "required": ["path", "chunks_refused", "chunks", "reason"],
            },
        },
        "seconds": {"type": "number"},
        "background": {"type": "array", "items": _BACKGROUND_WORK},
        "problems": {"type": "array", "items": FILE_PROBLEM},
        # [indexing] fail_on_frontmatter_error with frontmatter_unparsed > 0: the run's error.
        "error": {"type": "string"},
    },
    "required": [
        "corpus",
        "files_upserted",
        "files_touched",
        "files_deleted",
        "files_skipped",
        "chunks_written",
        "seconds",
    ],
}

INDEX_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "corpora": {"type": "array", "items": _INDEX_REPORT},
        "seconds": {"type": "number"},
        "warnings": _WARNINGS,
    },
    "required": ["corpora", "seconds", "warnings"],
}

PATH_PROP: dict[str, Any] = {
    "type": "string",
    **PATH_CHARS.length_schema(),
    "description": "Corpus-relative, '/'-separated path as list_files returns it, e.g. \"guides/setup.md\".",
}


def _corpus_only(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"corpus": {**CORPUS_PROP, "description": description}},
        "additionalProperties": False,
    }


_DEFAULT_CORPUS = "Corpus name. Omit to use the wiki of the repository containing cwd."

ARGS.update(
    {
        "list_corpora": {"type": "object", "properties": {}, "additionalProperties": False},
        "list_files": {
            "type": "object",
            "properties": {
                "corpus": {**CORPUS_PROP, "description": _DEFAULT_CORPUS},
                "changed_since": _FILTER_PROPS["changed_since"],
            },
            "additionalProperties": False,
        },
        "list_tree": _corpus_only(_DEFAULT_CORPUS),
        "corpus_stats": _corpus_only(_DEFAULT_CORPUS),
        "list_topics": _corpus_only(_DEFAULT_CORPUS),
        "read_markdown": {
            "type": "object",
            "properties": {
                "corpus": {**CORPUS_PROP, "description": _DEFAULT_CORPUS},
                "path": PATH_PROP,
                "line_numbers": {
                    "type": "boolean",
                    "description": "Prefix each line with its 1-based number and ': ' (default false).",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        "backlinks": {
            "type": "object",
            "properties": {
                "corpus": {**CORPUS_PROP, "description": _DEFAULT_CORPUS},
                "path": {**PATH_PROP, "description": "The target page's corpus-relative path."},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    }
)

_STR_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
# protocol.results.DocumentFormat: the format words of sandbox.formats.
_DOCUMENT_FORMAT: dict[str, Any] = {
    "type": "string",
    "enum": ["markdown", "text", "json", "pdf", "docx", "pptx", "xlsx", "ods", "csv", "tsv", "html", "code"],
}
_FILE: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "absolute_path": {"type": "string"}},
    "required": ["path", "absolute_path"],
}
# A directory of list_tree; its subdirs are directories too (described one level down, then open).
_TREE_FIELDS: dict[str, Any] = {
    "path": {"type": "string"},
    "absolute_path": _STR_OR_NULL,
    "files": {"type": "array", "items": _FILE},
}
_TREE_REQUIRED = ["path", "files", "subdirs"]
_TREE_NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        **_TREE_FIELDS,
        "subdirs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {**_TREE_FIELDS, "subdirs": {"type": "array"}},
                "required": _TREE_REQUIRED,
            },
        },
    },
    "required": _TREE_REQUIRED,
}

# list_topics (search/topics.py): a topic's directories, described two levels down, then open.
_TOPIC_NODE_REQUIRED = ["segment", "file_count", "children"]
_TOPIC_NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "segment": {"type": "string"},
        "file_count": {"type": "integer", "minimum": 1},
        "children": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "segment": {"type": "string"},
                    "file_count": {"type": "integer", "minimum": 1},
                    "children": {"type": "array"},
                },
                "required": _TOPIC_NODE_REQUIRED,
            },
        },
    },
    "required": _TOPIC_NODE_REQUIRED,
}
_TOPIC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": _STR_OR_NULL,
        "topic": _STR_OR_NULL,
        "file_count": {"type": "integer", "minimum": 1},
        "last_updated": {"type": "string"},
        "titles": _STRINGS,
        "children": {"type": "array", "items": _TOPIC_NODE},
    },
    "required": ["category", "topic", "file_count", "last_updated", "titles", "children"],
}

RESULTS: dict[str, dict[str, Any]] = {
    "ground": GROUND_RESULT,
    "index": INDEX_RESULT,
    "get_best_practice": {
        "type": "object",
        "properties": {
            "target": {"type": "string"},
            "category": {"type": "string"},
            "content": {"type": "string"},
        },
        "required": ["target", "content"],
    },
    "list_corpora": {
        "type": "object",
        "properties": {
            "corpora": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "kind": {"type": "string", "enum": ["wiki", "corpus", "custom"]},
                        "paths": {"type": "array", "items": {"type": "string"}},
                        "globs": _STRINGS,
                        "exclude": _STRINGS,
                        "repository": _STR_OR_NULL,
                    },
                    "required": ["name", "kind", "paths", "repository"],
                },
            },
            "default_corpus": _STR_OR_NULL,
            "repository": _STR_OR_NULL,
            # Why a discovered repository is missing, if one is.
            "warnings": _STRINGS,
        },
        "required": ["corpora"],
    },
    "list_files": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "files": {"type": "array", "items": _FILE},
            "filter_applied": {
                "type": "object",
                "properties": {"changed_since": {"type": "string"}, "changed_since_utc": {"type": "string"}},
                "required": ["changed_since", "changed_since_utc"],
            },
        },
        "required": ["corpus", "files"],
    },
    "list_tree": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "roots": {"type": "array", "items": {"type": "string"}},
            "tree": _TREE_NODE,
        },
        "required": ["corpus", "tree"],
    },
    "read_markdown": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "path": {"type": "string"},
            "absolute_path": {"type": "string"},
            "content": {"type": "string"},
            "bytes": {"type": "integer"},
            # A document format with a reader: content is the extracted text (labelled parts as sections).
            "format": _DOCUMENT_FORMAT,
            "pages": {"type": "integer", "minimum": 0},
            "cut": {"type": "string"},
            # A read-only daemon: content is the page's indexed text (the file is on the writer's machine).
            "served_from": {"type": "string", "enum": ["index"]},
            "note": {"type": "string"},
        },
        "required": ["corpus", "path", "absolute_path", "content", "bytes"],
    },
    "corpus_stats": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "indexed_files": {"type": "integer"},
            "total_chunks": {"type": "integer"},
            "last_indexed_ms": {"type": ["integer", "null"]},
            "first_indexed_ms": {"type": ["integer", "null"]},
            "unindexed_files": {"type": "integer"},
            "skipped_files": {"type": "integer"},
            "problems": {"type": "array", "items": FILE_PROBLEM},
            "indexing": _INDEXING_STATE,
            "vector_index": _VECTOR_INDEX_STATE,
        },
        "required": ["corpus", "indexed_files", "total_chunks", "last_indexed_ms", "unindexed_files"],
    },
    "list_topics": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "topics": {"type": "array", "items": _TOPIC},
            "indexing": _INDEXING_STATE,
        },
        "required": ["corpus", "topics"],
    },
    "backlinks": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "path": {"type": "string"},
            "backlinks": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["corpus", "path", "backlinks"],
    },
}

# -- wiki writes (add_markdown, delete_markdown) -----------------------------------------------------------
_WRITE_CORPUS: dict[str, Any] = {
    **CORPUS_PROP,
    "description": "Corpus to write to. Required: writes never default to a corpus (list_corpora names "
    "them); a write goes to its first root.",
}

ARGS.update(
    {
        "add_markdown": {
            "type": "object",
            "properties": {
                "corpus": _WRITE_CORPUS,
                "path": {
                    **PATH_PROP,
                    "description": "Corpus-relative, '/'-separated path of the page, e.g. \"guides/setup.md\" "
                    "(must end in .md in a wiki). Missing directories are created.",
                },
                "content": {
                    "type": "string",
                    **CONTENT_CHARS.length_schema(),
                    "description": "The whole page (UTF-8 Markdown, stored verbatim), or with a section edit "
                    "the text to insert or to put in place of the lines or the match.",
                },
                "overwrite": {
                    "type": "boolean",
                    "description": "Replace an existing page (default false: an existing page is refused; "
                    "read it with read_markdown first).",
                },
                "under_heading": {
                    "type": "string",
                    **UNDER_HEADING_CHARS.length_schema(),
                    "description": "Section edit: insert content into this heading's section ('Setup', "
                    "'## Setup' for that level, or 'Install > Setup' for a nested one).",
                },
                "position": {
                    "type": "string",
                    "enum": ["append", "prepend"],
                    "description": "With under_heading: at the end of the section (default) or right "
                    "under the heading.",
                },
                "replace_lines": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "integer", **REPLACE_LINE.integer_schema()},
                        "end": {"type": "integer", **REPLACE_LINE.integer_schema()},
                    },
                    "required": ["start", "end"],
                    "additionalProperties": False,
                    "description": "Section edit: replace lines start..end (1-based, inclusive, as "
                    "read_markdown with line_numbers shows them) with content.",
                },
                "replace_match": {
                    "type": "string",
                    **REPLACE_MATCH_CHARS.length_schema(),
                    "description": "Section edit: replace this literal text, which must occur exactly once, "
                    "with content.",
                },
            },
            "required": ["corpus", "path", "content"],
            "additionalProperties": False,
        },
        "delete_markdown": {
            "type": "object",
            "properties": {
                "corpus": _WRITE_CORPUS,
                "path": {**PATH_PROP, "description": "Corpus-relative path of the file to delete."},
            },
            "required": ["corpus", "path"],
            "additionalProperties": False,
        },
    }
)

_WRITE_WARNINGS: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            "line": {"type": "integer"},
            "path": {"type": "string"},
        },
        "required": ["code", "message"],
    },
}
_INDEX_FILES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "action": {"type": "string", "enum": ["scaffolded", "updated", "left-alone"]},
        },
        "required": ["path", "action"],
    },
}
_REINDEXED: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

RESULTS.update(
    {
        "add_markdown": {
            "type": "object",
            "properties": {
                "corpus": {"type": "string"},
                "path": {"type": "string"},
                "absolute_path": {"type": "string"},
                "action": {"type": "string", "enum": ["created", "overwritten", "edited", "unchanged"]},
                "edit": {"type": ["string", "null"]},
                "changed_lines": {
                    "type": ["object", "null"],
                    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                },
                "bytes": {"type": "integer"},
                "index_files": _INDEX_FILES,
                "reindexed": _REINDEXED,
                "chunks_written": {"type": "integer"},
                "warnings": _WRITE_WARNINGS,
            },
            "required": [
                "corpus",
                "path",
                "absolute_path",
                "action",
                "edit",
                "changed_lines",
                "bytes",
                "index_files",
                "reindexed",
                "chunks_written",
                "warnings",
            ],
        },
        "delete_markdown": {
            "type": "object",
            "properties": {
                "corpus": {"type": "string"},
                "path": {"type": "string"},
                "absolute_path": {"type": "string"},
                "deleted": {"type": "boolean"},
                "index_files": _INDEX_FILES,
                "reindexed": _REINDEXED,
                "warnings": _WRITE_WARNINGS,
            },
            "required": [
                "corpus",
                "path",
                "absolute_path",
                "deleted",
                "index_files",
                "reindexed",
                "warnings",
            ],
        },
    }
)

# -- get_connection_graph (search/graph.py; docs/tools/get_connection_graph.md) ----------------------------
# The numbers are GrooveSeek's: typed here, clamped by the engine (a value out of range is not an error
# there, so it is not one here); the result's ``clamped`` names what was clamped.
_ANY_INT: dict[str, Any] = {"type": "integer", "minimum": -GRAPH_ANY_INT, "maximum": GRAPH_ANY_INT}


def _clamped(bound: Range, what: str) -> dict[str, Any]:
    return {
        **_ANY_INT,
        "default": bound.default,
        "description": f"{what} (default {bound.default}; {bound.span}, a value outside is clamped).",
    }


ARGS["get_connection_graph"] = {
    "type": "object",
    "properties": {
        "corpus": {**CORPUS_PROP, "description": _DEFAULT_CORPUS},
        "start": {
            **PATH_PROP,
            "description": "The indexed page to walk from, corpus-relative as ground and "
            'list_files return it (e.g. "guides/setup.md").',
        },
        "depth": _clamped(GRAPH_DEPTH, "Levels of neighbours to walk"),
        "fan_out": _clamped(GRAPH_FAN_OUT, "Neighbours taken per node"),
        "min_similarity": {
            "type": "number",
            "default": GRAPH_MIN_SIMILARITY.default,
            "description": f"Cosine similarity a similar node needs to its parent (default "
            f"{GRAPH_MIN_SIMILARITY.default}; 0 to 1, a value outside is clamped).",
        },
        "seed_strategy": {
            "type": "string",
            "enum": ["all_chunks", "all-chunks", "centroid"],
            "default": "all_chunks",
            "description": "all_chunks: each of the start page's chunks is a query (a neighbour scores its "
            "best); centroid: their mean is one query.",
        },
        "dedup_by_path": {
            "type": "boolean",
            "default": False,
            "description": "true: at most one node per page.",
        },
        "category": {**_FILTER_PROPS["category"], "description": "Only nodes of pages of this category."},
        "topic": {**_FILTER_PROPS["topic"], "description": "Only nodes of pages of this topic."},
        "exclude_paths": {
            "type": "array",
            "items": PATH_PROP,
            "description": f"Pages never to include (the start is always excluded); the first "
            f"{GRAPH_EXCLUDE_PATHS.high} are used.",
        },
        "max_nodes": _clamped(GRAPH_MAX_NODES, "Nodes returned at most (0: an empty graph)"),
        "max_seed_chunks": _clamped(GRAPH_MAX_SEED_CHUNKS, "Chunks of the start page used as seeds"),
        "links": {
            "type": "boolean",
            "default": True,
            "description": "Also follow the pages' [[wikilinks]] and relative Markdown links (edge "
            '"link"); false: similarity only, as GrooveSeek.',
        },
    },
    "required": ["start"],
    "additionalProperties": False,
}

_GRAPH_NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "node_id": {"type": "integer"},
        "parent_id": {"type": ["integer", "null"]},
        "depth": {"type": "integer"},
        "chunk_id": {"type": "string"},
        "score": {"type": "number"},
        "path": {"type": "string"},
        "heading": _STR_OR_NULL,
        "title": _STR_OR_NULL,
        "topic": _STR_OR_NULL,
        "snippet": {"type": "string"},
        "edge": {"type": "string", "enum": ["similar", "link"]},
    },
    "required": [
        "node_id",
        "parent_id",
        "depth",
        "chunk_id",
        "score",
        "path",
        "heading",
        "title",
        "topic",
        "snippet",
        "edge",
    ],
}
RESULTS["get_connection_graph"] = {
    "type": "object",
    "properties": {
        "start_path": {"type": "string"},
        "truncated": {"type": "boolean"},
        "truncation": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "enum": ["seed_chunks", "node_budget"]},
                    "limit": {"type": "integer"},
                    "detail": {"type": "string"},
                },
                "required": ["reason", "limit", "detail"],
            },
        },
        "nodes": {"type": "array", "items": _GRAPH_NODE},
        "stats": {
            "type": "object",
            "properties": {
                "total_nodes": {"type": "integer"},
                "max_depth_reached": {"type": "integer"},
                "knn_queries": {"type": "integer"},
                "duration_ms": {"type": "integer"},
                "seeds_used": {"type": "integer"},
            },
            "required": ["total_nodes", "max_depth_reached", "knn_queries", "duration_ms", "seeds_used"],
        },
        "clamped": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "param": {"type": "string"},
                    "given": {"type": "number"},
                    "used": {"type": "number"},
                },
                "required": ["param", "given", "used"],
            },
        },
    },
    "required": ["start_path", "truncated", "truncation", "nodes", "stats", "clamped"],
}

# -- move_markdown (wiki/move.py; docs/tools/move_markdown.md) ---------------------------------------------
ARGS["move_markdown"] = {
    "type": "object",
    "properties": {
        "corpus": _WRITE_CORPUS,
        "from": {
            **PATH_PROP,
            "description": 'Corpus-relative path of the page to move, e.g. "guides/setup.md".',
        },
        "to": {
            **PATH_PROP,
            "description": "Its new corpus-relative path (must not exist; .md in a wiki). Missing directories "
            "are created.",
        },
    },
    "required": ["corpus", "from", "to"],
    "additionalProperties": False,
}
RESULTS["move_markdown"] = {
    "type": "object",
    "properties": {
        "corpus": {"type": "string"},
        "from": {"type": "string"},
        "to": {"type": "string"},
        "absolute_path": {"type": "string"},
        "rewritten": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "links": {"type": "integer", "minimum": 1}},
                "required": ["path", "links"],
            },
        },
        "links_rewritten": {"type": "integer", "minimum": 0},
        "index_files": _INDEX_FILES,
        "reindexed": _REINDEXED,
        "chunks_written": {"type": "integer"},
        "warnings": _WRITE_WARNINGS,
    },
    "required": [
        "corpus",
        "from",
        "to",
        "absolute_path",
        "rewritten",
        "links_rewritten",
        "index_files",
        "reindexed",
        "chunks_written",
        "warnings",
    ],
}
# -- documents and the kb:// resources (get_document, resource_groups, read_resource) ----------------------
ARGS.update(
    {
        "get_document": {
            "type": "object",
            "properties": {
                "corpus": {**CORPUS_PROP, "description": _DEFAULT_CORPUS},
                "path": {
                    **PATH_PROP,
                    "description": "The document's path exactly as `ground` returns it (corpus-relative, "
                    "'/'-separated, same case), e.g. \"guides/setup.md\". Any other spelling is not found.",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        "resource_groups": {"type": "object", "properties": {}, "additionalProperties": False},
        "read_resource": {
            "type": "object",
            "properties": {"uri": {"type": "string", **KB_URI_CHARS.length_schema()}},
            "required": ["uri"],
            "additionalProperties": False,
        },
    }
)

RESULTS["get_document"] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "title": {"type": "string"},
        "date": _STR_OR_NULL,
        "topic": _STR_OR_NULL,
        "tags": _STRINGS,
        "content": {"type": "string"},
        "truncated": {"type": "boolean"},
        "corpus": {"type": "string"},
        "category": _STR_OR_NULL,
        "format": _DOCUMENT_FORMAT,
        "bytes": {"type": "integer"},
        "uri": {"type": "string"},
        "cut": {"type": "string"},
    },
    "required": [
        "path",
        "title",
        "date",
        "topic",
        "tags",
        "content",
        "truncated",
        "corpus",
        "category",
        "format",
        "bytes",
    ],
}

# Results of the operations behind the MCP resources (no tool publishes them; shim/resources.py reads them).
RESOURCE_RESULTS: dict[str, dict[str, Any]] = {
    "resource_groups": {
        "type": "object",
        "properties": {
            "corpus": _STR_OR_NULL,
            "groups": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "prefix": {"type": "string"},
                        "name": {"type": "string"},
                        "uri": {"type": "string"},
                        "description": {"type": "string"},
                        "documents": {"type": "integer"},
                    },
                    "required": ["prefix", "name", "uri", "description", "documents"],
                },
            },
        },
        "required": ["corpus", "groups"],
    },
    "read_resource": {
        "type": "object",
        "properties": {
            "uri": {"type": "string"},
            "mime_type": {"type": "string", "enum": ["text/markdown", "text/plain"]},
            "text": {"type": "string"},
            "truncated": {"type": "boolean"},
        },
        "required": ["uri", "mime_type", "text", "truncated"],
    },
}

# -- search: the GrooveSeek face's search (search/hits.py; docs/grooveseek-face.md) ------------------------
# GrooveSeek's parameters, defaults and bounds. What GrooveSeek clamps (limit, min_quality) has no bound
# here: search/hits.py clamps it; what it refuses (mmr weights outside 0-1, a query over 1024 bytes) is
# refused (the byte count by search/hits.py: a schema counts characters).
ARGS["search"] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": GROOVESEEK_QUERY_BYTES,
            "description": f"What to look for (at most {GROOVESEEK_QUERY_BYTES} bytes of UTF-8). A group "
            "led by - (e.g. -async) excludes chunks holding it instead of searching for it "
            f'({NEGATION_MIN_CHARS}+ characters after the -); a "quoted phrase" must appear verbatim.',
        },
        "corpus": {**CORPUS_PROP, "description": "Corpus to search (the face's knowledge base is kb)."},
        "limit": {
            "type": "integer",
            "minimum": 0,
            "description": f"How many chunks to return (default {GROOVESEEK_LIMIT.default}; clamped to "
            f"{GROOVESEEK_LIMIT.low}-{GROOVESEEK_LIMIT.high}).",
        },
        **{name: _FILTER_PROPS[name] for name in ("category", "topic", "path_globs", "tags_any", "tags_all")},
        "date_from": {"type": "string", "description": "YYYY-MM-DD: only documents dated on or after it."},
        "date_to": {"type": "string", "description": "YYYY-MM-DD: only documents dated on or before it."},
        "fields": _FILTER_PROPS["fields"],
        "fields_not": _FILTER_PROPS["fields_not"],
        "rerank": {
            "type": "boolean",
            "description": "Override the server default: re-score the best candidates with the configured "
            "cross-encoder (ignored when none is loaded).",
        },
        "min_quality": {
            "type": "number",
            "description": f"Hide chunks whose quality score is below this (default {MIN_QUALITY_DEFAULT}, "
            "clamped to 0-1).",
        },
        "include_low_quality": {"type": "boolean", "description": "true: min_quality 0."},
        "min_confidence_ratio": {
            "type": "number",
            "description": "low_confidence is true when at least two candidates, a positive mean score and "
            f"max/mean under this (default {MIN_CONFIDENCE_RATIO_DEFAULT}; 0 disables).",
        },
        "mmr": {
            "type": "boolean",
            "description": "Diversity re-rank (maximal marginal relevance). Default false.",
        },
        "mmr_lambda": {
            "type": "number",
            **MMR_LAMBDA.number_schema(),
            "description": f"mmr: relevance against novelty (default {MMR_LAMBDA.default}).",
        },
        "mmr_same_doc_penalty": {
            "type": "number",
            **MMR_SAME_DOC_PENALTY.number_schema(),
            "description": f"mmr: penalty for a chunk of an already picked document (default "
            f"{MMR_SAME_DOC_PENALTY.default}).",
        },
        "parent_retriever": {
            "type": "boolean",
            "description": f"Expand each hit: under {PARENT_SHORT_TOKENS} tokens to its whole document, else "
            f"to adjacent chunks of the same section, at most {PARENT_MAX_TOKENS:,} tokens; adds "
            "expanded_from. Default false.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_GROUND_CHUNK = GROUND_RESULT["properties"]["docs"]["items"]["properties"]["chunks"]["items"]["properties"]
RESULTS["search"] = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "score": {"type": "number"},
                    "path": {"type": "string"},
                    "title": {"type": "string"},
                    "heading": _NULLABLE_STRING,
                    "heading_path": {"type": "array", "items": {"type": "string"}},
                    "topic": _NULLABLE_STRING,
                    "date": _NULLABLE_STRING,
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "content": {"type": "string"},
                    "match_spans": _GROUND_CHUNK["match_spans"],
                    "expanded_from": _GROUND_CHUNK["expanded_from"],
                    "uri": {"type": "string"},
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                    "symbol_kind": {"type": "string"},
                },
                "required": [
                    "score",
                    "path",
                    "title",
                    "heading",
                    "heading_path",
                    "topic",
                    "date",
                    "tags",
                    "content",
                ],
            },
        },
        "low_confidence": {"type": "boolean"},
        "filter_applied": GROUND_RESULT["properties"]["filter_applied"],
    },
    "required": ["results", "low_confidence", "filter_applied"],
}

# -- search_rag: the KuraDB face's retrieval (search/rag.py; docs/kuradb-face.md) --------------------------
# The face's own check (shim/kuradb.py) speaks KuraDB's parameter names (db, q); these are the daemon's.
ARGS["search_rag"] = {
    "type": "object",
    "properties": {
        "corpus": {**CORPUS_PROP, "description": "The corpus to search (a name list_corpora gives)."},
        "query": {"type": "string", **QUERY_CHARS.length_schema(), "description": "What to look for."},
        "mode": {
            "type": "string",
            "enum": list(RAG_MODES),
            "description": "keyword: BM25 alone; semantic: vectors alone; omitted: both.",
        },
        "limit": {
            "type": "integer",
            **RAG_LIMIT.integer_schema(),
            "default": RAG_LIMIT.default,
            "description": f"Chunks per mode (default {RAG_LIMIT.default}).",
        },
    },
    "required": ["corpus", "query"],
    "additionalProperties": False,
}
_RAG_SOURCES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "source": {"type": "string"},
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"chunk": {"type": "integer", "minimum": 0}, "content": {"type": "string"}},
                    "required": ["chunk", "content"],
                },
            },
        },
        "required": ["source", "matches"],
    },
}
RESULTS["search_rag"] = {
    "type": "object",
    "properties": {"keyword": _RAG_SOURCES, "semantic": _RAG_SOURCES},
}
