"""`hallouminate index` shows progress with a rate and an ETA, through the real CLI over a real daemon:
plain lines when stderr is not a terminal (done/total files, bytes read, chunks, rate, ETA), tqdm's bar on
a terminal (bytes, rate, ETA, files). Progress is by the bytes of the files the run reads, so pages of very
different sizes still give an ETA that means something."""

from __future__ import annotations

import random
import re
from pathlib import Path

from support.pty_cli import hm_on_tty
from support.sandbox import Sandbox, hm

WORDS = [
    "ledger",
    "wombat",
    "quorum",
    "shard",
    "replica",
    "journal",
    "cursor",
    "beacon",
    "lattice",
    "harbor",
    "pylon",
    "sextant",
    "anvil",
    "prism",
    "cobalt",
    "meridian",
    "tundra",
    "fjord",
    "delta",
    "basalt",
    "ember",
    "willow",
    "thicket",
    "lantern",
]
LINE = re.compile(
    r"^indexing (?P<corpus>\S+): (?P<done>\d+)/(?P<total>\d+) files, (?P<read>[\d.]+ [kMG]?B)/(?P<of>[\d.]+ [kMG]?B) read, "
    r"(?P<chunks>\d+) chunks, (?P<rate>[\d.]+ [kMG]?B/s|rate unknown yet), ETA (?P<eta>\d+:\d\d(:\d\d)?|unknown yet)$"
)


def write_pages(wiki: Path, prefix: str, count: int, seed: int) -> None:
    """Pages of very different sizes (one section to six): ~5 chunks each on average."""
    rng = random.Random(seed)
    for i in range(count):
        sections = rng.choice([1, 1, 2, 3, 6])
        body = "\n\n".join(
            f"## Part {s}\n\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(120, 220)))
            for s in range(sections)
        )
        (wiki / f"{prefix}-{i:03d}.md").write_text(f"# {prefix} {i}\n\n{body}\n")


def test_index_shows_a_bar_on_a_tty_and_lines_with_bytes_rate_and_eta_otherwise(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo(wiki=None)
    wiki = repo / ".hallouminate" / "wiki"
    write_pages(wiki, "page", 20, seed=1)
    total = sum(p.stat().st_size for p in wiki.glob("*.md"))

    # A terminal: tqdm's bar, by bytes, with its rate, ETA and the files done. (First: the repository is
    # new to the daemon, so neither its catch-up nor its watcher indexes the pages before this call.)
    code, shown = hm_on_tty(sandbox, "index", cwd=repo)
    assert code == 0, shown
    frames = [f for f in re.split(r"[\r\n]+", shown) if "files]" in f]
    assert frames, shown
    # "repo:sample:wiki:  40%|####  | 61.2k/153k [00:03<00:04, 17.5kB/s, 8/20 files]"
    bar = re.compile(
        r"\| *[\d.]+[kM]?/[\d.]+[kM]?B? \[\d\d:\d\d<(?P<eta>\d\d:\d\d|\?), +[\d.]+[kM]?B/s, \d+/20 files\]"
    )
    assert any((m := bar.search(f)) and m["eta"] != "?" for f in frames[:-1]), frames
    assert "20/20 files]" in frames[-1] and "100%" in frames[-1], frames[-1]
    assert not any(line.startswith("indexing ") for line in shown.splitlines()), shown  # no plain lines

    # Not a terminal: plain lines. --force reads every page again (no new file: the watcher has nothing to do).
    out = hm(sandbox, "index", "--force", cwd=repo)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("indexing ")]
    parsed = [LINE.match(line) for line in lines]
    assert lines and all(parsed), lines
    matches = [m for m in parsed if m is not None]
    # Every line's total of bytes is that of the pages, which all had to be read.
    assert {m["of"] for m in matches} == {f"{total / 1e3:.1f} kB"}, lines
    # Before the end, a measured rate and an ETA (the run took seconds: the daemon reports twice a second).
    assert any(m["eta"] != "unknown yet" and int(m["done"]) < int(m["total"]) for m in matches), lines
    last = matches[-1]
    assert last["done"] == last["total"] == "20" and last["read"] == last["of"], lines
    assert int(last["chunks"]) > 20, lines  # more chunks than files: sections of the long pages
