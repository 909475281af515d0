"""``symbol_kind`` from the store to every hit that shows a chunk: ranked ``ground``, phrase mode and the
GrooveSeek face's ``search`` (with its ``start_line``/``end_line``), set on a definition's chunk only and
absent, never null, on every other chunk. Real store, real model; the rows are written as the indexer
writes a source file's (the code reader's own end-to-end test indexes real files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.protocol.schemas import RESULTS
from hallouminate.search import hits
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader
from support.ground import RESULT_SCHEMA, run_ground, strict

CODE = [
    # (heading_path, lines, text, symbol_kind)
    (["keys.py"], (1, 3), "import os\nimport hmac\nVAULT_PATH = os.environ['VAULT']", None),
    (
        ["keys.py", "rotate_signing_keys"],
        (5, 9),
        "def rotate_signing_keys(vault):\n    old = vault.current()\n    new = hmac.new(old)\n"
        "    vault.store(new)\n    return new",
        "function_definition",
    ),
]
PROSE = (
    ["Key rotation"],
    (1, 3),
    "# Key rotation\n\nThe signing keys rotate every month; rotate_signing_keys does it.",
    None,
)
SPEC = CorpusSpec("kb", "custom", (Path("/kb"),), ("**/*",), (), None)
PARAMS = {"priority_corpus": "kb", "top_files": 5, "chunks_per_file": 3, "limit": 20, "snippet_chars": 200}


def _rows(path: str, chunks: list[tuple[Any, ...]], embedder: Embedder) -> list[dict[str, Any]]:
    vectors = embedder.embed_passages([text for _, _, text, _ in chunks])
    return [
        {
            "abs_path": f"/kb/{path}",
            "heading_path": heading,
            "line_start": lines[0],
            "line_end": lines[1],
            "text": text,
            "summary": path,
            "content_hash": path,
            "file_size": 100,
            "file_mtime_ns": 1,
            "quality": 1.0,
            "symbol_kind": kind,
            "vector": vector,
        }
        for (heading, lines, text, kind), vector in zip(chunks, vectors, strict=True)
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Store:
    store = Store(tmp_path_factory.mktemp("symbols") / "db", embedder.dim)
    store.replace_files(
        SPEC.store_key,
        {
            "src/keys.py": _rows("src/keys.py", CODE, embedder),
            "rotation.md": _rows("rotation.md", [PROSE], embedder),
        },
    )
    return store


def _kinds(result: dict[str, Any]) -> dict[tuple[str, int], Any]:
    """(path, line_start) -> the chunk's symbol_kind key, or "absent"."""
    return {
        (doc["path"], chunk["line_start"]): chunk.get("symbol_kind", "absent")
        for doc in result["docs"]
        for chunk in doc["chunks"]
    }


async def test_a_ranked_hit_carries_symbol_kind_only_when_set(store: Store, embedder: Embedder) -> None:
    result = await run_ground(store, embedder, [SPEC], "rotate the signing keys in the vault", **PARAMS)
    jsonschema.validate(result, RESULT_SCHEMA)
    assert _kinds(result) == {
        ("src/keys.py", 5): "function_definition",
        ("src/keys.py", 1): "absent",
        ("rotation.md", 1): "absent",
    }


async def test_a_phrase_hit_carries_symbol_kind_only_when_set(store: Store, embedder: Embedder) -> None:
    result = await run_ground(store, embedder, [SPEC], "rotate_signing_keys", match="phrase", **PARAMS)
    jsonschema.validate(result, RESULT_SCHEMA)
    assert _kinds(result) == {("src/keys.py", 5): "function_definition", ("rotation.md", 1): "absent"}


async def test_the_grooveseek_search_gives_code_chunks_their_lines_and_kind(
    store: Store, embedder: Embedder
) -> None:
    result = await run_ground(store, embedder, [SPEC], "rotate the signing keys in the vault", **PARAMS)
    found = await hits.search_hits(AsyncReader(store), result, {"kb": SPEC.store_key}, 10)  # type: ignore[arg-type]
    jsonschema.validate(found, strict(RESULTS["search"]))
    by_place = {(hit["path"], hit["content"].split("\n")[0]): hit for hit in found["results"]}
    code = by_place[("src/keys.py", "def rotate_signing_keys(vault):")]
    assert (code["start_line"], code["end_line"], code["symbol_kind"]) == (5, 9, "function_definition")
    others = [hit for key, hit in by_place.items() if key[1] != "def rotate_signing_keys(vault):"]
    assert len(others) == 2
    for hit in others:
        assert not {"start_line", "end_line", "symbol_kind"} & set(hit), hit
