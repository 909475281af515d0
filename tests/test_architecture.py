"""Dependencies point one way: every rule docs/architecture.md states is checked here.

- The "may import" column of the package table in docs/architecture.md is read as the rule itself: each
  module of ``src/hallouminate`` may import its own package, ``errors``, the package root and what its
  package's row names, nothing else of ours; every package must have a row.
- No import cycle between modules or between packages, counting every import (function-level and
  ``TYPE_CHECKING`` ones too: a cycle hidden in a function is still two modules that cannot be understood
  apart).
- No module imports another module's private name (``from x import _y``, ``x._y``), and a private module
  (``_x.py``) is imported only within its package.
- Clients (shim, CLI, client, protocol, render, evaluation) know the protocol, not the engine; domain code
  imports no adapter library; the running shim loads neither lancedb nor fastembed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "hallouminate"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Libraries that reach the store, the model or their data formats: only adapters import them.
# Loaded by the engine on its first search (analysis.english_zipf, ~1 s): never by the shim or the CLI.
SEARCH_ONLY_LIBS = {"wordfreq"}
ADAPTER_LIBS = {
    "lancedb",
    "fastembed",
    "onnxruntime",
    "onnx",
    "pyarrow",
    "tokenizers",
    "safetensors",
    "obstore",
}
ENGINE = {"storage", "search", "indexing", "embedding", "daemon", "wiki"}
# Every module may import these: the error vocabulary and the package root (its version).
EVERYONE_MAY_IMPORT = {"errors", ""}


# -- the import graph --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Import:
    source: str  # dotted module, relative to hallouminate ("" is the package root)
    target: str
    line: int
    names: tuple[str, ...]  # the names taken from the target (from-imports)


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _ours(dotted: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that ``dotted`` (absolute, ``hallouminate...``) names, or None."""
    if dotted != "hallouminate" and not dotted.startswith("hallouminate."):
        return None
    name = dotted[len("hallouminate.") :] if dotted != "hallouminate" else ""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def imports_in(source: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _ours(alias.name, modules)
                if target is not None:
                    yield Import(source, target, node.lineno, ())
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = source.split(".") if source else []
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                dotted = ".".join(["hallouminate", *base, *([node.module] if node.module else [])])
            else:
                dotted = node.module or ""
            package = _ours(dotted, modules)
            if package is None:
                continue
            for alias in node.names:
                # `from pkg import submodule` depends on the submodule, not on the package.
                sub = f"{package}.{alias.name}" if package else alias.name
                exact = dotted == ".".join(["hallouminate", *([package] if package else [])])
                if exact and sub in modules:
                    yield Import(source, sub, node.lineno, ())
                else:
                    yield Import(source, package, node.lineno, (alias.name,))


def graph(package: Path = PACKAGE) -> list[Import]:
    modules = module_names(package)
    return [imp for name, path in modules.items() for imp in imports_in(name, path, modules)]


def package_of(module: str) -> str:
    return module.split(".")[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def module_cycles(imports: list[Import]) -> list[list[str]]:
    edges: dict[str, set[str]] = {}
    for imp in imports:
        if imp.source != imp.target:
            edges.setdefault(imp.source, set()).add(imp.target)
    return cycles(edges)


def package_cycles(imports: list[Import]) -> list[list[str]]:
    edges: dict[str, set[str]] = {}
    for imp in imports:
        source, target = package_of(imp.source), package_of(imp.target)
        if source != target and target:
            edges.setdefault(source, set()).add(target)
    return cycles(edges)


def private_imports(imports: list[Import], package: Path = PACKAGE) -> list[str]:
    """Each use of another module's private name or of another package's private module."""
    found = []
    for imp in imports:
        if imp.target == imp.source:
            continue
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__"):
                found.append(f"{imp.source}:{imp.line} imports {imp.target}.{name}")
        private = [part for part in imp.target.split(".") if part.startswith("_") and part != "__main__"]
        if private and package_of(imp.source) != package_of(imp.target):
            found.append(f"{imp.source}:{imp.line} imports the private module {imp.target}")
    # `module._name` on a module imported whole.
    modules = module_names(package)
    for source, path in modules.items():
        tree = ast.parse(path.read_text())
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _ours(alias.name, modules)
                    if target is not None and alias.asname:
                        bound[alias.asname] = target
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                package_name = _ours(node.module, modules)
                for alias in node.names:
                    sub = f"{package_name}.{alias.name}" if package_name else alias.name
                    if package_name is not None and sub in modules:
                        bound[alias.asname or alias.name] = sub
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and bound[node.value.id] != source
            ):
                found.append(f"{source}:{node.lineno} reads {bound[node.value.id]}.{node.attr}")
    return found


# -- the rules docs/architecture.md states ---------------------------------------------------------
def documented_rules(text: str) -> dict[str, set[str] | None]:
    """Each package's allowed imports as the package table says (None: "everything").

    A row's first column names its packages in backticks (``protocol/``, ``errors``); its last column
    names what they may import in backticks, or says "nothing of ours" or "everything".
    """
    rules: dict[str, set[str] | None] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        packages = [name.rstrip("/") for name in re.findall(r"`([^`]+)`", cells[0])]
        allowed_cell = cells[-1]
        allowed: set[str] | None
        if "everything" in allowed_cell:
            allowed = None
        else:
            allowed = {name.rstrip("/") for name in re.findall(r"`([^`]+)`", allowed_cell)}
        for package in packages:
            rules[package] = allowed
    return rules


def violations(
    imports: list[Import], rules: dict[str, set[str] | None], modules: dict[str, Path]
) -> list[str]:
    found = []
    packages = {package_of(name) for name in modules} - {""}  # the root: its version, for everyone
    for package in sorted(packages - set(rules)):
        found.append(f"package {package or 'hallouminate'!r} has no row in docs/architecture.md")
    for imp in imports:
        source = package_of(imp.source)
        target = imp.target
        if source == package_of(target) or package_of(target) in EVERYONE_MAY_IMPORT:
            continue
        allowed = rules.get(source, set())
        if allowed is None:
            continue
        if not any(target == rule or target.startswith(rule + ".") for rule in allowed):
            found.append(f"{imp.source}:{imp.line} imports {target}, which `{source}` may not import")
    return found


def test_every_import_is_one_the_architecture_page_allows() -> None:
    rules = documented_rules(ARCHITECTURE.read_text())
    assert violations(graph(), rules, module_names()) == []


def test_no_import_cycle_between_modules_or_packages() -> None:
    imports = graph()
    assert module_cycles(imports) == []
    assert package_cycles(imports) == []


def test_no_module_uses_another_modules_private_names() -> None:
    assert private_imports(graph()) == []


# The checks above must fail when the rule is broken: each is run on a small planted package.
PLANTED = {
    "__init__.py": "",
    "errors.py": "",
    "alpha/__init__.py": "",
    "alpha/one.py": "from hallouminate.beta import two\n",
    "beta/__init__.py": "",
    "beta/two.py": "def f():\n    from hallouminate.alpha.one import thing\n",
    "beta/three.py": "from hallouminate.alpha.one import _helper\nfrom hallouminate.beta import _impl\n",
    "beta/_impl.py": "",
    "gamma.py": "from hallouminate.beta import _impl\nimport hallouminate.alpha.one as one\none._secret\n",
}


@pytest.fixture()
def planted(tmp_path: Path) -> Path:
    package = tmp_path / "hallouminate"
    for name, text in PLANTED.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    return package


def test_the_checks_catch_a_planted_cycle_private_import_and_forbidden_import(planted: Path) -> None:
    imports = graph(planted)
    assert module_cycles(imports) == [["alpha.one", "beta.two"]]
    assert package_cycles(imports) == [["alpha", "beta"]]
    assert sorted(private_imports(imports, planted)) == [
        "beta.three:1 imports alpha.one._helper",
        "gamma:1 imports the private module beta._impl",
        "gamma:3 reads alpha.one._secret",
    ]
    rules = documented_rules(
        "| `alpha/` | x | `beta` |\n| `beta/` | x | nothing of ours |\n| `errors` | x | - |\n"
    )
    assert sorted(violations(imports, rules, module_names(planted))) == [
        "beta.three:1 imports alpha.one, which `beta` may not import",
        "beta.two:2 imports alpha.one, which `beta` may not import",
        "gamma:1 imports beta._impl, which `gamma` may not import",
        "gamma:2 imports alpha.one, which `gamma` may not import",
        "package 'gamma' has no row in docs/architecture.md",
    ]


def test_clients_import_no_engine_module_and_no_adapter() -> None:
    for imp in graph():
        if package_of(imp.source) not in {"shim", "cli", "client", "protocol", "render", "evaluation"}:
            continue
        # `hallouminate daemon run` is the daemon's entry point: the CLI may start it (lazily), nothing more.
        allowed = {"daemon"} if package_of(imp.source) == "cli" else set()
        assert package_of(imp.target) not in ENGINE - allowed, f"{imp.source} imports {imp.target}"
    for path in [
        p
        for sub in ("shim", "cli", "client", "protocol", "render", "evaluation")
        for p in (PACKAGE / sub).rglob("*.py")
    ]:
        assert not _third_party(path) & ADAPTER_LIBS, (
            f"{path.relative_to(PACKAGE)} imports an adapter library"
        )


def _third_party(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_domain_code_imports_no_adapter_library() -> None:
    # The domain: everything but the adapters (storage, embedding, model) and the daemon that wires them.
    domain = ["config", "wiki", "search", "indexing", "browse", "sandbox", "protocol", "render", "evaluation"]
    for path in [p for sub in domain for p in sorted((PACKAGE / sub).rglob("*.py"))]:
        assert not _third_party(path) & ADAPTER_LIBS, (
            f"{path.relative_to(PACKAGE)} imports an adapter library"
        )


def test_the_running_shim_loads_neither_lancedb_nor_fastembed() -> None:
    code = (
        "import sys, hallouminate.shim.server, hallouminate.cli.main, hallouminate.evaluation\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(ADAPTER_LIBS | SEARCH_ONLY_LIBS)!r} or m.split('.')[:2] in "
        f"{[['hallouminate', e] for e in sorted(ENGINE)]!r})\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_only_the_testing_hooks_module_reads_the_test_variables() -> None:
    hooks = PACKAGE / "testing_hooks.py"
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != hooks:
            text = path.read_text()
            assert "HALLOUMINATE_TEST_" not in text, f"{path.relative_to(PACKAGE)} reads a test hook itself"
    assert "HALLOUMINATE_TEST_" in hooks.read_text()


def test_the_wire_types_import_nothing_of_ours() -> None:
    # Every layer (the engine, the shim, the CLI, the renderers) types its results with them.
    wire_types = {"protocol.results", "protocol.arguments"}
    assert [imp for imp in graph() if imp.source in wire_types] == []
