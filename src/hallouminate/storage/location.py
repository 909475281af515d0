"""Where the index store lives: a local directory, or a prefix of an S3-compatible bucket (ADR 0063).

``StoreLocation`` holds what is needed to reach it: the URI, and for a bucket its endpoint, region and
credentials, as LanceDB's ``storage_options`` (the Rust object_store's S3 keys) and as an obstore store on
the same prefix (the writer's lease, ``lease.py``). Nothing here touches the network: the clients are made
when asked for.

Credentials come from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL``), which override an AWS-style INI credentials file the configuration names (keys
``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``region``, ``endpoint_url`` in the
profile's section, ``[name]`` or ``[profile name]``). Never in the configuration itself. With no keys from
either, LanceDB's and obstore's own credential chains apply (instance roles, web identity, ...).

``describe()`` is what messages and ``status`` show: no key, no secret.
"""

from __future__ import annotations

import configparser
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hallouminate.errors import ConfigError

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
    with its endpoint, region and credentials. Build one with ``local`` or ``from_parts``."""

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

    @classmethod
    def from_parts(
        cls,
        store_dir: Path,
        uri: str | None,
        credentials_file: Path | None = None,
        profile: str = "default",
        environ: Mapping[str, str] | None = None,
    ) -> StoreLocation:
        """The location the settings name: ``uri`` when set (``s3://bucket/prefix``; a ``file://`` URI or
        a plain path names a local directory), else the local ``store_dir``. ``credentials_file`` and
        ``profile``: an AWS-style INI file and its section; ``environ`` (default: none) overrides it."""
        if uri is None or not uri.strip():
            return cls.local(store_dir)
        uri = uri.strip()
        parts = urlsplit(uri)
        if parts.scheme in ("", "file"):
            path = Path(parts.path if parts.scheme else uri).expanduser()
            if not path.is_absolute():
                raise ConfigError(
                    f"[store] uri {uri!r} names a relative directory: give an absolute path, or an "
                    "object store URI (s3://bucket/prefix)",
                    {"key": "store.uri"},
                )
            return cls.local(path)
        if parts.scheme not in SCHEMES or not parts.netloc or parts.query or parts.fragment:
            raise ConfigError(
                f"[store] uri {uri!r} is not an object store URI this release opens: it takes "
                "s3://bucket/prefix (any S3-compatible store; its endpoint from AWS_ENDPOINT_URL or the "
                "credentials file's endpoint_url), a file:// URI or an absolute path",
                {"key": "store.uri"},
            )
        env = dict(environ or {})
        found = _profile(credentials_file, profile) if credentials_file is not None else {}
        prefix = parts.path.strip("/")
        location = cls(
            uri=f"s3://{parts.netloc}/{prefix}" if prefix else f"s3://{parts.netloc}",
            endpoint=_first(
                env.get("AWS_ENDPOINT_URL_S3"), env.get("AWS_ENDPOINT_URL"), found.get("endpoint_url")
            ),
            region=_first(env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION"), found.get("region")),
        )
        # The keys go together (an id from one place and a secret from another would never sign).
        if env.get("AWS_ACCESS_KEY_ID"):
            keys = (
                env.get("AWS_ACCESS_KEY_ID"),
                env.get("AWS_SECRET_ACCESS_KEY"),
                env.get("AWS_SESSION_TOKEN"),
            )
            source: str | None = "the environment"
        elif found.get("aws_access_key_id"):
            keys = (
                found.get("aws_access_key_id"),
                found.get("aws_secret_access_key"),
                found.get("aws_session_token"),
            )
            source = f"{credentials_file} [{profile}]"
        else:
            keys, source = (None, None, None), None
        if keys[0] and not keys[1]:
            raise ConfigError(
                f"the object store credentials from {source} have an access key id and no secret access key",
                {"key": "store.credentials_file", "file": str(credentials_file or "")},
            )
        return dataclasses.replace(
            location,
            access_key_id=keys[0] or None,
            secret_access_key=keys[1] or None,
            session_token=keys[2] or None,
            credentials_from=source,
        )

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


def _first(*values: str | None) -> str | None:
    return next((value for value in values if value), None)


def _profile(path: Path, profile: str) -> dict[str, str]:
    """The ``profile`` section of an AWS-style INI credentials file (``[name]`` or ``[profile name]``)."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with path.open(encoding="utf-8") as handle:
            parser.read_file(handle)
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise ConfigError(
            f"the object store credentials file {path} cannot be read: {exc}",
            {"key": "store.credentials_file", "file": str(path)},
        ) from exc
    for section in (profile, f"profile {profile}"):
        if parser.has_section(section):
            return {key.lower(): value.strip() for key, value in parser.items(section)}
    raise ConfigError(
        f"the object store credentials file {path} has no [{profile}] section (set the profile to one of "
        f"{', '.join(parser.sections()) or 'its sections (it has none)'})",
        {"key": "store.profile", "file": str(path)},
    )
