"""Read one config file into a validated, typed layer (no merging here).

Every error names the file and the offending key, because a user fixing a config needs both.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from hallouminate.config import defaults
from hallouminate.errors import ConfigError
from hallouminate.protocol import limits

# Tables holding single values, with the type check of each key (a bool is an int).
Scalar = str | int | float | Path | tuple[str, ...]
_T = TypeVar("_T")
_S = TypeVar("_S", str, int, float, Path, tuple[str, ...])
# The placeholder of a [best_practice] path template, replaced by the request's target.
TARGET_PLACEHOLDER = "{target}"


def scalar(scalars: dict[str, Scalar], key: str, default: _S) -> _S:
    """A setting of a layer (or of merged layers), else ``default``: of the default's type, which the
    layer checked when it read the file (``_scalar_specs``)."""
    value = scalars.get(key, default)
    assert isinstance(value, type(default))
    return value


@dataclass(frozen=True)
class RawCorpus:
    name: str
    roots: tuple[Path, ...]
    globs: tuple[str, ...]
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class RawRepository:
    name: str
    path: Path
    wiki: Path
    corpus_paths: tuple[Path, ...]
    corpus_globs: tuple[str, ...]
    corpus_exclude: tuple[str, ...]


@dataclass
class Layer:
    file: Path
    # The repository root for a repo layer (relative paths resolve against it); None for the baseline.
    root: Path | None
    scalars: dict[str, Scalar] = field(default_factory=dict)
    corpora: list[RawCorpus] = field(default_factory=list)
    repositories: list[RawRepository] = field(default_factory=list)
    # A setting the file spells by its old name (RENAMED): current "table.key" -> the "table.key" as written.
    spelled: dict[str, str] = field(default_factory=dict)


MIN_CHUNK_TOKENS = 32
# A cross-encoder directory ([embeddings] reranker): one of the graphs, and the tokenizer files.
RERANKER_MODEL_FILES = ("model.onnx", "onnx/model.onnx")
RERANKER_FILES = ("tokenizer.json", "tokenizer_config.json")

# Tables whose settings are daemon-wide: only the baseline may set them (a repo must not move the store).
# `[discovery]` too: it decides what a request made *above* every repository sees, where no repo layer applies.
BASELINE_ONLY = frozenset({"embeddings", "store", "storage", "daemon", "discovery", "http"})
# Why a repository layer may not set a baseline-only table, when the general reason is not the whole story.
BASELINE_ONLY_WHY = {
    "http": "a checked-out repository must not be able to open a port or expose your corpora over HTTP",
}
# Old key names still accepted (docs/configuration.md): old "table.key" -> the current one. Giving both in
# one file is an error: which one would win is not obvious.
RENAMED = {"indexing.max_file_bytes": "indexing.max_text_file_size", "storage.path": "store.path"}
# The environment variables an object store's credentials, region and endpoint come from (beside [store]
# credentials_file); config/credentials.py reads them.
STORE_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
)
# A [store] (or [storage]) key holding one of these words is a secret put in the config: refused as such,
# not merely as an unknown key, and its value never echoed.
SECRET_WORDS = ("access_key", "secret", "token", "password", "passwd", "api_key")
# [embeddings] keys of the OpenAI-compatible endpoint (provider = "openai-compatible" only).
ENDPOINT_KEYS = tuple(
    f"embeddings.{key}"
    for key in (
        "base_url",
        "dimensions",
        "api_key_env",
        "batch_size",
        "timeout_secs",
        "max_input_tokens",
        "max_retries",
        "send_dimensions",
    )
)


def read_layer(file: Path, root: Path | None) -> Layer:
    """Parse and validate ``file``; ``root`` is the repo root for a repo layer, None for the baseline."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config: {exc.strerror or exc}", {"file": str(file)}) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: config is not valid UTF-8", {"file": str(file)}) from exc
    return layer_from_text(text, file, root)


def layer_from_text(text: str, file: Path, root: Path | None) -> Layer:
    """``read_layer`` of ``text``, as if ``file`` held it (a change checked before it is written)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, where = _position(exc, text)
        raise ConfigError(
            f"{file}: {where}: malformed TOML: {exc}", {"file": str(file), "line": line}
        ) from exc
    return _Parser(file, root).layer(doc)


def check_layer(file: Path, root: Path | None) -> tuple[Layer | None, list[ConfigError]]:
    """Like ``read_layer`` but collecting every problem instead of stopping at the first one.

    The layer is None when the file cannot be read or parsed at all; otherwise it holds what was valid.
    """
    try:
        raw = file.read_bytes()
        doc = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        try:
            read_layer(file, root)
        except ConfigError as exc:
            return None, [exc]
        raise  # pragma: no cover - read_layer fails on exactly these inputs
    parser = _Parser(file, root, collect=True)
    layer = parser.layer(doc)
    return layer, parser.problems


def _position(exc: tomllib.TOMLDecodeError, text: str) -> tuple[int, str]:
    """The line of a TOML error and how to say where it is (``line 3``, ``line 3 (end of file)``).

    Python 3.11's TOMLDecodeError carries the position only in its message, and none at all for an error
    at the end of the document (an unclosed array or string): that is the last line holding anything,
    where the unfinished value is to be closed.
    """
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno, f"line {lineno}"
    match = re.search(r"line (\d+)", str(exc))
    if match:
        return int(match.group(1)), f"line {match.group(1)}"
    last = max(1, len(text.rstrip().split("\n")))
    return last, f"line {last} (end of file)"


class _Parser:
    def __init__(self, file: Path, root: Path | None, *, collect: bool = False) -> None:
        self.file = file
        self.root = root
        # Validation (`config validate`) wants every problem; loading stops at the first.
        self.collect = collect
        self.problems: list[ConfigError] = []

    def report(self, error: ConfigError) -> None:
        if not self.collect:
            raise error
        self.problems.append(error)

    def attempt(self, fn: Callable[..., _T], *args: Any) -> _T | None:
        """``fn(*args)``, or None with the problem recorded when collecting."""
        try:
            return fn(*args)
        except ConfigError as exc:
            self.report(exc)
            return None

    # -- errors --------------------------------------------------------------------------------------
    def fail(self, where: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.file}: {where} {problem}", {"file": str(self.file), "key": where})

    def unknown(self, where: str, key: str, known: list[str]) -> ConfigError:
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(known))})"
        return self.fail(f"{where}{key}" if where else key, f"is not a known key{hint}")

    # -- typed values --------------------------------------------------------------------------------
    def string(self, where: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"must be a string, got {_tname(value)}")
        return value

    def positive_int(self, where: str, value: Any) -> int:
        # bool is an int subclass in Python; `true` is not a count.
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise self.fail(where, f"must be a positive integer, got {value!r}")
        return value

    def bounded_int(self, bound: limits.Range) -> Callable[[str, Any], int]:
        """The check of a setting that is a request parameter's default: the request's own range, so a
        value that validates here is one every request accepts (protocol/limits.py)."""

        def check(where: str, value: Any) -> int:
            if value not in bound:
                raise self.fail(where, f"must be an integer from {bound.span}, got {value!r}")
            return int(value)

        return check

    def positive_number(self, where: str, value: Any) -> float:
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise self.fail(where, f"must be a positive number, got {value!r}")
        return float(value)

    def chunk_tokens(self, where: str, value: Any) -> int:
        count = self.positive_int(where, value)
        # Below this a breadcrumb alone could fill the chunk.
        if count < MIN_CHUNK_TOKENS:
            raise self.fail(where, f"must be at least {MIN_CHUNK_TOKENS}, got {count}")
        return count

    def path(self, where: str, value: Any, base: Path | None = None) -> Path:
        text = self.string(where, value)
        if not text.strip():
            raise self.fail(where, "must not be empty")
        if "\0" in text:
            raise self.fail(where, "must not contain a NUL character")
        expanded = os.path.expanduser(text)
        if not os.path.isabs(expanded):
            anchor = base or self.root
            if anchor is None:
                raise self.fail(
                    where, f"is the relative path {text!r}: paths in the baseline config must be absolute"
                )
            expanded = os.path.join(anchor, expanded)
        # Canonical (symlinks resolved) so that roots compare equal to the canonical request cwd.
        return Path(os.path.realpath(expanded))

    def string_list(self, where: str, value: Any, *, allow_empty: bool = True) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(where, f"must be a list of strings, got {_tname(value)}")
        if not value and not allow_empty:
            raise self.fail(where, "must not be empty")
        return tuple(value)

    def path_list(self, where: str, value: Any, base: Path | None = None) -> tuple[Path, ...]:
        items = self.string_list(where, value, allow_empty=False)
        return tuple(self.path(f"{where}[{i}]", v, base) for i, v in enumerate(items))

    def name(self, where: str, value: Any, *, allow_colon: bool, corpus: str = "{}") -> str:
        """A corpus or repository name; ``corpus`` makes the longest corpus name it names (a repository
        derives repo:NAME:wiki and repo:NAME:corpus), which a request must be able to pass."""
        text = self.string(where, value)
        if not text:
            raise self.fail(where, "must not be empty")
        longest = len(corpus.format(text))
        if longest > limits.CORPUS_NAME_CHARS.high:
            raise self.fail(
                where,
                f"is too long: it makes a corpus name of {longest} characters, and a request's corpus "
                f"name may have {limits.CORPUS_NAME_CHARS.span} characters",
            )
        if not allow_colon and ":" in text:
            raise self.fail(
                where, f"{text!r} contains ':', which is reserved for derived repo:NAME:... names"
            )
        if any(c.isspace() or not c.isprintable() for c in text):
            raise self.fail(where, f"{text!r} must not contain whitespace or control characters")
        return text

    # -- tables --------------------------------------------------------------------------------------
    def layer(self, doc: dict[str, Any]) -> Layer:
        layer = Layer(self.file, self.root)
        scalar_specs = _scalar_specs(self)
        known_tables = [*scalar_specs, "corpus", "repository"]
        for table, body in doc.items():
            if table == "corpus":
                for i, t in enumerate(self.attempt(self.array, table, body) or []):
                    corpus = self.attempt(self.corpus, i, t)
                    if corpus is not None:
                        layer.corpora.append(corpus)
            elif table == "repository":
                for i, t in enumerate(self.attempt(self.array, table, body) or []):
                    repo = self.attempt(self.repository, i, t)
                    if repo is not None:
                        layer.repositories.append(repo)
            elif table in scalar_specs:
                self.attempt(self.scalar_table, layer, table, body, scalar_specs[table])
            else:
                self.report(self.unknown("", table, known_tables))
        self.attempt(self.http_exposure, layer)
        raw_store = doc.get("store")
        self.attempt(self.store_location, layer, raw_store if isinstance(raw_store, dict) else {})
        raw = doc.get("embeddings")
        self.attempt(self.embedding_endpoint, layer, raw if isinstance(raw, dict) else {})
        return layer

    def embedding_endpoint(self, layer: Layer, raw: dict[str, Any]) -> None:
        """``[embeddings] provider = "openai-compatible"`` needs ``base_url``, ``model`` and ``dimensions``;
        the endpoint's keys without it would be ignored silently, so they are refused. ``raw`` is the table
        as written: a key given with a bad value was reported already, and is not "missing" too."""
        if "provider" in raw and "embeddings.provider" not in layer.scalars:
            return  # a bad provider, reported already
        provider = layer.scalars.get("embeddings.provider", defaults.EMBEDDING_PROVIDER)
        given = [key.split(".", 1)[1] for key in ENDPOINT_KEYS if key.split(".", 1)[1] in raw]
        if provider != "openai-compatible":
            if given:
                raise self.fail(
                    f"[embeddings] {given[0]}",
                    'applies to an embedding endpoint only: set [embeddings] provider = "openai-compatible" '
                    f"or remove {', '.join(given)}",
                )
            return
        missing = [key for key in ("base_url", "model", "dimensions") if key not in raw]
        if missing:
            raise self.fail(
                "[embeddings] provider",
                f'= "openai-compatible" needs {", ".join(missing)}: the endpoint\'s URL (base_url, e.g. '
                '"http://127.0.0.1:8080/v1"), the model it serves (model) and the length of its vectors '
                '(dimensions); see docs/model.md, "An OpenAI-compatible endpoint"',
            )

    def store_location(self, layer: Layer, raw: dict[str, Any]) -> None:
        """``[store]``: a local ``path`` or an object store's ``uri``, not both; ``credentials_file`` and
        ``profile`` belong to an object store (and ``profile`` to the file). ``raw`` is the table as
        written: a key given with a bad value was reported already, and is not "missing" too."""
        if "uri" in raw and "store.uri" not in layer.scalars:
            return  # a bad uri, reported already
        path = _label(layer.spelled.get("store.path", "store.path"))  # [storage] path, its old name
        if "store.path" in layer.scalars and "store.uri" in layer.scalars:
            raise ConfigError(
                f"{self.file}: {path} and [store] uri are both set: the store is either a local directory "
                "(path) or an object store (uri); keep one of them",
                {"file": str(self.file), "key": "[store] uri", "keys": [path, "[store] uri"]},
            )
        if "store.uri" not in layer.scalars:
            given = [key for key in ("credentials_file", "profile") if key in raw]
            if given:
                where = (
                    f"the local directory {path}"
                    if "store.path" in layer.scalars
                    else "the local default directory"
                )
                raise self.fail(
                    f"[store] {given[0]}",
                    f"applies to an object store only, and the store here is {where}: set [store] uri = "
                    f'"s3://bucket/prefix", or remove {" and ".join(given)}',
                )
            return
        if "profile" in raw and "credentials_file" not in raw:
            raise self.fail(
                "[store] profile",
                "picks a section of [store] credentials_file, which is not set: set credentials_file to an "
                "AWS-style credentials file, or remove profile (credentials then come from the environment)",
            )

    def http_exposure(self, layer: Layer) -> None:
        """A listener reachable from other machines must ask for a token: ``[http] host`` other than a
        loopback address needs ``[http] token_file``."""
        host = layer.scalars.get("http.host")
        if isinstance(host, str) and not is_loopback(host) and "http.token_file" not in layer.scalars:
            raise ConfigError(
                f"{self.file}: [http] host = {host!r} is reachable from other machines, and [http] token_file "
                "is not set: set token_file to a file holding a bearer token every request must carry, or "
                'bind a loopback address (host = "127.0.0.1")',
                {"file": str(self.file), "key": "[http] host", "keys": ["host", "token_file"]},
            )

    def scalar_table(
        self, layer: Layer, table: str, body: Any, specs: dict[str, Callable[[str, Any], Scalar]]
    ) -> None:
        if not isinstance(body, dict):
            raise self.fail(table, f"must be a table ([{table}]), got {_tname(body)}")
        if self.root is not None and table in BASELINE_ONLY:
            why = BASELINE_ONLY_WHY.get(table)
            raise self.fail(
                f"[{table}]",
                "is a daemon-wide setting and may only be set in the baseline config "
                "($XDG_CONFIG_HOME/hallouminate/config.toml), not in a repository layer"
                + (f" ({why}): move it to the baseline config" if why else ""),
            )
        for key, value in body.items():
            if key not in specs:
                if table in ("store", "storage") and _looks_secret(key):
                    self.report(self.secret_key(table, key))
                else:
                    self.report(self.unknown(f"[{table}] ", key, list(specs)))
                continue
            checked = self.attempt(specs[key], f"[{table}] {key}", value)
            if checked is None:
                continue
            written = f"{table}.{key}"
            current = RENAMED.get(written, written)
            if current in layer.scalars:  # TOML forbids a repeated key: this is a name and its old name
                old = written if written != current else layer.spelled.get(current, current)
                self.report(self.renamed_twice(old, current))
                continue
            layer.scalars[current] = checked
            if current != written:
                layer.spelled[current] = written

    def renamed_twice(self, old: str, new: str) -> ConfigError:
        """A setting given under its current name and its old name (``RENAMED``) in one file."""
        (old_table, old_key), (new_table, new_key) = old.split(".", 1), new.split(".", 1)
        if old_table == new_table:
            first, second = f"[{old_table}] {old_key}", new_key
            said_old, said_new = old_key, new_key
        else:  # another table: each named with its table
            first = said_old = f"[{old_table}] {old_key}"
            second = said_new = f"[{new_table}] {new_key}"
        return ConfigError(
            f"{self.file}: {first} and {second} are both set; {said_old} is the old name of {said_new}: keep "
            f"{said_new} only",
            {"file": str(self.file), "key": f"[{new_table}] {new_key}", "keys": [said_old, said_new]},
        )

    def secret_key(self, table: str, key: str) -> ConfigError:
        """A secret written into ``[store]``: refused, naming where secrets go instead (never its value)."""
        return self.fail(
            f"[{table}] {key}",
            "looks like a secret, and secrets never go in the config: give the store's credentials in the "
            f"daemon's environment ({', '.join(STORE_ENV)}), or name an AWS-style credentials file with "
            '[store] credentials_file (and profile); remove this key (docs/configuration.md, "[store]")',
        )

    def array(self, table: str, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, list) or not all(isinstance(t, dict) for t in body):
            raise self.fail(table, f"must be an array of tables ([[{table}]]), got {_tname(body)}")
        return body

    def corpus(self, index: int, table: dict[str, Any]) -> RawCorpus:
        where = f"[[corpus]] #{index + 1}"
        self.check_keys(where, table, required=("name", "paths"), optional=("globs", "exclude"))
        name = self.name(f"{where} name", table["name"], allow_colon=False)
        where = f"[[corpus]] {name!r}"
        return RawCorpus(
            name=name,
            roots=self.path_list(f"{where} paths", table["paths"]),
            globs=self.globs(f"{where} globs", table.get("globs", list(defaults.CORPUS_GLOBS))),
            exclude=self.patterns(f"{where} exclude", table.get("exclude", []), allow_empty=True),
        )

    def repository(self, index: int, table: dict[str, Any]) -> RawRepository:
        where = f"[[repository]] #{index + 1}"
        self.check_keys(
            where,
            table,
            required=("name", "path"),
            optional=("wiki", "corpus_paths", "corpus_globs", "corpus_exclude"),
        )
        name = self.name(f"{where} name", table["name"], allow_colon=False, corpus="repo:{}:corpus")
        where = f"[[repository]] {name!r}"
        path = self.path(f"{where} path", table["path"])
        corpus_paths: tuple[Path, ...] = ()
        if "corpus_paths" in table:
            corpus_paths = self.path_list(f"{where} corpus_paths", table["corpus_paths"], base=path)
        return RawRepository(
            name=name,
            path=path,
            wiki=self.path(f"{where} wiki", table.get("wiki", defaults.WIKI_DIR), base=path),
            corpus_paths=corpus_paths,
            corpus_globs=self.globs(
                f"{where} corpus_globs", table.get("corpus_globs", list(defaults.CORPUS_GLOBS))
            ),
            corpus_exclude=self.patterns(
                f"{where} corpus_exclude", table.get("corpus_exclude", []), allow_empty=True
            ),
        )

    def globs(self, where: str, value: Any) -> tuple[str, ...]:
        return self.patterns(where, value, allow_empty=False)

    def patterns(self, where: str, value: Any, *, allow_empty: bool) -> tuple[str, ...]:
        items = self.string_list(where, value, allow_empty=allow_empty)
        # A pattern pathspec cannot compile would silently match nothing during the walk: refuse it here.
        from pathspec import GitIgnoreSpec  # light, pure Python; imported lazily all the same

        for i, item in enumerate(items):
            try:
                GitIgnoreSpec.from_lines([item])
            except Exception as exc:
                raise self.fail(
                    f"{where}[{i}]", f"{item!r} is not a valid gitignore-style pattern: {exc}"
                ) from None
        return items

    def reranker(self, where: str, value: Any) -> str:
        """``[embeddings] reranker``: a cross-encoder fastembed knows by name (``owner/name``), or a directory
        holding one (an absolute path). A directory is checked here, so `config validate` and the daemon's
        start name a wrong path at once; a name is checked by the daemon when it loads the model."""
        text = self.string(where, value).strip()
        if not text:
            raise self.fail(where, "must not be empty (remove the key to rerank nothing)")
        if text.startswith(("/", "~", ".")):
            directory = self.path(where, text)
            if not directory.is_dir():
                raise self.fail(where, f"names the directory {str(directory)!r}, which does not exist")
            # What fastembed's TextCrossEncoder reads (embedding/reranker.py checks the same).
            model = [f for f in RERANKER_MODEL_FILES if (directory / f).is_file()]
            missing = [f for f in RERANKER_FILES if not (directory / f).is_file()]
            if not model or missing:
                lacks = ", ".join([*([] if model else [" or ".join(RERANKER_MODEL_FILES)]), *missing])
                raise self.fail(
                    where,
                    f"names {str(directory)!r}, which lacks {lacks}: a cross-encoder directory holds an ONNX "
                    'graph and its tokenizer files (docs/model.md, "Reranker")',
                )
            return str(directory)
        if text.count("/") != 1 or any(c.isspace() for c in text):
            raise self.fail(
                where,
                f"{text!r} is neither a directory (an absolute path) nor a model name such as "
                "'Xenova/ms-marco-MiniLM-L-6-v2'",
            )
        return text

    def path_templates(self, where: str, value: Any) -> tuple[str, ...]:
        """``[best_practice] path_templates``: corpus-relative, '/'-separated paths, each holding
        ``{target}``; checked here so that a request never meets a template that could leave the corpus
        (the read goes through the sandbox all the same)."""
        items = self.string_list(where, value, allow_empty=False)
        bound = limits.BEST_PRACTICE_TEMPLATES
        if len(items) > bound.high:
            raise self.fail(where, f"may hold at most {bound.high} templates, got {len(items)}")
        for i, item in enumerate(items):
            problem = _template_problem(item)
            if problem is not None:
                raise self.fail(
                    f"{where}[{i}]",
                    f"{item!r} {problem}; write a path relative to the corpus root, e.g. "
                    '"best-practices/{target}.md"',
                )
        return tuple(dict.fromkeys(items))

    def provider(self, where: str, value: Any) -> str:
        text = self.string(where, value).strip()
        if text not in defaults.EMBEDDING_PROVIDERS:
            choices = " or ".join(repr(p) for p in defaults.EMBEDDING_PROVIDERS)
            raise self.fail(where, f"must be {choices}, got {text!r}")
        return text

    def base_url(self, where: str, value: Any) -> str:
        """``[embeddings] base_url``: the endpoint's API root, to which ``/embeddings`` is appended."""
        text = self.string(where, value).strip().rstrip("/")
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 - raises on a port that is no number
        except ValueError as exc:
            raise self.fail(where, f"{text!r} does not parse as a URL ({exc})") from None
        problem = None
        if parts.scheme not in ("http", "https"):
            problem = "does not start with http:// or https://"
        elif not parts.hostname:
            problem = "names no host"
        elif parts.username is not None or parts.password is not None:
            problem = "holds a user name or password (put the key in the variable api_key_env names)"
        elif parts.query or parts.fragment or any(c.isspace() for c in text):
            problem = "has a query, a fragment or whitespace"
        if problem:
            raise self.fail(where, f'{text!r} {problem}: write the API root, e.g. "http://127.0.0.1:8080/v1"')
        return text

    def env_name(self, where: str, value: Any) -> str:
        """``[embeddings] api_key_env``: the NAME of the variable holding the key, never the key."""
        text = self.string(where, value)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
            # The value is not echoed: a key pasted here by mistake must not reach a log or a terminal.
            raise self.fail(
                where,
                "must be the name of an environment variable (letters, digits and '_', e.g. "
                '"OPENAI_API_KEY"), not the key itself: put the key in that variable of the daemon\'s '
                "environment",
            )
        return text

    def bounded_number(self, low: float, high: float) -> Callable[[str, Any], float]:
        """A number of seconds from ``low`` to ``high``."""

        def check(where: str, value: Any) -> float:
            if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
                raise self.fail(where, f"must be a number of seconds from {low:g} to {high:g}, got {value!r}")
            return float(value)

        return check

    def store_uri(self, where: str, value: Any) -> str:
        """``[store] uri``: ``s3://bucket/prefix`` (prefix optional), normalized without a trailing ``/``.

        The value is echoed only when it holds no user information or query (where a secret could be)."""
        text = self.string(where, value).strip()
        example = 'write e.g. "s3://team-wiki/hallouminate", or use [store] path for a local directory'
        try:
            parts = urlsplit(text)
            netloc = parts.netloc
        except ValueError as exc:
            raise self.fail(where, f"does not parse as a URI ({exc}): {example}") from None
        if "@" in netloc:
            raise self.fail(
                where,
                "holds credentials (KEY:SECRET@ before the bucket), and secrets never go in the config: "
                "write s3://bucket/prefix, and give the credentials in the daemon's environment "
                f"({', '.join(STORE_ENV)}) or in the file [store] credentials_file names",
            )
        if parts.query or parts.fragment or "?" in text or "#" in text:
            raise self.fail(
                where,
                "has a query or fragment: write s3://bucket/prefix; the endpoint and region go in the "
                "environment (AWS_ENDPOINT_URL, AWS_REGION) or in [store] credentials_file",
            )
        schemes = ", ".join(f"{s}://" for s in defaults.STORE_URI_SCHEMES)
        if not parts.scheme or "://" not in text:
            raise self.fail(where, f"{text!r} is not an object-store URI (accepted: {schemes}): {example}")
        if parts.scheme.lower() not in defaults.STORE_URI_SCHEMES:
            raise self.fail(
                where,
                f"{text!r} has the scheme {parts.scheme + '://'!r}; the accepted schemes are {schemes} "
                f"(S3 and S3-compatible servers): {example}",
            )
        problem = _bucket_problem(netloc)
        if problem is not None:
            raise self.fail(
                where,
                f"{text!r}: the bucket {netloc!r} {problem} (S3 bucket names: 3 to 63 lowercase letters, "
                "digits, '-' and '.', starting and ending with a letter or digit, not an IP address; a "
                "server's address goes in AWS_ENDPOINT_URL or the credentials file's endpoint_url)",
            )
        prefix = parts.path.strip("/")
        segments = prefix.split("/") if prefix else []
        if any(seg in ("", ".", "..") for seg in segments) or any(not c.isprintable() for c in prefix):
            raise self.fail(
                where,
                f"{text!r}: the prefix {prefix!r} has an empty, '.' or '..' segment or a control character: "
                f"{example}",
            )
        return f"s3://{netloc}/{prefix}" if prefix else f"s3://{netloc}"

    def store_mode(self, where: str, value: Any) -> str:
        text = self.string(where, value).strip()
        if text not in defaults.STORE_MODES:
            choices = " or ".join(f'"{m}"' for m in defaults.STORE_MODES)
            raise self.fail(
                where,
                f"must be {choices}, got {text!r} (one daemon writes a store; the others read it)",
            )
        return text

    def profile(self, where: str, value: Any) -> str:
        """``[store] profile``: a section name of the credentials file."""
        text = self.string(where, value).strip()
        if not text or any(not c.isprintable() or c in "[]" for c in text):
            raise self.fail(
                where,
                f'must be the name of a section of [store] credentials_file (e.g. "default" or "team"), '
                f"got {text!r}",
            )
        return text

    def boolean(self, where: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {value!r}")
        return value

    def non_negative_int(self, where: str, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(where, f"must be a non-negative integer, got {value!r}")
        return value

    def http_host(self, where: str, value: Any) -> str:
        """``[http] host``: an IP address literal or ``localhost`` (a name would be resolved at each start,
        and may not resolve to what the token rule assumed)."""
        text = self.string(where, value).strip()
        if text != "localhost":
            try:
                ipaddress.ip_address(text)
            except ValueError:
                raise self.fail(
                    where,
                    f'{text!r} is not an IP address: write an address literal such as "127.0.0.1" or '
                    '"::1", or "localhost"',
                ) from None
        return text

    def port(self, where: str, value: Any) -> int:
        bound = limits.HTTP_PORT
        if value not in bound:
            raise self.fail(
                where,
                f"must be a port number from {bound.span}, got {value!r} (remove the key, or run "
                "`hallouminate port clear`, for a random free port at each start)",
            )
        return int(value)

    def origins(self, where: str, value: Any) -> tuple[str, ...]:
        """``[http] allowed_origins``: browser origins (``scheme://host[:port]``), each checked, lowercased
        as a browser sends them."""
        items = self.string_list(where, value)
        checked = []
        for i, item in enumerate(items):
            problem = _origin_problem(item)
            if problem is not None:
                raise self.fail(
                    f"{where}[{i}]",
                    f'{item!r} {problem}: an origin is scheme://host[:port], e.g. "http://localhost:3000" '
                    'or "https://wiki.example.com"',
                )
            checked.append(item.lower())
        return tuple(dict.fromkeys(checked))

    def check_keys(
        self, where: str, table: dict[str, Any], *, required: tuple[str, ...], optional: tuple[str, ...]
    ) -> None:
        known = [*required, *optional]
        for key in table:
            if key not in known:
                self.report(self.unknown(f"{where} ", key, known))
        for key in required:
            if key not in table:
                raise self.fail(where, f"is missing the required key {key!r}")


def _scalar_specs(p: _Parser) -> dict[str, dict[str, Callable[[str, Any], Scalar]]]:
    return {
        "embeddings": {
            "model": p.string,
            "cache_dir": p.path,
            "reranker": p.reranker,
            # An OpenAI-compatible endpoint instead of a local model (embedding/endpoint.py).
            "provider": p.provider,
            "base_url": p.base_url,
            "dimensions": p.positive_int,
            "api_key_env": p.env_name,
            "batch_size": p.positive_int,
            "timeout_secs": p.positive_number,
            "max_input_tokens": p.positive_int,
            "max_retries": p.non_negative_int,
            "send_dimensions": p.boolean,
        },
        # Where the index lives (storage/; docs/configuration.md): a local directory or an object store.
        "store": {
            "path": p.path,
            "uri": p.store_uri,
            "mode": p.store_mode,
            "credentials_file": p.path,
            "profile": p.profile,
            "poll_interval_secs": p.bounded_number(*defaults.STORE_POLL_INTERVAL_BOUNDS),
            "lease_secs": p.bounded_number(*defaults.STORE_LEASE_BOUNDS),
        },
        "storage": {"path": p.path},  # the old name of [store] path (RENAMED)
        "daemon": {"idle_exit_secs": p.positive_number},
        # Each [search] key is the default of the `ground` parameter of the same name.
        "search": {
            **{bound.name: p.bounded_int(bound) for bound in limits.SEARCH_SETTINGS},
            # Not a request parameter: how long one query's rerank may take (search/rerank.py).
            limits.RERANK_BUDGET_MS.name: p.bounded_int(limits.RERANK_BUDGET_MS),
        },
        "indexing": {
            "chunk_tokens": p.chunk_tokens,
            # Size caps per kind of file (sandbox.formats.is_binary_format), and a zip's decompression budget.
            "max_text_file_size": p.positive_int,
            "max_file_bytes": p.positive_int,  # the old name of max_text_file_size (RENAMED)
            "max_binary_file_size": p.positive_int,
            "max_decompressed_size": p.positive_int,
            # GrooveSeek's rule: frontmatter that does not parse makes the index run's report an error.
            "fail_on_frontmatter_error": p.boolean,
        },
        # get_best_practice's pages (browse/best_practice.py); a repo layer's templates come first.
        "best_practice": {"path_templates": p.path_templates},
        "discovery": {"max_depth": p.non_negative_int},
        # The files a knowledge base (`serve --kb-path DIR`) indexes: GrooveSeek's [parsers] enabled, as globs.
        "knowledge_base": {"globs": p.globs},
        # The daemon's HTTP listener (http/; docs/http.md).
        "http": {
            "enabled": p.boolean,
            "host": p.http_host,
            "port": p.port,
            "allowed_origins": p.origins,
            "token_file": p.path,
            "max_body_bytes": p.positive_int,
            "max_sessions": p.positive_int,
            "session_idle_secs": p.positive_number,
            "root": p.path,
            "kb_path": p.path,
        },
    }


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an IP literal or ``localhost``) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin_problem(origin: str) -> str | None:
    """Why ``origin`` is no ``scheme://host[:port]``, or None."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError as exc:
        return f"does not parse ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "does not start with http:// or https://"
    if not parts.hostname:
        return "names no host"
    if parts.username is not None or parts.password is not None:
        return "holds a user name or password"
    if parts.path or parts.query or parts.fragment or origin.endswith(("?", "#")):
        return "has a path, query or fragment (an origin has none, not even a trailing '/')"
    if port is not None and port not in limits.HTTP_PORT:
        return f"has the port {port}, outside {limits.HTTP_PORT.span}"
    if any(c.isspace() for c in origin):
        return "holds whitespace"
    return None


def _template_problem(template: str) -> str | None:
    """Why ``template`` is no corpus-relative path template, or None."""
    if TARGET_PLACEHOLDER not in template:
        return f"lacks the placeholder {TARGET_PLACEHOLDER}"
    rest = template.replace(TARGET_PLACEHOLDER, "")
    if "{" in rest or "}" in rest:
        return f"has a brace outside {TARGET_PLACEHOLDER} (the only placeholder)"
    if any(not c.isprintable() for c in template):
        return "holds a control character"
    if "\\" in template:
        return "holds a backslash (separate directories with '/')"
    if template.startswith(("/", "~")):
        return "is absolute"
    parts = template.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, '.' or '..' segment"
    return None


def _label(key: str) -> str:
    """``"store.path"`` as a file spells it: ``[store] path``."""
    table, name = key.split(".", 1)
    return f"[{table}] {name}"


def _looks_secret(key: str) -> bool:
    lowered = key.lower().replace("-", "_")
    return any(word in lowered for word in SECRET_WORDS)


def _bucket_problem(bucket: str) -> str | None:
    """Why ``bucket`` is no S3 bucket name (the general-purpose rules, briefly), or None."""
    if not bucket:
        return "is missing"
    if ":" in bucket:
        return "has a port"
    if not 3 <= len(bucket) <= 63:
        return f"has {len(bucket)} characters"
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", bucket):
        return "holds a character other than a-z, 0-9, '-' and '.', or starts or ends with '-' or '.'"
    if ".." in bucket or ".-" in bucket or "-." in bucket:
        return "has '..', '.-' or '-.'"
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", bucket):
        return "is an IP address"
    return None


def _tname(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "an array"}
    if isinstance(value, dict):
        return "a table"
    return names.get(type(value), type(value).__name__)
