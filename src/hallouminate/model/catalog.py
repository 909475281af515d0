"""The models hallouminate provisions from PyPI: what the embedder must know of each, in one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from hallouminate.model import int8, mpnet, multilingual, provision
from hallouminate.model.base import MAX_TOKENS, MODEL_DIM, MODEL_NAME


@dataclass(frozen=True)
class ProvisionedModel:
    """A model installed into a directory of its own; its graph's last_hidden_state is mean-pooled over
    the real tokens and L2-normalised (what sentence-transformers does for both models)."""

    name: str
    dim: int
    # The most tokens the model reads per text, [CLS] and [SEP] included (its tokenizer_config.json says
    # the same; the embedder's chunking budget comes from here).
    max_tokens: int
    # The install directory, or a ModelUnavailable naming the install command (never downloads).
    require_installed: Callable[[Path], Path]
    install_command: str
    # Text the model was trained to see before a query / a passage (e5's "query: " / "passage: "); the
    # embedder adds them, and the store records them with the vectors (``Embedder.text_prep``).
    query_prefix: str = ""
    passage_prefix: str = ""


PROVISIONED: dict[str, ProvisionedModel] = {
    MODEL_NAME: ProvisionedModel(
        MODEL_NAME, MODEL_DIM, MAX_TOKENS, provision.require_installed, provision.INSTALL_COMMAND
    ),
    mpnet.MPNET_NAME: ProvisionedModel(
        mpnet.MPNET_NAME,
        mpnet.MPNET_DIM,
        mpnet.MPNET_MAX_TOKENS,
        mpnet.require_installed,
        mpnet.INSTALL_COMMAND,
    ),
    multilingual.E5_NAME: ProvisionedModel(
        multilingual.E5_NAME,
        multilingual.E5_DIM,
        multilingual.E5_MAX_TOKENS,
        multilingual.require_installed,
        multilingual.INSTALL_COMMAND,
        query_prefix=multilingual.QUERY_PREFIX,
        passage_prefix=multilingual.PASSAGE_PREFIX,
    ),
    # The -int8 variants: MiniLM's and mpnet's fp32 graphs quantised at install (model/int8.py, ADR 0052).
    **{
        v.name: ProvisionedModel(
            v.name, v.dim, v.max_tokens, partial(int8.require_installed, v), v.install_command
        )
        for v in int8.VARIANTS.values()
    },
}
