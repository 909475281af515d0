"""Check operation arguments against their schema and explain the first violation plainly."""

from __future__ import annotations

from typing import Any

import jsonschema

from hallouminate.errors import InvalidParams


def describe_violation(error: jsonschema.ValidationError, what: str) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or what
    validator = error.validator
    if validator == "required":
        return f"{what}: {error.message}"
    if validator == "additionalProperties":
        return f"{what}: {error.message}; see the tool's input schema for the accepted fields"
    if validator in ("minimum", "maximum", "minLength", "maxLength"):
        bound = {"minimum": ">=", "maximum": "<=", "minLength": "length >=", "maxLength": "length <="}
        return (
            f"{what}: '{where}' must be {bound[validator]} {error.validator_value} (got {error.instance!r})"
        )
    if validator == "type":
        return (
            f"{what}: '{where}' must be of type {error.validator_value}, got {type(error.instance).__name__}"
        )
    if validator == "enum":
        return f"{what}: '{where}' must be one of {error.validator_value}, got {error.instance!r}"
    return f"{what}: '{where}': {error.message}"


def validate_args(schema: dict[str, Any], args: Any, what: str = "arguments") -> None:
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is not None:
        raise InvalidParams(
            describe_violation(error, what),
            {"field": ".".join(str(p) for p in error.absolute_path) or None, "rule": error.validator},
        )
