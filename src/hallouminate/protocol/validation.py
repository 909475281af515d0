"""Check operation arguments against their schema and explain the first violation plainly."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hallouminate.errors import InvalidParams

if TYPE_CHECKING:
    import jsonschema


def describe_violation(error: jsonschema.ValidationError, what: str) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or what
    validator = error.validator
    if validator == "required":
        return f"{what}: {error.message}"
    if validator == "additionalProperties":
        return f"{what}: {error.message}; see the tool's input schema for the accepted fields"
    if validator in ("minimum", "maximum", "minLength", "maxLength"):
        bound = {"minimum": ">=", "maximum": "<=", "minLength": "length >=", "maxLength": "length <="}
        return f"{what}: '{where}' must be {bound[str(validator)]} {error.validator_value} (got {error.instance!r})"
    if validator == "type":
        return (
            f"{what}: '{where}' must be of type {error.validator_value}, got {type(error.instance).__name__}"
        )
    if validator == "enum":
        return f"{what}: '{where}' must be one of {error.validator_value}, got {error.instance!r}"
    return f"{what}: '{where}': {error.message}"


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    # Imported on first use: jsonschema costs ~75 ms of the MCP server's start-up otherwise.
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema_json))


def validate_args(schema: dict[str, Any], args: Any, what: str = "arguments") -> None:
    import jsonschema

    validator = _validator(json.dumps(schema, sort_keys=True))
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is not None:
        raise InvalidParams(
            describe_violation(error, what),
            {"field": ".".join(str(p) for p in error.absolute_path) or None, "rule": error.validator},
        )
