"""The output schemas published in tools/list: valid, cheaper, and never stricter than the full ones."""

from __future__ import annotations

import jsonschema
import pytest

from hallouminate.protocol.published import published
from hallouminate.protocol.schemas import GROUND_RESULT, RESULTS

A_GROUND_RESULT = {
    "query": "q",
    "took_ms": 3.2,
    "stats": {"hits": 2},
    "docs": [
        {
            "corpus": "repo:x:wiki",
            "path": "a.md",
            "absolute_path": "/r/a.md",
            "score": 1.0,
            "stale": False,
            "summary": "A - first paragraph",
            "keywords": ["alpha", "beta"],
            "chunks": [
                {
                    "heading_path": ["A", "Setup"],
                    "line_start": 3,
                    "line_end": 9,
                    "score": 0.9,
                    "snippet": "text",
                    "corpus": "repo:x:wiki",
                }
            ],
        }
    ],
    "warnings": [],
}


@pytest.mark.parametrize("op", sorted(RESULTS))
def test_every_published_schema_is_a_valid_schema_with_the_same_top_level(op: str) -> None:
    full, light = RESULTS[op], published(RESULTS[op])
    jsonschema.Draft202012Validator.check_schema(light)
    assert light.get("required") == full.get("required")
    assert set(light.get("properties", {})) == set(full.get("properties", {}))


def test_a_result_valid_under_the_full_schema_is_valid_under_the_published_one() -> None:
    jsonschema.validate(A_GROUND_RESULT, GROUND_RESULT)
    jsonschema.validate(A_GROUND_RESULT, published(GROUND_RESULT))


def test_array_items_keep_their_required_fields_and_name_every_field() -> None:
    docs = published(GROUND_RESULT)["properties"]["docs"]["items"]
    assert docs["required"] == GROUND_RESULT["properties"]["docs"]["items"]["required"]
    assert "properties" not in docs
    assert "path (string)" in docs["description"] and "chunks (array)" in docs["description"]
    missing_path = {
        **A_GROUND_RESULT,
        "docs": [{k: v for k, v in A_GROUND_RESULT["docs"][0].items() if k != "path"}],
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing_path, published(GROUND_RESULT))
