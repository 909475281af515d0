"""The MCP tools: names, descriptions, schemas and annotations, each mapped to a daemon operation."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hallouminate.protocol.limits import CWD_CHARS
from hallouminate.protocol.published import published
from hallouminate.protocol.schemas import ARGS, RESULTS
from hallouminate.render import (
    render_backlinks,
    render_best_practice,
    render_corpora,
    render_delete,
    render_document,
    render_files,
    render_graph,
    render_ground,
    render_index,
    render_move,
    render_read,
    render_stats,
    render_topics,
    render_tree,
    render_write,
)
from hallouminate.shim.face import Call

# Each takes the operation's result type (protocol/results.py); the daemon's answer arrives untyped.
RENDERERS: dict[str, Callable[[Any], str]] = {
    "ground": render_ground,
    "index": render_index,
    "get_best_practice": render_best_practice,
    "list_corpora": render_corpora,
    "list_files": render_files,
    "list_tree": render_tree,
    "read_markdown": render_read,
    "corpus_stats": render_stats,
    "list_topics": render_topics,
    "backlinks": render_backlinks,
    "get_connection_graph": render_graph,
    "add_markdown": render_write,
    "delete_markdown": render_delete,
    "move_markdown": render_move,
    "get_document": render_document,
}

CWD_PROP: dict[str, Any] = {
    "type": "string",
    **CWD_CHARS.length_schema(),  # the daemon checks the same bound in bytes (protocol.cwd.MAX_CWD_BYTES)
    "description": "Absolute path of the active checkout (the agent's working directory). Required.",
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    op: str
    description: str
    read_only: bool
    idempotent: bool = True
    # May destroy content (an overwrite, a delete): MCP hosts may ask the user before calling.
    destructive: bool = False

    # Built once per tool (every call validates against it): treat the returned dicts as read-only.
    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        schema = copy.deepcopy(ARGS[self.op])
        schema["properties"] = {"cwd": CWD_PROP, **schema["properties"]}
        schema["required"] = ["cwd", *schema.get("required", [])]
        return schema

    @functools.cached_property
    def output_schema(self) -> dict[str, Any] | None:
        full = RESULTS.get(self.op)
        return published(full) if full is not None else None

    # Our tools check their arguments against the input schema (shim/server.py) and name cwd themselves.
    check = None

    async def run(self, call: Call, args: dict[str, Any]) -> Any:
        return await call(self.op, args)

    def text(self, result: Any) -> str:
        """The op's result as the outline an agent reads (render/)."""
        return RENDERERS[self.op](result)


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name="ground",
            op="ground",
            description=(
                "Search the repository's written knowledge (its Markdown wiki and configured corpora) and "
                "get the best files with their most relevant sections, line ranges and snippets. Hybrid "
                "ranking: semantic vectors and BM25 keywords fused by reciprocal rank. With no `corpus` it "
                "searches every corpus, the wiki of the repository containing `cwd` first on ties; pass "
                '`corpus` to pin one. `match: "phrase"` finds an exact string (a URL, an error message, a '
                'title) and counts its occurrences instead; `output: "counts"` then gives per-file '
                "coverage only. Returns a ripgrep-style outline and the full result as structured content. "
                "Scores only order the hits (the best is 1.0 whatever it is): `low_confidence: true` (a "
                "`weak-match` warning) means no page is a strong match, so the knowledge base may be silent."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="index",
            op="index",
            description=(
                "(Re)build the search index for one corpus, or every corpus configured for `cwd` when "
                "`corpus` is omitted. Incremental: unchanged files are not re-read, renamed pages keep "
                "their vectors; `force: true` re-reads and re-embeds every file; `rebuild: true` drops the "
                "whole store and re-embeds every corpus (the fix when searches say the store holds vectors of "
                "another model). One at a time per corpus: "
                "a call while another is running is refused, naming how long it has been going, unless "
                "`wait: true`. Use it after files were changed outside hallouminate; reports counters per "
                "corpus. Sends progress notifications when the request carries a progress token. Searches "
                "never wait for it: meanwhile they answer from what is indexed, with a not-indexed warning."
            ),
            read_only=False,
        ),
        ToolSpec(
            name="get_best_practice",
            op="get_best_practice",
            description=(
                "Opt-in: when [best_practice] path_templates is configured, the best-practices page for "
                '`target` (e.g. "claude-code"), whole or one H2 section (`category`, case-insensitive; a '
                'miss lists the sections). Otherwise a "not configured" error. `corpus` defaults to the '
                "wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="list_corpora",
            op="list_corpora",
            description=(
                "Every corpus known for `cwd`: explicit [[corpus]] entries plus each repository's derived "
                "repo:NAME:wiki (and repo:NAME:corpus). Call this first to learn what exists."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="list_files",
            op="list_files",
            description=(
                "The files of a corpus, honouring its paths, globs, excludes and ignore files, as "
                "{path, absolute_path}. `corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="list_tree",
            op="list_tree",
            description=(
                "The files of list_files as a directory tree ({path, absolute_path, files, subdirs}); "
                "directories with nothing beneath them are pruned. Use it to navigate a wiki "
                "progressively. `corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="read_markdown",
            op="read_markdown",
            description=(
                "The verbatim UTF-8 content of one file of a corpus, by its corpus-relative path. Read a "
                "page before overwriting it. A PDF, Office document, spreadsheet, HTML page or source file "
                "gives the text the indexer extracted (a PDF's pages, a deck's slides, a workbook's sheets "
                "as '## <title>' sections), the text ground's locations count in. Unsafe paths (absolute, '..', symlinks) and directories are refused. "
                "`corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="get_document",
            op="get_document",
            description=(
                "One indexed document, whole, with its metadata: {path, title, date, topic, tags, content, "
                "truncated} (+ corpus, category, format, bytes, and uri when it is a kb:// resource). "
                "`path` must be spelled exactly as `ground` returns it (corpus-relative, '/'-separated, "
                "same case): any other spelling is not found, and a malformed one (absolute, '..', '.', "
                "'//', a backslash, a control character) is refused. Markdown and text over 1 MiB are "
                "refused; a PDF's or another document's extracted text is cut at 1 MiB (truncated: true). Symlinks and hard links "
                "are refused. `corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="corpus_stats",
            op="corpus_stats",
            description=(
                "Index health of a corpus: indexed files, chunk rows, last index time, and files on "
                "disk not indexed yet. `corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="list_topics",
            op="list_topics",
            description=(
                "Map of what a corpus covers: every (category, topic) of its indexed documents with the "
                "document count, the newest date (frontmatter `date`, else the file's modification day), "
                "up to 50 titles, and `children`, the directories beneath the topic (each `segment` with "
                "a cumulative `file_count`). category = first path segment, topic = second, frontmatter "
                "`category:`/`topic:` override: exactly the values ground's `category` and `topic` "
                "filters accept (null = none). `corpus` defaults to the wiki of the repository containing "
                "`cwd`. A `children` segment comes from a document's own path, so do not build a path "
                "from category/topic/segment."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="backlinks",
            op="backlinks",
            description=(
                "Corpus-relative paths of every page linking to `path` through a [[wikilink]] (by path "
                "or bare stem, aliases too; links in code are ignored). Use it before renaming or "
                "deleting a page."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="get_connection_graph",
            op="get_connection_graph",
            description=(
                "Walk breadth-first from one indexed page (`start`, corpus-relative) to the chunks most "
                "similar to it, then to theirs (`depth`, `fan_out`, `min_similarity`), and to the pages it "
                'links to ([[wikilinks]] and relative Markdown links: `edge: "link"`). Use it after '
                "`ground` when the answer may sit in pages the query's words did not reach. Returns a flat "
                "list of nodes with parent_id, depth, score and a snippet (read a page for its full text), "
                "`truncated`/`truncation` when a bound cut the walk short, and `clamped` for numbers "
                "outside their bounds. `corpus` defaults to the wiki of the repository containing `cwd`."
            ),
            read_only=True,
        ),
        ToolSpec(
            name="add_markdown",
            op="add_markdown",
            description=(
                "Write a Markdown page into a corpus (explicit `corpus`; its first root), atomically, and "
                "re-index it at once: a following `ground` sees it. A new page is created; an existing "
                "one is refused unless `overwrite: true` (read it with read_markdown first). Edit one part "
                "instead with `under_heading` (+ `position` append|prepend), `replace_lines {start, end}` "
                "or `replace_match` (a literal occurring once): at most one per call. In a repository "
                "wiki the `index.md` link lists of the ancestor directories are updated (a missing "
                "`index.md` is created). Unsafe paths (absolute, '..', symlinks, .git, non-.md in a wiki) "
                "are refused. Returns advisory lint warnings (heading jumps, empty links, missing "
                "`# Title`, non-kebab-case names, unresolved [[wikilinks]], bad frontmatter)."
            ),
            read_only=False,
            idempotent=False,
            destructive=True,
        ),
        ToolSpec(
            name="delete_markdown",
            op="delete_markdown",
            description=(
                "Delete one file of a corpus (explicit `corpus`; its first root) and prune it from the index. "
                "Irreversible. Refuses symlinks and directories. In a repository wiki the ancestor "
                "`index.md` link lists stop listing it. Run backlinks first to find the pages linking to it."
            ),
            read_only=False,
            idempotent=False,
            destructive=True,
        ),
        ToolSpec(
            name="move_markdown",
            op="move_markdown",
            description=(
                "Rename a page of a corpus (explicit `corpus`; its first root) from `from` to `to`, "
                "atomically, and rewrite every [[wikilink]] (by path or bare stem; aliases and #headings "
                "kept) and relative Markdown link (anchors kept) that pointed at it, in every page, plus "
                "the moved page's own relative links. In a repository wiki the old and new `index.md` "
                "link lists are updated. Re-indexed at once: a following `ground` finds the new path, not "
                "the old. Refused if `to` exists or `from` does not. Reports the files rewritten."
            ),
            read_only=False,
            idempotent=False,
            destructive=True,
        ),
    )
}
