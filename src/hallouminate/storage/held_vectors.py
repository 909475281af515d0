"""A held corpus's unit vectors: float32 for small corpora, 16-bit codes with a scale per vector for big
ones (ADR 0062).

The vectors were float32: 146 MB at 100k chunks of 384 dimensions, the largest thing the daemon holds.
Past ``EXACT_ROWS`` each vector is held as its components rounded to the nearest of 65,535 steps of its own
largest component: half the memory. Scores stay float32 products: a block of codes is widened to float32
(a SIMD copy; numpy's float16 conversion measured 10x slower than the product itself) and multiplied by
the query, then each score by its vector's scale. The rounding moves a cosine score by at most
``sum(|q_i|) * scale / 2``, ~1e-5 for a unit 384-d query and 7e-6 at most measured over 100k random unit
vectors: far below the gaps rankings are decided by, and the same for every search of the corpus. Below
``EXACT_ROWS`` the widening costs more than the memory it saves is worth: a float32 product over 10k
vectors fits the cache (0.32 ms) where the codes took 0.73 ms; from 50k rows on the codes are as fast.
"""

from __future__ import annotations

import numpy as np

# Codes are integers in [-LEVELS, LEVELS]: int16's range, symmetric so negation is exact.
LEVELS = 32767
# Corpora of up to this many vectors are held as float32 (at most 48 MB at 384 dimensions).
EXACT_ROWS = 32_768
# Rows widened to float32 at a time when scoring: 1,024 x 384 x 4 bytes = 1.5 MB of scratch per call,
# small enough for concurrent searches and big enough that the product runs at BLAS speed.
BLOCK = 1024


class HeldVectors:
    """``count`` unit vectors of ``dim`` components, appended by ``put`` (see ``trimmed``); held as 16-bit
    codes when ``count`` is past ``exact_rows``."""

    def __init__(self, count: int, dim: int, exact_rows: int = EXACT_ROWS) -> None:
        self.exact = count <= exact_rows
        self.codes = np.empty((count, dim), dtype=np.float32 if self.exact else np.int16)
        self.scale = np.ones(count if not self.exact else 0, dtype=np.float32)
        self.filled = 0

    def __len__(self) -> int:
        return self.filled

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.codes[: self.filled].nbytes + self.scale[: self.filled].nbytes)

    def put(self, block: np.ndarray) -> None:
        """Append the vectors ``block`` (n, dim), normalised to unit length here, growing if the count
        given at construction was short (rows committed after it was read)."""
        block = np.asarray(block, dtype=np.float32)
        n = len(block)
        if self.filled + n > len(self.codes):
            self.codes = np.concatenate(
                [self.codes[: self.filled], np.empty((n, self.dim), self.codes.dtype)]
            )
            if not self.exact:
                self.scale = np.concatenate([self.scale[: self.filled], np.empty(n, np.float32)])
        unit = block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
        at = slice(self.filled, self.filled + n)
        self.filled += n
        if self.exact:
            self.codes[at] = unit
            return
        top = np.abs(unit).max(axis=1) if n else np.empty(0, np.float32)
        step = np.where(top > 0, top / LEVELS, 1.0).astype(np.float32)  # a zero vector: codes 0, any step
        np.rint(unit / step[:, None], out=unit)
        self.codes[at] = unit
        self.scale[at] = step

    def trimmed(self) -> HeldVectors:
        """These vectors with the unfilled tail dropped (views, no copy)."""
        self.codes = self.codes[: self.filled]
        if not self.exact:
            self.scale = self.scale[: self.filled]
        return self

    def scores(self, block: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarities with unit query vector(s) ``block`` (dim,) or (dim, k) of every vector, or
        of those at ``subset``: float32, one row per vector."""
        query = np.asarray(block, dtype=np.float32)
        if self.exact:
            held = self.codes[: self.filled] if subset is None else self.codes[subset]
            exact: np.ndarray = held @ query
            return exact
        count = self.filled if subset is None else len(subset)
        out = np.empty((count, *query.shape[1:]), dtype=np.float32)
        scratch = np.empty((min(BLOCK, count), self.dim), dtype=np.float32)
        for first in range(0, count, BLOCK):
            last = min(first + BLOCK, count)
            rows = slice(first, last) if subset is None else subset[first:last]
            wide = scratch[: last - first]
            wide[:] = self.codes[rows]
            np.matmul(wide, query, out=out[first:last])
        scale = self.scale[: self.filled] if subset is None else self.scale[subset]
        out *= scale.reshape(-1, *([1] * (query.ndim - 1)))
        return out

    def vectors(self, places: np.ndarray) -> np.ndarray:
        """The vectors at ``places``, float32 (within rounding of what was put)."""
        wide: np.ndarray = self.codes[places].astype(np.float32)
        if not self.exact:
            wide *= self.scale[places][..., None]
        return wide
