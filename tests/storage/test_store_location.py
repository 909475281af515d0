"""Where the store lives (``storage/location.py``): a local directory or an ``s3://`` prefix, with its
endpoint, region and keys (resolved by config/credentials.py, tested in tests/config), never shown in
messages; and a read-only store of a local directory, which follows its writer as one of a bucket does."""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path

import lancedb
import pytest

from hallouminate.errors import StoreFault, StoreUnreachable
from hallouminate.storage.faults import explain, store_problem
from hallouminate.storage.location import READ_OPTIONS, StoreLocation
from hallouminate.storage.schema import TABLE
from hallouminate.storage.store import ReadOnlyStore, Store, StoreReadOnly
from support.store_rows import DIM, chunk_rows

SECRET = "s3cr3t-never-shown"


def test_a_location_is_a_directory_or_an_object_uri_and_says_where_without_secrets(tmp_path: Path) -> None:
    local = StoreLocation.local(tmp_path / "store")
    assert local.is_local and local.connect_uri() == str(tmp_path / "store") and local.storage_options() == {}
    bucket = StoreLocation(
        uri="s3://team-bucket/wiki/index",
        endpoint="http://127.0.0.1:9000",
        region="eu-west-3",
        access_key_id="AKIAENVIRONMENT",
        secret_access_key=SECRET,
        session_token="token-from-env",
        credentials_from="the environment",
    )
    assert (bucket.bucket, bucket.prefix) == ("team-bucket", "wiki/index")
    options = bucket.storage_options()
    assert options["aws_endpoint"] == "http://127.0.0.1:9000" and options["allow_http"] == "true"
    assert options["aws_secret_access_key"] == SECRET and options["aws_region"] == "eu-west-3"
    assert bucket.storage_options(reads=True).items() >= READ_OPTIONS.items()
    shown = f"{bucket.describe()} {bucket!r} {bucket}"
    assert SECRET not in shown and "AKIAENVIRONMENT" not in shown and "token-from-env" not in shown
    assert bucket.describe() == (
        "s3://team-bucket/wiki/index (endpoint http://127.0.0.1:9000, region eu-west-3, keys from the environment)"
    )
    with pytest.raises(ValueError):
        StoreLocation()  # neither a directory nor a URI


def test_an_object_stores_failures_are_explained_without_looking_at_the_local_disk(tmp_path: Path) -> None:
    location = StoreLocation(
        uri="s3://b/p", endpoint="http://127.0.0.1:9000", access_key_id="AKIA", secret_access_key=SECRET
    )
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
