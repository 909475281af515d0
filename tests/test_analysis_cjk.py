"""Chinese and Japanese in the one analyser (analysis.py, ADR 0053): runs of Han, Hiragana and Katakana
are read as character bigrams, the same in the lexical index, in queries, in the literal gate and in
snippets, so a keyword inside a sentence written without spaces is found."""

from __future__ import annotations

import pyarrow as pa

from hallouminate import analysis
from hallouminate.analysis import TokenFinder, analyze, content_tokens, query_terms, token_spans
from hallouminate.storage.lexical import LexicalIndex

JA = "パスワードを忘れた場合は、設定画面から再設定してください。"
ZH = "每天凌晨两点做一次全量备份，白天每十五分钟上传一次增量日志。"


def test_a_run_without_spaces_is_read_as_bigrams() -> None:
    # Before: one token per run ("パスワードを忘れた場合は"), and a run of 14 characters or more (42 bytes)
    # dropped as too long, so nothing of the Chinese sentence was indexed at all.
    assert analyze("数据库备份") == ["数据", "据库", "库备", "备份"]
    assert analyze(JA)[:4] == ["パス", "スワ", "ワー", "ード"]
    assert "全量" in analyze(ZH) and "备份" in analyze(ZH)
    assert analyze("一") == ["一"]  # a lone character stays itself
    # A change of script is a word boundary; the rest of the analyser is unchanged.
    assert analyze("API文档 and running jobs") == ["api", "文档", "and", "run", "job"]
    assert analysis.cjk_spaced("plain English text") == "plain English text"


def test_spans_are_offsets_in_the_original_text() -> None:
    text = f"Login: {JA}"
    spans = token_spans(text)
    assert all(text[start:end] == token for start, end, token in spans if analysis.has_cjk(token))
    assert (0, 5, "login") in spans


def test_query_terms_gate_and_snippets_agree_on_bigrams() -> None:
    terms = query_terms("パスワード 再設定")
    assert terms == ["パス", "スワ", "ワー", "ード", "再設", "設定"]
    finder = TokenFinder(terms)
    assert finder.held(JA) == (1 << len(terms)) - 1  # every term held: the gate lets BM25 vote
    assert finder.held("全く別の話です") == 0
    assert [JA[s:e] for s, e in finder.spans(JA)] == ["パス", "スワ", "ワー", "ード", "設定", "再設", "設定"]
    assert content_tokens("数据库") == ["数据", "据库"]


def _index(rows: list[tuple[str, str]]) -> LexicalIndex:
    index = LexicalIndex()
    table = pa.table(
        {
            "id": [f"c{i}" for i in range(len(rows))],
            "corpus": ["kb"] * len(rows),
            "path": [path for path, _ in rows],
            "text": [text for _, text in rows],
        }
    )
    index.add(table)
    return index


def test_bm25_finds_a_japanese_and_a_chinese_keyword_inside_a_sentence() -> None:
    index = _index(
        [
            ("ja/password.md", JA),
            ("ja/leave.md", "有給休暇は勤怠システムから申請してください。"),
            ("zh/backup.md", ZH),
            ("zh/cache.md", "缓存集群使用淘汰策略，所有键都必须设置过期时间。"),
            ("en/vpn.md", "Install WireGuard and import the configuration."),
        ]
    )
    assert [hit for hit, _ in index.search(query_terms("再設定"), ["kb"], 5)] == ["c0"]
    assert [hit for hit, _ in index.search(query_terms("有給休暇"), ["kb"], 5)] == ["c1"]
    assert [hit for hit, _ in index.search(query_terms("全量备份"), ["kb"], 5)] == ["c2"]
    assert [hit for hit, _ in index.search(query_terms("过期时间"), ["kb"], 5)] == ["c3"]
    assert [hit for hit, _ in index.search(query_terms("WireGuard"), ["kb"], 5)] == ["c4"]
