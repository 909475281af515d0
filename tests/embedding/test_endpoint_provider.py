"""The OpenAI-compatible embedding endpoint provider, through a real daemon, against a real HTTP server on
loopback (tests/support/embedding_endpoint.py: real MiniLM vectors, scripted faults): indexing and
``ground``; a 429 with Retry-After, then success; 5xx, then success; an input the endpoint refuses skipped
and counted for its file while the rest of it and the other files index; the endpoint down during a
forced rebuild leaves the index intact; an unset key variable is a clear error; the key never appears in
the log or in an error.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hallouminate.embedding.endpoint import EndpointEmbedder, default_tokenizer_dir
from hallouminate.errors import CallerError, ConfigError, HallouminateError, ModelUnavailable
from support.embedding_endpoint import Endpoint, endpoint_config, serving
from support.embedding_endpoint import daemon_call as call
from support.sandbox import SMALL_WIKI, Sandbox, hm, private_world

KEY_ENV = "HM_TEST_EMBEDDING_KEY"
# A key no other string of the run holds: found anywhere in a log or an error, it leaked.
KEY = "sk-test-8c1f0e5d-never-in-a-log"
POISON = "QUARANTINED-INPUT-7d2e"


@pytest.fixture(scope="module")
def endpoint(embedder: Any) -> Iterator[Endpoint]:
    with serving(embedder) as served:
        yield served


@pytest.fixture(scope="module")
def box(model_cache: Path, endpoint: Endpoint) -> Iterator[Sandbox]:
    with private_world(model_cache, prefix="hme-", extra_env=lambda _root: {KEY_ENV: KEY}) as created:
        created.write_config(endpoint_config(endpoint, str(model_cache), key_env=KEY_ENV))
        created.start_daemon()
        yield created


@pytest.fixture(scope="module")
def repo(box: Sandbox) -> Path:
    return box.make_repo(pages=SMALL_WIKI)


@pytest.fixture
def script(endpoint: Endpoint) -> Iterator[Endpoint]:
    """The endpoint with an empty script, restored after the test (running, nothing refused)."""
    endpoint.faults.clear()
    endpoint.refuse = None
    yield endpoint
    endpoint.faults.clear()
    endpoint.refuse = None
    if endpoint._server is None:
        endpoint.start()


def wiki(repo: Path) -> Path:
    return repo / ".hallouminate" / "wiki"


async def chunks(repo: Path) -> int:
    return int((await call("corpus_stats", repo))["total_chunks"])


async def test_index_and_ground_go_through_the_endpoint(box: Sandbox, repo: Path, script: Endpoint) -> None:
    before = len(script.seen)
    report = (await call("index", repo))["corpora"][0]
    assert report["files_upserted"] == len(SMALL_WIKI) and report["chunks_written"] > len(SMALL_WIKI)
    sent = script.seen[before:]
    # Every chunk went to the endpoint, in batches of at most [embeddings] batch_size, with the key.
    assert sum(len(s.inputs) for s in sent) >= report["chunks_written"]
    assert all(0 < len(s.inputs) <= 8 and s.model == script.model for s in sent)
    assert {s.authorization for s in sent} == {f"Bearer {KEY}"}
    assert all(s.body["encoding_format"] == "float" and "dimensions" not in s.body for s in sent)

    asked = len(script.seen)
    found = await call("ground", repo, {"query": "which process owns the LanceDB store and loads the model"})
    assert found["docs"][0]["path"] == "architecture.md"
    assert script.seen[asked:] and script.seen[asked].inputs == [
        "which process owns the LanceDB store and loads the model"
    ]
    # The vectors were unit vectors in the store (the server scales them by 3): cosine scores stay <= 1.
    assert found["confidence"]["best_cosine"] <= 1.0001


async def test_a_429_with_retry_after_is_waited_out_then_the_run_succeeds(
    box: Sandbox, repo: Path, script: Endpoint
) -> None:
    await call("index", repo)
    (wiki(repo) / "throttled.md").write_text(
        "# Throttled\n\nThe quota page explains rate limits of the gateway.\n"
    )
    script.faults.append((429, {"Retry-After": "1"}, "slow down"))
    before = len(script.seen)
    report = (await call("index", repo))["corpora"][0]
    assert report["files_upserted"] == 1 and report["files_skipped"] == 0
    sent = script.seen[before:]
    assert [s.status for s in sent[:2]] == [429, 200]
    # Retry-After was honoured: the retry came no sooner than it asked.
    assert sent[1].at - sent[0].at >= 0.95
    found = await call("ground", repo, {"query": "rate limits of the gateway quota"})
    assert found["docs"][0]["path"] == "throttled.md"


async def test_5xx_answers_are_retried_then_the_run_succeeds(
    box: Sandbox, repo: Path, script: Endpoint
) -> None:
    await call("index", repo)
    (wiki(repo) / "flaky.md").write_text("# Flaky\n\nThe upstream cache warms the thumbnails nightly.\n")
    script.faults.extend([(500, {}, "boom"), (503, {}, "overloaded")])
    before = len(script.seen)
    report = (await call("index", repo))["corpora"][0]
    assert report["files_upserted"] == 1
    assert [s.status for s in script.seen[before:]][:3] == [500, 503, 200]
    assert not script.faults
    found = await call("ground", repo, {"query": "thumbnails warmed nightly by the cache"})
    assert found["docs"][0]["path"] == "flaky.md"


@pytest.mark.parametrize("status", [413, 422])
async def test_a_refused_input_is_skipped_and_counted_for_its_file(
    box: Sandbox, repo: Path, script: Endpoint, status: int
) -> None:
    await call("index", repo)
    name = f"mixed-{status}.md"
    # Each run's pages say different things: the other run's pages stay in the corpus.
    keeper, fruit = {413: ("lighthouse keeper", "quinces"), 422: ("ferry captain", "pomegranates")}[status]
    filler = " ".join(f"word{i}" for i in range(150))
    (wiki(repo) / name).write_text(
        f"# Mixed\n\n## Kept\n\nThe {keeper} logs every passing ship.\n\n## Refused\n\n{POISON} {filler}\n"
    )
    (wiki(repo) / f"whole-{status}.md").write_text(f"# Whole\n\n{POISON} only this.\n")
    (wiki(repo) / f"fine-{status}.md").write_text(f"# Fine\n\nThe orchard grows {fruit} by the wall.\n")
    script.refuse, script.refuse_status = POISON, status
    report = (await call("index", repo))["corpora"][0]
    refused = {r["path"]: r for r in report["refused"]}
    assert 1 <= refused[name]["chunks_refused"] < refused[name]["chunks"]
    assert f"HTTP {status}" in refused[name]["reason"]
    assert refused[f"whole-{status}.md"]["chunks_refused"] == refused[f"whole-{status}.md"]["chunks"]
    assert report["chunks_refused"] == sum(r["chunks_refused"] for r in refused.values())
    # The file with one refused chunk is indexed without it; the one with nothing else is skipped; the
    # other file indexes.
    assert report["files_upserted"] == 2 and report["files_skipped"] == 1
    assert [s["path"] for s in report["skipped"]] == [f"whole-{status}.md"]
    problems = {p["path"]: p for p in report["problems"]}
    assert problems[name]["problem"] == "refused" and problems[name]["indexed"] is True
    assert (
        problems[f"whole-{status}.md"]["problem"] == "refused"
        and not problems[f"whole-{status}.md"]["indexed"]
    )
    assert (await call("ground", repo, {"query": f"{keeper} logs passing ships"}))["docs"][0]["path"] == name
    assert (await call("ground", repo, {"query": f"orchard growing {fruit}"}))["docs"][0][
        "path"
    ] == f"fine-{status}.md"
    # Bisection found the refused input among the others of its batch: some request held it with others.
    assert any(POISON in "".join(s.inputs) and len(s.inputs) > 1 for s in script.answered(status))
    # The CLI names the file's problem as the indexer left it (a run with nothing new still lists it).
    shown = hm(box, "index", cwd=repo)
    assert shown.returncode == 0, shown
    assert f"{name}: refused (indexed without the refused chunks)" in shown.stdout, shown.stdout
    assert f"whole-{status}.md: refused (skipped)" in shown.stdout, shown.stdout


async def test_the_endpoint_down_during_a_forced_rebuild_leaves_the_index_intact(
    box: Sandbox, repo: Path, script: Endpoint
) -> None:
    await call("index", repo)
    held = await chunks(repo)
    assert held > 0
    script.stop()
    for flag in ("--force", "--rebuild"):
        done = hm(box, "index", flag, cwd=repo)
        assert done.returncode == 1, done  # a fault of the endpoint: exit 1, the message says what
        assert "probe" in done.stderr and "left as it is" in done.stderr and script.base_url in done.stderr
        assert await chunks(repo) == held  # nothing emptied, nothing re-embedded
    script.start()
    assert (await call("ground", repo, {"query": "daemon lifecycle"}))["docs"]


async def test_an_unauthorised_answer_is_a_clear_error_that_never_quotes_the_key(
    box: Sandbox, repo: Path, script: Endpoint
) -> None:
    await call("index", repo)
    (wiki(repo) / "denied.md").write_text("# Denied\n\nThe vault refuses the courier.\n")
    # A proxy that echoes the request's headers in its error body.
    script.faults.append((401, {}, "bad credentials in header Authorization: {authorization}"))
    with pytest.raises(ModelUnavailable) as raised:
        await call("index", repo)
    assert "HTTP 401" in raised.value.message and f"${KEY_ENV}" in raised.value.message
    assert "[redacted]" in raised.value.message
    assert KEY not in raised.value.message and KEY not in repr(raised.value.data)
    await call("index", repo)  # the endpoint answers again: the file indexes


async def test_an_unset_key_variable_is_a_clear_error(model_cache: Path, endpoint: Endpoint) -> None:
    with private_world(model_cache, prefix="hmk-") as other:
        other.env.pop(KEY_ENV, None)
        assert KEY_ENV not in os.environ
        other.write_config(endpoint_config(endpoint, str(model_cache), key_env=KEY_ENV))
        repo = other.make_repo(pages=("index.md",))
        other.start_daemon()
        with pytest.raises(ConfigError) as raised:
            await call("ground", repo, {"query": "anything"})
        assert isinstance(raised.value, CallerError)
        assert KEY_ENV in raised.value.message and "not set" in raised.value.message
        assert raised.value.data["problem"] == "api-key-unset"
        done = hm(other, "index", cwd=repo)
        assert done.returncode == 2 and KEY_ENV in done.stderr, done


async def test_a_query_the_endpoint_refuses_is_the_callers_error(
    box: Sandbox, repo: Path, script: Endpoint
) -> None:
    await call("index", repo)
    script.refuse = POISON
    with pytest.raises(HallouminateError) as raised:
        await call("ground", repo, {"query": f"{POISON} what now"})
    assert isinstance(raised.value, CallerError) and "refused the query" in raised.value.message


# -- the client alone, in process, against the same server (no daemon) -------------------------------------
def client(endpoint: Endpoint, delays: list[float], **overrides: Any) -> EndpointEmbedder:
    """The provider with its waits recorded instead of slept."""
    settings: dict[str, Any] = {"max_retries": 3, "batch_size": 8, **overrides}
    return EndpointEmbedder(
        base_url=endpoint.base_url, model=endpoint.model, dimensions=384, sleep=delays.append, **settings
    )


def test_back_off_grows_with_jitter_and_a_retry_after_date_is_honoured(script: Endpoint) -> None:
    delays: list[float] = []
    script.faults.extend([(500, {}, "a"), (502, {}, "b"), (503, {}, "c")])
    vectors = client(script, delays).embed_passages(["one", "two"])
    assert vectors.shape == (2, 384) and abs(float((vectors[0] ** 2).sum()) - 1) < 1e-5
    # 0.25 s doubling, each between half and all of its step.
    assert len(delays) == 3
    for step, delay in enumerate(delays):
        assert 0.125 * 2**step <= delay <= 0.25 * 2**step, delays
    delays.clear()
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    script.faults.append((429, {"Retry-After": when}, "later"))
    client(script, delays).embed_passages(["three"])
    assert len(delays) == 1 and 1.0 <= delays[0] <= 3.5, delays
    delays.clear()
    script.faults.append((429, {"Retry-After": "3600"}, "much later"))
    client(script, delays).embed_passages(["four"])
    assert delays == [30.0]  # capped: an hour's wait would look like a hang


def test_retries_are_bounded_and_the_failure_names_the_endpoint(script: Endpoint) -> None:
    delays: list[float] = []
    script.faults.extend([(503, {}, "down")] * 3)
    with pytest.raises(ModelUnavailable) as raised:
        client(script, delays, max_retries=2).embed_passages(["x"])
    assert len(delays) == 2 and "failed 3 time(s) in a row" in raised.value.message
    assert script.base_url in raised.value.message and "HTTP 503" in raised.value.message


def test_dimensions_are_sent_on_request_and_a_wrong_length_names_the_fix(script: Endpoint) -> None:
    wrong = EndpointEmbedder(
        base_url=script.base_url, model=script.model, dimensions=512, send_dimensions=True, max_retries=0
    )
    with pytest.raises(ModelUnavailable) as raised:
        wrong.embed_passages(["x"])
    assert script.seen[-1].body["dimensions"] == 512
    assert "384-d" in raised.value.message and "dimensions = 384" in raised.value.message


def test_tokens_are_counted_with_the_default_tokenizer_or_estimated(
    model_cache: Path, script: Endpoint
) -> None:
    text = "Retries honour Retry-After; 東京の天気"
    counted = EndpointEmbedder(
        base_url=script.base_url,
        model=script.model,
        dimensions=384,
        tokenizer_dir=default_tokenizer_dir(model_cache),
        max_input_tokens=512,
    )
    assert counted.count_tokens(text) == script.embedder.count_tokens(text)
    assert counted.max_tokens == 384  # three quarters of max_input_tokens: the margin between tokenizers
    estimated = EndpointEmbedder(base_url=script.base_url, model=script.model, dimensions=384)
    assert estimated.count_tokens(text) == -(-len(text.encode()) // 3)


def test_the_key_appears_in_no_log(box: Sandbox, repo: Path) -> None:
    # Last in the module: by now the daemon has logged retries, refusals and a 401 echoing the header.
    logs = [p for p in Path(box.env["XDG_STATE_HOME"]).rglob("*") if p.is_file()]
    assert logs
    for path in logs:
        assert KEY.encode() not in path.read_bytes(), path
    assert "embedding endpoint" in box.daemon_log_text()  # the retries were logged, keyless
