"""Names every part of the model package shares: the model's identity and its install error."""

from __future__ import annotations

from hallouminate.errors import ModelUnavailable

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIM = 384
# The model was trained on 256-token inputs; upstream's tokenizer_config.json says 512, which would only
# dilute the mean pooling with positions the model never learned to use.
MAX_TOKENS = 256


class ModelInstallError(ModelUnavailable):
    """Provisioning the model failed: bad download, hash mismatch, corrupt archive, failed build.

    Raised only after the install has cleaned up after itself: no temporary directory is left in the
    cache and a previous good install is untouched.
    """
