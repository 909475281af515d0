"""The evaluation package is pure: the standard library, PyYAML and the protocol, nothing else of ours."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hallouminate" / "evaluation"


def test_evaluation_imports_only_stdlib_yaml_and_the_protocol() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert {p.name for p in modules} >= {"__init__.py", "golden.py", "metrics.py", "history.py", "report.py"}
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                ours = name.startswith(("hallouminate.protocol", "hallouminate.evaluation"))
                assert top in sys.stdlib_module_names or top == "yaml" or ours, f"{path.name} imports {name}"


def test_the_cli_loads_the_evaluation_package_only_when_eval_runs() -> None:
    # `hallouminate serve` starts through cli.main: it must not pay for PyYAML and the evaluation code.
    code = "import sys, hallouminate.cli.main\nprint(sorted(m for m in sys.modules if m == 'yaml' or 'evaluation' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
