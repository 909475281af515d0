"""Every numeric bound a caller meets, and the defaults of the bounded settings: the one table.

The published tool schemas (``protocol/schemas.py``), config loading and ``config validate``
(``config/layer.py``), the engine's own checks (``search/ground.py``, ``search/phrase.py``), the page size
of reads and writes, and the CLI's flag ranges all read these; none keeps a copy of a number. When they
disagreed, ``[search] top_files = 5000`` validated and then failed every ``ground`` with an error blaming a
parameter the caller never sent. The bounds are part of the published schemas, frozen for clients
(docs/stability.md): narrowing one breaks callers, widening one needs the engine to cope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Range:
    """An inclusive range of integers (or of lengths), named as the caller writes the parameter."""

    name: str
    low: int
    high: int
    # What is counted, for messages: "" for a plain number, else "characters" or "bytes".
    unit: str = ""
    # The value used when the caller sends none (and no config sets one); None: the parameter is required
    # or has no numeric default.
    default: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.low <= self.high or (self.default is not None and self.default not in self):
            raise ValueError(f"inconsistent range {self!r}")

    def __contains__(self, value: object) -> bool:
        # bool is an int subclass in Python; `true` is not a count.
        return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high

    @property
    def span(self) -> str:
        """How messages state the range: ``1 to 100``."""
        return f"{self.low} to {self.high}"

    def integer_schema(self) -> dict[str, Any]:
        """The JSON-schema keywords bounding an integer parameter."""
        return {"minimum": self.low, "maximum": self.high}

    def length_schema(self) -> dict[str, Any]:
        """The JSON-schema keywords bounding a string parameter's length (a zero minimum is not stated)."""
        return {"minLength": self.low, "maxLength": self.high} if self.low else {"maxLength": self.high}


# -- ground ---------------------------------------------------------------------------------------------
# Also the [search] settings of a config file, which set these parameters' defaults (SEARCH_SETTINGS).
TOP_FILES = Range("top_files", 1, 100, default=10)
CHUNKS_PER_FILE = Range("chunks_per_file", 1, 20, default=3)
LIMIT = Range("limit", 1, 1000, default=50)
SNIPPET_CHARS = Range("snippet_chars", 20, 4000, default=240)
SEARCH_SETTINGS = (TOP_FILES, CHUNKS_PER_FILE, LIMIT, SNIPPET_CHARS)

# -- rerank (search/rerank.py; docs/adr/0032-rerank-stage.md) ------------------------------------------
# The model's time for one query's candidates, [search] rerank_budget_ms: past it the fused order is returned
# with a rerank-timeout warning. A MiniLM-L6-sized cross-encoder needs ~2.3x the time of embedding its 50
# candidates: ~3 s on 2 idle cores, 9-15 s on busy ones (docs/adr/0032-rerank-stage.md).
RERANK_BUDGET_MS = Range("rerank_budget_ms", 10, 60_000, default=5_000)
# The pool the post-fusion stages (rerank, mmr) work on: max(top_files x POOL_PER_FILE, POOL_MIN) fused
# chunks (GrooveSeek's over-fetch), and at least that many are drawn from each signal.
POOL_PER_FILE = 5
POOL_MIN = 50

QUERY_CHARS = Range("query", 1, 2048, "characters")
# An argument of an MCP prompt (shim/prompts.py): a deep_dive question becomes a search query, so the
# query's bound.
PROMPT_ARGUMENT_CHARS = Range("argument", 1, QUERY_CHARS.high, "characters")
# match "phrase": the whole query is the phrase, scanned literally in every chunk.
PHRASE_CHARS = Range("query", 1, 512, "characters")
# Occurrences counted before a phrase scan stops: bounds the work and the answer of a phrase found everywhere.
SCAN_CAP = 10_000
# Files listed by output "counts"; more are dropped with a counts-truncated warning.
COUNTS_MAX_FILES = 2_000

# -- ground's post-retrieval stages (search/mmr.py, search/parent.py, search/spans.py) --------------------


@dataclass(frozen=True)
class Fraction:
    """An inclusive range of real numbers (a weight), named as the caller writes the parameter."""

    name: str
    low: float
    high: float
    default: float

    def __post_init__(self) -> None:
        if not self.low <= self.default <= self.high:
            raise ValueError(f"inconsistent range {self!r}")

    def __contains__(self, value: object) -> bool:
        # bool is an int subclass; NaN compares false both ways, so it is refused too.
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and self.low <= value <= self.high
        )

    def number_schema(self) -> dict[str, Any]:
        return {"minimum": self.low, "maximum": self.high}


MMR_LAMBDA = Fraction("mmr_lambda", 0.0, 1.0, default=0.7)
MMR_SAME_DOC_PENALTY = Fraction("mmr_same_doc_penalty", 0.0, 1.0, default=0.0)
# parent: a chunk of fewer tokens (the model's) grows to its whole page, others to their siblings; either
# grows to at most this many tokens.
PARENT_SHORT_TOKENS = 100
PARENT_MAX_TOKENS = 2_000
# match_spans: at most this many spans per chunk, computed only for chunk texts up to this many bytes.
SPANS_MAX = 100
SPANS_MAX_TEXT_BYTES = 256 * 1024

# -- names and paths -------------------------------------------------------------------------------------
CORPUS_NAME_CHARS = Range("corpus", 1, 256, "characters")
# PATH_MAX on Linux: no longer path can name a file. cwd is checked in bytes too (protocol/cwd.py).
PATH_MAX_BYTES = 4096
CWD_CHARS = Range("cwd", 1, PATH_MAX_BYTES, "characters")
PATH_CHARS = Range("path", 0, PATH_MAX_BYTES, "characters")

# -- pages (read_markdown, add_markdown) -----------------------------------------------------------------
# A page must stay readable in one read_markdown answer: frames are capped at 4 MiB (protocol.MAX_FRAME).
# A text of more characters is more bytes, so the schemas refuse it before it is sent; a page of that many
# bytes has at most that many lines, which bounds replace_lines.
PAGE_MAX_BYTES = 3 * 1024 * 1024
CONTENT_CHARS = Range("content", 0, PAGE_MAX_BYTES, "characters")
REPLACE_MATCH_CHARS = Range("replace_match", 1, PAGE_MAX_BYTES, "characters")
# Bounded: an unbounded integer from JSON could not even be framed (msgpack stops at 64 bits), which
# surfaced as an internal error rather than -32602.
REPLACE_LINE = Range("replace_lines", 1, PAGE_MAX_BYTES)
UNDER_HEADING_CHARS = Range("under_heading", 1, 1024, "characters")

# -- documents (get_document, the kb:// resources) --------------------------------------------------------
# A Markdown or text document larger than this is refused by get_document and not offered as a resource; a
# PDF's extracted text is cut to it (``truncated``). GrooveSeek's bounds (docs/adr/0037-kb-resources.md).
DOCUMENT_TEXT_MAX_BYTES = 1024 * 1024
# A binary document (a PDF) larger than this on disk is never read for get_document or a resource.
DOCUMENT_BINARY_MAX_BYTES = 50 * 1024 * 1024
# A kb:// URI names a path, each byte of which may be percent-encoded (three characters).
KB_URI_CHARS = Range("uri", 1, len("kb://topic/") + 3 * PATH_MAX_BYTES, "characters")

# -- ground's filters (search/filters.py) ---------------------------------------------------------------
# Each list a filter takes (path_globs, tags_any, tags_all, each key of fields / fields_not): at most this
# many items of at most this many bytes (GrooveSeek's bounds on fields, applied to every list alike).
FILTER_ITEMS = Range("items", 0, 64)
FILTER_ITEM_BYTES = Range("item", 1, 1024, "bytes")
# Keys of fields / fields_not.
FILTER_KEYS = Range("keys", 1, 64)
# A "-term" group excludes only with at least this many characters after the "-" (GrooveSeek's floor).
NEGATION_MIN_CHARS = 3
# category and topic: exact names (a path segment or a frontmatter value).
CATEGORY_CHARS = Range("category", 1, 1024, "characters")
TOPIC_CHARS = Range("topic", 1, 1024, "characters")
# changed_since (ground, list_files): a date, a datetime or a duration (protocol/recency.py); 64 holds
# any ISO datetime with a zone and its fraction of a second.
CHANGED_SINCE_CHARS = Range("changed_since", 1, 64, "characters")
# min_quality (a number): chunks whose index-time quality (0-1) is below it are not candidates; null
# quality passes. Default 0.3 (GrooveSeek's; ADR 0029 measured what it leaves out).
MIN_QUALITY = Fraction("min_quality", 0.0, 1.0, default=0.3)

# -- list_topics (search/topics.py) ---------------------------------------------------------------------
# Titles listed per topic entry (its documents' first, by path); ``file_count`` still counts every one, so
# a topic of thousands of pages stays a line of a result, not a page of it.
TOPIC_TITLES_MAX = 50
MIN_QUALITY_DEFAULT = MIN_QUALITY.default
# min_confidence_ratio: low_confidence also when the best candidate cosine is under this many times their
# mean (GrooveSeek's rule and default; 0 disables; a non-finite value is this default). docs/adr/0040.
MIN_CONFIDENCE_RATIO_DEFAULT = 1.5

# -- the GrooveSeek face's search (search/hits.py; docs/grooveseek-face.md) -------------------------------
# query: at most this many UTF-8 bytes (an error beyond); limit: default 5, clamped silently to 1..1000.
GROOVESEEK_QUERY_BYTES = 1024
GROOVESEEK_LIMIT = Range("limit", 1, 1000, default=5)

# -- the KuraDB face's search_rag (search/rag.py; docs/kuradb-face.md) ------------------------------------
# limit: chunks per mode (keyword, semantic), default 10, 1-100 (KuraDB's; refused outside, not clamped).
RAG_LIMIT = Range("limit", 1, 100, default=10)
RAG_MODES = ("keyword", "semantic")

# -- get_best_practice (browse/best_practice.py) -----------------------------------------------------------
# target replaces {target} in a path template: one file-name part (no '/', '..' or control characters).
BEST_PRACTICE_TARGET_CHARS = Range("target", 1, 255, "characters")
# [best_practice] path_templates: how many templates, and how long each may be.
BEST_PRACTICE_TEMPLATES = Range("path_templates", 1, 32)

# -- get_connection_graph (search/graph.py; docs/tools/get_connection_graph.md) ---------------------------
# GrooveSeek's bounds. A value outside them is clamped, not refused (as GrooveSeek does), and the result's
# ``clamped`` names each one; the schemas accept any integer JSON can carry exactly (GRAPH_ANY_INT).
GRAPH_DEPTH = Range("depth", 1, 3, default=2)
GRAPH_FAN_OUT = Range("fan_out", 1, 20, default=5)
GRAPH_MAX_NODES = Range("max_nodes", 0, 2000, default=100)
GRAPH_MAX_SEED_CHUNKS = Range("max_seed_chunks", 1, 1000, default=32)
GRAPH_MIN_SIMILARITY = Fraction("min_similarity", 0.0, 1.0, default=0.3)
# exclude_paths: items beyond these are dropped (clamped); each is a path (PATH_CHARS).
GRAPH_EXCLUDE_PATHS = Range("exclude_paths", 0, 64)
# A node's snippet: its chunk's text, whitespace folded, cut at this many characters (+ "…").
GRAPH_SNIPPET_CHARS = 200
GRAPH_ANY_INT = 2**53 - 1

# -- the HTTP listener ([http] port; `hallouminate port set N`) -------------------------------------------
HTTP_PORT = Range("port", 1, 65535)
