"""SQL fragments for LanceDB filters. Corpus names and paths are user data: always quote them here."""

from __future__ import annotations

from collections.abc import Iterable


def literal(value: str) -> str:
    """A SQL string literal: single quotes doubled (standard SQL; DataFusion has no backslash escapes)."""
    if "\0" in value:
        raise ValueError("a NUL character cannot appear in a filter value")
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    items = [literal(v) for v in values]
    if not items:
        return "false"
    if len(items) == 1:
        return f"{column} = {items[0]}"
    return f"{column} IN ({', '.join(items)})"


def corpus_files(corpus: str, paths: Iterable[str]) -> str:
    """Exactly the rows of these files of this corpus."""
    return f"corpus = {literal(corpus)} AND {in_list('path', paths)}"
