"""`get_best_practice` through a real MCP client, the CLI and the daemon protocol (the GrooveSeek face's kb
scope): the page the first matching template names, whole or one H2 section; "not configured"; a bad
target refused; nothing read outside the corpus; no answer ever names a template or its path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.client import connect_or_spawn
from hallouminate.errors import ConfigError, InvalidArgument, NotFound
from support.sandbox import Sandbox, mcp_session

CLAUDE = """---
title: Claude Code
---
# Claude Code best practices

Start every session in the repository root.

## Testing

Run the whole suite before a release.

```markdown
## Not a heading (in a fence)
```

### Flaky tests

Quarantine them.

## Code   Review

Two approvals.
"""
TEMPLATES = ("practices/{target}.md", "guides/{target}-best.md")
# Words of the templates' paths that must never appear in an answer.
SECRET_PARTS = ("practices/", "guides/", "-best.md", "{target}")


def setup_repo(sandbox: Sandbox, tmp_path: Path) -> Path:
    repo = sandbox.make_repo("bp", wiki=None)
    (repo / ".hallouminate" / "config.toml").write_text(
        '[[repository]]\nname = "bp"\npath = "."\n\n[best_practice]\npath_templates = '
        + json.dumps(list(TEMPLATES))
        + "\n"
    )
    wiki = repo / ".hallouminate" / "wiki"
    (wiki / "practices").mkdir()
    (wiki / "guides").mkdir()
    (wiki / "practices" / "claude-code.md").write_text(CLAUDE)
    (wiki / "guides" / "cursor-best.md").write_text("# Cursor\n\nKeep rules short.\n")
    # A page outside the corpus, reachable only through a symlink inside it: never read.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nTOP-SECRET-CONTENT\n")
    (wiki / "practices" / "leak.md").symlink_to(outside / "secret.md")
    (wiki / "practices" / "dir.md").mkdir()
    return repo


def no_template_in(text: str) -> None:
    for part in SECRET_PARTS:
        assert part not in text, f"{part!r} revealed in {text!r}"


async def test_the_tool_reads_the_configured_page_whole_or_one_section(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = setup_repo(sandbox, tmp_path)
    cwd = str(repo)
    async with mcp_session(sandbox) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["get_best_practice"].input_schema["required"] == ["cwd", "target"]

        whole = await session.call_tool("get_best_practice", {"cwd": cwd, "target": "claude-code"})
        assert not whole.is_error, whole.content
        assert whole.structured_content == {"target": "claude-code", "content": CLAUDE}
        assert whole.content[0].text.startswith("# best practices for claude-code\n\n---\ntitle")

        # The second template, when the first names no file for this target.
        cursor = await session.call_tool("get_best_practice", {"cwd": cwd, "target": "cursor"})
        assert cursor.structured_content == {"target": "cursor", "content": "# Cursor\n\nKeep rules short.\n"}

        # One H2 section, case-insensitively, up to the next H1/H2 (its H3s and a fenced "##" inside).
        section = await session.call_tool(
            "get_best_practice", {"cwd": cwd, "target": "claude-code", "category": "TESTING"}
        )
        assert section.structured_content == {
            "target": "claude-code",
            "category": "TESTING",
            "content": "## Testing\n\nRun the whole suite before a release.\n\n```markdown\n## Not a heading "
            "(in a fence)\n```\n\n### Flaky tests\n\nQuarantine them.\n",
        }
        review = await session.call_tool(
            "get_best_practice", {"cwd": cwd, "target": "claude-code", "category": "code review"}
        )
        assert review.structured_content["content"] == "## Code   Review\n\nTwo approvals.\n"

        errors: dict[str, Any] = {}
        for name, args in {
            "no-section": {"target": "claude-code", "category": "Deploy"},
            "no-page": {"target": "vim"},
            "symlink": {"target": "leak"},
            "directory": {"target": "dir"},
            "slash": {"target": "../claude-code"},
            "dotdot": {"target": "a..b"},
            "control": {"target": "claude\u0007code"},
            "backslash": {"target": "x\\y"},
        }.items():
            with pytest.raises(MCPError) as info:
                await session.call_tool("get_best_practice", {"cwd": cwd, **args})
            assert info.value.code == INVALID_PARAMS, name
            no_template_in(info.value.message)
            no_template_in(json.dumps(info.value.data))
            assert "TOP-SECRET" not in info.value.message
            errors[name] = info.value
    missed = errors["no-section"]
    assert missed.data["problem"] == "no-section" and missed.data["sections"] == ["Testing", "Code Review"]
    assert "its H2 sections: 'Testing', 'Code Review'" in missed.message
    for name in ("no-page", "symlink", "directory"):
        assert errors[name].data["problem"] == "no-page", name
        assert "no best-practice page for target" in errors[name].message
    for name in ("slash", "dotdot", "control", "backslash"):
        assert errors[name].data == {"param": "target", "problem": "bad-target"}, name


async def test_not_configured_and_the_kb_scope(sandbox: Sandbox, tmp_path: Path) -> None:
    """A repository without the key: "not configured". A knowledge base (the GrooveSeek face's calls,
    kb = true) takes the templates of the configuration applying to it, here the baseline's."""
    plain = sandbox.make_repo("plain", pages=("index.md",))
    kb = tmp_path / "kb"
    (kb / "bp").mkdir(parents=True)
    (kb / "bp" / "claude-code.md").write_text(CLAUDE)
    conn = await connect_or_spawn()
    try:
        with pytest.raises(ConfigError, match="not configured") as info:
            await conn.call("get_best_practice", str(plain), {"target": "claude-code"})
        assert info.value.data["problem"] == "not-configured"
        with pytest.raises(ConfigError, match="not configured"):
            await conn.call("get_best_practice", str(kb), {"target": "claude-code"}, kb=True)
    finally:
        await conn.close()

    sandbox.write_config(
        sandbox.config_file.read_text() + '\n[best_practice]\npath_templates = ["bp/{target}.md"]\n'
    )
    conn = await connect_or_spawn()
    try:
        found = await conn.call(
            "get_best_practice", str(kb), {"target": "claude-code", "category": "code review"}, kb=True
        )
        assert found == {
            "target": "claude-code",
            "category": "code review",
            "content": "## Code   Review\n\nTwo approvals.\n",
        }
        with pytest.raises(NotFound) as missing:
            await conn.call("get_best_practice", str(kb), {"target": "cursor"}, kb=True)
        assert missing.value.data == {"problem": "no-page", "target": "cursor", "corpus": "kb"}
        with pytest.raises(InvalidArgument):
            await conn.call("get_best_practice", str(kb), {"target": "bp/claude-code"}, kb=True)
    finally:
        await conn.close()


def test_the_cli_command(sandbox: Sandbox, tmp_path: Path) -> None:
    repo = setup_repo(sandbox, tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hallouminate", "best-practice", *args],
            env=sandbox.env,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=300,
        )

    text = run("claude-code", "--category", "testing")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("# best practices for claude-code, section 'testing'\n\n## Testing\n")
    as_json = run("cursor", "--format", "json")
    assert json.loads(as_json.stdout) == {"target": "cursor", "content": "# Cursor\n\nKeep rules short.\n"}
    missed = run("claude-code", "--category", "deploy")
    assert missed.returncode == 2 and "its H2 sections: 'Testing', 'Code Review'" in missed.stderr
    bad = run("../etc")
    assert bad.returncode == 2 and "target '../etc'" in bad.stderr
    no_template_in(missed.stderr + bad.stderr)
