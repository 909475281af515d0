"""``low_confidence`` and the ``weak-match`` warning (issue 14, point 3) through a real MCP client, the real
shim and a real daemon, and through the CLI against the same daemon.

The wikis are written here (not the calibration sets of bench/confidence.py): a small software wiki, and
a wiki holding only its ``index.md``, whose one page is the top hit, at score 1.0, of whatever is asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hallouminate.analysis import english_zipf, query_terms
from hallouminate.search import confidence
from support.ground import RESULT_SCHEMA
from support.mcp_world import McpClient, make_repo, module_sandbox
from support.sandbox import Sandbox

PAGES = {
    "index.md": "# Shop wiki\n\n- [Backups](backups.md)\n- [Deploying](deploying.md)\n- [On-call](on-call.md)\n",
    "backups.md": """# Database backups

## Schedule

The orders database is backed up every night at 02:00 UTC with pgBackRest: a full backup on Sundays,
differential backups on the other days. Backups are kept for 35 days in the `shop-backups` bucket.

## Restoring from a backup

To restore the orders database from last night's backup, stop the writers, then run
`pgbackrest --stanza=orders restore --delta` on the replica host and promote it once it has replayed
the WAL. A point-in-time restore takes `--type=time --target="2024-05-01 10:00:00"`.
""",
    "deploying.md": """# Deploying the storefront

## Rolling out a release

Merging to main builds an image; Argo CD rolls it out to 5 % of the storefront pods first. The canary
watches the error rate and the p99 latency for ten minutes before the rollout continues.

## Rolling back

`argocd app rollback storefront` returns to the previous release within a minute.
""",
    "on-call.md": """# On-call rotation

Each engineer is on call for one week at a time, Monday to Monday. Pages come from PagerDuty; acknowledge
within five minutes, and hand over in the #shop-ops channel with a note of anything still open.
""",
}
# No word of these occurs in the wiki above, and none is near its meaning.
OFF_TOPIC = [
    "banana bread recipe with walnuts",
    "Who scored the winning goal in the football world cup final?",
    "How long should tomato seedlings harden off before planting outside?",
]
ANSWERED = "How do we restore the orders database from last night's backup?"
# Near-domain (ADR 0030): in the wiki's own words (restore, orders, backup: all in backups.md, so the
# cosine is that of a good answer), but about a store the wiki never mentions, a word rare in English.
NEAR_DOMAIN = "How do we restore the Elasticsearch orders index from last night's backup?"
# A paraphrase with a word no page holds that is common in English ("laptop"): not a missing concept.
COMMON_ABSENT = "How do we restore the orders database after a laptop crash?"


class World:
    def __init__(self, box: Sandbox, client: McpClient, shop: Path, bare: Path) -> None:
        self.box, self.client, self.shop, self.bare = box, client, shop, bare

    def call(self, repo: Path, query: str, **args: Any) -> tuple[dict[str, Any], str]:
        result = self.client.call("ground", {"cwd": str(repo), "query": query, **args})
        assert not result.is_error, result
        jsonschema.validate(result.structured_content, RESULT_SCHEMA)
        return result.structured_content, result.content[0].text

    def cli(self, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hallouminate", *args],
            env=self.box.env,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[World]:
    with module_sandbox(model_cache) as box:
        shop = make_repo(box, "shop")
        for name, text in PAGES.items():
            (shop / ".hallouminate" / "wiki" / name).write_text(text)
        bare = make_repo(box, "bare")
        (bare / ".hallouminate" / "wiki" / "index.md").write_text("# Bare wiki\n\nNo pages yet.\n")
        box.start_daemon()
        client = McpClient(box)
        try:
            for repo in (shop, bare):
                client.call("index", {"cwd": str(repo)}, timeout=600)
            yield World(box, client, shop, bare)
        finally:
            client.close()


def _weak(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in result["warnings"] if w["code"] == "weak-match"]


@pytest.mark.parametrize("query", OFF_TOPIC)
def test_an_off_topic_query_is_low_confidence_with_a_weak_match_warning(world: World, query: str) -> None:
    result, text = world.call(world.shop, query)
    # Normalised scores still crown a page: only the absolute signals tell it is not an answer.
    assert result["docs"] and result["docs"][0]["score"] == 1.0
    assert result["low_confidence"] is True, result["confidence"]
    (warning,) = _weak(result)
    assert "not cover it" in warning["message"]
    assert "warning [weak-match]: no page is a strong match" in text


def test_a_query_a_page_answers_is_not_low_confidence(world: World) -> None:
    result, text = world.call(world.shop, ANSWERED)
    assert result["docs"][0]["path"] == "backups.md"
    assert result["low_confidence"] is False, result["confidence"]
    assert _weak(result) == [] and "weak-match" not in text


def test_the_index_page_of_a_near_empty_wiki_is_low_confidence(world: World) -> None:
    result, text = world.call(world.bare, ANSWERED)
    assert [(doc["path"], doc["score"]) for doc in result["docs"]] == [("index.md", 1.0)]
    assert result["low_confidence"] is True, result["confidence"]
    assert len(_weak(result)) == 1 and "warning [weak-match]" in text


def test_a_near_domain_query_naming_what_the_wiki_never_mentions_is_low_confidence(world: World) -> None:
    result, text = world.call(world.shop, NEAR_DOMAIN)
    signals = result["confidence"]
    # Every other signal looks like an answer: close meaning, the query's other words all found.
    assert signals["best_cosine"] > signals["cosine_floor"] and signals["terms_found"] == signals["terms"] - 1
    assert signals["missing_words"] == [{"word": "elasticsearch", "zipf": pytest.approx(1.79, abs=0.2)}]
    assert result["low_confidence"] is True
    (warning,) = _weak(result)
    assert "no page mentions 'elasticsearch'" in warning["message"]
    assert "no page mentions 'elasticsearch'" in text
    # A common word no page holds is a paraphrase, not a missing concept.
    paraphrase, _ = world.call(world.shop, COMMON_ABSENT)
    assert paraphrase["confidence"]["missing_words"] == [] and paraphrase["low_confidence"] is False
    assert paraphrase["confidence"]["terms_found"] < paraphrase["confidence"]["terms"]  # "laptop"


def test_the_raw_signals_are_in_the_result(world: World) -> None:
    answered, _ = world.call(world.shop, ANSWERED)
    off, _ = world.call(world.shop, OFF_TOPIC[0])
    for result in (answered, off):
        signals = result["confidence"]
        assert set(signals) == {
            "best_cosine",
            "cosine_ratio",
            "terms",
            "terms_found",
            "best_share",
            "cosine_floor",
            "missing_words",
            "zipf_floor",
        }
        assert signals["zipf_floor"] == confidence.ZIPF_FLOOR and signals["missing_words"] == []
        assert 0 <= signals["terms_found"] <= signals["terms"] and 0 <= signals["best_share"] <= 1
        assert signals["cosine_ratio"] >= 1.0
        # The daemon's model is the default one: its floor is the one the rule used.
        assert signals["cosine_floor"] == confidence.COSINE_FLOOR[confidence.MINILM]
    # "orders", "database", "backup", "restore", "night": all in backups.md; banana bread: nothing.
    assert answered["confidence"]["terms_found"] == answered["confidence"]["terms"] >= 4
    assert off["confidence"]["terms_found"] == 0 and off["confidence"]["best_share"] == 0
    assert answered["confidence"]["best_cosine"] > 0.5 > 0.25 > off["confidence"]["best_cosine"]


def test_phrase_mode_is_confident_exactly_when_the_phrase_is_found(world: World) -> None:
    found, _ = world.call(world.shop, "argocd app rollback", match="phrase")
    assert found["docs"] and found["low_confidence"] is False and _weak(found) == []
    assert "confidence" not in found  # a literal match has no signals to weigh
    # Nothing holds it: low confidence, and the outline's "no matches" says why (no weak-match warning).
    absent, text = world.call(world.shop, "banana bread", match="phrase")
    assert absent["docs"] == [] and absent["low_confidence"] is True and _weak(absent) == []
    assert "no matches" in text


def test_the_cli_says_so_too(world: World) -> None:
    outline = world.cli(world.shop, "ground", OFF_TOPIC[0])
    assert outline.returncode == 0, outline.stderr
    assert "warning [weak-match]: no page is a strong match" in outline.stdout
    near = world.cli(world.shop, "ground", NEAR_DOMAIN)
    assert near.returncode == 0, near.stderr
    assert "warning [weak-match]" in near.stdout and "no page mentions 'elasticsearch'" in near.stdout
    as_json = world.cli(world.shop, "ground", ANSWERED, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["low_confidence"] is False and result["confidence"]["terms_found"] >= 4


@pytest.mark.parametrize(
    ("signals", "model", "low"),
    [
        # Under the model's floor: weak, whatever the words.
        ({"best_cosine": 0.2, "terms": 3, "terms_found": 3}, confidence.MINILM, True),
        # Words found, cosine over the floor: not weak.
        ({"best_cosine": 0.3, "terms": 3, "terms_found": 1}, confidence.MINILM, False),
        # No word found: meaning alone must clear the higher floor.
        ({"best_cosine": 0.3, "terms": 3, "terms_found": 0}, confidence.MINILM, True),
        ({"best_cosine": 0.6, "terms": 3, "terms_found": 0}, confidence.MINILM, False),
        # No content word in the query (vector-only): the cosine floor alone.
        ({"best_cosine": 0.3, "terms": 0, "terms_found": 0}, confidence.MINILM, False),
        # A word rare in English that no chunk holds: weak, however close the meaning (ADR 0030).
        (
            {
                "best_cosine": 0.6,
                "terms": 4,
                "terms_found": 3,
                "missing_words": [{"word": "istio", "zipf": 0.0}],
            },
            confidence.MINILM,
            True,
        ),
        ({"best_cosine": 0.6, "terms": 4, "terms_found": 3, "missing_words": []}, confidence.MINILM, False),
        # No candidate at all.
        ({"best_cosine": None, "terms": 2, "terms_found": 0}, confidence.MINILM, True),
        # A model with no known floor: the words alone.
        ({"best_cosine": 0.05, "terms": 3, "terms_found": 1}, "BAAI/bge-small-en-v1.5", False),
        ({"best_cosine": 0.9, "terms": 3, "terms_found": 0}, "BAAI/bge-small-en-v1.5", True),
    ],
)
def test_the_rule(signals: dict[str, Any], model: str, low: bool) -> None:
    full = {"cosine_ratio": None, "best_share": 0.0, **signals}
    assert confidence.is_low(full, model) is low  # type: ignore[arg-type]


def test_every_provisioned_model_has_its_floors() -> None:
    # A model added to the catalog must be measured (bench/confidence.py --model NAME) and given floors.
    from hallouminate.model.catalog import PROVISIONED

    assert set(PROVISIONED) == set(confidence.COSINE_FLOOR) == set(confidence.WORDLESS_FLOOR)
    for model in PROVISIONED:
        assert 0 < confidence.COSINE_FLOOR[model] < confidence.WORDLESS_FLOOR[model] < 1


def test_only_words_rare_in_english_are_looked_up() -> None:
    query = "Can the Elasticsearch webhooks fire every fortnight for our shop's 3 pods?"
    english_zipf("the")  # loaded (the daemon loads it at start-up, in a thread)
    rare = confidence.rare_words(query, query_terms(query))
    # A name and a term of art, not "fortnight" or "shop"; numbers and stop words are never judged.
    assert [(r.word, r.zipf < confidence.ZIPF_FLOOR) for r in rare] == [
        ("elasticsearch", True),
        ("webhooks", True),
    ]
    # A derived form counts as common as its stem (wordfreq alone: "maintainers" 2.3, a paraphrase's word).
    assert english_zipf("maintainers") >= english_zipf("maintain") > confidence.ZIPF_FLOOR
    assert english_zipf("fortnight") > confidence.ZIPF_FLOOR > english_zipf("istio")
