"""What moving a renamed page's rows saves, against re-embedding it (ADR 0039).

Indexes a copy of the eval wiki (35 pages) in a temp store with the real model, then, ``--repeat`` times:

- renamed: every page moved to another directory, bytes unchanged; the index run moves their rows
  (``renamed`` counts them, nothing is embedded);
- edited: every page moved back with one byte appended, so no rename can be detected; the run deletes the
  old paths and embeds the new ones: what every rename cost before.

Both runs read, hash and commit the same number of files; the difference is the embedding. Printed: the
best time of each, their ratio, and the counters of the last runs as a check.

Usage: .venv/bin/python bench/rename_saving.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import CORPUS, load_set
from hallouminate import xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.indexing import Indexer
from hallouminate.storage import Store


def move_all(root: Path, into: str, *, touch: bool) -> None:
    """Move every page of ``root`` under ``root/into`` (or back out of it), optionally appending a byte."""
    pages = sorted(p for p in root.rglob("*.md"))
    for page in pages:
        rel = page.relative_to(root)
        target = root / rel.relative_to(into) if rel.parts[0] == into else root / into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        page.rename(target)
        if touch:
            with target.open("a") as out:
                out.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), settings.model_name)
    wiki, _ = load_set("eval")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wiki"
        shutil.copytree(wiki, root)
        store = Store(Path(tmp) / "db", embedder.dim)
        spec = CorpusSpec(CORPUS, "custom", (root,), ("**/*.md",), (), None)
        indexer = Indexer(store, embedder, settings)
        first = indexer.index_corpus(spec)
        print(f"{first['files_upserted']} pages, {first['chunks_written']} chunks")
        best = {"renamed": float("inf"), "edited": float("inf")}
        reports = {}
        for _ in range(opts.repeat):
            for kind in ("renamed", "edited"):
                move_all(root, "moved", touch=kind == "edited")
                started = time.perf_counter()
                reports[kind] = indexer.index_corpus(spec)
                best[kind] = min(best[kind], time.perf_counter() - started)
    for kind, report in reports.items():
        counts = {k: report[k] for k in ("renamed", "files_upserted", "files_deleted", "chunks_written")}
        print(f"{kind:8s} best {best[kind]:.3f} s  {counts}")
    print(f"re-embedding costs {best['edited'] / best['renamed']:.1f}x moving the rows")


if __name__ == "__main__":
    main()
