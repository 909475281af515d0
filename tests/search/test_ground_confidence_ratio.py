"""``min_confidence_ratio`` on ``ground`` (GrooveSeek's rule, issue 16): off by default, so our own
``low_confidence`` rule alone decides and the measured figures stay; when the caller sets it, its clause
is OR-ed with ours. Through the real CLI and a real daemon; the clause itself as a pure function."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from hallouminate.errors import InvalidArgument
from hallouminate.search import confidence
from support.sandbox import Sandbox, hm

PAGES = {
    "backups.md": "# Database backups\n\n## Schedule\n\nThe orders database is backed up every night at "
    "02:00 UTC with pgBackRest; backups are kept for 35 days.\n\n## Restoring\n\nTo restore the orders "
    "database, stop the writers and run `pgbackrest --stanza=orders restore --delta` on the replica.\n",
    "deploying.md": "# Deploying\n\nMerging to main builds an image; Argo CD rolls it out to 5 % of the "
    "storefront pods first and watches the error rate for ten minutes.\n",
    "on-call.md": "# On-call\n\nEach engineer is on call for one week; acknowledge pages within five "
    "minutes and hand over in the ops channel.\n",
}
ANSWERED = "How do we restore the orders database from a backup?"
OFF_TOPIC = "banana bread recipe with walnuts"


def ground(sandbox: Sandbox, repo: Path, *args: str) -> dict[str, Any]:
    out = hm(sandbox, "ground", *args, "--format", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_min_confidence_ratio_adds_grooveseeks_clause_only_when_set(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo("ratio", wiki=None)
    for name, text in PAGES.items():
        (repo / ".hallouminate" / "wiki" / name).write_text(text)
    assert hm(sandbox, "index", cwd=repo).returncode == 0

    plain = ground(sandbox, repo, ANSWERED)
    assert plain["low_confidence"] is False and "min_confidence_ratio" not in plain["confidence"]
    # A ratio no candidate reaches: GrooveSeek's clause fires, and the warning says it was that clause.
    high = ground(sandbox, repo, ANSWERED, "--min-confidence-ratio", "1000")
    assert high["low_confidence"] is True and high["confidence"]["min_confidence_ratio"] == 1000
    (weak,) = [w for w in high["warnings"] if w["code"] == "weak-match"]
    assert "min_confidence_ratio 1000" in weak["message"]
    assert [d["path"] for d in high["docs"]] == [d["path"] for d in plain["docs"]]  # ranking untouched
    # 0 disables the clause; our own rule still holds (OR): an off-topic query stays low.
    assert ground(sandbox, repo, ANSWERED, "--min-confidence-ratio", "0")["low_confidence"] is False
    off = ground(sandbox, repo, OFF_TOPIC, "--min-confidence-ratio", "0")
    assert off["low_confidence"] is True and off["confidence"]["min_confidence_ratio"] == 0
    # A non-finite value is GrooveSeek's server default.
    for value in ("nan", "inf"):
        default = ground(sandbox, repo, ANSWERED, "--min-confidence-ratio", value)
        assert default["confidence"]["min_confidence_ratio"] == 1.5
    # Phrase mode is literal: the ratio does not apply there, and saying so beats ignoring it.
    phrase = hm(sandbox, "ground", "orders", "--match", "phrase", "--min-confidence-ratio", "2", cwd=repo)
    assert phrase.returncode == 2 and 'min_confidence_ratio needs match "ranked"' in phrase.stderr


def rows(*cosines: float) -> list[dict[str, Any]]:
    return [{"id": str(i), "score": c} for i, c in enumerate(cosines)]


def test_the_ratio_clause_is_grooveseeks_formula() -> None:
    low = confidence.ratio_is_low
    assert low(rows(0.5, 0.45, 0.4), 1.5) is True  # max/mean = 1.11
    assert low(rows(0.9, 0.1, 0.1), 1.5) is False  # max/mean = 2.45: the best stands out
    assert low(rows(0.5), 1.5) is False  # n >= 2 needed
    assert low(rows(0.2, -0.3), 1.5) is False  # mean <= 0
    assert low(rows(0.5, 0.45), 0) is False and low(rows(0.5, 0.45), -1) is False  # disabled
    assert low(rows(0.5, 0.45), None) is False  # not set: not applied
    assert confidence.ratio_setting(None) is None
    assert confidence.ratio_setting(math.nan) == confidence.ratio_setting(math.inf) == 1.5
    assert confidence.ratio_setting(2) == 2.0
    with pytest.raises(InvalidArgument):
        confidence.ratio_setting("1.5")
