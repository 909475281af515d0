"""Every third-party package src/ imports is declared in pyproject.toml, not merely installed by another one."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Declared and used without an import: `model install` runs `python -m pip download` (ADR 0020).
RUN_NOT_IMPORTED = {"pip"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_normal(re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}


def _import_module_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "importlib"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _imported_distributions() -> dict[str, set[str]]:
    """Distribution -> the src/ files importing it, for every top-level import that is not ours or stdlib."""
    owners = importlib.metadata.packages_distributions()
    found: dict[str, set[str]] = {}
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif _import_module_call(node):
                # importlib.import_module("lancedb"): storage/lancedb_import.py imports it this way (ADR 0055).
                assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.Constant)
                modules = [str(node.args[0].value)]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top == "hallouminate" or top in sys.stdlib_module_names:
                    continue
                for dist in owners.get(top, [top]):
                    found.setdefault(_normal(dist), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared() -> None:
    imported = _imported_distributions()
    undeclared = {dist: sorted(files) for dist, files in imported.items() if dist not in _declared()}
    assert undeclared == {}


def test_every_declared_package_is_imported_or_run() -> None:
    assert _declared() - set(_imported_distributions()) == RUN_NOT_IMPORTED
