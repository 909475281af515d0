"""The storage adapter imports lancedb without building its REST namespace client (~1.1 s of CPU at every
daemon start, storage/lancedb_import.py), and that client is still whole for whoever asks for it.

A fresh interpreter runs the daemon's own storage path (a ``Store`` written, an ``AsyncReader`` search), so
what it imported is exactly what a daemon start imports; this test process may have imported lancedb long
before.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    from hallouminate.analysis import query_terms
    from hallouminate.storage import Store
    from hallouminate.storage.reader import AsyncReader
    from support.store_rows import DIM, chunk_rows, unit_vec

    async def main() -> list[str]:
        store = Store(Path(sys.argv[1]), DIM)
        store.replace_files("c", {"a.md": chunk_rows("a.md", ["grounding answers", "the daemon"])})
        reader = AsyncReader(store)
        near = await reader.vector_search(unit_vec(0), ["c"], 2)
        lexical = await reader.fts_search(query_terms("daemon"), ["c"], 2)
        return [row["path"] for row in near + lexical]

    found = asyncio.run(main())
    rest_built = sorted(m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api"))
    import lance_namespace_urllib3_client as client  # the package lancedb left for its first use
    print(json.dumps({
        "found": found,
        "rest_built_by_the_store": rest_built,
        "client_answers": [client.ApiClient.__name__, client.TableApi.__name__, client.__version__],
        "rest_built_on_use": "lance_namespace_urllib3_client.api.table_api" in sys.modules,
    }))
    """
)


def test_the_store_and_reader_work_without_building_the_rest_client_which_loads_whole_on_use(
    tmp_path: Path,
) -> None:
    tests_dir = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "db")],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(tests_dir), "PATH": "/usr/bin:/bin", "LANCEDB_LOG": "error"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["found"] == ["a.md"] * 3  # two nearest chunks, one BM25 match
    # A lancedb that needs its REST API at import (or a shim that stopped working) fails here, by name.
    assert report["rest_built_by_the_store"] == []
    assert report["client_answers"][:2] == ["ApiClient", "TableApi"]
    assert report["client_answers"][2]
    assert report["rest_built_on_use"] is True
