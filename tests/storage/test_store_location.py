"""Where the store lives (``storage/location.py``): a local directory or an ``s3://`` prefix, with its
endpoint, region and keys from the environment over a credentials file, never shown in messages; and a
read-only store of a local directory, which follows its writer as one of a bucket does."""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path

import lancedb
import pytest

from hallouminate.errors import ConfigError, StoreFault, StoreUnreachable
from hallouminate.storage.faults import explain, store_problem
from hallouminate.storage.location import READ_OPTIONS, StoreLocation
from hallouminate.storage.schema import TABLE
from hallouminate.storage.store import ReadOnlyStore, Store, StoreReadOnly
from support.store_rows import DIM, chunk_rows

SECRET = "s3cr3t-never-shown"
ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAENVIRONMENT",
    "AWS_SECRET_ACCESS_KEY": SECRET,
    "AWS_SESSION_TOKEN": "token-from-env",
    "AWS_DEFAULT_REGION": "eu-west-3",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
}


def credentials(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "credentials"
    path.write_text(text)
    return path


def test_without_a_uri_the_store_is_the_local_directory(tmp_path: Path) -> None:
    for uri in (None, "", "  "):
        location = StoreLocation.from_parts(tmp_path / "store", uri, environ=ENV)
        assert location.is_local and location.directory == tmp_path / "store"
        assert location.connect_uri() == str(tmp_path / "store") and location.storage_options() == {}
    assert StoreLocation.from_parts(tmp_path, f"file://{tmp_path}/x", environ={}).directory == tmp_path / "x"
    assert StoreLocation.from_parts(tmp_path, str(tmp_path / "y"), environ={}).directory == tmp_path / "y"
    with pytest.raises(ConfigError, match="relative directory"):
        StoreLocation.from_parts(tmp_path, "store", environ={})


def test_an_s3_uri_takes_endpoint_region_and_keys_from_the_environment(tmp_path: Path) -> None:
    location = StoreLocation.from_parts(tmp_path, "s3://team-bucket/wiki/index/", environ=ENV)
    assert not location.is_local and location.uri == "s3://team-bucket/wiki/index"
    assert (location.bucket, location.prefix) == ("team-bucket", "wiki/index")
    options = location.storage_options()
    assert options["aws_endpoint"] == "http://127.0.0.1:9000" and options["allow_http"] == "true"
    assert options["aws_region"] == "eu-west-3"
    assert (options["aws_access_key_id"], options["aws_secret_access_key"]) == ("AKIAENVIRONMENT", SECRET)
    assert options["aws_session_token"] == "token-from-env"
    # A reader's requests fail fast; the writer's keep the object store's retries.
    assert READ_OPTIONS.items() <= location.storage_options(reads=True).items()
    assert "client_max_retries" not in options
    # What messages and status show: where, never a key.
    shown = location.describe()
    assert shown == (
        "s3://team-bucket/wiki/index (endpoint http://127.0.0.1:9000, region eu-west-3, keys from the "
        "environment)"
    )
    assert SECRET not in repr(location) and "AKIA" not in repr(location) and "token" not in repr(location)
    # AWS_REGION wins over AWS_DEFAULT_REGION, an https endpoint needs no allow_http.
    other = StoreLocation.from_parts(
        tmp_path,
        "s3://b",
        environ={**ENV, "AWS_REGION": "us-east-2", "AWS_ENDPOINT_URL": "https://s3.example.com"},
    )
    assert other.region == "us-east-2" and "allow_http" not in other.storage_options()
    assert other.prefix == "" and other.uri == "s3://b"


def test_a_credentials_file_gives_the_profiles_keys_and_the_environment_overrides_them(
    tmp_path: Path,
) -> None:
    path = credentials(
        tmp_path,
        "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n\n"
        "[profile team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = team-secret\n"
        "region = ap-south-1\nendpoint_url = https://minio.team.example\n",
    )
    team = StoreLocation.from_parts(tmp_path, "s3://b/p", path, "team", environ={})
    assert (team.access_key_id, team.secret_access_key, team.session_token) == (
        "AKIATEAM",
        "team-secret",
        None,
    )
    assert (team.region, team.endpoint) == ("ap-south-1", "https://minio.team.example")
    assert team.describe().endswith(f"keys from {path} [team])") and "team-secret" not in team.describe()
    assert StoreLocation.from_parts(tmp_path, "s3://b/p", path, environ={}).access_key_id == "AKIADEFAULT"

    # The environment's keys win as a pair, its region and endpoint one by one.
    mixed = StoreLocation.from_parts(
        tmp_path,
        "s3://b/p",
        path,
        "team",
        environ={"AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "e"},
    )
    assert (mixed.access_key_id, mixed.secret_access_key, mixed.region) == ("AKIAENV", "e", "ap-south-1")
    assert mixed.credentials_from == "the environment"


def test_unusable_uris_and_credentials_are_configuration_errors_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="s3://bucket/prefix"):
        StoreLocation.from_parts(tmp_path, "gs://bucket/prefix", environ={})
    with pytest.raises(ConfigError, match="cannot be read"):
        StoreLocation.from_parts(tmp_path, "s3://b", tmp_path / "missing", environ={})
    path = credentials(tmp_path, "[default]\naws_access_key_id = AKIA\n")
    with pytest.raises(ConfigError, match=r"no \[ci\] section .* default"):
        StoreLocation.from_parts(tmp_path, "s3://b", path, "ci", environ={})
    with pytest.raises(ConfigError, match="no secret access key"):
        StoreLocation.from_parts(tmp_path, "s3://b", path, environ={})
    # No keys anywhere: the object store's own credential chain (an instance role, web identity).
    chained = StoreLocation.from_parts(tmp_path, "s3://b", environ={})
    assert chained.access_key_id is None and "aws_access_key_id" not in chained.storage_options()
    assert chained.describe() == "s3://b (the default endpoint, the default credentials)"


def test_an_object_stores_failures_are_explained_without_looking_at_the_local_disk(tmp_path: Path) -> None:
    location = StoreLocation.from_parts(tmp_path, "s3://b/p", environ=ENV)
    assert store_problem(location) is None
    sent = RuntimeError(
        "lance error: LanceError(IO): Generic S3 error: Error performing GET http://127.0.0.1:9000/b/p/x "
        "in 10.0s - HTTP error: error sending request, /rustc/abc/library/core/src/result.rs:1896:29"
    )
    unreachable = explain(location, sent)
    assert isinstance(unreachable, StoreUnreachable) and unreachable.retryable
    assert "/rustc/" not in unreachable.message and SECRET not in unreachable.message
    denied = explain(
        location, ValueError("Invalid input ... inner: Status { status: 403, body: AccessDenied")
    )
    assert isinstance(denied, StoreFault) and not denied.retryable
    assert denied.data["problem"] == "store-access-denied" and "AWS_ACCESS_KEY_ID" in denied.message
    assert explain(location, ValueError("a schema problem")) is None


def test_a_read_only_store_of_a_local_directory_refuses_writes_and_follows_its_writer(tmp_path: Path) -> None:
    with pytest.raises(StoreFault, match="writer has not indexed anything"):
        ReadOnlyStore(tmp_path / "db", DIM)
    assert not (tmp_path / "db").exists()  # nothing made

    writer = Store(tmp_path / "db", DIM)
    writer.replace_files("c", {"a.md": chunk_rows("a.md", ["alpha"])})
    follower = ReadOnlyStore(tmp_path / "db", DIM)
    with pytest.raises(StoreReadOnly):
        follower.replace_files("c", {"b.md": chunk_rows("b.md", ["bravo"])})
    writer.replace_files("c", {"b.md": chunk_rows("b.md", ["bravo"])})
    assert follower.count_rows("c") == 1 and follower.follow() and follower.count_rows("c") == 2
    assert follower.lexical.has_file("c", "b.md") and follower.version == writer.latest_version()

    # Its version pruned under it (compacted, every older version removed): it follows and reads again.
    writer.replace_files("c", {"d.md": chunk_rows("d.md", ["delta"])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "removes every version except the latest"
        lancedb.connect(str(tmp_path / "db")).open_table(TABLE).optimize(cleanup_older_than=timedelta(0))
    assert [row["text"] for row in follower.file_rows("c", "b.md")] == ["bravo"]
    assert follower.version == writer.latest_version() and follower.lexical.has_file("c", "d.md")
