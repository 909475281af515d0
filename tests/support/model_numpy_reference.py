"""Test helper: a post-norm transformer encoder written out in plain float64 numpy, written independently
of the ONNX builders, so the graphs of BERT and MPNet can be checked against it (only their embeddings,
layer names and attention biases differ)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class Reference:
    """The checkpoint's weights as float64, with its Linear and LayerNorm layers by name."""

    def __init__(self, cfg: dict[str, Any], weights: dict[str, np.ndarray]) -> None:
        self.cfg = cfg
        self.w = {k: v.astype(np.float64) for k, v in weights.items()}

    def linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def norm(self, x: np.ndarray, name: str) -> np.ndarray:
        return layer_norm(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.cfg["layer_norm_eps"])

    def layers(
        self, x: np.ndarray, bias: np.ndarray, attention: tuple[str, str, str, str, str]
    ) -> np.ndarray:
        """Every encoder layer over ``x`` (batch, seq, hidden) with the additive attention ``bias``;
        ``attention`` names the q, k, v, output and LayerNorm parts below ``encoder.layer.N.``."""
        batch, seq, hidden = x.shape
        heads = self.cfg["num_attention_heads"]
        dim = hidden // heads
        q_name, k_name, v_name, out_name, norm_name = attention
        for n in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{n}."

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)

            q, k, v = (split(self.linear(x, f"{p}{part}")) for part in (q_name, k_name, v_name))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim) + bias
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = self.norm(self.linear(context, f"{p}{out_name}") + x, f"{p}{norm_name}")
            inner = self.linear(x, f"{p}intermediate.dense")
            gelu = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = self.norm(self.linear(gelu, f"{p}output.dense") + x, f"{p}output.LayerNorm")
        return x


def padding_bias(mask: np.ndarray) -> np.ndarray:
    """(batch, 1, 1, seq): 0 for real tokens, a large negative number for padding."""
    return (1.0 - mask[:, None, None, :]) * -1e9
