"""The order test files are handed to pytest-xdist's workers in: the longest first.

`make test` runs two workers with ``--dist loadfile`` (a file per worker, so a module-scoped daemon starts
once). xdist's own order puts the files with the most tests first, which leaves the long files of one to
three tests (kill -9 cycles, load tests, crash safety) for the end: one worker then runs a 100-second file
alone while the other idles. Handing out the longest first (``--no-loadscope-reorder`` keeps our order)
lets the many short files even out the two workers' ends.

The weights are the files' serial seconds (``pytest --durations=0``, one directory at a time) measured on
the shared 2-core machine (December 2026, under load from other work: only their order matters); files
under 10 s are not listed. The files issue 19 made faster are their survey figure times the ratio of
their ``--durations=0`` totals after/before, both run side by side in the same minutes (ADR 0055). A file
not listed (a new one) goes after every listed one, in collection order; list it here once it is among
the longest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

# tests/<path>: serial seconds of the whole file (setup, calls and teardown).
FILE_SECONDS: dict[str, float] = {
    "model/test_int8_install.py": 157.7,
    "reliability/test_kill9_cycles.py": 150.4,
    "daemon/test_daemon_watcher.py": 129.1,
    "daemon/test_daemon_crash_safety.py": 136.0,
    "daemon/test_daemon_index_single_flight.py": 102.7,
    "daemon/test_daemon_never_waits.py": 95.2,
    "reliability/test_load_writes.py": 113.8,
    "daemon/test_daemon_lifecycle.py": 79.0,
    # Measured at load average ~15 (the quality model embeds each candidate the first time).
    "search/test_rerank_quality_model.py": 97.0,
    "http/test_http_hostile.py": 77.9,
    "shim/test_shim_stdio.py": 65.0,
    "wiki/test_move_crash_safety.py": 51.7,
    "http/test_http_kuradb.py": 71.9,
    "reliability/test_load_shims.py": 74.1,
    "shim/test_grooveseek_face.py": 68.7,
    "http/test_http_ui.py": 62.2,
    "shim/test_kuradb_face.py": 56.5,
    "wiki/test_wiki_crash_safety.py": 51.9,
    # Issue 20 (ADR 0059), measured at load average ~11.
    "daemon/test_daemon_ann_index.py": 51.2,
    "storage/test_store_ann.py": 27.1,
    "http/test_http_cli.py": 36.3,
    "shim/test_shim_kb_resources.py": 45.7,
    "daemon/test_store_refuses_mixing.py": 50.0,
    "embedding/test_endpoint_provider.py": 45.0,
    "embedding/test_embedder_memory.py": 12.0,
    "storage/test_store_file_states.py": 15.0,
    "daemon/test_daemon_team_store.py": 40.0,
    "daemon/test_daemon_load.py": 45.7,
    "shim/test_shim_ts_client.py": 44.6,
    "cli/test_cli_index_reports.py": 42.8,
    "shim/test_shim_read_tools.py": 41.1,
    "wiki/test_move_markdown.py": 38.0,
    "daemon/test_daemon_hostile_frames.py": 37.9,
    "http/test_http_ui_token.py": 35.2,
    "daemon/test_daemon_socket.py": 35.0,
    "wiki/test_wiki_writes.py": 34.9,
    "daemon/test_daemon_resolve.py": 32.0,
    "http/test_http_ui_unindexed.py": 28.5,
    "reliability/test_faults.py": 27.9,
    "http/test_http_ts_client.py": 25.7,
    "model/test_multilingual_real.py": 25.2,
    "cli/test_cli_install.py": 25.1,
    "cli/test_cli_index_progress.py": 20.0,
    "search/test_ground_rerank.py": 24.9,
    "search/test_multilingual_ground.py": 21.1,
    "cli/test_cli_commands.py": 24.6,
    "http/test_http_transport.py": 21.3,
    "shim/test_shim_error_families.py": 23.9,
    "cli/test_cli_speaks_cli.py": 23.8,
    "shim/test_shim_unreachable.py": 20.4,
    "shim/test_shim_warm_host.py": 20.3,
    "search/test_ground_mcp_caps.py": 19.9,
    "shim/test_shim_raw_stdio.py": 19.3,
    "shim/test_shim_doc_promises.py": 18.7,
    "search/test_ground_filters.py": 16.9,
    "search/test_ground_quality.py": 16.3,
    "search/test_assembly_fast_paths.py": 15.6,
    "reliability/test_bounds.py": 14.4,
    "browse/test_best_practice_tool.py": 14.3,
    "evaluation/test_eval_grooveseek.py": 13.7,
    "search/test_ground_confidence.py": 13.7,
    "wiki/test_wiki_path_attacks.py": 13.2,
    "reliability/test_read_path_attacks.py": 12.3,
    "search/test_connection_graph.py": 12.2,
    "wiki/test_move_path_attacks.py": 12.1,
    "search/test_ground_mcp_rules.py": 11.3,
    "search/test_changed_since.py": 10.6,
    "search/test_ground_repo_settings.py": 10.6,
    "evaluation/test_eval_command.py": 10.2,
    "search/test_list_topics.py": 10.1,
    "daemon/test_daemon_start_imports.py": 10.0,
    # Issue 21: a real S3 server (SeaweedFS, ~1 s to start); conditional-write races cost up to ~3 s a round.
    "storage/test_s3_server.py": 10.0,
    # Issue 21 (ADR 0063), quiet machine: the frozen bucket's deadlines, a lease waiting out its TTL.
    "storage/test_store_on_object_storage.py": 17.0,
    "storage/test_writer_lease.py": 10.0,
    # Issue 20's no-op walk: hypothesis, 600 examples (listed though short, for the record).
    "indexing/test_walker_matching.py": 3.0,
}


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


T = TypeVar("T", bound=_Item)


def file_of(nodeid: str) -> str:
    """``tests/a/test_b.py::test_c[x]`` -> ``a/test_b.py`` (node ids are relative to the rootdir)."""
    path = nodeid.split("::", 1)[0]
    return path.removeprefix("tests/")


def longest_files_first(items: Sequence[T]) -> list[T]:
    """``items`` with each file's tests kept together and in their order, the files longest first."""
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(file_of(item.nodeid), len(first_seen))

    def key(item: T) -> tuple[float, int]:
        name = file_of(item.nodeid)
        return (-FILE_SECONDS.get(name, 0.0), first_seen[name])

    return sorted(items, key=key)
