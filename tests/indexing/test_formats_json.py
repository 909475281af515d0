"""The JSON chunker: structure-aware chunks, key-path breadcrumbs, true line numbers (word counter)."""

from __future__ import annotations

import itertools
import json

import pytest

from hallouminate.indexing.json_chunker import chunk_json
from hallouminate.indexing.text_chunker import TextChunk, UnparseableFile


def words(text: str) -> int:
    return len(text.split())


def flat(text: str) -> str:
    return " ".join(text.split())


def member_lines(src: str, chunk: TextChunk) -> str:
    """The chunk's source lines, without the indent before its first member and the comma after its last."""
    lines = src.replace("\r\n", "\n").split("\n")
    return "\n".join(lines[chunk.line_start - 1 : chunk.line_end]).strip().removesuffix(",")


def long_words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


DOC = {
    "name": "demo",
    "servers": [
        {"name": f"server-{i}", "port": 8000 + i, "tags": ["prod", f"rack-{i}"], "enabled": i % 2 == 0}
        for i in range(8)
    ],
    "limits": {"cpu": 2, "memory": "24 GiB"},
}


def test_a_small_document_is_one_chunk() -> None:
    src = json.dumps(DOC, indent=2)
    page = chunk_json(src, words, 1000, title="config.json")
    assert len(page.chunks) == 1
    chunk = page.chunks[0]
    assert chunk.heading_path == ["config.json"]
    assert (chunk.line_start, chunk.line_end) == (1, src.count("\n") + 1)
    assert chunk.text == src and chunk.page is None
    assert chunk.embed_text == f"config.json\n\n{src}"
    assert page.title == "config.json" and page.summary.startswith('config.json - { "name": "demo",')


def test_a_large_document_splits_into_member_groups_along_its_structure() -> None:
    src = json.dumps(DOC, indent=2)
    page = chunk_json(src, words, 60, title="config.json")
    paths = [tuple(c.heading_path) for c in page.chunks]
    assert paths[0] == ("config.json",) and page.chunks[0].text == '"name": "demo"'
    assert set(paths) == {("config.json",), ("config.json", "servers")}
    assert paths.count(("config.json", "servers")) >= 2
    assert page.chunks[-1].text.startswith('"limits": {')
    servers = []
    for chunk in page.chunks:
        assert words(chunk.embed_text) <= 60
        # Each chunk is a run of whole members, verbatim, on its true lines.
        assert chunk.text == member_lines(src, chunk)
        if chunk.heading_path[-1] == "servers":
            servers.extend(json.loads(f"[{chunk.text}]"))
        else:
            json.loads(f"{{{chunk.text}}}")
    assert [s["name"] for s in servers] == [f"server-{i}" for i in range(8)]  # each whole, in order


def test_a_member_too_big_alone_is_chunked_one_level_down() -> None:
    doc = {"servers": [{"name": "a", "port": 1}, {"name": "b", "description": long_words(400, "d")}]}
    src = json.dumps(doc, indent=2)
    page = chunk_json(src, words, 50, title="config.json")
    paths = [c.heading_path for c in page.chunks]
    assert paths[0] == ["config.json", "servers"] and json.loads(page.chunks[0].text) == doc["servers"][0]
    assert paths[1] == ["config.json", "servers", "1"] and page.chunks[1].text == '"name": "b"'
    described = [c for c in page.chunks if c.heading_path == ["config.json", "servers", "1", "description"]]
    assert len(described) > 5 and described == page.chunks[2:]
    at, line = next((n, line) for n, line in enumerate(src.split("\n"), 1) if '"description"' in line)
    for chunk in described:
        assert words(chunk.embed_text) <= 50
        assert chunk.line_start == chunk.line_end == at  # the string's own line
        assert chunk.text in line and '"' not in chunk.text  # the string's content, between its quotes


def test_a_phrase_across_every_split_of_a_long_string_is_whole_in_some_chunk() -> None:
    text = ". ".join(long_words(9, f"s{k}w") for k in range(40)) + "."
    src = json.dumps({"title": "x", "body": text})
    page = chunk_json(src, words, 64, title="doc.json")
    body = [c for c in page.chunks if c.heading_path == ["doc.json", "body"]]
    assert len(body) > 5
    source_words = text.split()
    index = {w: i for i, w in enumerate(source_words)}
    bodies = [f" {flat(c.text)} " for c in body]
    for chunk in body[:-1]:
        split = index[chunk.text.split()[-1]] + 1
        for n in range(5, 9):
            for before in range(1, n):
                phrase = " ".join(source_words[split - before : split - before + n])
                assert any(f" {phrase} " in b for b in bodies), phrase


def test_escaped_line_breaks_in_a_string_are_cut_points() -> None:
    paragraphs = [long_words(25, f"p{k}w") + "." for k in range(6)]
    src = json.dumps({"notes": "\n\n".join(paragraphs)})
    page = chunk_json(src, words, 40, title="n.json")
    for chunk in page.chunks:
        assert not chunk.text.startswith("\\n") and not chunk.text.endswith("\\n")
        assert chunk.text.endswith(".")  # whole paragraphs: each ends a paragraph


def test_runs_of_small_members_repeat_whole_members_of_the_previous_run() -> None:
    src = json.dumps({"ids": list(range(300))}, indent=1)
    page = chunk_json(src, words, 50, title="ids.json")
    assert len(page.chunks) > 5
    runs = [[int(x) for x in c.text.replace(",", " ").split()] for c in page.chunks]
    for prev, nxt in itertools.pairwise(runs):
        shared = prev[-1] - nxt[0] + 1
        assert 1 <= shared <= 6 and nxt[:shared] == prev[-shared:]
    assert sorted({x for run in runs for x in run}) == list(range(300))
    for chunk in page.chunks:
        assert chunk.text == member_lines(src, chunk)


def test_a_root_string_is_cut_like_text() -> None:
    src = json.dumps(long_words(300, "r"))
    page = chunk_json(src, words, 40, title="s.json")
    assert len(page.chunks) > 5 and all(c.heading_path == ["s.json"] for c in page.chunks)
    assert {w for c in page.chunks for w in c.text.split()} == {f"r{i}" for i in range(300)}


@pytest.mark.parametrize(
    "bad",
    ['{"a": 1,}', "{'a': 1}", '{"a": [1, 2}', "{} x", '{"a":\n  nope}', "[" * 5000 + "]" * 5000],
)
def test_invalid_json_is_unparseable(bad: str) -> None:
    with pytest.raises(UnparseableFile) as caught:
        chunk_json(bad, words, 100, title="bad.json")
    assert caught.value.reason.startswith("invalid JSON")


def test_the_reason_names_the_line() -> None:
    with pytest.raises(UnparseableFile, match=r"line 3"):
        chunk_json('{\n  "a": 1,\n  "b": ,\n}', words, 100, title="bad.json")


def test_blank_json_has_no_chunks() -> None:
    assert chunk_json("  \n", words, 100, title="e.json").chunks == []


def test_crlf_json_has_true_line_numbers() -> None:
    src = json.dumps(DOC, indent=2).replace("\n", "\r\n")
    page = chunk_json(src, words, 60, title="config.json")
    assert len(page.chunks) > 2
    for chunk in page.chunks:
        assert "\r" not in chunk.text and chunk.text == member_lines(src, chunk)


def test_non_ascii_keys_and_values() -> None:
    doc = {"名前": "テスト", "café": {"größe": long_words(200, "ü"), "emoji": "🎉"}}
    src = json.dumps(doc, indent=2, ensure_ascii=False)
    escaped = json.dumps(doc, indent=2)  # "caf\u00e9": the breadcrumb holds the decoded key
    for text in (src, escaped):
        page = chunk_json(text, words, 40, title="i18n.json")
        paths = {tuple(c.heading_path) for c in page.chunks}
        assert ("i18n.json", "café", "größe") in paths
        assert any(c.text == '"emoji": "🎉"' or c.text == '"emoji": "\\ud83c\\udf89"' for c in page.chunks)
    page = chunk_json(src, words, 40, title="i18n.json")
    assert page.chunks[0].text == '"名前": "テスト"' and page.chunks[0].line_start == 2


def test_nonstandard_literals_that_python_accepts() -> None:
    page = chunk_json('{"a": NaN, "b": -Infinity, "c": [true, false, null, 1.5e3]}', words, 100, title="x")
    assert len(page.chunks) == 1


def test_deep_nesting_with_a_big_leaf() -> None:
    depth = 150
    src = '{"k": ' * depth + json.dumps(long_words(100, "z")) + "}" * depth
    page = chunk_json(src, words, 30, title="deep.json")
    assert all(words(c.embed_text) <= 30 for c in page.chunks)
    assert {w for c in page.chunks for w in c.text.split()} == {f"z{i}" for i in range(100)}
    assert len(page.chunks[0].heading_path) == depth + 1
