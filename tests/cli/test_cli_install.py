"""`make install` (README, "Install it for your repositories"): `hallouminate` on PATH for any repository.

The install goes to a temporary prefix, offline, from the uv cache `make setup` filled; then `serve` is
launched by name from another repository by a real MCP client. Bytecode compilation is turned off here
(~3 s instead of ~1 min on a small machine); everything else is the README's command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.sandbox import REPO_ROOT, Sandbox, private_world

# Resolved at import, before any fixture isolates the XDG variables: where `make setup` left uv's cache.
UV = REPO_ROOT / ".tools" / "uv" / "bin" / "uv"
UV_CACHE = (
    os.environ.get("UV_CACHE_DIR")
    or subprocess.run([str(UV), "cache", "dir"], capture_output=True, text=True, check=False).stdout.strip()
)
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="module")
def installed(model_cache: Path) -> Iterator[tuple[Sandbox, Path]]:
    with private_world(model_cache, prefix="hm-inst-", in_process=False) as box:
        prefix = box.root / "prefix"
        done = subprocess.run(
            ["make", "-C", str(REPO_ROOT), "install", f"PREFIX={prefix}", "UV_COMPILE_BYTECODE=0"],
            env={**os.environ, "UV_CACHE_DIR": UV_CACHE, "UV_OFFLINE": "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "next: hallouminate model install" in done.stdout
        yield box, prefix


def test_make_install_puts_hallouminate_on_path_and_serve_works_from_another_repository(
    installed: tuple[Sandbox, Path],
) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    box, prefix = installed
    path = f"{prefix / 'bin'}:{SYSTEM_PATH}"  # the checkout's .venv/bin is not on it
    found = shutil.which("hallouminate", path=path)
    assert found == str(prefix / "bin" / "hallouminate")
    env = {**box.env, "PATH": path}
    env.pop("VIRTUAL_ENV", None)
    repo = box.make_repo("elsewhere", wiki=None)
    (repo / ".hallouminate" / "wiki" / "release.md").write_text(
        "# Releasing\n\nTag the commit, then publish the wheel with the release script.\n"
    )

    # The README's next step, from the installed command: the provisioned model is found and kept.
    model = subprocess.run(
        ["hallouminate", "model", "install"], env=env, cwd=repo, capture_output=True, text=True, timeout=300
    )
    assert model.returncode == 0, model.stdout + model.stderr

    async def session() -> tuple[set[str], str, str]:
        params = StdioServerParameters(command="hallouminate", args=["serve"], env=env, cwd=str(repo))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = {tool.name for tool in (await client.list_tools()).tools}
            await client.call_tool("index", {"cwd": str(repo)})
            answer = await client.call_tool("ground", {"cwd": str(repo), "query": "how do we release?"})
            assert answer.structured_content is not None
            return tools, answer.structured_content["docs"][0]["path"], answer.content[0].text

    tools, top, text = anyio.run(session)
    assert {"ground", "index", "add_markdown", "read_markdown"} <= tools
    assert top == "release.md" and "release.md" in text
    # Served by the installed copy, not by this checkout: the daemon runs the prefix's interpreter.
    pid = box.daemon_pid()
    assert pid is not None
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert cmdline[0].decode().startswith(str(prefix / "lib" / "hallouminate")), cmdline
    assert not cmdline[0].decode().startswith(sys.prefix)
