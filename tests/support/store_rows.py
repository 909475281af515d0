"""Rows for a real LanceDB store without the model: small random unit vectors (seeded) and the columns the
indexer writes."""

from __future__ import annotations

from typing import Any

import numpy as np

DIM = 8


def unit_vec(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def chunk_rows(
    path: str, texts: list[str], digest: str = "h", seed: int = 0, dim: int = DIM
) -> list[dict[str, Any]]:
    """One row per text of file ``path`` (content hash ``digest``), ``dim``-d vectors seeded from ``seed`` up."""
    return [
        {
            "abs_path": f"/abs/{path}",
            "heading_path": ["Title", f"Section {i}"],
            "line_start": 1 + 10 * i,
            "line_end": 9 + 10 * i,
            "text": text,
            "summary": f"Title - summary of {path}",
            "content_hash": digest,
            "file_size": 100,
            "file_mtime_ns": 1_000,
            "vector": unit_vec(seed + i, dim),
        }
        for i, text in enumerate(texts)
    ]
