"""``changed_since``: the one reading of "modified since when" for ``ground`` and ``list_files``.

A value is an ISO date (``2026-11-30``, midnight UTC), an ISO datetime (``2026-11-30T09:00``,
``2026-11-30T09:00:00+01:00``, ``...Z``; without a zone it is UTC), or a duration back from now: a whole
number and a unit, ``h`` (hours), ``d`` (days) or ``w`` (weeks), e.g. ``12h``, ``7d``, ``2w``. It is
compared with each file's modification time, so "what changed this week" needs no frontmatter date.
UTC rather than the daemon's local zone: the daemon may run in another zone than the caller.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

from hallouminate.errors import InvalidArgument

FORMS = "an ISO date (2026-11-30), an ISO datetime (2026-11-30T09:00:00Z) or a duration (12h, 7d, 2w)"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DURATION = re.compile(r"(\d{1,6})\s*([hdw])")
_UNIT_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400}
# A duration reaching back further than this is surely a typo (and would overflow a datetime).
MAX_DURATION_DAYS = 36500


def since_ns(value: object, now: float | None = None, param: str = "changed_since") -> int:
    """The instant ``value`` names, in nanoseconds since the epoch; ``InvalidArgument`` naming the forms."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(value, param)
    text = value.strip()
    duration = _DURATION.fullmatch(text.lower())
    if duration is not None:
        seconds = int(duration.group(1)) * _UNIT_SECONDS[duration.group(2)]
        if seconds > MAX_DURATION_DAYS * 86400:
            raise InvalidArgument(
                f"{param} {value!r} reaches back more than {MAX_DURATION_DAYS} days: give a shorter "
                f"duration or a date; accepted: {FORMS}",
                {"param": param, "problem": "out-of-range"},
            )
        base = time.time() if now is None else now
        return int((base - seconds) * 1_000_000_000)
    try:
        if _DATE.fullmatch(text):
            moment = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        elif "T" in text or " " in text:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        else:
            raise ValueError(text)
    except ValueError:
        raise _bad(value, param) from None
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000


def iso_utc(ns: int) -> str:
    """``ns`` as an ISO datetime in UTC to the second (``2026-11-30T09:00:00Z``): what a filter used."""
    moment = datetime.fromtimestamp(ns / 1_000_000_000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _bad(value: object, param: str) -> InvalidArgument:
    return InvalidArgument(
        f"{param} must be {FORMS}; got {value!r}", {"param": param, "problem": "bad-changed-since"}
    )
