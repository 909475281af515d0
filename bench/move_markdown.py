"""The cost of one ``move_markdown`` (the domain: plan, redo record, files written; no daemon, no
re-index), against a baseline measured in the same run: reading every page of the wiki through the
sandbox, which any move must do to find the links to the page.

Generates a wiki of N pages in 20 directories, each holding some prose, 5 ``[[wikilinks]]`` and 5 relative
Markdown links to other pages; moves one page 5 times (to a new directory each time) and reports the
median move, the median baseline and their ratio, with the pages and links rewritten.

Usage: .venv/bin/python bench/move_markdown.py [--pages 100,1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hallouminate.config import CorpusSpec
from hallouminate.indexing.walker import corpus_files
from hallouminate.sandbox import read_file
from hallouminate.wiki.journal import Journal
from hallouminate.wiki.move import move_markdown


def make_wiki(root: Path, pages: int) -> None:
    for i in range(pages):
        sub = root / f"dir{i % 20}"
        sub.mkdir(exist_ok=True)
        targets = [(i * 7 + k) % pages for k in range(5)]
        links = " ".join(f"[[page{t}]] [p](../dir{t % 20}/page{t}.md#a)" for t in targets)
        (sub / f"page{i}.md").write_text(
            f"# Page {i}\n\n" + "Some prose about things. " * 40 + f"\n\n{links}\n"
        )


def run(pages: int, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wiki"
        root.mkdir()
        make_wiki(root, pages)
        spec = CorpusSpec("w", "wiki", (root,), ("**/*.md",), (), "bench")
        journal = Journal(Path(tmp) / "journal")
        moves, scans = [], []
        source = "dir0/page0.md"
        out = None
        for k in range(repeat):
            started = time.perf_counter()
            for rel, holder in corpus_files(spec):
                read_file(holder, rel)
            scans.append(time.perf_counter() - started)
            target = f"moved{k}/m{k}.md"
            started = time.perf_counter()
            out = move_markdown(spec, {"corpus": "w", "from": source, "to": target}, journal)
            moves.append(time.perf_counter() - started)
            source = target
        assert out is not None
        move, scan = statistics.median(moves), statistics.median(scans)
        return {
            "pages": pages,
            "move_s": move,
            "scan_s": scan,
            "ratio": move / scan,
            "rewritten": len(out.result["rewritten"]),
            "links": out.result["links_rewritten"],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="100,1000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| pages | move (median) | read every page (median) | ratio | pages rewritten | links |")
    print("|---|---|---|---|---|---|")
    for pages in (int(p) for p in args.pages.split(",")):
        r = run(pages, args.repeat)
        print(
            f"| {pages} | {r['move_s'] * 1000:.0f} ms | {r['scan_s'] * 1000:.0f} ms | {r['ratio']:.1f}x | "
            f"{r['rewritten']} | {r['links']} |"
        )


if __name__ == "__main__":
    main()
