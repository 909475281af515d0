"""The link lists that ``index.md`` pages of a repository wiki keep between two markers (pure).

Between ``<!-- HALLOUMINATE:INDEX-START -->`` and ``<!-- HALLOUMINATE:INDEX-END -->`` a directory's
``index.md`` lists its subdirectories first, then its pages, each sorted by name and glossed with its H1:

    - [guides/](./guides/index.md) - Guides
    - [setup](./setup.md) - Setting up

A subdirectory without an ``index.md`` is linked as ``./dir/``; an entry without an H1 has no gloss.
Everything outside the markers is kept byte for byte; a page without both markers is not ours to edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from hallouminate.config import INDEX_END, INDEX_START

INDEX_NAME = "index.md"


@dataclass(frozen=True)
class Entry:
    label: str  # "guides/" or "setup"
    link: str  # "./guides/index.md", "./guides/" or "./setup.md"
    title: str | None  # the target's H1


def index_path(directory: str) -> str:
    """The corpus-relative ``index.md`` of a corpus-relative directory ("" is the root)."""
    return f"{directory}/{INDEX_NAME}" if directory else INDEX_NAME


def ancestors(path: str) -> list[str]:
    """The directories holding ``path``, deepest first, the root ("") last."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:depth]) for depth in range(len(parts), -1, -1)]


def children(files: set[str], directory: str) -> tuple[list[str], list[str]]:
    """``(subdirectories, pages)`` directly in ``directory``, sorted by name, as corpus-relative paths.

    A subdirectory counts when a corpus file lies beneath it; ``index.md`` itself is not a page.
    """
    prefix = f"{directory}/" if directory else ""
    subdirs: set[str] = set()
    pages: list[str] = []
    for rel in files:
        if not rel.startswith(prefix):
            continue
        rest = rel[len(prefix) :]
        head, sep, _ = rest.partition("/")
        if sep:
            subdirs.add(prefix + head)
        elif rest != INDEX_NAME:
            pages.append(rel)
    return sorted(subdirs), sorted(pages)


def subdir_entry(subdir: str, has_index: bool, title: str | None) -> Entry:
    name = PurePosixPath(subdir).name
    link = f"./{_url(name)}/{INDEX_NAME}" if has_index else f"./{_url(name)}/"
    return Entry(f"{name}/", link, title)


def page_entry(page: str, title: str | None) -> Entry:
    name = PurePosixPath(page).name
    stem = name[: -len(".md")] if name.endswith(".md") else name
    return Entry(stem, f"./{_url(name)}", title)


def render(entries: list[Entry], newline: str = "\n") -> str:
    """The list lines, each ending with ``newline`` (empty for no entries)."""
    lines = []
    for entry in entries:
        gloss = f" - {' '.join(entry.title.split())}" if entry.title else ""
        lines.append(f"- [{_label(entry.label)}]({entry.link}){gloss}{newline}")
    return "".join(lines)


def splice(text: str, entries: list[Entry]) -> str | None:
    """``text`` with the list between its markers replaced, or None when it lacks the markers."""
    start = text.find(INDEX_START)
    if start < 0:
        return None
    end = text.find(INDEX_END, start + len(INDEX_START))
    if end < 0:
        return None
    head = start + len(INDEX_START)
    newline = "\r\n" if text.startswith("\r\n", head) else "\n"
    # The END marker keeps its own indentation and what follows it; the list starts on its own line.
    line_start = text.rfind("\n", head, end) + 1 or end
    if line_start <= head:
        line_start = end
    return text[:head] + newline + render(entries, newline) + text[line_start:]


def scaffold(title: str, entries: list[Entry]) -> str:
    return (
        f"# {title}\n\nThe list below is maintained by hallouminate; write your own text outside the markers.\n\n"
        f"{INDEX_START}\n{render(entries)}{INDEX_END}\n"
    )


def directory_title(directory: str, repository: str | None) -> str:
    """The H1 of a scaffolded ``index.md``: "<repository> wiki" at the root, the humanised name below."""
    if not directory:
        return f"{repository} wiki" if repository else "Wiki"
    words = PurePosixPath(directory).name.replace("-", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else directory


def _url(name: str) -> str:
    # Spaces and parentheses would end a link destination; everything else stays readable.
    return quote(name, safe="!$&'*+,;=:@-._~")


def _label(label: str) -> str:
    return label.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
