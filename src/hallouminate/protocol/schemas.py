"""JSON schemas of each operation's arguments and results: one definition for the daemon and the shim.

The daemon validates every request's ``args`` against these; the shim publishes them (plus ``cwd``) as
MCP tool input schemas and validates before forwarding; MCP clients re-validate ``structuredContent``
against the output schemas, so these must match what the daemon returns exactly.
"""

from __future__ import annotations

from typing import Any

CORPUS_PROP: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 256,
    "description": "Corpus name (see list_corpora). Omit to use the default for the operation.",
}

QUERY_MAX_CHARS = 2048

ARGS: dict[str, dict[str, Any]] = {
    "ping": {"type": "object", "properties": {}, "additionalProperties": False},
    "status": {"type": "object", "properties": {}, "additionalProperties": False},
    "shutdown": {"type": "object", "properties": {}, "additionalProperties": False},
    "index": {
        "type": "object",
        "properties": {
            "corpus": {
                **CORPUS_PROP,
                "description": "Corpus to (re)index. Omit to index every corpus configured for cwd.",
            }
        },
        "additionalProperties": False,
    },
    "ground": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": QUERY_MAX_CHARS,
                "description": "What to look for, in natural language or keywords.",
            },
            "corpus": {
                **CORPUS_PROP,
                "description": "Pin the search to one corpus. Omit to search every corpus, the "
                "repository's own wiki first on ties.",
            },
            "top_files": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "How many files to return (default 10).",
            },
            "chunks_per_file": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "description": "How many chunks to show per file (default 3).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "description": "Candidate chunks drawn from each ranking signal (default 50).",
            },
            "snippet_chars": {
                "type": "integer",
                "minimum": 20,
                "maximum": 4000,
                "description": "Maximum snippet length per chunk (default 240).",
            },
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

GROUND_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "took_ms": {"type": "number"},
        "stats": {
            "type": "object",
            "properties": {"hits": {"type": "integer"}},
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
                    "stale": {"type": "boolean"},
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
                            },
                            "required": ["heading_path", "line_start", "line_end", "score", "snippet"],
                        },
                    },
                },
                "required": ["corpus", "path", "absolute_path", "score", "summary", "stale", "chunks"],
            },
        },
        "warnings": _WARNINGS,
    },
    "required": ["query", "took_ms", "stats", "docs", "warnings"],
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
        "chunks_written": {"type": "integer"},
        "seconds": {"type": "number"},
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

RESULTS: dict[str, dict[str, Any]] = {"ground": GROUND_RESULT, "index": INDEX_RESULT}
