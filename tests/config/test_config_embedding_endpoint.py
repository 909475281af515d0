"""``[embeddings] provider = "openai-compatible"`` and its keys (docs/configuration.md): read into the
settings and shown by `config show`; each mistake (a bad URL, a missing dimension, a key pasted where its
variable's name goes, endpoint keys without the provider, the table in a repository layer) refused naming
the key and the fix, without echoing what might be a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.config import describe_effective, resolve, validate_file
from hallouminate.errors import ConfigError

ENDPOINT = (
    '[embeddings]\nprovider = "openai-compatible"\nbase_url = "http://127.0.0.1:8080/v1/"\n'
    'model = "text-embedding-3-small"\ndimensions = 1536\n'
)


def test_the_endpoint_settings_are_read_and_shown(baseline: Path, tmp_path: Path) -> None:
    baseline.write_text(
        ENDPOINT
        + 'api_key_env = "OPENAI_API_KEY"\nbatch_size = 16\ntimeout_secs = 5\nmax_input_tokens = 8191\n'
        "max_retries = 0\nsend_dimensions = true\n"
    )
    resolved = resolve(tmp_path)
    s = resolved.settings
    assert s.embedding_provider == "openai-compatible" and s.model_name == "text-embedding-3-small"
    assert s.endpoint_base_url == "http://127.0.0.1:8080/v1"  # the trailing slash dropped
    assert (s.endpoint_dimensions, s.endpoint_api_key_env) == (1536, "OPENAI_API_KEY")
    assert (s.endpoint_batch_size, s.endpoint_timeout_secs, s.endpoint_max_input_tokens) == (16, 5.0, 8191)
    assert (s.endpoint_max_retries, s.endpoint_send_dimensions) == (0, True)
    shown = describe_effective(resolved)["settings"]["embeddings"]
    assert shown["provider"] == "openai-compatible" and shown["api_key_env"] == "OPENAI_API_KEY"
    assert validate_file(baseline) == []


def test_the_local_provider_is_the_default(baseline: Path, tmp_path: Path) -> None:
    baseline.write_text("")
    s = resolve(tmp_path).settings
    assert s.embedding_provider == "local" and s.endpoint_base_url is None and s.endpoint_dimensions is None


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            ENDPOINT.replace("http://127.0.0.1:8080/v1/", "ftp://host/v1"),
            ["[embeddings] base_url", "http://"],
        ),
        (ENDPOINT.replace("http://127.0.0.1:8080/v1/", "http://:8080"), ["base_url", "names no host"]),
        (ENDPOINT.replace("127.0.0.1:8080", "user:pw@host"), ["base_url", "api_key_env"]),
        (ENDPOINT.replace("127.0.0.1:8080", "host:port"), ["base_url", "does not parse"]),
        (ENDPOINT.replace("dimensions = 1536\n", ""), ["[embeddings] provider", "needs dimensions"]),
        (ENDPOINT.replace('base_url = "http://127.0.0.1:8080/v1/"\n', ""), ["needs base_url"]),
        (ENDPOINT.replace("dimensions = 1536", "dimensions = 0"), ["[embeddings] dimensions", "positive"]),
        ('[embeddings]\nprovider = "openai"\n', ["[embeddings] provider", "'openai-compatible'", "'openai'"]),
        (
            '[embeddings]\nbase_url = "http://h/v1"\n',
            ["[embeddings] base_url", 'provider = "openai-compatible"'],
        ),
        (ENDPOINT + "batch_size = 0\n", ["[embeddings] batch_size", "positive integer"]),
        (ENDPOINT + "max_retries = -1\n", ["[embeddings] max_retries", "non-negative"]),
        (ENDPOINT + "send_dimensions = 1\n", ["[embeddings] send_dimensions", "true or false"]),
    ],
)
def test_a_bad_endpoint_setting_names_the_key_and_the_fix(
    baseline: Path, text: str, fragments: list[str]
) -> None:
    baseline.write_text(text)
    (problem,) = validate_file(baseline)
    assert problem.startswith(str(baseline))
    for fragment in fragments:
        assert fragment in problem, problem


def test_a_key_in_place_of_its_variable_name_is_refused_without_echoing_it(
    baseline: Path, tmp_path: Path
) -> None:
    key = "sk-proj-abc123-DEF456"
    baseline.write_text(ENDPOINT + f'api_key_env = "{key}"\n')
    with pytest.raises(ConfigError) as raised:
        resolve(tmp_path)
    assert (
        "[embeddings] api_key_env" in raised.value.message
        and "name of an environment variable" in raised.value.message
    )
    assert key not in raised.value.message and key not in repr(raised.value.data)


def test_a_repository_layer_may_not_choose_the_embedder(baseline: Path, tmp_path: Path) -> None:
    baseline.write_text("")
    repo = tmp_path / "repo"
    (repo / ".hallouminate").mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text(
        '[[repository]]\nname = "r"\npath = "."\n'
        + ENDPOINT.replace("http://127.0.0.1:8080/v1/", "http://evil/v1")
    )
    with pytest.raises(ConfigError) as raised:
        resolve(repo)
    assert "[embeddings]" in raised.value.message and "baseline" in raised.value.message
