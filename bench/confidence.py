"""How often ``low_confidence`` fires on answerable and on unanswerable queries (docs/search.md, ADR 0025).

For each set, indexes its wiki with the real model (bench/eval_ranking.py's ``indexed``) and runs through
``ground`` (the path the daemon serves, with the model's name) every answerable query (the labelled sets)
and every unanswerable one (tests/fixtures/*_unanswerable.json: near-domain and off-topic queries written
before any score was seen; their ``note`` says how). Prints the fire rates per set and kind as the Markdown
table docs/search.md carries.

Sets: eval (the rule's constants were fitted on it), heldout and sample (reported, never fitted on);
multilingual (its answerable queries only, not in "all": a multilingual model's floors must not fire on
cross-language questions, ADR 0053).

Usage: .venv/bin/python bench/confidence.py [--set eval|heldout|sample|all] [--model NAME]
       [--dump FILE.json] [--from-dump FILE.json] [--sweep]

``--dump`` writes every query's signals; ``--from-dump`` applies the current rule to such a file (of
``--model``) without searching again; ``--sweep`` prints, on the eval set, the fire rates of each cosine
floor from 0.20 to 0.40 (the rule's other terms as they are), the measurement the floor was chosen from.

all-mpnet-base-v2 (ADR 0018; install it first): --model sentence-transformers/all-mpnet-base-v2 (~30 min
on a busy 2-core machine: it embeds the three wikis).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_ranking import CORPUS, FIXTURES, indexed, load_set
from hallouminate import analysis, xdg
from hallouminate.config import CorpusSpec, load_baseline
from hallouminate.embedding import Embedder
from hallouminate.search import confidence, ground
from hallouminate.storage import Store
from hallouminate.storage.reader import AsyncReader

SETS = ("eval", "heldout", "sample")
# Answerable queries only (no unanswerable set was written for it): what a multilingual model's floors
# must not fire on, cross-language questions above all (no query word occurs on the page). Not in "all".
EXTRA_SETS = ("multilingual",)
UNANSWERABLE = {
    "eval": "eval_unanswerable.json",
    "heldout": "eval_heldout_unanswerable.json",
    "sample": "sample_unanswerable.json",
}


@dataclass
class Measured:
    """One query's outcome: which set, whether a page answers it, its kind, the result's signals."""

    set: str
    answerable: bool
    kind: str
    query: str
    batch: str
    low: bool
    signals: dict[str, Any]


def queries_of(name: str) -> tuple[Path, list[tuple[bool, str, str, str]]]:
    """The set's wiki and its queries as (answerable, kind, query, batch): unanswerable queries come in
    two batches, "first" (fitted on, for eval) and "second" (written later as a fresh check)."""
    wiki, answerable = load_set(name)
    raw = json.loads((FIXTURES / UNANSWERABLE[name]).read_text()) if name in UNANSWERABLE else {"queries": []}
    return wiki, [
        *((True, q["kind"], q["query"], "-") for q in answerable),
        *((False, q["kind"], q["query"], q.get("batch", "first")) for q in raw["queries"]),
    ]


async def _run(
    store: Store,
    spec: CorpusSpec,
    embedder: Embedder,
    limit: int,
    name: str,
    queries: list[tuple[bool, str, str, str]],
) -> list[Measured]:
    reader = AsyncReader(store)
    embed_query = partial(asyncio.to_thread, embedder.embed_query)
    out = []
    for answerable, kind, query, batch in queries:
        result = await ground(
            reader,
            embed_query,
            [spec],
            query,
            priority_corpus=CORPUS,
            top_files=10,
            chunks_per_file=1,
            limit=limit,
            snippet_chars=80,
            model=embedder.model_name,
        )
        signals = dict(result.get("confidence") or {})
        low = bool(result.get("low_confidence"))
        out.append(Measured(name, answerable, kind, query, batch, low, signals))
    return out


def measure(names: tuple[str, ...], model: str | None) -> tuple[str, list[Measured]]:
    settings = load_baseline().settings
    embedder = Embedder(xdg.default_model_cache(), model or settings.model_name)
    analysis.english_zipf("the")  # the word list, loaded before the first query as the daemon does
    measured: list[Measured] = []
    for name in names:
        wiki, queries = queries_of(name)
        with indexed(wiki, embedder, settings) as (store, spec):
            measured += asyncio.run(_run(store, spec, embedder, settings.limit, name, queries))
    return embedder.model_name, measured


def _rate(rows: list[Measured]) -> str:
    fired = sum(m.low for m in rows)
    return f"{fired}/{len(rows)} ({100 * fired / len(rows):.0f} %)" if rows else "-"


def table(measured: list[Measured]) -> str:
    """The Markdown table of docs/search.md: fire rates per set, answerable and unanswerable by kind."""
    lines = [
        "| set | queries | fires on answerable | on unanswerable | near-domain | near-domain, second batch "
        "| off-topic |",
        "|---|---|---|---|---|---|---|",
    ]
    names = list(dict.fromkeys(m.set for m in measured))
    for name in [*names, "all"]:
        rows = [m for m in measured if name in ("all", m.set)]
        good = [m for m in rows if m.answerable]
        bad = [m for m in rows if not m.answerable]
        label = f"{name} (fitted)" if name == "eval" else name
        near = [m for m in bad if m.kind == "near-domain"]
        lines.append(
            f"| {label} | {len(good)} + {len(bad)} | {_rate(good)} | {_rate(bad)} | "
            f"{_rate([m for m in near if m.batch == 'first'])} | "
            f"{_rate([m for m in near if m.batch == 'second'])} | "
            f"{_rate([m for m in bad if m.kind == 'off-topic'])} |"
        )
    return "\n".join(lines)


def sweep(measured: list[Measured], model: str) -> str:
    """Fire rates on the eval set for each cosine floor, the rest of the rule unchanged."""
    rows = [m for m in measured if m.set == "eval"]
    lines = ["| cosine floor | answerable | unanswerable |", "|---|---|---|"]
    saved = confidence.COSINE_FLOOR.get(model)
    try:
        for step in range(20, 41):
            confidence.COSINE_FLOOR[model] = step / 100
            fired = [(m, confidence.is_low(m.signals, model)) for m in rows]  # type: ignore[arg-type]
            good = [low for m, low in fired if m.answerable]
            bad = [low for m, low in fired if not m.answerable]
            lines.append(
                f"| {step / 100:.2f} | {100 * sum(good) / len(good):.1f} % | {100 * sum(bad) / len(bad):.1f} % |"
            )
    finally:
        if saved is not None:
            confidence.COSINE_FLOOR[model] = saved
    return "\n".join(lines)


# --zipf-sweep: missing words are recorded up to this floor while measuring, then each floor is applied.
SWEEP_ZIPF = 3.5


def _under(signals: dict[str, Any], floor: float) -> dict[str, Any]:
    """``signals`` as the rule would have recorded them with ``floor`` as ``ZIPF_FLOOR``."""
    missing = [m for m in signals.get("missing_words", []) if m["zipf"] < floor]
    return {**signals, "missing_words": missing, "zipf_floor": floor}


def zipf_sweep(measured: list[Measured], model: str) -> str:
    """Fire rates per set for each Zipf floor (the rest of the rule as it is): answerable, then
    near-domain unanswerable (first batch / second batch)."""
    names = list(dict.fromkeys(m.set for m in measured))
    head = " | ".join(f"{n}: answerable, near-domain (1st, 2nd)" for n in names)
    lines = [f"| Zipf floor | {head} |", "|---" * (len(names) + 1) + "|"]
    for step in range(20, 36):
        floor = step / 10
        cells = []
        for name in names:
            rows = [
                (m, confidence.is_low(_under(m.signals, floor), model)) for m in measured if m.set == name
            ]  # type: ignore[arg-type]
            good = [low for m, low in rows if m.answerable]
            first = [low for m, low in rows if m.kind == "near-domain" and m.batch == "first"]
            second = [low for m, low in rows if m.kind == "near-domain" and m.batch == "second"]
            cells.append(f"{sum(good)}/{len(good)}, {sum(first)}/{len(first)}, {sum(second)}/{len(second)}")
        lines.append(f"| {floor:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=(*SETS, *EXTRA_SETS, "all"), default="all")
    parser.add_argument("--model", default=None, help="embedding model (default: the config's)")
    parser.add_argument("--dump", type=Path, default=None, help="write every query's signals here")
    parser.add_argument("--sweep", action="store_true", help="fire rates per cosine floor on the eval set")
    parser.add_argument(
        "--zipf-sweep",
        action="store_true",
        help=f"fire rates per set for each Zipf floor from 2.0 to {SWEEP_ZIPF} (ADR 0030)",
    )
    parser.add_argument(
        "--from-dump",
        type=Path,
        default=None,
        help="apply the current rule to a --dump file of --model instead of searching again",
    )
    opts = parser.parse_args()
    names = SETS if opts.set == "all" else (opts.set,)
    if opts.from_dump:
        model = opts.model or load_baseline().settings.model_name
        measured = [
            Measured(**{"batch": "first", **m})
            for m in json.loads(opts.from_dump.read_text())
            if m["set"] in names
        ]
        for m in measured:
            m.low = confidence.is_low(m.signals, model)  # type: ignore[arg-type]
    else:
        saved = confidence.ZIPF_FLOOR
        if opts.zipf_sweep:  # record every missing word a floor of the sweep could count
            confidence.ZIPF_FLOOR = SWEEP_ZIPF
        try:
            model, measured = measure(names, opts.model)
        finally:
            confidence.ZIPF_FLOOR = saved
        if opts.zipf_sweep:  # the sweep reads every recorded word; the table is the rule's own floor's
            swept = zipf_sweep(measured, model)
            for m in measured:
                m.signals = _under(m.signals, saved)
                m.low = confidence.is_low(m.signals, model)  # type: ignore[arg-type]
    print(
        f"model {model}; rule constants: floor {confidence.COSINE_FLOOR.get(model)}, "
        f"wordless floor {confidence.WORDLESS_FLOOR.get(model)}, Zipf floor {confidence.ZIPF_FLOOR}\n"
    )
    print(table(measured))
    if opts.sweep:
        print()
        print(sweep(measured, model))
    if opts.zipf_sweep and not opts.from_dump:
        print()
        print(swept)
    if opts.dump:
        opts.dump.write_text(json.dumps([m.__dict__ for m in measured], indent=1))


if __name__ == "__main__":
    main()
