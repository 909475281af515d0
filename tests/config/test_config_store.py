"""``[store]`` (docs/configuration.md): where the index lives, a local directory or a team's object store.

Every key has its default with no file; each is read from the baseline and shown by `config show` with
the file that set it. Each mistake (a bad URI, a mode, a bound, path and uri together, credentials
without an object store, a secret written into the config, the table in a repository layer) is refused
naming the file, the key and the fix, never echoing a secret. ``[storage] path``, the old name of
``[store] path``, keeps working, and is refused beside a ``[store]`` location.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hallouminate import xdg
from hallouminate.config import baseline_template, describe_effective, load_baseline, resolve, validate_file
from hallouminate.errors import ConfigError
from support.files import write

ENV_NAMES = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
]


def refusal(baseline: Path, text: str, tmp_path: Path) -> str:
    """The one problem of a baseline holding ``text``: `config validate` and resolving agree on it."""
    write(baseline, text)
    (problem,) = validate_file(baseline)
    with pytest.raises(ConfigError) as raised:
        resolve(tmp_path)
    assert raised.value.message == problem
    assert problem.startswith(f"{baseline}: "), problem
    return problem


# -- what is accepted -----------------------------------------------------------------------------------
def test_without_a_store_table_every_key_has_its_default(baseline: Path, tmp_path: Path) -> None:
    resolved = resolve(tmp_path)
    s = resolved.settings
    assert s.store_dir == xdg.default_store_dir()
    assert (s.store_uri, s.store_mode, s.store_credentials_file, s.store_profile) == (
        None,
        "read-write",
        None,
        "default",
    )
    assert (s.store_poll_interval_secs, s.store_lease_secs) == (3.0, 30.0)
    shown = describe_effective(resolved)
    assert shown["settings"]["store"] == {
        "path": str(xdg.default_store_dir()),
        "mode": "read-write",
        "profile": "default",
        "poll_interval_secs": 3.0,
        "lease_secs": 30.0,
    }
    assert not any(key.startswith("store.") for key in shown["setting_sources"])


def test_a_local_writer_sets_its_directory(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[store]\npath = "~/index"\nlease_secs = 60\n')
    resolved = resolve(tmp_path)
    assert resolved.settings.store_dir == tmp_path / "home" / "index"
    assert (resolved.settings.store_uri, resolved.settings.store_lease_secs) == (None, 60.0)
    shown = describe_effective(resolved)
    assert shown["settings"]["store"]["path"] == str(tmp_path / "home" / "index")
    assert shown["setting_sources"]["store.path"] == str(baseline)
    assert validate_file(baseline) == []


def test_a_team_reader_names_its_bucket_credentials_file_and_pace(baseline: Path, tmp_path: Path) -> None:
    write(
        baseline,
        '[store]\nuri = "s3://team-wiki/hallouminate/"\nmode = "read-only"\n'
        'credentials_file = "~/.aws/credentials"\nprofile = "team"\npoll_interval_secs = 0.5\n'
        "lease_secs = 45\n",
    )
    assert validate_file(baseline) == []
    resolved = resolve(tmp_path)
    s = resolved.settings
    assert s.store_uri == "s3://team-wiki/hallouminate"  # normalized: no trailing '/'
    assert (s.store_mode, s.store_profile) == ("read-only", "team")
    assert s.store_credentials_file == tmp_path / "home" / ".aws" / "credentials"
    assert (s.store_poll_interval_secs, s.store_lease_secs) == (0.5, 45.0)
    shown = describe_effective(resolved)
    # The object store is the store: the local default directory is not shown as if it were.
    assert "path" not in shown["settings"]["store"]
    assert shown["settings"]["store"]["uri"] == "s3://team-wiki/hallouminate"
    assert shown["setting_sources"]["store.mode"] == str(baseline)


@pytest.mark.parametrize(
    ("uri", "normalized"),
    [
        ("s3://team-wiki", "s3://team-wiki"),
        ("s3://team-wiki/", "s3://team-wiki"),
        ("S3://team.wiki-2/a/b", "s3://team.wiki-2/a/b"),
        ("  s3://abc/x  ", "s3://abc/x"),
    ],
)
def test_a_bucket_with_or_without_a_prefix_is_accepted(
    baseline: Path, tmp_path: Path, uri: str, normalized: str
) -> None:
    write(baseline, f'[store]\nuri = "{uri}"\n')
    assert load_baseline().settings.store_uri == normalized


def test_a_local_store_may_be_read_only(baseline: Path, tmp_path: Path) -> None:
    write(baseline, f'[store]\npath = "{tmp_path / "shared"}"\nmode = "read-only"\n')
    s = load_baseline().settings
    assert (s.store_dir, s.store_mode, s.store_uri) == (tmp_path / "shared", "read-only", None)


# -- [storage] path, the old name -----------------------------------------------------------------------
def test_storage_path_still_sets_the_local_store(baseline: Path, tmp_path: Path) -> None:
    write(baseline, '[storage]\npath = "~/old-store"\n\n[store]\nmode = "read-only"\n')
    assert validate_file(baseline) == []
    resolved = resolve(tmp_path)
    assert resolved.settings.store_dir == tmp_path / "home" / "old-store"
    assert resolved.settings.store_mode == "read-only"
    # `config show` names it by its current name, with the file that set it.
    shown = describe_effective(resolved)
    assert shown["settings"]["store"]["path"] == str(tmp_path / "home" / "old-store")
    assert shown["setting_sources"]["store.path"] == str(baseline)
    assert "storage" not in shown["settings"]


@pytest.mark.parametrize(
    "text",
    [
        '[storage]\npath = "/a"\n\n[store]\npath = "/b"\n',
        '[store]\npath = "/b"\n\n[storage]\npath = "/a"\n',
    ],
)
def test_storage_path_beside_store_path_is_refused(baseline: Path, tmp_path: Path, text: str) -> None:
    problem = refusal(baseline, text, tmp_path)
    assert "[storage] path and [store] path are both set" in problem
    assert "old name" in problem and "keep [store] path only" in problem


def test_storage_path_beside_store_uri_is_refused(baseline: Path, tmp_path: Path) -> None:
    problem = refusal(baseline, '[storage]\npath = "/a"\n\n[store]\nuri = "s3://team-wiki"\n', tmp_path)
    assert "[storage] path and [store] uri are both set" in problem and "keep one" in problem


# -- what is refused ------------------------------------------------------------------------------------
def test_a_path_and_a_uri_together_are_refused(baseline: Path, tmp_path: Path) -> None:
    problem = refusal(baseline, '[store]\npath = "/a"\nuri = "s3://team-wiki"\n', tmp_path)
    assert "[store] path and [store] uri are both set" in problem
    assert "local directory (path) or an object store (uri); keep one" in problem


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            '[store]\nuri = "gs://team-wiki/x"\n',
            ["[store] uri 'gs://team-wiki/x'", "scheme 'gs://'", "accepted schemes are s3://", '"s3://'],
        ),
        (
            '[store]\nuri = "team-wiki/x"\n',
            ["[store] uri", "not an object-store URI", "s3://", "[store] path"],
        ),
        ('[store]\nuri = "/srv/index"\n', ["[store] uri", "not an object-store URI", "use [store] path"]),
        ('[store]\nuri = "s3://"\n', ["[store] uri", "bucket '' is missing"]),
        ('[store]\nuri = "s3:///prefix"\n', ["[store] uri", "bucket '' is missing"]),
        ('[store]\nuri = "s3://Team_Wiki/x"\n', ["[store] uri", "'Team_Wiki'", "lowercase letters, digits"]),
        ('[store]\nuri = "s3://ab/x"\n', ["[store] uri", "'ab' has 2 characters", "3 to 63"]),
        (f'[store]\nuri = "s3://{"a" * 64}"\n', ["[store] uri", "has 64 characters"]),
        ('[store]\nuri = "s3://-wiki"\n', ["[store] uri", "starts or ends with"]),
        ('[store]\nuri = "s3://team..wiki"\n', ["[store] uri", "has '..'"]),
        ('[store]\nuri = "s3://192.168.1.10/x"\n', ["[store] uri", "is an IP address"]),
        ('[store]\nuri = "s3://127.0.0.1:9000/x"\n', ["[store] uri", "has a port", "AWS_ENDPOINT_URL"]),
        ('[store]\nuri = "s3://team-wiki/a//b"\n', ["[store] uri", "'a//b'", "empty, '.' or '..' segment"]),
        ('[store]\nuri = "s3://team-wiki/a/../b"\n', ["[store] uri", "'..'"]),
        ('[store]\nuri = "s3://team-wiki/x?region=eu"\n', ["[store] uri", "query", "AWS_REGION"]),
        ("[store]\nuri = 3\n", ["[store] uri", "must be a string"]),
        ('[store]\nmode = "ro"\n', ["[store] mode", '"read-write" or "read-only"', "'ro'"]),
        ("[store]\nmode = true\n", ["[store] mode", "must be a string"]),
        ("[store]\npoll_interval_secs = 0.1\n", ["[store] poll_interval_secs", "from 0.2 to 3600", "0.1"]),
        ("[store]\npoll_interval_secs = 7200\n", ["[store] poll_interval_secs", "from 0.2 to 3600", "7200"]),
        ('[store]\npoll_interval_secs = "3"\n', ["[store] poll_interval_secs", "number of seconds"]),
        ("[store]\nlease_secs = 1\n", ["[store] lease_secs", "from 5 to 3600", "got 1"]),
        ("[store]\nlease_secs = true\n", ["[store] lease_secs", "from 5 to 3600"]),
        ('[store]\npath = "index"\n', ["[store] path", "relative path 'index'", "must be absolute"]),
        ('[storage]\npath = "index"\n', ["[storage] path", "relative path 'index'", "must be absolute"]),
        (
            '[store]\nuri = "s3://team-wiki"\ncredentials_file = "creds"\n',
            ["[store] credentials_file", "relative path 'creds'", "absolute"],
        ),
        (
            '[store]\npath = "/srv/index"\ncredentials_file = "/etc/creds"\n',
            [
                "[store] credentials_file",
                "object store only",
                "local directory [store] path",
                "[store] uri =",
            ],
        ),
        (
            '[storage]\npath = "/srv/index"\n[store]\ncredentials_file = "/etc/creds"\n',
            ["[store] credentials_file", "local directory [storage] path"],
        ),
        (
            '[store]\ncredentials_file = "/etc/creds"\nprofile = "team"\n',
            ["[store] credentials_file", "local default directory", "remove credentials_file and profile"],
        ),
        (
            '[store]\nuri = "s3://team-wiki"\nprofile = "team"\n',
            ["[store] profile", "credentials_file, which is not set", "remove profile"],
        ),
        (
            '[store]\nuri = "s3://team-wiki"\ncredentials_file = "/c"\nprofile = ""\n',
            ["[store] profile", "name of a section"],
        ),
        ('[store]\nurl = "s3://team-wiki"\n', ["[store] url", "did you mean 'uri'"]),
    ],
)
def test_a_bad_store_setting_names_the_key_and_the_fix(
    baseline: Path, tmp_path: Path, text: str, fragments: list[str]
) -> None:
    problem = refusal(baseline, text, tmp_path)
    for fragment in fragments:
        assert fragment in problem, problem


def test_credentials_in_the_uri_are_refused_without_being_echoed(baseline: Path, tmp_path: Path) -> None:
    secret = "wJalrXUtnFEMI-K7MDENG"
    problem = refusal(baseline, f'[store]\nuri = "s3://AKIAEXAMPLE:{secret}@team-wiki/x"\n', tmp_path)
    assert "[store] uri holds credentials" in problem and "secrets never go in the config" in problem
    assert "credentials_file" in problem and all(name in problem for name in ENV_NAMES)
    assert secret not in problem and "AKIAEXAMPLE" not in problem


@pytest.mark.parametrize(
    "key",
    [
        "access_key",
        "secret",
        "secret_access_key",
        "aws_access_key_id",
        "aws_secret_access_key",
        "session_token",
        "aws_session_token",
        "token",
        "password",
    ],
)
def test_a_secret_in_the_store_table_is_refused_naming_where_secrets_go(
    baseline: Path, tmp_path: Path, key: str
) -> None:
    value = "do-not-echo-4f9a"
    problem = refusal(baseline, f'[store]\nuri = "s3://team-wiki"\n{key} = "{value}"\n', tmp_path)
    assert f"[store] {key} looks like a secret" in problem
    assert "secrets never go in the config" in problem
    assert all(name in problem for name in ENV_NAMES) and "[store] credentials_file" in problem
    assert value not in problem


def test_a_secret_in_the_old_storage_table_is_refused_too(baseline: Path, tmp_path: Path) -> None:
    problem = refusal(baseline, '[storage]\naws_secret_access_key = "x"\n', tmp_path)
    assert "[storage] aws_secret_access_key looks like a secret" in problem


@pytest.mark.parametrize(
    "table", ['[store]\nmode = "read-only"\n', '[store]\nuri = "s3://team-wiki"\n', '[storage]\npath = "x"\n']
)
def test_a_repository_layer_may_not_choose_the_store(baseline: Path, tmp_path: Path, table: str) -> None:
    repo = tmp_path / "repo"
    layer = write(repo / ".hallouminate" / "config.toml", '[[repository]]\nname = "r"\npath = "."\n' + table)
    (problem,) = validate_file(layer)
    with pytest.raises(ConfigError) as raised:
        resolve(repo)
    assert raised.value.message == problem
    name = table.split("]")[0] + "]"
    assert problem.startswith(f"{layer}: {name} is a daemon-wide setting"), problem
    assert "only be set in the baseline config" in problem


def test_the_template_offers_the_store_table(tmp_path: Path) -> None:
    template = baseline_template()
    assert "#[store]\n#path = " in template and "#[storage]" not in template
    for key in ("uri", "credentials_file", "profile", "mode", "poll_interval_secs", "lease_secs"):
        assert f"{key} = " in template, key
