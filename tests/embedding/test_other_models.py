"""A model hallouminate does not provision: fastembed's own hub download into the model cache, once, on first
use; from the cache with no network afterwards; and a prompt, clear error where the hub cannot be reached.

No test here reaches the real hub: `HF_ENDPOINT` points at a closed local port, a hub that refuses every
connection at once, whatever network the machine has.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hallouminate.embedding import Embedder
from hallouminate.errors import Internal
from support.sandbox import Sandbox

UNREACHABLE_HUB = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_ETAG_TIMEOUT": "5"}
OTHER = "BAAI/bge-small-en-v1.5"  # fastembed knows it: hub repo Qdrant/bge-small-en-v1.5-onnx-Q
OTHER_REPO_DIR = "models--Qdrant--bge-small-en-v1.5-onnx-Q"
# A tiny BERT installed by hallouminate 0.1 (tests/model/fixtures/README.md): any small graph and tokenizer.
TINY = (
    Path(__file__).resolve().parent.parent
    / "model/fixtures/legacy-0.1-cache/models--Qdrant--all-MiniLM-L6-v2-onnx/snapshots/hallouminate-pypi-v1"
)

_LOAD = """
import json, sys, time
from pathlib import Path
slept = []
def sleep(seconds):  # a retry would sleep (3, 9, 27 s); record it and go on at once
    slept.append(seconds)
time.sleep = sleep
from hallouminate.embedding import Embedder
from hallouminate.errors import Internal
try:
    embedder = Embedder(Path(sys.argv[1]), sys.argv[2])
    print(json.dumps({"loaded": True, "max_tokens": embedder.max_tokens, "tokens": embedder.count_tokens("reset my password"),
                      "slept": slept}))
except Internal as exc:
    print(json.dumps({"loaded": False, "message": exc.message, "data": exc.data, "slept": slept}))
"""
# What fastembed's own constructor would sleep between its attempts before giving up on an unreachable hub.
RETRY_SLEEPS_SECS = 3 + 9 + 27


def _load_in_child(cache: Path, name: str, env: dict[str, str]) -> dict[str, object]:
    # A child: huggingface_hub reads HF_ENDPOINT when it is imported.
    import os

    run = subprocess.run(
        [sys.executable, "-c", _LOAD, str(cache), name],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout.splitlines()[-1])
    return result


def test_a_name_nobody_knows_is_refused_at_once_naming_the_choices(tmp_path: Path) -> None:
    with pytest.raises(Internal) as err:
        Embedder(tmp_path / "cache", "acme/no-such-model")
    message = err.value.message
    assert "Unknown embedding model 'acme/no-such-model'" in message
    assert "sentence-transformers/all-MiniLM-L6-v2" in message and "all-mpnet-base-v2" in message
    assert "[embeddings] model" in message
    assert not (tmp_path / "cache").exists()


def test_an_unreachable_hub_is_one_prompt_error_naming_the_fixes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    result = _load_in_child(cache, OTHER, UNREACHABLE_HUB)
    assert result["loaded"] is False
    message = str(result["message"])
    assert f"The embedding model {OTHER} is not in {cache}" in message
    assert "could not be downloaded from the model hub" in message
    assert "hallouminate model install" in message and "[embeddings] model" in message
    # One attempt: fastembed's own constructor sleeps 3 + 9 + 27 s between retries before it gives up, and
    # the hub client backs off between its own; nothing here waited to try again.
    slept = result["slept"]
    assert isinstance(slept, list) and sum(slept) < 1, result


def test_hub_offline_in_the_environment_is_named(tmp_path: Path) -> None:
    result = _load_in_child(tmp_path / "cache", OTHER, {**UNREACHABLE_HUB, "HF_HUB_OFFLINE": "1"})
    assert result["loaded"] is False
    assert "HF_HUB_OFFLINE is set" in str(result["message"])


def test_an_earlier_download_is_loaded_from_the_cache_with_no_network(tmp_path: Path) -> None:
    """The cache as fastembed's download leaves it (hub-cache layout under the model's repo); with the hub
    unreachable, loading succeeds only if nothing is fetched."""
    cache = tmp_path / "cache"
    snapshot = cache / OTHER_REPO_DIR / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    snapshot.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"):
        shutil.copyfile(TINY / name, snapshot / name)
    shutil.copyfile(TINY / "model.onnx", snapshot / "model_optimized.onnx")  # that model's file name
    (cache / OTHER_REPO_DIR / "refs").mkdir()
    (cache / OTHER_REPO_DIR / "refs" / "main").write_text(snapshot.name)
    result = _load_in_child(cache, OTHER, UNREACHABLE_HUB)
    assert result["loaded"] is True, result
    # Token limit and token counts come from the files in that directory.
    assert (
        result["max_tokens"] == json.loads((TINY / "tokenizer_config.json").read_text())["model_max_length"]
    )
    assert result["tokens"] == 3


def test_the_daemon_answers_an_unreachable_hub_promptly_through_the_cli(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    cache = tmp_path / "empty-cache"
    sandbox.write_config(f'[embeddings]\ncache_dir = "{cache}"\nmodel = "{OTHER}"\n')
    sandbox.env.update(UNREACHABLE_HUB)
    repo = sandbox.make_repo("other", wiki=None)
    (repo / ".hallouminate" / "wiki" / "otter.md").write_text("# Otter\n\nThe copper otter swims.\n")
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "hallouminate", "ground", "copper otter"],
        env=sandbox.env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - started
    assert run.returncode != 0
    assert f"The embedding model {OTHER} is not in {cache}" in run.stderr, run.stderr
    assert "could not be downloaded from the model hub" in run.stderr
    # Not a speed mark: the retry sleeps alone would take 39 s, however fast the machine (spawning the
    # daemon and loading included, one attempt takes a few seconds).
    assert elapsed < RETRY_SLEEPS_SECS, elapsed
