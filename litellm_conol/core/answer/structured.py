"""Structured output, enforced on our side (conol enforces none of it). Pure: no I/O, no clocks.

* :func:`parse_response_format` reads OpenAI's ``response_format`` (``json_object``, ``json_schema``,
  or a pydantic model class) into an :class:`OutputFormat`, refusing bad ones before any session.
* :func:`format_instruction` is the text added to the prompt: what to answer, with the schema.
* :func:`check_answer` finds the JSON in an answer (bare, in a code fence, or inside prose) and
  validates it with ``jsonschema``: the canonical JSON text, or what is wrong with it.
* :func:`check_tool_calls` validates client tool-call arguments against each tool's schema.
* :func:`answer_repair` / :func:`tool_call_repair` are the messages a repair turn appends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from ..errors import BadRequest
from ..memo import DigestMemo, json_digest

# The draft for a schema whose ``$schema`` jsonschema does not know (``https://json-schema.org/draft-07/schema``
# without the ``#``, as clients write it): named explicitly, since without ``default=`` jsonschema
# warns now and will refuse such a schema in a future release.
DEFAULT_VALIDATOR = validators.Draft202012Validator

FormatKind = Literal["json_object", "json_schema"]

# ```json … ``` (or any other language tag, or none): the usual way models wrap JSON in prose
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```", re.DOTALL)
EXCERPT_CHARS = 80  # of a bad answer, quoted in the error
MAX_SCAN_STARTS = 64  # '{' / '[' positions tried inside prose; bounds the cost on long answers


@dataclass(frozen=True)
class OutputFormat:
    """What the answer must be: any JSON object, or JSON valid against ``schema``."""

    kind: FormatKind
    schema: Mapping[str, Any] | None = None
    name: str | None = None


@dataclass(frozen=True)
class Valid:
    json_text: str  # canonical: json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Invalid:
    error: str


Verdict = Valid | Invalid


# --- the request side ---------------------------------------------------------------------------


def parse_response_format(response_format: Any) -> OutputFormat | None:
    """``None`` for plain text; raises ``BadRequest`` for a format we cannot enforce."""
    if response_format is None:
        return None
    if isinstance(response_format, type) and hasattr(response_format, "model_json_schema"):
        # a pydantic model class (LiteLLM normally converts it to json_schema before we see it)
        schema = _checked_schema(response_format.model_json_schema(), "response_format")
        return OutputFormat("json_schema", schema, response_format.__name__)
    if not isinstance(response_format, Mapping):
        raise BadRequest(
            f"response_format must be an object or a pydantic model, got {type(response_format).__name__}"
        )
    kind = response_format.get("type")
    if kind in (None, "text"):
        return None
    if kind == "json_object":
        return OutputFormat("json_object")
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("schema"), Mapping):
            raise BadRequest("response_format 'json_schema' needs json_schema.schema, a JSON Schema object")
        name = spec.get("name")
        schema = _checked_schema(spec["schema"], f"response_format json_schema {name!r}")
        return OutputFormat("json_schema", schema, str(name) if name else None)
    raise BadRequest(
        f"response_format type {kind!r} is not supported (expected 'text', 'json_object' or 'json_schema')"
    )


def check_tool_schema(name: str, schema: Mapping[str, Any]) -> None:
    """A tool's parameters must be a valid JSON Schema before we can hold calls to it."""
    _checked_schema(schema, f"tool {name!r}: its parameters")


def _checked_schema(schema: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    digest = json_digest(schema)
    if digest is not None and VALID_SCHEMAS.get(digest):
        return schema
    try:
        validators.validator_for(schema, default=DEFAULT_VALIDATOR).check_schema(dict(schema))
    except schema_errors.SchemaError as exc:
        raise BadRequest(f"{where} is not a valid JSON Schema: {exc.message}") from None
    if digest is not None:
        VALID_SCHEMAS.put(digest, True)
    return schema


# The digests of schemas found valid (~150 bytes each). Agents send the same tools' schemas with every
# request, and checking them against the metaschema was most of a request's own CPU (12 tools: ~15 ms).
# Only valid schemas are remembered: a bad one is checked, and refused with its error, every time.
VALID_SCHEMAS: DigestMemo[bool] = DigestMemo(size=1024)


def format_instruction(output: OutputFormat) -> str:
    """The instruction added after the conversation (conol has no JSON mode of its own)."""
    head = "[System]\nAnswer with a single JSON object and nothing else: no prose, no code fences."
    if output.schema is None:
        return head
    schema = json.dumps(output.schema, ensure_ascii=False)
    return f"{head}\nThe JSON must validate against this JSON Schema:\n{schema}"


# --- the answer side ----------------------------------------------------------------------------


def check_answer(output: OutputFormat, text: str) -> Verdict:
    """The answer's JSON (extracted, validated, canonical), or what is wrong with it."""
    found = extract_json(text)
    if isinstance(found, Invalid):
        return found
    if output.kind == "json_object" and not isinstance(found, dict):
        return Invalid(f"the answer is JSON but not an object (it is {_json_type(found)})")
    if output.schema is not None:
        error = schema_error(output.schema, found)
        if error is not None:
            return Invalid(error)
    return Valid(json.dumps(found, ensure_ascii=False))


def extract_json(text: str) -> Any:
    """The first JSON value found: the whole answer, a fenced block, or an object/array in prose.

    Returns the value, or ``Invalid`` saying why the whole answer is not JSON.
    """
    whole = text.strip()
    try:
        return json.loads(whole)
    except json.JSONDecodeError as exc:
        reason = (
            f"the answer is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); "
            f"it begins {whole[:EXCERPT_CHARS]!r}"
        )
    for fence in _FENCE.finditer(text):
        try:
            return json.loads(fence.group(1).strip())
        except json.JSONDecodeError:
            continue
    value = _first_embedded(text)
    return Invalid(reason) if value is _NOTHING else value


_NOTHING = object()


def _first_embedded(text: str) -> Any:
    """An object or array inside prose ("Here it is: {...} Hope it helps")."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"[{\[]", text)][:MAX_SCAN_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict | list):
            return value
    return _NOTHING


def schema_error(schema: Mapping[str, Any], value: Any) -> str | None:
    """The most relevant violation of ``schema`` by ``value`` (jsonschema's best match), or None."""
    validator = validators.validator_for(schema, default=DEFAULT_VALIDATOR)(schema)
    error = schema_errors.best_match(validator.iter_errors(value))
    if error is None:
        return None
    return f"at {_json_path(error.absolute_path)}: {error.message}"


def _json_path(path: Sequence[Any]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


@dataclass(frozen=True)
class CallToCheck:
    id: str
    name: str
    arguments: str  # OpenAI function.arguments (JSON text)


def check_tool_calls(schemas: Mapping[str, Mapping[str, Any]], calls: Sequence[CallToCheck]) -> str | None:
    """What is wrong with the first call whose arguments violate its tool's schema, or None."""
    for call in calls:
        schema = schemas.get(call.name)
        if schema is None:
            continue  # not one of the request's tools (an exposed built-in): nothing to hold it to
        try:
            arguments = json.loads(call.arguments)
        except json.JSONDecodeError as exc:
            return f"the arguments of {call.name} are not valid JSON: {exc.msg}"
        error = schema_error(schema, arguments)
        if error is not None:
            return f"the arguments of {call.name} {call.arguments} do not match its schema {error}"
    return None


# --- repair turns -------------------------------------------------------------------------------


def answer_repair(answer: str, error: str) -> list[dict[str, Any]]:
    """The messages a repair turn appends: the bad answer, then what is wrong with it."""
    return [
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": f"Your previous answer was rejected: {error}.\n"
            "Answer again with only the corrected JSON, nothing else.",
        },
    ]


def tool_call_repair(text: str, calls: Sequence[CallToCheck], error: str) -> list[dict[str, Any]]:
    """The messages a repair turn appends after tool calls with invalid arguments."""
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }
    feedback = (
        f"Your tool call was rejected and not run: {error}.\n"
        "Call the tool again with arguments that match its input schema."
    )
    return [assistant, {"role": "user", "content": feedback}]
