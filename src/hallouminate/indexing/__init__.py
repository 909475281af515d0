"""Turning Markdown files into stored, embedded chunks: chunker and walker (domain), indexer (service)."""

from __future__ import annotations

from hallouminate.indexing.chunker import Chunk, MarkdownPage, chunk_markdown, compose_embed_text
from hallouminate.indexing.indexer import Indexer
from hallouminate.indexing.walker import walk_corpus

__all__ = ["Chunk", "Indexer", "MarkdownPage", "chunk_markdown", "compose_embed_text", "walk_corpus"]
