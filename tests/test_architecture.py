"""Dependencies point one way: clients know the protocol, the domain knows no adapter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "hallouminate"
ADAPTER_LIBS = {"lancedb", "fastembed", "onnxruntime", "pyarrow", "tokenizers"}
ENGINE = {"storage", "search", "indexing", "embedding", "daemon", "wiki"}


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules_in(*subpackages: str) -> list[Path]:
    return [p for sub in subpackages for p in sorted((PACKAGE / sub).rglob("*.py"))]


def test_clients_import_no_engine_module_and_no_adapter() -> None:
    for path in modules_in("shim", "cli", "client", "protocol", "render", "evaluation"):
        # `hallouminate daemon run` is the daemon's entry point: the CLI may start it (lazily), nothing more.
        allowed = {"daemon"} if path.parent.name == "cli" else set()
        for name in imports_of(path):
            parts = name.split(".")
            assert parts[0] not in ADAPTER_LIBS, f"{path.name} imports {name}"
            if parts[0] == "hallouminate" and len(parts) > 1:
                assert parts[1] not in ENGINE - allowed, f"{path.relative_to(PACKAGE)} imports {name}"


def test_domain_and_config_import_no_adapter() -> None:
    domain = [
        *modules_in("config", "wiki"),
        PACKAGE / "search" / "fusion.py",
        PACKAGE / "indexing" / "chunker.py",
    ]
    for path in domain:
        for name in imports_of(path):
            assert name.split(".")[0] not in ADAPTER_LIBS, f"{path.relative_to(PACKAGE)} imports {name}"


def test_the_running_shim_loads_neither_lancedb_nor_fastembed() -> None:
    code = (
        "import sys, hallouminate.shim.server, hallouminate.cli.main, hallouminate.evaluation\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(ADAPTER_LIBS)!r} or m.split('.')[:2] in "
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
    for path in (PACKAGE / "protocol" / "results.py", PACKAGE / "protocol" / "arguments.py"):
        ours = [name for name in imports_of(path) if name.split(".")[0] == "hallouminate"]
        assert ours == [], f"{path.relative_to(PACKAGE)} imports {ours}"
