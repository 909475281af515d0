"""The output schemas the MCP server publishes: the full result schemas, made cheap to validate.

MCP clients validate every tool result against its published `outputSchema`; the Python SDK does it with
`jsonschema`, at ~10-20 us per instance node on a 2-core machine. A `ground` result has ~425 nodes (ten
docs, their chunks, keywords and breadcrumbs): 5-7 ms of every call went to that check alone. So the
items of every array (a ground result's docs, their chunks) keep their `required` fields and a description
naming each field and its type, and scalar items lose their per-element type: ~93 % cheaper (3.4 ms ->
0.25 ms for a ten-doc ground result), and every result that matches the full schema
(`schemas.RESULTS`, what the daemon is tested against) still matches. See docs/adr/0015.
"""

from __future__ import annotations

from typing import Any


def published(schema: dict[str, Any]) -> dict[str, Any]:
    light: dict[str, Any] = _lighten(schema, array_depth=0)
    return light


# A JSON schema node (or a value in one): a dict, a list or a scalar.
def _lighten(node: Any, array_depth: int) -> Any:
    if isinstance(node, list):
        return [_lighten(item, array_depth) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "items" and isinstance(value, dict):
            light = _light_item(value)
            if light is not None:
                out[key] = light
            continue
        out[key] = _lighten(value, array_depth + 1 if key == "items" else array_depth)
    return out


def _light_item(item: dict[str, Any]) -> dict[str, Any] | None:
    kind = item.get("type")
    if kind == "object":
        fields = ", ".join(f"{name} ({_type_of(spec)})" for name, spec in item.get("properties", {}).items())
        light: dict[str, Any] = {"type": "object", "description": f"fields: {fields}"}
        if item.get("required"):
            light["required"] = list(item["required"])
        return light
    if kind in ("string", "integer", "number", "boolean"):
        return None  # the array's own type check stays; each element's is dropped
    nested: dict[str, Any] = _lighten(item, 2)
    return nested


def _type_of(spec: Any) -> str:
    kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
    return "|".join(kind) if isinstance(kind, list) else str(kind)
