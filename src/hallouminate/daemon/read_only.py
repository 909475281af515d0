"""A read-only daemon (``[store] mode = "read-only"``, or ``hallouminate daemon run --read-only``).

It serves an index another daemon writes (a team's store, docs/deployment.md): it never writes the store,
never walks or watches files (they are on the writer's machine), and follows the writer's commits
(``Runtime._follow_writer``). Its corpora are the ones the store holds, under the writer's names: a
request's ``cwd`` does not choose them, since the writer's repositories are not on this machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hallouminate.config.types import CorpusKind, CorpusSpec, Resolved, Settings
from hallouminate.errors import BadRequest
from hallouminate.ports import ChunkRow
from hallouminate.protocol.results import ReadMarkdownResult

# What a read-only daemon refuses: everything that writes the store or the files.
WRITE_OPS = frozenset({"index", "add_markdown", "delete_markdown", "move_markdown"})
# The file tools that walk a corpus's files, which a read-only daemon does not have.
FILE_OPS = frozenset({"list_tree", "backlinks", "get_best_practice"})

_DERIVED = re.compile(r"^repo:(?P<repository>.+):(?P<kind>wiki|corpus)$")


def refusal(op: str, store: str, writer: str) -> BadRequest:
    """The answer to a write sent to a read-only daemon (-32602): which store, who writes it."""
    return BadRequest(
        f"this daemon serves the store {store} read-only, so `{op}` is refused here; send it to the "
        f"daemon that writes this store ({writer}); this one shows its commits within its poll interval",
        {"problem": "read-only-store", "op": op, "store": store, "writer": writer},
    )


def files_refusal(op: str, store: str) -> BadRequest:
    """The answer to a file tool that needs the corpus's files, which only the writer's machine has."""
    return BadRequest(
        f"`{op}` reads the corpus's files, and this daemon serves the store {store} read-only: the files "
        "are on the writer's machine. Use `ground`, `list_files` or `read_markdown` (served from the index) "
        "here, or call the writer",
        {"problem": "read-only-store", "op": op, "store": store},
    )


def store_corpora(keys: Iterable[str]) -> dict[str, CorpusSpec]:
    """The corpora of a store's rows, by name: ``repo:proj:wiki@digest`` is the writer's ``repo:proj:wiki``.
    Two keys of one name (two checkouts on the writer) keep their full key as the second one's name."""
    corpora: dict[str, CorpusSpec] = {}
    for key in sorted(keys):
        name = key.rpartition("@")[0] or key
        derived = _DERIVED.match(name)
        kind: CorpusKind = "custom"
        repository = None
        if derived is not None:
            kind = "wiki" if derived["kind"] == "wiki" else "corpus"
            repository = derived["repository"]
        if name in corpora:
            name = key
        corpora[name] = CorpusSpec(name, kind, (), (), (), repository, stored_as=key)
    return corpora


def store_resolved(settings: Settings, keys: Iterable[str]) -> Resolved:
    """What every request to a read-only daemon resolves to: this machine's settings, the store's corpora.
    The default corpus is the store's one wiki, when it holds exactly one."""
    corpora = store_corpora(keys)
    wikis = [name for name, spec in corpora.items() if spec.kind == "wiki"]
    return Resolved(
        settings=settings,
        corpora=corpora,
        repository_name=None,
        default_corpus=wikis[0] if len(wikis) == 1 else None,
        sources=(),
    )


def indexed_page(spec: CorpusSpec, path: str, rows: list[ChunkRow], line_numbers: bool) -> ReadMarkdownResult:
    """``read_markdown`` on a read-only daemon: the page's indexed text, chunk by chunk in order (the file
    is on the writer's machine); ``served_from: "index"`` says so. Lines keep the numbers ``ground``
    reports (each chunk's ``line_start``)."""
    content = ""
    last_line = 0
    for row in rows:
        text = row.get("text") or ""
        first = int(row.get("line_start") or 1)
        # A chunk cut inside a long line goes on that line: the file's line numbers stay right.
        same_line = bool(content) and first == last_line
        if line_numbers:
            numbered = [
                line if (i == 0 and same_line) else f"{first + i}: {line}"
                for i, line in enumerate(text.split("\n"))
            ]
            text = "\n".join(numbered)
        content += (" " if same_line else "\n" if content else "") + text
        last_line = first + text.count("\n")
    first_row = rows[0] if rows else {}
    return {
        "corpus": spec.name,
        "path": path,
        "absolute_path": str(first_row.get("abs_path") or ""),
        "content": content,
        "bytes": int(first_row.get("file_size") or 0),
        "served_from": "index",
        "note": "served from the index by a read-only daemon: the file is on the writer's machine, and "
        "this is its indexed text, chunk by chunk (`absolute_path` and `bytes` are the writer's)",
    }
