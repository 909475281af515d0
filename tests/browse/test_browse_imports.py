"""The read tools' engine, the sandbox and the config stay light: no adapter is loaded with them."""

from __future__ import annotations

import subprocess
import sys


def test_browse_sandbox_and_config_load_no_adapter() -> None:
    code = (
        "import sys, hallouminate.browse, hallouminate.sandbox, hallouminate.config;"
        "heavy = {'lancedb', 'fastembed', 'numpy', 'pyarrow', 'onnxruntime', 'tokenizers'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_config_does_not_load_pathspec_until_it_walks() -> None:
    code = "import sys, hallouminate.config; print('pathspec' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
