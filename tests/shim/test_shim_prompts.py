"""The four MCP prompts (``prompts/list``, ``prompts/get``) through the real Python MCP client driving
``hallouminate serve``, and the GrooveSeek face's wording of them (``shim/prompts.py``, docs/prompts.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError
from mcp.types import INVALID_PARAMS

from hallouminate.shim import prompts
from support.sandbox import Sandbox, mcp_session, private_world

# Each face's tools, as its prompts must name them; and the other face's search tool, which they must not.
DEFAULT_TOOLS = ("ground", "list_topics", "get_document", "get_connection_graph")
GROOVESEEK_TOOLS = ("search", "list_topics", "get_document", "get_connection_graph")
CITATION_RULES = (
    "Cite the `path` of every document you draw on",
    "Read a document with `get_document` before you describe it",
    "When a search answers with `low_confidence: true`, say so",
    "When the knowledge base is silent on something, say that it is silent",
)


async def _text(session: ClientSession, name: str, arguments: dict[str, str] | None = None) -> str:
    result = await session.get_prompt(name, arguments)
    assert len(result.messages) == 1, "each prompt is one message"
    message = result.messages[0]
    assert message.role == "user"
    assert message.content.type == "text"
    return message.content.text


async def _refused(session: ClientSession, name: str, arguments: dict[str, str] | None = None) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await session.get_prompt(name, arguments)
    assert caught.value.error.code == INVALID_PARAMS, caught.value.error
    return caught.value


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    """One world for the prompt tests: each session's shim is forked from its one warm host (a host of
    each test's own cost ~1.5 s of CPU for the MCP SDK's import); prompts read nothing of the world."""
    with private_world(model_cache, prefix="hm-pr-", in_process=False) as box:
        yield box


def _tools_named(text: str) -> set[str]:
    return {name for name in (*DEFAULT_TOOLS, *GROOVESEEK_TOOLS) if f"`{name}`" in text}


def _assert_shared_rules(text: str) -> None:
    tail = text[text.index("Rules for the answer") :]
    assert text.rstrip().endswith(tail.rstrip()), "the citation rules end the message"
    for rule in CITATION_RULES:
        assert rule in tail, rule


async def test_prompts_list_gives_the_four_prompts_with_their_arguments(world: Sandbox) -> None:
    async with mcp_session(world) as session:
        listed = {p.name: p for p in (await session.list_prompts()).prompts}
    assert list(listed) == ["summarize_topic", "deep_dive", "whats_new", "find_gaps"]
    arguments = {name: [(a.name, a.required) for a in (p.arguments or [])] for name, p in listed.items()}
    assert arguments == {
        "summarize_topic": [("topic", True)],
        "deep_dive": [("question", True)],
        "whats_new": [("since", False)],
        "find_gaps": [("topic", False)],
    }
    for prompt in listed.values():
        assert prompt.description and prompt.title
    assert "YYYY-MM-DD" in (listed["whats_new"].arguments or [])[0].description
    assert "30 days" in (listed["whats_new"].arguments or [])[0].description


async def test_each_prompt_walks_through_the_default_face_tools_and_ends_with_the_citation_rules(
    world: Sandbox,
) -> None:
    repo = world.make_repo(wiki=None)
    async with mcp_session(world, cwd=repo) as session:
        summary = await _text(session, "summarize_topic", {"topic": "release process"})
        dive = await _text(session, "deep_dive", {"question": "Why does the shim fork from a warm host?"})
        news = await _text(session, "whats_new", {"since": "2026-10-01"})
        gaps = await _text(session, "find_gaps")
        gaps_in = await _text(session, "find_gaps", {"topic": "guides"})

    for text in (summary, dive, news, gaps, gaps_in):
        _assert_shared_rules(text)
        # The default face: `ground`, never GrooveSeek's `search`; every call takes the checkout's cwd,
        # and the text names the directory the server was started in.
        assert "`search`" not in text
        assert "`cwd`" in text and f"`{repo}`" in text

    # summarize_topic: list_topics -> ground with the topic and about 15 files -> get_document -> a summary
    # that says what is not covered.
    assert _tools_named(summary) == {"list_topics", "ground", "get_document"}
    assert '"release process"' in summary and "`top_files: 15`" in summary
    order = [summary.index(f"`{tool}`") for tool in ("list_topics", "ground", "get_document")]
    assert order == sorted(order)
    assert "do not cover" in summary

    # deep_dive: ground -> the connection graph at depth 2 on the top one or two hits -> whole documents ->
    # ground again with the vocabulary found.
    assert _tools_named(dive) == {"ground", "get_connection_graph", "get_document"}
    assert "Why does the shim fork from a warm host?" in dive
    assert "`depth: 2`" in dive and "one or two hits" in dive
    assert "in full" in dive and "again with that vocabulary" in dive

    # whats_new: the date filter, again with include_low_quality; the date is the frontmatter's, compared
    # as text; on this face changed_since filters by modification time.
    assert _tools_named(news) == {"ground", "get_document"}
    assert '`date_from: "2026-10-01"`' in news and "`include_low_quality: true`" in news
    assert "frontmatter" in news and "compared as plain text" in news
    assert '`changed_since: "2026-10-01"`' in news and "modification time" in news

    # find_gaps: the signals (no hits, low_confidence, loose hits, stubs); absences only.
    for text in (gaps, gaps_in):
        assert {"list_topics", "ground", "get_document"} <= _tools_named(text)
        assert "no hits" in text and "`low_confidence`" in text
        assert "do not answer it" in text and "`include_low_quality: true`" in text
        assert "do not write or propose content" in text
    assert "on every `ground` call" in gaps_in and '"guides"' in gaps_in
    assert "guides" not in gaps and "on every" not in gaps


async def test_whats_new_defaults_to_thirty_days_ago_and_refuses_a_malformed_since(world: Sandbox) -> None:
    async with mcp_session(world) as session:
        before = dt.date.today()
        default = await _text(session, "whats_new")
        blank = await _text(session, "whats_new", {"since": "  "})
        after = dt.date.today()
        refusals = {
            since: await _refused(session, "whats_new", {"since": since})
            for since in ("2026-1-5", "last week", "2026-11-03T00:00", "20261103", "2026-02-30")
        }
    days = {(day - dt.timedelta(days=30)).isoformat() for day in (before, after)}
    assert any(f"since {day}." in default and f'`date_from: "{day}"`' in default for day in days)
    assert blank == default, "a blank optional argument counts as absent"
    for since, error in refusals.items():
        assert error.error.data["param"] == "since"
        assert error.error.data["problem"] == "not-a-date"
        assert "YYYY-MM-DD" in error.error.message and repr(since) in error.error.message
    assert "not a day of the calendar" in refusals["2026-02-30"].error.message


async def test_missing_or_unknown_arguments_and_unknown_prompts_are_clear_invalid_params(
    world: Sandbox,
) -> None:
    async with mcp_session(world) as session:
        missing_topic = await _refused(session, "summarize_topic")
        blank_question = await _refused(session, "deep_dive", {"question": " \n"})
        unknown_argument = await _refused(session, "find_gaps", {"subject": "x"})
        too_long = await _refused(session, "deep_dive", {"question": "why " * 600})
        control = await _refused(session, "summarize_topic", {"topic": "a\x00b"})
        # Tabs and line breaks are text.
        assert "line one\n\tline two" in await _text(
            session, "deep_dive", {"question": "line one\n\tline two"}
        )
        unknown = await _refused(session, "summarise_topic", {"topic": "x"})
        # The session goes on after the refusals.
        assert "`ground`" in await _text(session, "deep_dive", {"question": "why?"})

    assert "summarize_topic needs the argument 'topic'" in missing_topic.error.message
    assert missing_topic.error.data == {"param": "topic", "problem": "missing"}
    assert "deep_dive needs the argument 'question'" in blank_question.error.message
    assert "'subject'" in unknown_argument.error.message and "topic" in unknown_argument.error.message
    assert unknown_argument.error.data["param"] == "subject"
    assert too_long.error.data == {"param": "question", "problem": "too-long", "limit": 2048}
    assert control.error.data == {"param": "topic", "problem": "control-character", "offset": 1}
    assert "U+0000" in control.error.message
    assert "unknown prompt 'summarise_topic'" in unknown.error.message
    assert "did you mean 'summarize_topic'?" in unknown.error.message
    assert unknown.error.data["prompts"] == list(prompts.PROMPTS)


# -- the GrooveSeek face's wording (its server attaches these handlers with the dialect "grooveseek") -------
ARGUMENTS = {
    "summarize_topic": {"topic": "mcp"},
    "deep_dive": {"question": "How are topics derived?"},
    "whats_new": {},
    "find_gaps": {"topic": "mcp"},
}


@pytest.mark.parametrize("name", list(prompts.PROMPTS))
def test_the_grooveseek_face_names_its_own_tools_with_the_same_rules(name: str) -> None:
    today = dt.date(2026, 12, 3)
    text = prompts.get_prompt("grooveseek", name, ARGUMENTS[name], today=today).messages[0].content.text
    default = prompts.get_prompt("hallouminate", name, ARGUMENTS[name], cwd="/r", today=today)
    _assert_shared_rules(text)
    named = _tools_named(text)
    assert "search" in named and "ground" not in named and named <= set(GROOVESEEK_TOOLS)
    # Same walk as the default face, in the face's words: its tool and its parameters, no cwd.
    assert named == {t.replace("ground", "search") for t in _tools_named(default.messages[0].content.text)}
    assert "`cwd`" not in text and "`corpus`" not in text and "changed_since" not in text
    if name == "summarize_topic":
        assert "`limit: 15`" in text and "`results`" in text
    if name == "whats_new":
        assert '`date_from: "2026-11-03"`' in text and "compared as plain text" in text


def test_an_unknown_dialect_fails_when_the_server_is_built() -> None:
    with pytest.raises(ValueError, match="unknown dialect 'kuradb'; dialects: hallouminate, grooveseek"):
        prompts.prompt_handlers("kuradb")
