"""A real daemon configured with the multilingual model (intfloat/multilingual-e5-small-q4) indexes a small
Japanese, Chinese and English knowledge base and answers `ground` in each language, across languages,
and on a Japanese keyword by BM25 (character bigrams, ADR 0053)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hallouminate.client import connect_or_spawn
from hallouminate.model import multilingual
from support.multilingual import installed_e5
from support.sandbox import Sandbox, private_world

PAGES = {
    "ja/password.md": "# パスワードの再設定\n\nパスワードを忘れた場合は、ログイン画面から確認コードを受け取って再設定してください。"
    "五回続けて間違えるとアカウントは三十分間ロックされます。\n",
    "ja/leave.md": "# 休暇制度\n\n有給休暇は勤怠システムから三営業日前までに申請してください。使わなかった日数は翌年度に繰り越せます。\n",
    "zh/backup.md": "# 数据库备份\n\n每天凌晨两点做一次全量备份，白天每十五分钟上传一次增量日志。误删数据时可以只恢复单张表。\n",
    "zh/travel.md": "# 出差预订\n\n出差的机票和酒店统一通过差旅平台预订。北京和上海的酒店每晚上限为六百元。\n",
    "en/vpn.md": "# VPN access\n\nInstall WireGuard and import your personal configuration from the access portal. "
    "The VPN asks for a one-time code every 12 hours.\n",
}


@pytest.fixture(scope="module")
def world(model_cache: Path) -> Iterator[Sandbox]:
    installed_e5(model_cache)
    extra = f'model = "{multilingual.E5_NAME}"\n'
    with private_world(model_cache, prefix="hm-ml-", baseline_extra=extra) as box:
        yield box


@pytest.fixture(scope="module")
def kb(world: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    for path, text in PAGES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
async def ground(kb: Path) -> AsyncIterator[object]:
    conn = await connect_or_spawn()
    report = await conn.call("index", str(kb), {}, kb=True)
    assert report["corpora"][0]["files_upserted"] in (0, len(PAGES))  # 0: indexed by an earlier test

    async def ask(query: str) -> list[str]:
        found = await conn.call("ground", str(kb), {"query": query, "top_files": 3}, kb=True)
        return [doc["path"] for doc in found["docs"]]

    try:
        yield ask
    finally:
        await conn.close()


async def test_the_daemon_loads_the_multilingual_model(world: Sandbox, kb: Path) -> None:
    conn = await connect_or_spawn()
    try:
        await conn.call("index", str(kb), {}, kb=True)
        status = await conn.call("status", str(kb), {})
    finally:
        await conn.close()
    assert (status["model_name"], status["model"]) == (multilingual.E5_NAME, "loaded")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ログインできなくなったときのパスワードの再設定方法", "ja/password.md"),  # Japanese
        ("带薪年假没休完可以转到明年吗", "ja/leave.md"),  # Chinese question, Japanese page
        ("误删了一张表的数据怎么恢复", "zh/backup.md"),  # Chinese
        ("hotel price limit per night in Shanghai", "zh/travel.md"),  # English question, Chinese page
        ("WireGuardの設定ファイルはどこで入手できますか", "en/vpn.md"),  # Japanese question, English page
    ],
)
async def test_ground_answers_in_each_language_and_across(ground, query: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert (await ground(query))[0] == expected


async def test_a_japanese_keyword_inside_a_sentence_is_found(ground) -> None:  # type: ignore[no-untyped-def]
    # 繰り越せ occurs only inside a sentence of leave.md, written without spaces.
    assert (await ground("繰り越せ"))[0] == "ja/leave.md"
    assert (await ground("増分ログ 全量备份"))[0] == "zh/backup.md"
