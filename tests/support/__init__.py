"""Helpers shared by the test modules: plain functions and classes, imported by name
(``from support.sandbox import Sandbox``).

``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml), so ``support`` is importable from any
test module. No test module imports another test module, nor ``conftest``: whatever two modules share
lives here (``tests/test_suite_layout.py`` checks it).
"""
