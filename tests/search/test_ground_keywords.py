"""Keywords travel from the indexer through the store to every doc ``ground`` returns."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema

from hallouminate.config import CorpusSpec
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.protocol.schemas import GROUND_RESULT
from hallouminate.storage import Store
from support.ground import SETTINGS, run_ground

FIXTURES = Path(__file__).parent / "fixtures"


async def test_ground_docs_carry_the_page_keywords(tmp_path: Path, embedder: Embedder) -> None:
    wiki = tmp_path / "wiki"
    shutil.copytree(FIXTURES / "wiki", wiki)
    (wiki / "backups.md").write_text(
        "---\ntags: [Postgres, disaster-recovery]\n---\n# Backups\n\n"
        "Nightly backups of the database are kept for thirty days; a backup restore is rehearsed monthly.\n"
    )
    (wiki / "oncall.txt").write_text("The on-call rota rotates weekly. The rota lives in the pager tool.\n")
    store = Store(tmp_path / "db", embedder.dim)
    spec = CorpusSpec("repo:acme:wiki", "wiki", (wiki,), ("**/*.md", "**/*.txt"), (), "acme")
    Indexer(store, embedder, SETTINGS).index_corpus(spec)

    result = await run_ground(
        store,
        embedder,
        [spec],
        "restore the database from a backup, rollback a migration, on-call rota",
        priority_corpus=spec.name,
        top_files=20,
        chunks_per_file=1,
        limit=50,
        snippet_chars=120,
    )
    jsonschema.validate(result, GROUND_RESULT)
    docs = {doc["path"]: doc for doc in result["docs"]}
    assert {"backups.md", "database-migrations.md", "oncall.txt"} <= set(docs)
    assert all(doc["keywords"] and all(isinstance(k, str) for k in doc["keywords"]) for doc in docs.values())
    assert docs["backups.md"]["keywords"][:3] == ["Postgres", "disaster-recovery", "backups"]
    assert docs["database-migrations.md"]["keywords"][0] == "migration"
    assert docs["oncall.txt"]["keywords"][0] == "rota"
    # Stored on every row of the page, so any chunk that wins carries them.
    rows = store.file_rows(spec.store_key, "database-migrations.md")
    assert len(rows) > 1 and all(row["keywords"] == rows[0]["keywords"] for row in rows)
