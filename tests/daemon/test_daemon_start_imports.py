"""A daemon start imports only what serving Markdown needs: not lancedb's REST namespace client (~1.1 s of
CPU, storage/lancedb_import.py) nor the office formats' libraries (pypdf, python-docx, python-pptx,
openpyxl: ~0.7 s of CPU, loaded by their readers when a file of theirs is read). Hundreds of daemons start
in a test run, and every user's session starts one. The daemon's own import log (``-X importtime``) is
read after it indexed and searched a Markdown wiki."""

from __future__ import annotations

import re
from pathlib import Path

from support.sandbox import Sandbox, daemon_import_log, hm

# A module the daemon must not import, at any depth, as `-X importtime` names it at the end of a line.
NOT_AT_START = re.compile(
    r"\|\s+((?:lance_namespace_urllib3_client\.api|pypdf|docx|pptx|openpyxl)(?:\.[\w.]+)?)$", re.M
)


def test_a_daemon_serving_markdown_imports_neither_the_rest_client_nor_the_office_readers(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = sandbox.make_repo(pages=["index.md", "architecture.md"])
    with daemon_import_log(sandbox, tmp_path / "imports.txt") as import_log:
        indexed = hm(sandbox, "index", cwd=repo)
        assert indexed.returncode == 0, indexed.stdout + indexed.stderr
        found = hm(sandbox, "ground", "How does the daemon start?", cwd=repo)
        assert found.returncode == 0, found.stdout + found.stderr
        assert "architecture.md" in found.stdout
        stopped = hm(sandbox, "daemon", "stop", cwd=repo)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        text = import_log()
    # The checks ran: the store was opened, the indexer and its readers' table were loaded (`lancedb`
    # itself is imported through importlib, which the log does not list).
    for loaded in ("lancedb.db", "lance_namespace_urllib3_client.models", "hallouminate.indexing.readers"):
        assert re.search(rf"\|\s+{re.escape(loaded)}$", text, re.M), f"{loaded} not in the import log"
    assert sorted(set(NOT_AT_START.findall(text))) == []
