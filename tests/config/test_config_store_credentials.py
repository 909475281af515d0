"""An object store's credentials (``config.credentials.store_credentials``; docs/configuration.md,
"Credentials"): the environment overrides ``[store] credentials_file``, as AWS tools do; the key pair is
taken whole from one source; a profile is a section of an AWS-style INI file, ``[NAME]`` or
``[profile NAME]``. Every problem names ``[store] credentials_file`` and never echoes a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate.config import load_baseline
from hallouminate.config.credentials import StoreCredentials, store_credentials
from hallouminate.config.types import Settings
from hallouminate.errors import ConfigError
from support.files import write

SECRET = "wJalrXUtnFEMI-K7MDENG-file"
CREDENTIALS = (
    "[default]\naws_access_key_id = AKIAFILE\n"
    f"aws_secret_access_key = {SECRET}\nregion = eu-central-1\n"
    "endpoint_url = http://127.0.0.1:8333\n\n"
    "[profile team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = team-secret\n"
    "aws_session_token = team-token\n"
)


def settings(baseline: Path, tmp_path: Path, profile: str | None = None, text: str = CREDENTIALS) -> Settings:
    """The settings of a baseline naming a credentials file holding ``text`` (and ``profile``)."""
    creds = write(tmp_path / "creds.ini", text)
    chosen = f'profile = "{profile}"\n' if profile else ""
    write(baseline, f'[store]\nuri = "s3://team-wiki/x"\ncredentials_file = "{creds}"\n{chosen}')
    return load_baseline().settings


def test_the_file_gives_everything_when_the_environment_gives_nothing(baseline: Path, tmp_path: Path) -> None:
    found = store_credentials(settings(baseline, tmp_path), environ={})
    assert (found.access_key_id, found.secret_access_key, found.session_token) == ("AKIAFILE", SECRET, None)
    assert (found.region, found.endpoint_url) == ("eu-central-1", "http://127.0.0.1:8333")
    assert found.sources["access_key_id"] == f"{tmp_path / 'creds.ini'} [default]"
    assert SECRET not in repr(found) and "AKIAFILE" not in repr(found)


def test_a_profile_is_a_section_spelled_either_way(baseline: Path, tmp_path: Path) -> None:
    found = store_credentials(settings(baseline, tmp_path, profile="team"), environ={})
    assert (found.access_key_id, found.secret_access_key, found.session_token) == (
        "AKIATEAM",
        "team-secret",
        "team-token",
    )
    assert (found.region, found.endpoint_url) == (None, None)


def test_the_environment_overrides_the_file(baseline: Path, tmp_path: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_REGION": "us-east-1"}
    found = store_credentials(settings(baseline, tmp_path, profile="team"), environ=env)
    # The pair comes whole from the environment: the file's session token is not mixed into it.
    assert (found.access_key_id, found.secret_access_key, found.session_token) == (
        "AKIAENV",
        "env-secret",
        None,
    )
    assert found.region == "us-east-1" and found.sources["region"] == "the environment"
    env["AWS_ENDPOINT_URL"] = "https://s3.us-east-1.amazonaws.com"
    assert (
        store_credentials(settings(baseline, tmp_path), environ=env).endpoint_url == env["AWS_ENDPOINT_URL"]
    )
    # Only the region from the environment: the key pair and the endpoint still come from the file.
    found = store_credentials(settings(baseline, tmp_path), environ={"AWS_DEFAULT_REGION": "ap-south-1"})
    assert (found.access_key_id, found.region) == ("AKIAFILE", "ap-south-1")
    assert found.endpoint_url == "http://127.0.0.1:8333"


def test_without_a_file_the_environment_alone_is_read(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[store]\nuri = "s3://team-wiki"\n')
    s = load_baseline().settings
    assert store_credentials(s, environ={}) == StoreCredentials()
    env = {"AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "B", "AWS_SESSION_TOKEN": "C", "AWS_REGION": ""}
    found = store_credentials(s, environ=env)
    assert (found.access_key_id, found.secret_access_key, found.session_token, found.region) == (
        "A",
        "B",
        "C",
        None,  # an empty variable is unset
    )


def test_half_a_key_pair_is_refused(baseline: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        store_credentials(settings(baseline, tmp_path), environ={"AWS_ACCESS_KEY_ID": "AKIAENV"})
    assert "AWS_ACCESS_KEY_ID without AWS_SECRET_ACCESS_KEY" in raised.value.message
    assert "AKIAENV" not in raised.value.message
    s = settings(baseline, tmp_path, text=f"[default]\naws_secret_access_key = {SECRET}\n")
    with pytest.raises(ConfigError) as raised:
        store_credentials(s, environ={})
    message = raised.value.message
    assert "aws_secret_access_key without its other half" in message and "[store] credentials_file" in message
    assert SECRET not in message and raised.value.data["file"] == str(tmp_path / "creds.ini")


@pytest.mark.parametrize(
    ("text", "profile", "fragments"),
    [
        (CREDENTIALS, "ops", ["has no section [ops]", "sections: default, profile team", "[store] profile"]),
        (f"aws_secret_access_key = {SECRET}\n", None, ["is not an INI file", "[default]"]),
        ("[default]\nendpoint_url = s3.local:9000\n", None, ["endpoint", "endpoint_url", "http(s) URL"]),
    ],
)
def test_a_bad_credentials_file_names_the_key_and_the_fix(
    baseline: Path, tmp_path: Path, text: str, profile: str | None, fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as raised:
        store_credentials(settings(baseline, tmp_path, profile=profile, text=text), environ={})
    for fragment in fragments:
        assert fragment in raised.value.message, raised.value.message
    assert SECRET not in raised.value.message
    assert raised.value.data["key"] == "[store] credentials_file"


def test_a_missing_credentials_file_is_named(baseline: Path, tmp_path: Path) -> None:
    s = settings(baseline, tmp_path)
    (tmp_path / "creds.ini").unlink()
    with pytest.raises(ConfigError) as raised:
        store_credentials(s, environ={})
    assert f"[store] credentials_file {str(tmp_path / 'creds.ini')!r} cannot be read" in raised.value.message


def test_a_bad_endpoint_in_the_environment_names_the_variable(baseline: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        store_credentials(settings(baseline, tmp_path), environ={"AWS_ENDPOINT_URL": "ftp://x"})
    assert "AWS_ENDPOINT_URL, from the environment" in raised.value.message
