"""Hypothesis strategies read from a JSON Schema: the keywords ackguard's schemas use.

`hypothesis-jsonschema` 0.23.1, the latest release, fails on every object
schema with the Hypothesis this project installs (6.170: `'many' object has no
attribute 'more'`; it calls a private Hypothesis helper whose interface
changed), so the fuzz tests read the schema with this instead. A keyword it
does not know is an error, never skipped: a schema that grows a rule grows
here too, or the fuzz tests stop.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

#: Keywords that only describe; the rest constrain and must be generated.
_ANNOTATIONS = {"$schema", "$id", "title", "description", "default"}
_KNOWN = _ANNOTATIONS | {
    "type",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "additionalProperties",
    "minLength",
    "maxLength",
    "pattern",
}


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid under `schema` (and only those, for the keywords in `_KNOWN`)."""
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"schema keywords this generator does not know: {sorted(unknown)}")
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return _strings(schema)
    if kind == "array":
        return st.lists(
            from_schema(schema["items"]),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems"),
        )
    if kind == "object":
        return _objects(schema)
    raise ValueError(f"schema type this generator does not know: {kind!r}")


def _strings(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    text = st.from_regex(schema["pattern"], fullmatch=True) if "pattern" in schema else st.text()

    def fits(value: str) -> bool:
        return len(value) >= low and (high is None or len(value) <= high)

    return text.filter(fits)


def _objects(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    if schema.get("additionalProperties", True) is not False:
        raise ValueError("only closed objects (additionalProperties: false) are generated")
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {name: from_schema(properties[name]) for name in properties if name in required},
        optional={
            name: from_schema(properties[name]) for name in properties if name not in required
        },
    )
