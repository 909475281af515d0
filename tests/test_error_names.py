"""Errors are named by meaning everywhere but in ``hallouminate.errors``, which maps them to the wire.

Outside ``errors.py`` no module may name a wire class (``InvalidParams``, ``Internal``, ``Retryable``),
build a bare family (``CallerError``, ``Fault``, ``Transient``, ``HallouminateError``), spell a wire
kind (``"invalid_params"``, ``"internal"``, ``"retryable"``, so no ``data.retryable`` set by hand) or a
JSON-RPC code (``-32602``, ``-32603``, ``INVALID_PARAMS``, ``INTERNAL_ERROR``): those live in the one
mapping, read by the daemon's answers, the shim and the CLI (docs/adr/0021-errors-by-meaning.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "hallouminate"
MAPPING = PACKAGE / "errors.py"

WIRE_NAMES = {"InvalidParams", "Internal", "Retryable"}
FAMILIES = {"CallerError", "Fault", "Transient", "HallouminateError"}
WIRE_KINDS = {"invalid_params", "internal", "retryable"}
JSONRPC_NAMES = {"INVALID_PARAMS", "INTERNAL_ERROR"}
JSONRPC_CODES = {32602, 32603}


def _called_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def violations(source: str) -> list[str]:
    """Each place in ``source`` that bypasses the mapping, as ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in WIRE_NAMES | JSONRPC_NAMES:
                    found.append(f"{line}: imports {alias.name}")
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = _called_name(node)
            if name in WIRE_NAMES | JSONRPC_NAMES:
                found.append(f"{line}: names {name}")
        elif isinstance(node, ast.Call):
            name = _called_name(node.func)
            if name in FAMILIES:
                found.append(f"{line}: builds a bare {name}")
        elif isinstance(node, ast.Raise) and node.exc is not None:
            name = _called_name(node.exc)
            if name in FAMILIES:
                found.append(f"{line}: raises a bare {name}")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and node.value in WIRE_KINDS:
                found.append(f"{line}: spells the wire kind {node.value!r}")
            elif type(node.value) is int and node.value in JSONRPC_CODES:
                found.append(f"{line}: spells a JSON-RPC code ({node.value})")
    return found


def test_no_module_bypasses_the_error_mapping() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != MAPPING and (found := violations(path.read_text()))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from hallouminate.errors import InvalidParams\n", "imports InvalidParams"),
        ("raise errors.Internal('x')\n", "names Internal"),
        ("try:\n    pass\nexcept Retryable:\n    pass\n", "names Retryable"),
        ("raise CallerError('x')\n", "builds a bare CallerError"),
        ("error = Fault('x', {})\n", "builds a bare Fault"),
        ("raise Transient\n", "raises a bare Transient"),
        ("raise NotFound('x', {'retryable': True})\n", "spells the wire kind 'retryable'"),
        ("if error.kind == 'invalid_params': pass\n", "spells the wire kind 'invalid_params'"),
        ("code = -32603\n", "spells a JSON-RPC code (32603)"),
        ("from mcp.types import INVALID_PARAMS\n", "imports INVALID_PARAMS"),
    ],
)
def test_the_check_catches_each_way_around_the_mapping(source: str, expected: str) -> None:
    assert [entry.split(": ", 1)[1] for entry in violations(source)][:1] == [expected]


def test_named_errors_pass_the_check() -> None:
    source = (
        "from hallouminate.errors import CallerError, NotFound\n"
        "try:\n    raise NotFound('missing', {'problem': 'missing'})\n"
        "except CallerError as exc:\n    raise exc.reworded('again') from None\n"
        "class PathMissing(NotFound):\n    pass\n"
    )
    assert violations(source) == []
