"""The suite's own layout: test modules share helpers through ``tests/support`` only.

A test module that imports another one (``from test_store_lancedb import _rows``) works only when pytest
happened to put that module's directory on ``sys.path`` first, runs its tests a second time under another
name if collected from there, and hides a helper where nobody looks for it. So: no test module, helper or
conftest imports a module of the suite other than ``support``, nothing edits ``sys.path``, every module
outside ``support`` is a test module or a conftest, and a helper is not copied from one module into
another.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"
# A copied helper this long is worth one shared definition; one- and two-liners may be restated.
MIN_SHARED_STATEMENTS = 3


def suite_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def suite_names() -> set[str]:
    """Every name a module of the suite could be imported by (``tests/`` and each directory pytest may
    put on ``sys.path``): module stems and directory names."""
    names = {p.stem for p in suite_modules()}
    names |= {
        d.name
        for d in TESTS.rglob("*")
        # node_modules: the TypeScript client's packages (support/ts_client), not importable from Python.
        if d.is_dir() and d.name != "__pycache__" and "node_modules" not in d.relative_to(TESTS).parts
    }
    return names


def imports_of(tree: ast.Module) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def test_no_module_of_the_suite_imports_another_except_support() -> None:
    ours = suite_names() - {"support"}
    bad = []
    for path in suite_modules():
        for line, name in imports_of(ast.parse(path.read_text())):
            top = name.split(".")[0]
            if name.startswith(".") or top in ours:
                bad.append(f"{path.relative_to(TESTS)}:{line}: import {name}")
    assert not bad, "import shared helpers from tests/support instead:\n" + "\n".join(bad)


def test_nothing_in_the_suite_edits_sys_path() -> None:
    bad = []
    for path in suite_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                bad.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not bad, "tests/ is on sys.path through pyproject's `pythonpath`; nothing else belongs there: " + (
        ", ".join(bad)
    )


def test_helpers_live_in_support_and_support_holds_no_test() -> None:
    for path in suite_modules():
        if path.is_relative_to(SUPPORT):
            tree = ast.parse(path.read_text())
            tests = [
                n.name
                for n in tree.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
            ]
            assert not tests, f"{path.relative_to(TESTS)} defines tests {tests}: support holds helpers only"
        else:
            assert path.name == "conftest.py" or path.name.startswith("test_"), (
                f"{path.relative_to(TESTS)} is neither a test module nor a conftest: move it to tests/support"
            )


def test_no_helper_is_copied_between_modules() -> None:
    bodies: dict[str, list[str]] = defaultdict(list)
    for path in suite_modules():
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.name.startswith(("test_", "Test")):
                continue
            if sum(isinstance(n, ast.stmt) for n in ast.walk(node)) - 1 < MIN_SHARED_STATEMENTS:
                continue
            body = ast.dump(ast.Module(body=node.body, type_ignores=[]))
            bodies[body].append(f"{path.relative_to(TESTS)}::{node.name}")
    copies = [places for places in bodies.values() if len(places) > 1]
    assert not copies, "one definition in tests/support instead of these copies: " + repr(copies)
