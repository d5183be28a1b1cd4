"""What of a client's tool definitions reaches conol: callable tools only, and only JSON Schema in them.

Claude Code sends placeholder tools it loads later through tool search (``defer_loading: true``;
their description says never to call them), and LiteLLM's ``/v1/messages`` adapter copies that flag
into the parameters schema. conol would offer them to its model as callable tools, so a deferred
tool is not sent. And conol's ``input_schema`` gets JSON Schema keywords only: a client's own keys
(``defer_loading``, ``cache_control``, ``strict``, ``x-…``) are not conol's to interpret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFER_KEYS = ("defer_loading",)

# JSON Schema 2020-12 and draft-07 keywords (core, applicators, validation, format, content, annotations).
SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment",
        "$defs", "definitions",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
        "prefixItems", "items", "additionalItems", "contains", "properties", "patternProperties",
        "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
        "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
        "format", "contentEncoding", "contentMediaType", "contentSchema",
        "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    }
)  # fmt: skip
# where a keyword's value holds subschemas: by name, in a list, or is one
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset(
    {
        "not", "if", "then", "else", "items", "additionalItems", "contains", "additionalProperties",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip


def is_deferred(*layers: Any) -> bool:
    """Whether any layer of a tool definition (the tool, its ``function``, its schema) defers it."""
    return any(
        isinstance(layer, Mapping) and any(layer.get(key) is True for key in DEFER_KEYS) for layer in layers
    )


def schema_keywords_only(schema: Any) -> Any:
    """``schema`` with every key that is not a JSON Schema keyword removed, at every depth."""
    if not isinstance(schema, Mapping):
        return schema  # true/false schemas, and values that are not schemas
    clean: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in SCHEMA_KEYWORDS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            clean[key] = {name: schema_keywords_only(sub) for name, sub in value.items()}
        elif (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):  # items: draft-07 tuples
            clean[key] = [schema_keywords_only(sub) for sub in value]
        elif key == "dependencies" and isinstance(value, Mapping):  # a schema or a list of names each
            clean[key] = {k: v if isinstance(v, list) else schema_keywords_only(v) for k, v in value.items()}
        elif key in _SCHEMA_ONE:
            clean[key] = schema_keywords_only(value)
        else:
            clean[key] = value
    return clean
