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
                    "keywords": {"type": "array", "items": {"type": "string"}},
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
        "frontmatter_errors": {
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

PATH_PROP: dict[str, Any] = {
    "type": "string",
    "maxLength": 4096,
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
        "list_files": _corpus_only(_DEFAULT_CORPUS),
        "list_tree": _corpus_only(_DEFAULT_CORPUS),
        "corpus_stats": _corpus_only(_DEFAULT_CORPUS),
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
_FILE: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "absolute_path": {"type": "string"}},
    "required": ["path", "absolute_path"],
}

RESULTS: dict[str, dict[str, Any]] = {
    "ground": GROUND_RESULT,
    "index": INDEX_RESULT,
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
                        "repository": _STR_OR_NULL,
                    },
                    "required": ["name", "kind", "paths", "repository"],
                },
            },
            "default_corpus": _STR_OR_NULL,
            "repository": _STR_OR_NULL,
        },
        "required": ["corpora"],
    },
    "list_files": {
        "type": "object",
        "properties": {"corpus": {"type": "string"}, "files": {"type": "array", "items": _FILE}},
        "required": ["corpus", "files"],
    },
    "list_tree": {
        "type": "object",
        "properties": {
            "corpus": {"type": "string"},
            "roots": {"type": "array", "items": {"type": "string"}},
            "tree": {"type": "object", "required": ["path", "files", "subdirs"]},
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
            "unindexed_files": {"type": "integer"},
        },
        "required": ["corpus", "indexed_files", "total_chunks", "last_indexed_ms", "unindexed_files"],
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
