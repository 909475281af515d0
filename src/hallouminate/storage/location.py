"""Where the index store lives: a local directory, or a prefix of an S3-compatible bucket (ADR 0063).

``StoreLocation`` holds what is needed to reach it: the URI, and for a bucket its endpoint, region and
credentials, as LanceDB's ``storage_options`` (the Rust object_store's S3 keys) and as an obstore store on
the same prefix (the writer's lease, ``lease.py``). Nothing here touches the network: the clients are made
when asked for.

The daemon builds it from its settings (``daemon/runtime.py`` ``store_location``): the keys, region and
endpoint as ``config/credentials.py`` resolves them (the environment over ``[store] credentials_file``;
never the configuration itself), the URI as the configuration checked it. With no keys, LanceDB's and
obstore's own credential chains apply (instance roles, web identity, ...).

``describe()`` is what messages and ``status`` show: no key, no secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from obstore.store import S3Store

# Readers of a bucket fail fast rather than wait out the object store's default retries (ADR 0063: a
# refused connection took ~10 s with them; a frozen server still hung at 60 s). A search's failure is
# retryable and its client retries, so a reader's requests are not retried here: each gives up after
# 5 s, and a read of a frozen bucket (LanceDB sends up to ~4 requests in turn) ends within ~20 s, the
# searches' deadline (``store.READ_DEADLINE_SECS``), which answers first anyway: these only bound the work
# left running behind it. (One retry each made it 40 s at a 10 s timeout, and once 164 s at 5 s.)
READ_OPTIONS = {
    "connect_timeout": "2s",
    "timeout": "5s",
    "client_max_retries": "0",
    "client_retry_timeout": "10",
    "download_retry_count": "0",
}
# The writer keeps the object store's retries (a commit that fails is redone by the next index run, but
# a 5xx while a gateway restarts is worth waiting out); a connection that never opens still fails fast.
WRITE_OPTIONS = {"connect_timeout": "5s"}
# The lease's requests: a few small objects; an answer that takes this long will not come.
LEASE_TIMEOUT = timedelta(seconds=10)
SCHEMES = ("s3",)


@dataclass(frozen=True)
class StoreLocation:
    """A local store directory (``directory``) or an object store prefix (``uri`` = ``s3://bucket/prefix``)
    with its endpoint, region and credentials."""

    directory: Path | None = None
    uri: str | None = None
    endpoint: str | None = None
    region: str | None = None
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    # Where the keys came from, for messages: "the environment", "<file> [profile]" or None (the chain).
    credentials_from: str | None = None

    def __post_init__(self) -> None:
        if (self.directory is None) == (self.uri is None):
            raise ValueError("a store location is a directory or an object URI, exactly one")

    # -- building ------------------------------------------------------------------------------------
    @classmethod
    def local(cls, directory: Path) -> StoreLocation:
        return cls(directory=directory)

    # -- what it is ----------------------------------------------------------------------------------
    @property
    def is_local(self) -> bool:
        return self.directory is not None

    @property
    def bucket(self) -> str:
        return urlsplit(self._object_uri()).netloc

    @property
    def prefix(self) -> str:
        """The key prefix under the bucket ("" for the bucket's root), without a trailing slash."""
        return urlsplit(self._object_uri()).path.strip("/")

    def connect_uri(self) -> str:
        """What ``lancedb.connect`` takes: the directory, or the object URI."""
        return str(self.directory) if self.directory is not None else self._object_uri()

    def describe(self) -> str:
        """For messages and status: where the store is and how it is reached; never a key or a secret."""
        if self.directory is not None:
            return str(self.directory)
        where = [f"endpoint {self.endpoint}" if self.endpoint else "the default endpoint"]
        if self.region:
            where.append(f"region {self.region}")
        where.append(
            f"keys from {self.credentials_from}" if self.credentials_from else "the default credentials"
        )
        return f"{self.uri} ({', '.join(where)})"

    def __str__(self) -> str:
        return self.describe()

    # -- clients -------------------------------------------------------------------------------------
    def storage_options(self, *, reads: bool = False) -> dict[str, str]:
        """LanceDB's ``storage_options`` for this location (empty for a directory). ``reads``: for a
        reader (low retries and timeouts, so an unreachable bucket fails fast), else for the writer."""
        if self.directory is not None:
            return {}
        options = dict(READ_OPTIONS if reads else WRITE_OPTIONS)
        if self.endpoint:
            options["aws_endpoint"] = self.endpoint
            if self.endpoint.startswith("http://"):
                options["allow_http"] = "true"
        if self.region:
            options["aws_region"] = self.region
        if self.access_key_id and self.secret_access_key:
            options["aws_access_key_id"] = self.access_key_id
            options["aws_secret_access_key"] = self.secret_access_key
            if self.session_token:
                options["aws_session_token"] = self.session_token
        return options

    def object_store(self, *, timeout: timedelta = LEASE_TIMEOUT, max_retries: int = 1) -> S3Store:
        """An obstore store on this location's prefix (the same Rust object_store LanceDB uses): keys are
        relative to the prefix."""
        from obstore.store import S3Store

        config: dict[str, Any] = {}
        if self.endpoint:
            config["endpoint"] = self.endpoint
        if self.region:
            config["region"] = self.region
        if self.access_key_id and self.secret_access_key:
            config["access_key_id"] = self.access_key_id
            config["secret_access_key"] = self.secret_access_key
            if self.session_token:
                config["session_token"] = self.session_token
        return S3Store(
            self.bucket,
            prefix=self.prefix or None,
            config=config,  # type: ignore[arg-type]  # S3Config: a TypedDict of these keys
            client_options={
                "allow_http": bool(self.endpoint and self.endpoint.startswith("http://")),
                "timeout": timeout,
                "connect_timeout": min(timeout, timedelta(seconds=5)),
            },
            retry_config={"max_retries": max_retries, "retry_timeout": timeout * (max_retries + 1)},
        )

    def _object_uri(self) -> str:
        if self.uri is None:
            raise ValueError(f"the store at {self.directory} is a local directory, not an object store")
        return self.uri
