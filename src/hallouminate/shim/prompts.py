"""The four MCP prompts (``prompts/list``, ``prompts/get``) of a face: fixed text naming that face's tools.

Each prompt is one user message that walks the agent through the tools in the order that works
(``summarize_topic``, ``deep_dive``, ``whats_new``, ``find_gaps``) and ends with the same citation rules.
The tools alone do not say how to combine them: how far to follow the connection graph, when to search
again with the vocabulary that turned up, that ``low_confidence`` belongs in the answer.

The text is fixed here, not read from configuration: it goes to the model as the user's own words, and a
configuration file is discovered from the working directory (a repository anyone may have written), so a
configurable prompt would let a cloned repository speak to the agent as its user (docs/prompts.md).
"""

from __future__ import annotations

import datetime as dt
import difflib
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.types import (
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    TextContent,
)

from hallouminate.errors import Bug, HallouminateError, InvalidArgument, NotFound
from hallouminate.protocol.limits import PROMPT_ARGUMENT_CHARS
from hallouminate.shim.errors import to_mcp_error

log = logging.getLogger("hallouminate.shim")

DIALECTS = ("hallouminate", "grooveseek")

# The rules every prompt ends with, word for word on both faces (tests check they are there).
CITATION_RULES = """\
Rules for the answer, whatever the steps above found:
- Cite the `path` of every document you draw on, next to what it supports.
- Read a document with `get_document` before you describe it: a search hit is an excerpt, not the \
document.
- When a search answers with `low_confidence: true`, say so where you use it, instead of answering \
through it.
- When the knowledge base is silent on something, say that it is silent; do not fill the gap from \
general knowledge."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Refused in an argument: it would reach the model inside the user's message (tab and line breaks pass).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# whats_new without `since`: this many days before today (the server's local date).
WHATS_NEW_DAYS = 30


@dataclass(frozen=True)
class Face:
    """What the prompts say differently on a face: its tool names, their parameters, its hits."""

    search: str  # the search tool
    cap: str  # how a call asks for about 15 results
    hits: str  # the key of the search result holding the hits
    cite: str  # what identifies a hit to cite and to read
    read: str  # how to read a hit's document
    weak: str  # how the face shows a weak search, besides low_confidence
    calls: str  # what every call needs, said once at the top ("" for nothing)
    recent: str  # whats_new: another way to ask for recent changes, "{since}" filled in ("" for none)


def _default_face(cwd: str | None) -> Face:
    where = f" (this server was started in `{cwd}`)" if cwd else ""
    return Face(
        search="ground",
        cap="`top_files: 15`",
        hits="`docs`",
        cite="its `path` (and its `corpus` when the answer spans several)",
        read="`get_document` with the hit's `path` and `corpus`",
        weak=" (shown as a `weak-match` warning; scores only order the hits, the best is always 1.0)",
        calls=(
            "Every tool call takes `cwd`: the absolute path of the checkout you are working in"
            f"{where}. The tools search every corpus of that checkout unless you pass `corpus`.\n\n"
        ),
        recent=(
            "\n\n`ground` also takes `changed_since` (an ISO date or a duration such as `30d`), which filters "
            "on each file's modification time instead. Run the searches once more with "
            '`changed_since: "{since}"` in place of `date_from`, and say which of the two filters each '
            "finding came from."
        ),
    )


GROOVESEEK_FACE = Face(
    search="search",
    cap="`limit: 15`",
    hits="`results`",
    cite="its `path`",
    read="`get_document` with the hit's `path`, spelled exactly as `search` returned it",
    weak="",
    calls="",
    recent="",
)


def face_for(dialect: str, cwd: str | None = None) -> Face:
    """The face a dialect names; ``cwd``: the default face's starting directory, offered as a hint."""
    if dialect == "hallouminate":
        return _default_face(cwd)
    if dialect == "grooveseek":
        return GROOVESEEK_FACE
    raise ValueError(f"unknown dialect {dialect!r}; dialects: {', '.join(DIALECTS)}")


# -- the four prompts ---------------------------------------------------------------------------------------
def summarize_topic(face: Face, args: Mapping[str, str]) -> str:
    topic = args["topic"]
    s = face.search
    return f"""\
Summarize what the knowledge base says about the topic "{topic}".

{face.calls}1. Call `list_topics` and look for "{topic}" among the categories and topics it lists. If it is a \
category, filter the searches below with `category`; if it is a topic, with `topic`. If it is neither, \
say so, name the closest entries you saw, and search without a filter, using "{topic}" as the query.
2. Call `{s}` with "{topic}" (and the filter from step 1) and {face.cap}, so the whole topic shows up, \
not only its best match. Look through {face.hits} for the documents that carry the topic, not those that \
mention it in passing.
3. Read each of those documents in full: {face.read}.
4. Write the summary: the main points, each with the paths it comes from; where documents disagree or \
one supersedes another (look at their dates); and what the topic's documents do not cover that a reader \
would expect them to. Say how many documents you read and which you left aside.

{CITATION_RULES}"""


def deep_dive(face: Face, args: Mapping[str, str]) -> str:
    question = args["question"]
    s = face.search
    return f"""\
Answer this question thoroughly from the knowledge base, not from the first search alone:

{question}

{face.calls}1. Call `{s}` with the question. Note whether the result says `low_confidence`{face.weak}.
2. Take the strongest one or two hits and call `get_connection_graph` on each (`start`: the hit's \
`path`, `depth: 2`): it follows what is related by meaning, which finds documents whose wording the \
question did not reach. Its nodes are snippets only.
3. Read in full the documents that matter, from the search and from the graph: {face.read}.
4. The documents will use words of their own for what the question asks (names, terms, the project's \
jargon). Call `{s}` again with that vocabulary, and read what it adds.
5. Answer: what the documents establish, with their paths; where they stop short; and what stayed open \
after the second search.

{CITATION_RULES}"""


def whats_new(face: Face, args: Mapping[str, str]) -> str:
    since = args["since"]
    s = face.search
    recent = face.recent.replace("{since}", since)
    return f"""\
Survey what the knowledge base has gained since {since}.

{face.calls}1. Call `{s}` with `date_from: "{since}"` and a broad query (for instance "changes decisions \
updates"); run it again with the query narrowed to each area that shows up.
2. Run the same searches with `include_low_quality: true`: a new page is often short or a list of \
links, which the quality floor leaves out.
3. Read the documents that look new or changed: {face.read}.
4. Report by area: what was added or decided, and when, with each document's path and date.

Be careful with dates: `date_from` filters on the `date` written in each document's frontmatter, what an \
author typed, not when the file changed. It is compared as plain text, so only a YYYY-MM-DD value \
works, and documents without a date never show up. Present the survey as an approximation, and say so.\
{recent}

{CITATION_RULES}"""


def find_gaps(face: Face, args: Mapping[str, str]) -> str:
    topic = args.get("topic")
    s = face.search
    if topic:
        scope = f'in the topic "{topic}"'
        first = (
            f'1. Call `list_topics` and find "{topic}". Pass it on every `{s}` call below: as `topic` if '
            f"it is a topic, as `category` if it is a category. If it is neither, report that as the first "
            f"gap and stop."
        )
    else:
        scope = "across the knowledge base"
        first = (
            "1. Call `list_topics` to see what the knowledge base covers, and pick the areas where "
            "documents are few or old."
        )
    return f"""\
Find what the knowledge base does not cover {scope}. Report absences; do not write or propose content.

{face.calls}{first}
2. Ask `{s}` the questions a newcomer would ask there (how to set it up, how it works, why it was built \
this way, what to do when it fails), one call each.
3. Note the signals of a gap: a search with no hits; a search that says `low_confidence`{face.weak}; hits \
that share words with the question but do not answer it; answers found only when you run the search \
again with `include_low_quality: true` (stubs and link lists).
4. Read a document before you call it a stub or off-topic: {face.read}.
5. Report each gap: the question asked, the signal seen, and the paths of the closest documents. Leave \
out what would fill it.

{CITATION_RULES}"""


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[[Face, Mapping[str, str]], str]


def _arg(name: str, description: str, *, required: bool) -> PromptArgument:
    return PromptArgument(name=name, description=description, required=required)


PROMPTS: dict[str, PromptSpec] = {
    spec.name: spec
    for spec in (
        PromptSpec(
            name="summarize_topic",
            title="Summarize a topic",
            description=(
                "Confirm the topic with list_topics, gather it with a search, read its documents in full, "
                "then summarize it with citations, including what it leaves out."
            ),
            arguments=(_arg("topic", "A category or topic name, as list_topics lists it.", required=True),),
            render=summarize_topic,
        ),
        PromptSpec(
            name="deep_dive",
            title="Deep dive into a question",
            description=(
                "Search, expand the best hits with get_connection_graph (depth 2), read whole documents, "
                "search again with the vocabulary found, then answer with citations."
            ),
            arguments=(_arg("question", "The question to answer from the knowledge base.", required=True),),
            render=deep_dive,
        ),
        PromptSpec(
            name="whats_new",
            title="What's new",
            description=(
                "Survey the documents dated since a day (frontmatter dates), including short pages, and "
                "report by area with citations."
            ),
            arguments=(
                _arg(
                    "since",
                    f"A day written YYYY-MM-DD; default: {WHATS_NEW_DAYS} days before today.",
                    required=False,
                ),
            ),
            render=whats_new,
        ),
        PromptSpec(
            name="find_gaps",
            title="Find gaps",
            description=(
                "Look for what the knowledge base does not answer (empty or low-confidence searches, "
                "loose hits, stubs) and report the absences, without proposing content."
            ),
            arguments=(
                _arg("topic", "Limit the search for gaps to this category or topic.", required=False),
            ),
            render=find_gaps,
        ),
    )
}


# -- checking a prompts/get request -----------------------------------------------------------------------
def checked_arguments(spec: PromptSpec, given: Mapping[str, Any] | None, today: dt.date) -> dict[str, str]:
    """The prompt's arguments, checked, with defaults filled in. A blank optional argument counts as
    absent: clients often send an empty form field for one the user left out."""
    given = dict(given or {})
    declared = {arg.name for arg in spec.arguments}
    unknown = sorted(set(given) - declared)
    if unknown:
        accepted = ", ".join(sorted(declared)) or "none"
        raise InvalidArgument(
            f"{spec.name} takes no argument {', '.join(map(repr, unknown))}; its arguments: {accepted}",
            {"param": unknown[0], "arguments": sorted(declared)},
        )
    out: dict[str, str] = {}
    for arg in spec.arguments:
        value = given.get(arg.name)
        if value is not None and not isinstance(value, str):
            raise InvalidArgument(
                f"{spec.name}: {arg.name} must be a string, not {type(value).__name__}", {"param": arg.name}
            )
        value = (value or "").strip()
        if not value:
            if arg.required:
                raise InvalidArgument(
                    f"{spec.name} needs the argument {arg.name!r}: {arg.description}",
                    {"param": arg.name, "problem": "missing"},
                )
            continue
        if len(value) > PROMPT_ARGUMENT_CHARS.high:
            raise InvalidArgument(
                f"{spec.name}: {arg.name} is {len(value):,} characters, more than the "
                f"{PROMPT_ARGUMENT_CHARS.high:,} a prompt argument may have; shorten it",
                {"param": arg.name, "problem": "too-long", "limit": PROMPT_ARGUMENT_CHARS.high},
            )
        control = _CONTROL.search(value)
        if control is not None:
            raise InvalidArgument(
                f"{spec.name}: {arg.name} holds the control character U+{ord(control.group()):04X} at "
                f"{control.start()}; send plain text (tabs and line breaks are fine)",
                {"param": arg.name, "problem": "control-character", "offset": control.start()},
            )
        out[arg.name] = value
    if spec.name == "whats_new":
        out["since"] = _since(out.get("since"), today)
    return out


def _since(value: str | None, today: dt.date) -> str:
    if value is None:
        return (today - dt.timedelta(days=WHATS_NEW_DAYS)).isoformat()
    example = (today - dt.timedelta(days=WHATS_NEW_DAYS)).isoformat()
    if not _DATE.match(value):
        raise InvalidArgument(
            f"whats_new: since must be a day written YYYY-MM-DD (e.g. {example}), not {value!r}; "
            "the searches compare frontmatter dates as text, so any other form would match nothing",
            {"param": "since", "problem": "not-a-date"},
        )
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(
            f"whats_new: since {value!r} is not a day of the calendar; write a real YYYY-MM-DD day "
            f"(e.g. {example})",
            {"param": "since", "problem": "not-a-date"},
        ) from None
    return value


def get_prompt(
    dialect: str,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    cwd: str | None = None,
    today: dt.date | None = None,
) -> GetPromptResult:
    """``prompts/get`` of a face: the prompt's one user message, or a CallerError naming the problem.

    ``cwd``: the default face's starting directory; ``today``: the day ``whats_new`` counts back from
    (the local date by default)."""
    spec = PROMPTS.get(name)
    if spec is None:
        closest = difflib.get_close_matches(name, list(PROMPTS), n=1)
        hint = f" (did you mean {closest[0]!r}?)" if closest else ""
        raise NotFound(
            f"unknown prompt {name[:200]!r}{hint}; prompts: {', '.join(PROMPTS)}",
            {"param": "name", "prompts": list(PROMPTS), "closest": closest[0] if closest else None},
        )
    face = face_for(dialect, cwd)
    args = checked_arguments(spec, arguments, today or dt.date.today())
    text = spec.render(face, args)
    return GetPromptResult(
        description=spec.description,
        messages=[PromptMessage(role="user", content=TextContent(text=text))],
    )


def list_prompts() -> ListPromptsResult:
    return ListPromptsResult(
        prompts=[
            Prompt(name=s.name, title=s.title, description=s.description, arguments=list(s.arguments))
            for s in PROMPTS.values()
        ]
    )


@dataclass(frozen=True)
class PromptHandlers:
    """The two MCP handlers of a face, for ``Server(on_list_prompts=..., on_get_prompt=...)``."""

    on_list_prompts: Callable[[Any, Any], Awaitable[ListPromptsResult]]
    on_get_prompt: Callable[[Any, GetPromptRequestParams], Awaitable[GetPromptResult]]


def prompt_handlers(dialect: str, cwd: str | None = None) -> PromptHandlers:
    """The prompts of a face: ``dialect`` "hallouminate" (the default face; ``cwd``: where the server
    started, named in the text as a hint) or "grooveseek"."""
    face_for(dialect)  # an unknown dialect fails here, when the server is built

    async def on_list_prompts(ctx: Any, params: Any) -> ListPromptsResult:
        return list_prompts()

    async def on_get_prompt(ctx: Any, params: GetPromptRequestParams) -> GetPromptResult:
        try:
            return get_prompt(dialect, params.name, params.arguments, cwd=cwd)
        except HallouminateError as exc:
            raise to_mcp_error(exc) from None
        except Exception as exc:  # never a raw traceback or JSON-RPC code 0
            log.exception("prompt %s failed", params.name)
            raise to_mcp_error(Bug(f"prompt {params.name} failed: {type(exc).__name__}: {exc}")) from None

    return PromptHandlers(on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)
