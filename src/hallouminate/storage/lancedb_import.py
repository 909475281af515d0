"""``import lancedb`` without building its REST namespace client: the one way the storage adapter imports it.

``import lancedb`` (0.40) imports ``lance_namespace``, which imports models from the package
``lance_namespace_urllib3_client``; that package's ``__init__`` also imports every generated REST API class,
whose ~370 pydantic ``validate_call`` methods build their validators at import: ~1.1 s of CPU, nearly half
of ``import lancedb``, paid at every daemon start for a client a local directory connection never calls.

So that package is put in ``sys.modules`` with its ``__init__`` not yet run: its submodules (the models
lancedb imports) load as usual, and the first read of any other name of the package runs the real
``__init__`` in place and answers it, so code that does use the REST client gets exactly the package it
would have had. Nothing of lancedb is patched; ``tests/storage/test_lancedb_import.py`` fails if a daemon
start builds the REST API again (a lancedb that needs it at import) or if the package stops resolving its
names.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

# The package whose __init__ waits for its first use (its submodules do not need it).
DEFERRED = "lance_namespace_urllib3_client"

_lock = threading.RLock()


def import_lancedb() -> ModuleType:
    """The ``lancedb`` module, imported (once) with ``DEFERRED``'s ``__init__`` left for its first use."""
    with _lock:
        if DEFERRED not in sys.modules:
            _defer_init(DEFERRED)
    # The import system's own lock makes a second thread wait for a lancedb half imported by a first (a
    # look in sys.modules would hand it over unfinished).
    return importlib.import_module("lancedb")


def _defer_init(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not installed or not a package (a lancedb without it): nothing to defer
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def first_use(attr: str) -> object:
        # Module __getattr__ (PEP 562) is asked only for names not set yet: run the real __init__ once,
        # in this module object (so every reference to it sees the result), then answer from it.
        with _lock:
            if module.__dict__.get("__getattr__") is first_use:
                del module.__dict__["__getattr__"]
                loader.exec_module(module)
        return getattr(module, attr)

    module.__dict__["__getattr__"] = first_use
    sys.modules[name] = module
