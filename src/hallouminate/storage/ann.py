"""The approximate vector index of large stores (issue 20; docs/adr/0059-approximate-index.md says why and how
it was tuned).

Stores of ``MIN_ROWS`` rows or more get a LanceDB vector index, built and refreshed by the daemon off the
search path (``Store.maintain_ann``); searches past the reader's in-memory bound use it with ``NPROBES`` and
``REFINE_FACTOR`` (exact re-scoring of the candidates), and LanceDB also scans the rows written since the
index was built, so a chunk is found as soon as it is committed (read-your-writes).

This module is the one place that knows the index's parameters: the store builds with ``index_config``, the
reader searches with ``tune``, and bench/ measures recall with the same ``tune``.
"""

from __future__ import annotations

import math
from typing import Any

# Rows from which the store holds an approximate index. Below the reader's in-memory bound
# (reader.IN_MEMORY_ROWS, 200k) no search reaches LanceDB at all: the held matrix's product is exact and
# faster than any index (bench/ann.py: ~6 CPU ms at 100k). So the index starts where LanceDB searches do.
MIN_ROWS = 200_000
# Partitions probed per query, and candidates re-scored exactly per result wanted (bench/ann.py, ADR 0059:
# on the filled tiers' clustered vectors recall is bought with probes, not re-scoring). 128 gave recall@10
# 0.98 on a 1M world drawn around 2,007 real vectors but 0.89-0.91 around 10,008 (queries whose neighbours
# sit in many partitions; a refine factor of 40 changed nothing); 512 of its 1,000 partitions give 0.983,
# the worst query 0.8, at ~31 ms a query against ~1 s for the flat scan (ADR 0059, 2026-12-04).
NPROBES = 512
REFINE_FACTOR = 4
# The index is trained again (not only extended) once the table has grown this much since its training:
# its partitions were cut for the old size, and rows added later are appended to them untrained.
RETRAIN_GROWTH = 1.5
# ``optimize`` folds the unindexed rows into the index once this many have piled up (LanceDB scans them
# exactly meanwhile: each costs a flat comparison per query).
REFRESH_ROWS = 20_000
# The index's name in the table (LanceDB's default for a vector column).
INDEX_NAME = "vector_idx"


def partitions(rows: int) -> int:
    """IVF partitions for ``rows`` vectors: ~sqrt(rows) (LanceDB's guidance; 1M: 1,000 of ~1,000 rows)."""
    return max(1, round(math.sqrt(rows)))


def index_config(rows: int, dim: int) -> Any:
    """The LanceDB index configuration for a table of ``rows`` vectors of ``dim`` dimensions."""
    from hallouminate.storage.lancedb_import import import_lancedb

    import_lancedb()
    from lancedb.index import IvfSq

    return IvfSq(distance_type="cosine", num_partitions=partitions(rows))


def scalar_configs() -> list[tuple[str, Any]]:
    """The scalar indexes built with the vector index, by column: past the in-memory bound, BM25's hits
    are fetched by ``id`` (measured at 100k: 21 ms a fetch of 30 ids by scan, 14.5 ms by BTree; the scan
    grows with the table) and every search is prefiltered by ``corpus`` (a bitmap: few distinct values)."""
    from hallouminate.storage.lancedb_import import import_lancedb

    import_lancedb()
    from lancedb.index import Bitmap, BTree

    return [("id", BTree()), ("corpus", Bitmap())]


def tune(builder: Any) -> Any:
    """A LanceDB vector query builder with this index's search parameters applied."""
    return builder.nprobes(NPROBES).refine_factor(REFINE_FACTOR)
