"""The KuraDB face (``hallouminate serve --dialect kuradb``, and ``/kuradb/mcp`` on the HTTP listener):
KuraDB's two read-only tools, ``list_rag`` and ``search_rag``, with its names, parameters, defaults, result
shapes and messages, so an agent's prompts written for KuraDB keep working. A db is one of our corpora, by
its name, among those of the face's scope (stdio: the directory ``serve`` started in; HTTP: ``[http]
root``). Errors are tool results (``isError: true``) carrying KuraDB's messages, never JSON-RPC errors.

The server wiring is shim/server.py's face table; this module is the tools, and ``search_args``, the one
check of search_rag's arguments that the MCP tool and ``GET /api/search`` (http/rest.py) both run.
docs/kuradb-face.md.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Mapping
from typing import Any

from hallouminate.errors import CallerError, InvalidArgument
from hallouminate.protocol.limits import CORPUS_NAME_CHARS, QUERY_CHARS, RAG_LIMIT, RAG_MODES
from hallouminate.protocol.published import published
from hallouminate.protocol.schemas import RESULTS
from hallouminate.protocol.validation import validate_args
from hallouminate.shim.face import Call, FaceTool

INSTRUCTIONS = """\
This server is a KuraDB-compatible face of hallouminate: read-only retrieval over the local document \
collections (corpora) configured for the directory it serves, indexed by hallouminate's daemon: \
Markdown pages, other documents, and source files where a corpus is configured to index them (as text).

Call `list_rag` to learn the db names (`loaded`: queryable now; `registered`: every one, with when its \
index was created), then `search_rag` with a `db` and a query `q`: `mode` "keyword" (BM25 on the words) or \
"semantic" (meaning, by vectors), or both when omitted; up to `limit` chunks per mode, grouped by source \
file (absolute paths). Cite the source paths.

What it is not: it never writes (no tool adds, changes or deletes anything); it keeps no conversation \
history, session memory or user profile, so it cannot recall what was said before; it has no code \
intelligence (no references, types, call graphs or builds: a source file is searched as text). When \
nothing relevant comes back, say the collection is silent rather than answering from general knowledge.
"""

SEARCH_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "db": {
            "type": "string",
            **CORPUS_NAME_CHARS.length_schema(),
            "description": "The database (corpus) to search: a name list_rag gives.",
        },
        "q": {"type": "string", **QUERY_CHARS.length_schema(), "description": "The query text."},
        "mode": {
            "type": "string",
            "enum": list(RAG_MODES),
            "description": "keyword (BM25) or semantic (vectors); omitted: both.",
        },
        "limit": {
            "type": "integer",
            **RAG_LIMIT.integer_schema(),
            "default": RAG_LIMIT.default,
            "description": f"Chunks per mode, {RAG_LIMIT.low}-{RAG_LIMIT.high} (default {RAG_LIMIT.default}).",
        },
    },
    "required": ["db", "q"],
    "additionalProperties": False,
}

LIST_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "loaded": {"type": "array", "items": {"type": "string"}},
        "registered": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"db": {"type": "string"}, "createAt": {"type": ["string", "null"]}},
                "required": ["db", "createAt"],
            },
        },
    },
    "required": ["loaded", "registered"],
}


def search_args(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """search_rag's arguments checked (KuraDB's parameters, their bounds and the mode's enum) and turned
    into the daemon op's (``corpus``, ``query``, ``mode``, ``limit`` with its default); a violation is
    ``InvalidArgument("invalid argument: ...")``. The MCP tool and the REST search both call this."""
    args = dict(arguments)
    try:
        validate_args(SEARCH_INPUT, args, "search_rag")
    except InvalidArgument as exc:
        reason = exc.message.removeprefix("search_rag: ")
        raise exc.reworded(f"invalid argument: {reason}") from None
    op: dict[str, Any] = {
        "corpus": args["db"],
        "query": args["q"],
        "limit": args.get("limit", RAG_LIMIT.default),
    }
    if "mode" in args:
        op["mode"] = args["mode"]
    return op


def create_at(ms: int | None) -> str | None:
    """``createAt``: RFC 3339, UTC, to the second (KuraDB's form); None for a corpus never indexed."""
    if ms is None:
        return None
    at = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _list_rag(call: Call, args: dict[str, Any]) -> dict[str, Any]:
    """Every corpus of the scope (``list_corpora``) with its index's figures (``corpus_stats``, all at
    once): ``loaded`` those holding chunks, ``registered`` all, ``createAt`` the oldest chunk's time."""
    listing = await call("list_corpora", {})
    names = [entry["name"] for entry in listing["corpora"]]

    async def stats(name: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = await call("corpus_stats", {"corpus": name})
        except CallerError:
            return None  # a corpus whose root is gone, say: registered, nothing queryable
        return found

    figures = await asyncio.gather(*(stats(name) for name in names))
    return {
        "loaded": [name for name, st in zip(names, figures, strict=True) if st and st["total_chunks"] > 0],
        "registered": [
            {"db": name, "createAt": create_at(st.get("first_indexed_ms") if st else None)}
            for name, st in zip(names, figures, strict=True)
        ],
    }


async def _search_rag(call: Call, args: dict[str, Any]) -> Any:
    return await call("search_rag", search_args(args))


def _check_search(args: dict[str, Any]) -> None:
    search_args(args)


TOOLS: dict[str, FaceTool] = {
    tool.name: tool
    for tool in (
        FaceTool(
            name="list_rag",
            op="list_corpora",
            description=(
                "List the searchable databases. Returns { loaded: [names queryable now], registered: "
                "[{ db, createAt }] }; createAt is when the database's index was created (RFC 3339, "
                "UTC), null if it was never indexed. Pass a name as search_rag's db."
            ),
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            output_schema=LIST_RESULT,
            run=_list_rag,
        ),
        FaceTool(
            name="search_rag",
            op="search_rag",
            description=(
                "Search one database for file chunks. mode keyword (BM25 on the words) or semantic "
                "(vectors, by meaning); omitted: both. Up to limit chunks per mode (default 10, 1-100). "
                "Returns { keyword: [{ source, matches: [{ chunk, content }] }], semantic: [...] }, "
                "grouped by source file (absolute path), best first; a mode that did not run is absent. "
                "Read-only."
            ),
            input_schema=SEARCH_INPUT,
            output_schema=published(RESULTS["search_rag"]),
            run=_search_rag,
            check=_check_search,
        ),
    )
}
