"""Check operation arguments against their schema and explain the first violation plainly."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hallouminate.errors import InvalidArgument

if TYPE_CHECKING:
    import jsonschema


def _got(value: Any) -> str:
    """The offending value as an error message shows it: a long string by its length, not verbatim (an
    over-long query or page would otherwise come back whole, and an answer past the frame limit fails)."""
    if isinstance(value, str) and len(value) > 80:
        return f"a string of {len(value)} characters"
    shown = repr(value)
    return shown if len(shown) <= 80 else f"{shown[:80]}... ({type(value).__name__})"


def _short(message: str) -> str:
    # jsonschema's own messages quote the instance (an unexpected key, a value): keep them readable.
    return message if len(message) <= 300 else f"{message[:300]}... ({len(message)} characters)"


def describe_violation(error: jsonschema.ValidationError, what: str) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or what
    validator = error.validator
    if validator == "required":
        return f"{what}: {_short(error.message)}"
    if validator == "additionalProperties":
        return f"{what}: {_short(error.message)}; see the tool's input schema for the accepted fields"
    if validator in ("minimum", "maximum", "minLength", "maxLength"):
        bound = {"minimum": ">=", "maximum": "<=", "minLength": "length >=", "maxLength": "length <="}
        return f"{what}: '{where}' must be {bound[str(validator)]} {error.validator_value} (got {_got(error.instance)})"
    if validator == "type":
        return (
            f"{what}: '{where}' must be of type {error.validator_value}, got {type(error.instance).__name__}"
        )
    if validator == "enum":
        return f"{what}: '{where}' must be one of {error.validator_value}, got {_got(error.instance)}"
    return f"{what}: '{where}': {_short(error.message)}"


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    # Imported on first use: jsonschema costs ~75 ms of the MCP server's start-up otherwise.
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema_json))


# Schemas seen, by identity (each held, so its id is never reused): saves serialising the schema on
# every call to find its validator.
_BY_ID: dict[int, tuple[dict[str, Any], Any]] = {}


def validate_args(schema: dict[str, Any], args: Any, what: str = "arguments") -> None:
    import jsonschema

    seen = _BY_ID.get(id(schema))
    if seen is None or seen[0] is not schema:
        seen = (schema, _validator(json.dumps(schema, sort_keys=True)))
        if len(_BY_ID) < 256:
            _BY_ID[id(schema)] = seen
    validator = seen[1]
    if validator.is_valid(args):  # the usual case: one pass, no error objects
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is not None:
        raise InvalidArgument(
            describe_violation(error, what),
            {"field": ".".join(str(p) for p in error.absolute_path) or None, "rule": error.validator},
        )
