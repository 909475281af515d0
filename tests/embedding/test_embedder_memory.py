"""After an index run the model's arena gives back what the passage batches made it keep (ADR 0057), and the
vectors after that are the same bits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# In a process of its own: its RSS is the model's, not the test run's other daemons' and fixtures'.
SCRIPT = r"""
import json, sys
import numpy as np
from hallouminate.embedding import Embedder
from hallouminate.storage import allocator

allocator.tune()  # as the daemon does at start


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024


embedder = Embedder(sys.argv[1])
words = "the daemon answers framed requests on a unix socket and owns the store of the wiki".split()
passages = [" ".join(words[(i + j) % len(words)] for j in range(220)) for i in range(64)]
queries = [f"how does setting {i} reach the daemon" for i in range(8)]
before = embedder.embed_passages(passages)
grown = rss_mb()
embedder.release_memory()
released = rss_mb()
after = embedder.embed_passages(passages)
same = bool(np.array_equal(before, after)) and bool(
    np.array_equal(embedder.embed_queries(queries), embedder.embed_queries(queries))
)
print(json.dumps({"grown": grown, "released": released, "same": same}))
"""


def test_release_gives_back_the_passage_batches_arena(model_cache: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(model_cache)], capture_output=True, text=True, check=True
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    # Two batches of 32 passages of ~240 tokens keep ~200 MB in the arena; a query batch needs a few MB.
    assert figures["grown"] - figures["released"] > 100, figures
    assert figures["same"], figures
