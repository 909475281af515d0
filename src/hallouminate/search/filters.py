"""Which chunks a ranked ``ground`` may return: the eligibility filters and the query's own syntax (domain).

``Eligibility.take`` pops the filter parameters (category, topic, path_globs, tags, dates, fields,
quality) from ``ground``'s keyword arguments and checks them; ``parse_query`` splits a query into what is
searched for, its ``-term`` exclusions and its ``"quoted phrases"``. The reader (storage/reader.py) applies
the result BEFORE retrieval, through ``ports.EligibilityPort``: a boolean mask per corpus over its rows
(page rules once per distinct filter and commit, quality per chunk) zeroes the vector scores of ineligible
chunks, and BM25 asks tantivy only for eligible files, without the excluded terms and with the phrases'
words; the verbatim check of a phrase runs on candidates in score order until ``limit`` pass. So a filter
never leaves a page of results short that eligible chunks could fill (docs/search.md, "Filters").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from hallouminate.analysis import TokenFinder, analyze
from hallouminate.errors import InvalidArgument
from hallouminate.protocol import limits, recency
from hallouminate.protocol.results import FilterApplied, GroundWarning

# The names ``ground`` takes (MCP and the daemon's ``GroundArgs``).
PARAMS = (
    "category",
    "topic",
    "path_globs",
    "tags_any",
    "tags_all",
    "date_from",
    "date_to",
    "fields",
    "fields_not",
    "min_quality",
    "include_low_quality",
    "changed_since",
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# A whitespace-delimited group: a quoted phrase (quotes kept to tell it apart) or a run of non-space.
_GROUP = re.compile(r'"[^"]*"|\S+')


@dataclass(frozen=True)
class QuerySyntax:
    """A ranked query read for its syntax: ``text`` is what is embedded and searched by BM25 (the query
    without its ``-term`` groups and without quote marks), ``excluded`` the negated terms kept (3+
    characters), ``phrases`` the quoted phrases, ``warnings`` what was not honoured."""

    text: str
    excluded: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    warnings: tuple[GroundWarning, ...] = ()


def parse_query(query: str) -> QuerySyntax:
    """Split ``query`` into what is searched, what is excluded and what must appear verbatim.

    A group led by ``-`` (whitespace before it or the query's start) is an exclusion, never searched for;
    under ``NEGATION_MIN_CHARS`` characters after the ``-`` it excludes nothing (a warning says so), as in
    GrooveSeek. A ``"quoted phrase"`` is searched for as its words and must also appear verbatim.
    """
    kept: list[str] = []
    excluded: list[str] = []
    phrases: list[str] = []
    short: list[str] = []
    for match in _GROUP.finditer(query):
        group = match.group()
        if len(group) >= 2 and group.startswith('"') and group.endswith('"'):
            inner = " ".join(group[1:-1].split())
            if inner:
                phrases.append(inner)
                kept.append(inner)
        elif group.startswith("-") and len(group) > 1:
            term = group[1:].strip('"')
            if len(term) < limits.NEGATION_MIN_CHARS or not analyze(term):
                short.append(group)  # too short, or no word in it ("-!!!"): excludes nothing
            else:
                excluded.append(term)
        else:
            kept.append(group.replace('"', " ").strip() or group)
    warnings: list[GroundWarning] = []
    if short:
        warnings.append(
            {
                "code": "negation-too-short",
                "message": f"{', '.join(short)} excludes nothing: an excluded term needs at least "
                f"{limits.NEGATION_MIN_CHARS} characters after the '-', letters or digits among them "
                "(write the whole word)",
            }
        )
    text = " ".join(k for k in kept if k)
    if (excluded or short) and not text.strip():
        raise InvalidArgument(
            "query holds only excluded terms ('-word'): add what to look for, e.g. 'deploy -staging'",
            {"param": "query"},
        )
    return QuerySyntax(
        text or query, tuple(dict.fromkeys(excluded)), tuple(dict.fromkeys(phrases)), tuple(warnings)
    )


@functools.lru_cache(maxsize=1024)  # callers repeat their globs
def _glob_regex(glob: str) -> re.Pattern[str]:
    """A glob over a path relative to the corpus root: ``*`` and ``?`` stay within a segment, ``**``
    spans segments (``**/`` also matches no directory), ``[...]`` a class; the whole path must match."""
    out = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _strings(name: str, value: Any, *, empty_ok: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidArgument(f"{name} must be a list of strings, got {value!r}", {"param": name})
    if not value and not empty_ok:
        raise InvalidArgument(
            f"{name} must not be empty: give at least one glob, or leave {name} out", {"param": name}
        )
    _bounded(name, value)
    return tuple(value)


def _bounded(name: str, value: list[str]) -> None:
    items = limits.FILTER_ITEMS
    if len(value) > items.high:
        raise InvalidArgument(
            f"{name} has {len(value)} items; at most {items.high} are accepted", {"param": name}
        )
    for item in value:
        size = len(item.encode("utf-8", "surrogatepass"))
        if size > limits.FILTER_ITEM_BYTES.high:
            raise InvalidArgument(
                f"an item of {name} is {size} bytes; each may be at most {limits.FILTER_ITEM_BYTES.high}",
                {"param": name},
            )


def _field_map(name: str, value: Any) -> tuple[tuple[str, frozenset[str]], ...]:
    if not isinstance(value, Mapping):
        raise InvalidArgument(
            f"{name} must be an object of frontmatter key -> list of strings, got {value!r}", {"param": name}
        )
    if len(value) > limits.FILTER_KEYS.high:
        raise InvalidArgument(
            f"{name} has {len(value)} keys; at most {limits.FILTER_KEYS.high} are accepted", {"param": name}
        )
    out = []
    for key, wanted in value.items():
        if not isinstance(key, str) or not key:
            raise InvalidArgument(f"{name} keys must be non-empty strings", {"param": name})
        out.append((key, frozenset(_strings(f"{name}.{key}", wanted))))
    return tuple((k, v) for k, v in out if v)


def _date(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise InvalidArgument(
            f"{name} must be a date written YYYY-MM-DD (e.g. 2026-01-31), got {value!r}", {"param": name}
        )
    return value


def _text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidArgument(f"{name} must be a non-empty string, got {value!r}", {"param": name})
    return value


def _values(raw: Any) -> tuple[str, ...]:
    """A frontmatter value as the strings a filter compares: a scalar is one, a list each of its scalars."""
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for item in items:
        if isinstance(item, bool):
            out.append("true" if item else "false")
        elif isinstance(item, str | int | float):
            out.append(str(item))
    return tuple(out)


@functools.lru_cache(maxsize=65536)  # a page's frontmatter is the same JSON on each of its rows
def _frontmatter(fields: str | None) -> dict[str, Any]:
    if not fields:
        return {}
    try:
        data = json.loads(fields)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def frontmatter(fields: str | None) -> Mapping[str, Any]:
    """A page's frontmatter from its ``fields`` column (JSON; {} when absent or not an object). Shared
    between callers (cached): read it, never change it."""
    return _frontmatter(fields)


def page_date(front: Mapping[str, Any]) -> str | None:
    """The page's frontmatter ``date`` as the date filters compare it: YYYY-MM-DD (a datetime's date
    part); None when it has none or it is not a date."""
    raw = front.get("date")
    date = raw[:10] if isinstance(raw, str) else None  # a datetime's date part
    return date if date and _DATE.fullmatch(date) else None


def category_topic(path: str, frontmatter: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The page's category (first path segment of a path of 2+ segments) and topic (second segment of 3+);
    frontmatter ``category`` / ``topic`` (a string) override them."""
    parts = path.split("/")
    category = parts[0] if len(parts) >= 2 else None
    topic = parts[1] if len(parts) >= 3 else None
    own_category, own_topic = frontmatter.get("category"), frontmatter.get("topic")
    if isinstance(own_category, str) and own_category:
        category = own_category
    if isinstance(own_topic, str) and own_topic:
        topic = own_topic
    return category, topic


@dataclass(frozen=True)
class Eligibility:
    """A request's filters, checked (satisfies ports.EligibilityPort). All optional and AND-ed."""

    category: str | None = None
    topic: str | None = None
    path_globs: tuple[str, ...] = ()
    tags_any: frozenset[str] = frozenset()
    tags_all: frozenset[str] = frozenset()
    date_from: str | None = None
    date_to: str | None = None
    fields: tuple[tuple[str, frozenset[str]], ...] = ()
    fields_not: tuple[tuple[str, frozenset[str]], ...] = ()
    min_quality: float = limits.MIN_QUALITY_DEFAULT
    # What the caller set (for ``filter_applied``): the default quality floor is not echoed.
    quality_set: bool = False
    include_low_quality: bool = False
    # changed_since as the caller wrote it, and the instant it names (file mtime, ns; protocol/recency.py).
    changed_since: str | None = None
    changed_since_ns: int | None = None
    excluded: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    _includes: tuple[re.Pattern[str], ...] = field(default=(), compare=False, repr=False)
    _excludes: tuple[re.Pattern[str], ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def take(cls, params: dict[str, Any], syntax: QuerySyntax | None = None) -> Eligibility:
        """Pop and check the filter parameters of ``ground``'s keyword arguments (None = not given)."""
        got = {name: params.pop(name, None) for name in PARAMS}
        globs = () if got["path_globs"] is None else _strings("path_globs", got["path_globs"], empty_ok=False)
        for glob in globs:
            if glob in ("", "!"):
                raise InvalidArgument(
                    f"path_globs holds an empty glob {glob!r}: write a glob such as 'guides/**' or "
                    "'!drafts/**'",
                    {"param": "path_globs"},
                )
        quality = got["min_quality"]
        if quality is not None and (
            isinstance(quality, bool)
            or not isinstance(quality, int | float)
            or not 0.0 <= float(quality) <= 1.0
        ):
            raise InvalidArgument(
                f"min_quality must be a number from 0 to 1, got {quality!r}", {"param": "min_quality"}
            )
        low = got["include_low_quality"]
        if low is not None and not isinstance(low, bool):
            raise InvalidArgument(
                f"include_low_quality must be true or false, got {low!r}", {"param": "include_low_quality"}
            )
        date_from, date_to = _date("date_from", got["date_from"]), _date("date_to", got["date_to"])
        if date_from and date_to and date_from > date_to:
            raise InvalidArgument(
                f"date_from {date_from} is after date_to {date_to}: no page can match; swap them",
                {"param": "date_from"},
            )
        tags_any = () if got["tags_any"] is None else _strings("tags_any", got["tags_any"])
        tags_all = () if got["tags_all"] is None else _strings("tags_all", got["tags_all"])
        since = got["changed_since"]
        since_ns = None if since is None else recency.since_ns(since)
        return cls(
            category=_text("category", got["category"]),
            topic=_text("topic", got["topic"]),
            path_globs=globs,
            tags_any=frozenset(tags_any),
            tags_all=frozenset(tags_all),
            date_from=date_from,
            date_to=date_to,
            fields=() if got["fields"] is None else _field_map("fields", got["fields"]),
            fields_not=() if got["fields_not"] is None else _field_map("fields_not", got["fields_not"]),
            min_quality=0.0 if low else float(quality if quality is not None else limits.MIN_QUALITY_DEFAULT),
            quality_set=quality is not None,
            include_low_quality=bool(low),
            changed_since=since,
            changed_since_ns=since_ns,
            excluded=syntax.excluded if syntax else (),
            phrases=syntax.phrases if syntax else (),
            _includes=tuple(_glob_regex(g) for g in globs if not g.startswith("!")),
            _excludes=tuple(_glob_regex(g[1:]) for g in globs if g.startswith("!")),
        )

    # -- what the reader asks (ports.EligibilityPort) ------------------------------------------------
    @property
    def filters_pages(self) -> bool:
        return bool(
            self.category
            or self.topic
            or self.path_globs
            or self.tags_any
            or self.tags_all
            or self.date_from
            or self.date_to
            or self.fields
            or self.fields_not
            or self.changed_since_ns is not None
        )

    @property
    def filters_texts(self) -> bool:
        return bool(self.excluded or self.phrases)

    @functools.cached_property
    def page_key(self) -> str:
        """The page rules' identity: the reader caches a corpus's page mask under it until a commit."""
        return repr(
            (
                self.category,
                self.topic,
                self.path_globs,
                sorted(self.tags_any),
                sorted(self.tags_all),
                self.date_from,
                self.date_to,
                [(k, sorted(v)) for k, v in self.fields],
                [(k, sorted(v)) for k, v in self.fields_not],
                self.changed_since_ns,
            )
        )

    @functools.cached_property
    def rules_key(self) -> str:
        """The path and frontmatter rules' identity alone: a duration's instant moves with each request,
        and the rules' own mask (one call per page) is kept across those."""
        return repr(
            (
                self.category,
                self.topic,
                self.path_globs,
                sorted(self.tags_any),
                sorted(self.tags_all),
                self.date_from,
                self.date_to,
                [(k, sorted(v)) for k, v in self.fields],
                [(k, sorted(v)) for k, v in self.fields_not],
            )
        )

    @functools.cached_property
    def excluded_tokens(self) -> tuple[tuple[str, ...], ...]:
        """Each excluded term as the analyser's tokens (a chunk holding all of one group's is excluded)."""
        groups = (tuple(dict.fromkeys(analyze(term))) for term in self.excluded)
        return tuple(g for g in groups if g)

    @functools.cached_property
    def phrase_tokens(self) -> tuple[tuple[str, ...], ...]:
        """Each quoted phrase as the analyser's tokens, in order: a chunk holding the phrase verbatim
        holds them consecutively (the index keeps stop words)."""
        return tuple(t for t in (tuple(analyze(phrase)) for phrase in self.phrases) if t)

    @functools.cached_property
    def _phrase_patterns(self) -> tuple[re.Pattern[str], ...]:
        # As phrase mode matches: case-insensitive, any whitespace run matching any other.
        return tuple(
            re.compile(r"\s+".join(re.escape(w) for w in phrase.split()), re.IGNORECASE)
            for phrase in self.phrases
        )

    @functools.cached_property
    def _finders(self) -> tuple[tuple[TokenFinder, int], ...]:
        out = []
        for tokens in self.excluded_tokens:
            out.append((TokenFinder(list(tokens)), (1 << len(tokens)) - 1))
        return tuple(out)

    def text_passes(self, text: str) -> bool:
        """The chunk's text holds every quoted phrase verbatim and no excluded term."""
        if any(pattern.search(text) is None for pattern in self._phrase_patterns):
            return False
        return not any(finder.held(text) & want == want for finder, want in self._finders)

    def mtime_passes(self, mtime_ns: int | None) -> bool:
        """The file was modified at or after ``changed_since`` (no such filter: every file passes)."""
        return self.changed_since_ns is None or (mtime_ns is not None and mtime_ns >= self.changed_since_ns)

    def page_passes(self, path: str, fields: str | None) -> bool:
        """The path and frontmatter rules on one page (the ``fields`` column's JSON); the file's mtime
        (``changed_since``) is asked apart, by ``mtime_passes``, over a column."""
        front = _frontmatter(fields)
        if self.category or self.topic:
            category, topic = category_topic(path, front)
            if (self.category and category != self.category) or (self.topic and topic != self.topic):
                return False
        if self.path_globs:
            if self._includes and not any(p.fullmatch(path) for p in self._includes):
                return False
            if any(p.fullmatch(path) for p in self._excludes):
                return False
        if self.tags_any or self.tags_all:
            tags = set(_values(front.get("tags")))
            if self.tags_any and not tags & self.tags_any:
                return False
            if self.tags_all and not self.tags_all <= tags:
                return False
        if self.date_from or self.date_to:
            date = page_date(front)
            if date is None:
                return False  # with a date filter, an undated page is dropped
            if (self.date_from and date < self.date_from) or (self.date_to and date > self.date_to):
                return False
        for key, wanted in self.fields:
            if key not in front or not set(_values(front[key])) & wanted:
                return False
        return all(
            key not in front or not set(_values(front[key])) & unwanted for key, unwanted in self.fields_not
        )

    # -- what the result says --------------------------------------------------------------------------
    def applied(self) -> FilterApplied:
        """``filter_applied``: the filters that took effect, as the caller would send them."""
        out: dict[str, Any] = {}
        for name in ("category", "topic", "date_from", "date_to"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.path_globs:
            out["path_globs"] = list(self.path_globs)
        for name in ("tags_any", "tags_all"):
            value = getattr(self, name)
            if value:
                out[name] = sorted(value)
        for name in ("fields", "fields_not"):
            pairs = getattr(self, name)
            if pairs:
                out[name] = {k: sorted(v) for k, v in pairs}
        if self.quality_set or self.include_low_quality:
            out["min_quality"] = self.min_quality
        if self.include_low_quality:
            out["include_low_quality"] = True
        if self.changed_since is not None and self.changed_since_ns is not None:
            out["changed_since"] = self.changed_since
            out["changed_since_utc"] = recency.iso_utc(self.changed_since_ns)
        if self.excluded:
            out["excluded_terms"] = list(self.excluded)
        if self.phrases:
            out["phrases"] = list(self.phrases)
        return cast(FilterApplied, out)
