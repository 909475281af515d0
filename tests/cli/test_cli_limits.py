"""One limits table, as a user meets it: `config validate`, `ground` from a repository whose config is out of
range (CLI and MCP, a real daemon), the CLI's flag ranges."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.protocol import limits
from support.sandbox import SMALL_WIKI, Sandbox, mcp_session


def hm(sandbox: Sandbox, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hallouminate", *args],
        env=sandbox.env,
        cwd=cwd or sandbox.root,
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_an_out_of_range_search_setting_is_refused_naming_the_file_and_the_key(
    sandbox: Sandbox,
) -> None:
    # The live bug: `top_files = 5000` validated, then every ground failed with "top_files must be an
    # integer from 1 to 1000", blaming a parameter the caller never sent.
    repo = sandbox.make_repo(pages=SMALL_WIKI)
    layer = repo / ".hallouminate" / "config.toml"
    layer.write_text(layer.read_text() + "\n[search]\ntop_files = 5000\n")
    expected = f"{layer}: [search] top_files must be an integer from 1 to 100, got 5000"

    validated = hm(sandbox, "config", "validate", cwd=repo)
    assert validated.returncode == 1
    assert expected in validated.stderr, validated.stderr

    searched = hm(sandbox, "ground", "how does the shim reach the daemon", cwd=repo)
    assert searched.returncode == 2
    assert expected in searched.stderr, searched.stderr
    assert sandbox.daemon_pid() is not None  # a real daemon answered

    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("ground", {"cwd": str(repo), "query": "the daemon"})
    assert info.value.code == INVALID_PARAMS
    assert info.value.message == expected
    assert info.value.data == {"file": str(layer), "key": "[search] top_files"}

    layer.write_text(layer.read_text().replace("5000", str(limits.TOP_FILES.high)))
    assert hm(sandbox, "config", "validate", cwd=repo).returncode == 0
    found = hm(sandbox, "ground", "how does the shim reach the daemon", cwd=repo)
    assert found.returncode == 0, found.stderr


def test_the_ground_flags_take_their_ranges_from_the_table(sandbox: Sandbox) -> None:
    from hallouminate.cli.main import ground

    flags = {param.name: param for param in ground.params}
    for bound in limits.SEARCH_SETTINGS:
        kind = flags[bound.name].type
        assert isinstance(kind, click.IntRange) and (kind.min, kind.max) == (bound.low, bound.high)
        flag = "--" + bound.name.replace("_", "-")
        refused = hm(sandbox, "ground", "x", flag, str(bound.high + 1))
        assert refused.returncode == 2
        # click names the flag and the range; the daemon is never asked.
        assert f"'{flag}'" in refused.stderr and f"{bound.low}<=x<={bound.high}" in refused.stderr
    assert sandbox.daemon_pid() is None
