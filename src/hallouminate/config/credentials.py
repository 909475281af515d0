"""An object store's credentials, region and endpoint: the environment, then ``[store] credentials_file``.

The config names where the secrets are, never the secrets. As AWS tools do, the environment overrides the
file: the key pair (``AWS_ACCESS_KEY_ID`` with ``AWS_SECRET_ACCESS_KEY``, and ``AWS_SESSION_TOKEN`` beside
them) is taken from the environment as a whole when both are set there, else from the file's profile as
a whole (a key id from one and a secret from the other would be a pair nobody issued); the region
(``AWS_REGION``, then ``AWS_DEFAULT_REGION``) and the endpoint (``AWS_ENDPOINT_URL``) each from the
environment when set, else from the file. What neither gives stays None (the object-store client's own
defaults apply). No secret is ever echoed in an error.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from hallouminate.config.types import Settings
from hallouminate.errors import ConfigError

# The keys read from a profile of the credentials file (``~/.aws/credentials`` and ``~/.aws/config`` alike).
FILE_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "region", "endpoint_url")


@dataclass(frozen=True)
class StoreCredentials:
    """What an object-store client needs beside the URI; a secret is never in the ``repr``."""

    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    endpoint_url: str | None = None
    # Where each value came from, for messages: "access_key_id" -> "the environment" or "FILE [profile]".
    sources: dict[str, str] = field(default_factory=dict)


def store_credentials(settings: Settings, environ: Mapping[str, str] | None = None) -> StoreCredentials:
    """The credentials, region and endpoint of ``settings.store_uri`` (``environ``: ``os.environ``).

    Raises ``ConfigError`` naming ``[store] credentials_file`` for a file that cannot be read or parsed,
    a missing profile, a key pair given by halves (in the file or in the environment) and an endpoint
    that is not an http(s) URL.
    """
    env = {k: v for k, v in (os.environ if environ is None else environ).items() if v.strip()}
    profile: dict[str, str] = {}
    where = "the environment"
    if settings.store_credentials_file is not None:
        profile = _read_profile(settings.store_credentials_file, settings.store_profile)
        where = f"{settings.store_credentials_file} [{settings.store_profile}]"
    values: dict[str, str] = {}
    sources: dict[str, str] = {}

    def take(name: str, value: str | None, source: str) -> None:
        if value is not None and value.strip():
            values[name] = value.strip()
            sources[name] = source

    env_pair = [k for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if k in env]
    if len(env_pair) == 1:
        missing = ({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} - set(env_pair)).pop()
        raise ConfigError(
            f"the environment sets {env_pair[0]} without {missing}: set both (or neither, to take the key "
            "pair from [store] credentials_file)",
            {"key": "[store] credentials_file", "variables": [env_pair[0], missing]},
        )
    if env_pair:
        take("access_key_id", env["AWS_ACCESS_KEY_ID"], "the environment")
        take("secret_access_key", env["AWS_SECRET_ACCESS_KEY"], "the environment")
        take("session_token", env.get("AWS_SESSION_TOKEN"), "the environment")
    else:
        file_pair = [k for k in ("aws_access_key_id", "aws_secret_access_key") if k in profile]
        if len(file_pair) == 1:
            raise ConfigError(
                f"{where} of [store] credentials_file has {file_pair[0]} without its other half: give "
                "aws_access_key_id and aws_secret_access_key together",
                {"file": str(settings.store_credentials_file), "key": "[store] credentials_file"},
            )
        take("access_key_id", profile.get("aws_access_key_id"), where)
        take("secret_access_key", profile.get("aws_secret_access_key"), where)
        take("session_token", profile.get("aws_session_token"), where)
    for name, variables, key in (
        ("region", ("AWS_REGION", "AWS_DEFAULT_REGION"), "region"),
        ("endpoint_url", ("AWS_ENDPOINT_URL",), "endpoint_url"),
    ):
        from_env = next((env[v] for v in variables if v in env), None)
        take(name, from_env or profile.get(key), "the environment" if from_env else where)
    if "endpoint_url" in values:
        _check_endpoint(values["endpoint_url"], sources["endpoint_url"])
    return StoreCredentials(
        access_key_id=values.get("access_key_id"),
        secret_access_key=values.get("secret_access_key"),
        session_token=values.get("session_token"),
        region=values.get("region"),
        endpoint_url=values.get("endpoint_url"),
        sources=sources,
    )


def _read_profile(file: Path, profile: str) -> dict[str, str]:
    """The profile's keys (``FILE_KEYS``) of an AWS-style INI file: the section ``[profile]``, or
    ``[profile NAME]`` as ``~/.aws/config`` spells every section but the default."""
    data = {"file": str(file), "key": "[store] credentials_file"}
    parser = configparser.ConfigParser(interpolation=None, default_section="\0no defaults")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"[store] credentials_file {str(file)!r} cannot be read: {reason}; fix the file or the path", data
        ) from None
    try:
        parser.read_string(text, source=str(file))
    except configparser.Error as exc:
        # The parser's message may quote a line, which may hold a secret: say where, not what.
        line = getattr(exc, "lineno", None)
        at = f" (line {line})" if isinstance(line, int) else ""
        raise ConfigError(
            f"[store] credentials_file {str(file)!r} is not an INI file{at}: write [{profile}] then "
            "aws_access_key_id = ..., aws_secret_access_key = ..., region = ... lines",
            data,
        ) from None
    for section in (profile, f"profile {profile}"):
        if parser.has_section(section):
            return {k: v for k, v in parser.items(section) if k in FILE_KEYS}
    have = ", ".join(parser.sections()) or "none"
    raise ConfigError(
        f"[store] credentials_file {str(file)!r} has no section [{profile}] (the [store] profile; sections: "
        f"{have}): set [store] profile to one of them, or add the section",
        {**data, "profile": profile},
    )


def _check_endpoint(url: str, source: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        parts = None
    bad = parts is None or parts.scheme not in ("http", "https") or not parts.hostname
    if bad or (parts is not None and (parts.username is not None or parts.password is not None)):
        name = "AWS_ENDPOINT_URL" if source == "the environment" else "endpoint_url"
        raise ConfigError(
            f"the object store's endpoint ({name}, from {source}) is not an http(s) URL with a host and no "
            'user:password: write e.g. "http://127.0.0.1:8333" or "https://s3.eu-central-1.amazonaws.com"',
            {"key": "[store] credentials_file", "source": source},
        )
