"""``[http]``: every key checked with a message naming the bad value and the expected form; a non-loopback
host needs a token; a repository layer may not set it; ``config show`` reports it; ``config.edit`` changes
it in place, keeping the rest of the file, and never writes a config the daemon would refuse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hallouminate.config import resolve, validate_file
from hallouminate.config.layer import read_layer
from hallouminate.config.merge import merge
from hallouminate.errors import ConfigError
from support.files import write
from support.sandbox import config_only_env


def _http(tmp_path: Path, body: str) -> list[str]:
    return validate_file(write(tmp_path / "base.toml", f"[http]\n{body}\n"))


def test_allowed_origins_are_parsed_and_lowercased(tmp_path: Path) -> None:
    file = write(
        tmp_path / "base.toml",
        '[http]\nallowed_origins = ["http://localhost:3000", "HTTPS://Wiki.Example.com", "http://[::1]:8080"]\n',
    )
    settings = merge([read_layer(file, None)], None).settings.http
    assert settings.allowed_origins == (
        "http://localhost:3000",
        "https://wiki.example.com",
        "http://[::1]:8080",
    )


@pytest.mark.parametrize(
    ("origin", "problem"),
    [
        ("localhost:3000", "does not start with http:// or https://"),
        ("ftp://host", "does not start with http:// or https://"),
        ("http://", "names no host"),
        ("http://host/", "has a path"),
        ("http://host/app", "has a path"),
        ("http://host?x=1", "has a path, query or fragment"),
        ("http://user@host", "user name or password"),
        ("http://host:99999", "does not parse"),
        ("http://host:0", "outside 1 to 65535"),
    ],
)
def test_a_bad_origin_is_named_with_the_expected_form(tmp_path: Path, origin: str, problem: str) -> None:
    (message,) = _http(tmp_path, f'allowed_origins = ["http://ok.example", "{origin}"]')
    assert "[http] allowed_origins[1]" in message and repr(origin) in message, message
    assert problem in message and "scheme://host[:port]" in message, message


@pytest.mark.parametrize("port", ["0", "65536", "-1", "true", '"8080"', "80.5"])
def test_a_port_outside_1_to_65535_is_refused(tmp_path: Path, port: str) -> None:
    (message,) = _http(tmp_path, f"port = {port}")
    assert "[http] port must be a port number from 1 to 65535" in message, message


@pytest.mark.parametrize("port", [1, 8080, 65535])
def test_a_port_inside_the_range_is_taken(tmp_path: Path, port: int) -> None:
    assert _http(tmp_path, f"port = {port}") == []


@pytest.mark.parametrize("host", ["example.com", "127.0.0.1:8080", "", "[::1]"])
def test_a_host_that_is_not_an_address_is_refused(tmp_path: Path, host: str) -> None:
    (message,) = _http(tmp_path, f'host = "{host}"')
    assert "[http] host" in message and "is not an IP address" in message and "localhost" in message, message


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_need_no_token(tmp_path: Path, host: str) -> None:
    assert _http(tmp_path, f'host = "{host}"') == []


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_a_non_loopback_host_needs_a_token_file(tmp_path: Path, host: str) -> None:
    (message,) = _http(tmp_path, f'host = "{host}"')
    assert f"[http] host = {host!r}" in message and "[http] token_file is not set" in message, message
    assert "set token_file" in message and 'host = "127.0.0.1"' in message, message
    assert _http(tmp_path, f'host = "{host}"\ntoken_file = "{tmp_path / "token"}"') == []


def test_a_repository_layer_may_not_set_http(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    layer = write(repo / ".hallouminate" / "config.toml", "[http]\nenabled = true\nport = 8080\n")
    (message,) = validate_file(layer)
    assert str(layer) in message and "[http]" in message, message
    assert "must not be able to open a port" in message and "move it to the baseline config" in message
    with pytest.raises(ConfigError, match="open a port"):
        resolve(repo)


def test_config_show_reports_the_http_settings_and_their_file(tmp_path: Path) -> None:
    env = config_only_env(tmp_path)
    baseline = write(
        Path(env["XDG_CONFIG_HOME"]) / "hallouminate" / "config.toml",
        '[http]\nenabled = true\nport = 8123\nallowed_origins = ["http://localhost:3000"]\n',
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    shown = subprocess.run(
        [sys.executable, "-m", "hallouminate", "config", "show", "--format", "json"],
        env=env,
        cwd=tmp_path / "home",
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(shown.stdout)
    http = doc["settings"]["http"]
    assert http["enabled"] is True and http["port"] == 8123 and http["host"] == "127.0.0.1"
    assert http["allowed_origins"] == ["http://localhost:3000"]
    assert doc["setting_sources"]["http.port"] == str(baseline)
    assert "http.host" not in doc["setting_sources"]  # a default


def test_edit_keeps_comments_and_other_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hallouminate.config.edit import REMOVE, edit_baseline

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    file = tmp_path / "config" / "hallouminate" / "config.toml"
    assert edit_baseline("http", {"enabled": True}) == file  # created when missing
    assert file.read_text() == "[http]\nenabled = true\n"
    original = '# mine\n[search]\nlimit = 20  # keep this\n\n[http]\n# the port\nport = 8080\nhost = "::1"\n'
    write(file, original)
    edit_baseline("http", {"enabled": True, "port": 9090})
    text = file.read_text()
    assert text.startswith("# mine\n[search]\nlimit = 20  # keep this\n"), text
    assert "# the port\nport = 9090\n" in text and 'host = "::1"' in text and "enabled = true" in text
    edit_baseline("http", {"port": REMOVE})
    assert "port" not in file.read_text().replace("# the port", "")
    assert merge([read_layer(file, None)], None).settings.http.port is None


def test_edit_refuses_to_write_a_config_the_daemon_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hallouminate.config.edit import edit_baseline

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    file = write(tmp_path / "config" / "hallouminate" / "config.toml", '[http]\nhost = "0.0.0.0"\n')
    before = file.read_text()
    with pytest.raises(ConfigError, match="token_file is not set"):
        edit_baseline("http", {"enabled": True})
    assert file.read_text() == before
    write(file, "[http\n")
    with pytest.raises(ConfigError, match="malformed TOML"):
        edit_baseline("http", {"enabled": True})
    assert file.read_text() == "[http\n"
