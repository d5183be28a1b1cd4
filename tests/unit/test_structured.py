"""The structured-output core on plain strings: formats, the instruction, extraction, validation,
tool arguments and the repair messages (``litellm_conol.core.answer.structured``), plus the options."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pydantic
import pytest

from litellm_conol import BadRequest
from litellm_conol.core.answer import structured
from litellm_conol.core.answer.structured import (
    CallToCheck,
    Invalid,
    OutputFormat,
    Valid,
    answer_repair,
    check_answer,
    check_tool_calls,
    check_tool_schema,
    extract_json,
    format_instruction,
    parse_response_format,
    tool_call_repair,
)
from litellm_conol.core.config.options import build_request
from litellm_conol.fake._library import answers_since_request

pytestmark = pytest.mark.timeout(30)

PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PERSON = OutputFormat("json_schema", PERSON_SCHEMA, "Person")
ANY_OBJECT = OutputFormat("json_object")
ADA = '{"name": "Ada", "age": 36}'


class Person(pydantic.BaseModel):
    name: str
    age: int


# --- response_format ----------------------------------------------------------------------------


def test_text_and_none_mean_no_format():
    assert parse_response_format(None) is None
    assert parse_response_format({"type": "text"}) is None


def test_json_object_and_json_schema_are_read():
    assert parse_response_format({"type": "json_object"}) == ANY_OBJECT
    spec = {"type": "json_schema", "json_schema": {"name": "Person", "schema": PERSON_SCHEMA, "strict": True}}
    assert parse_response_format(spec) == PERSON


def test_a_pydantic_model_class_is_read_as_its_schema():
    output = parse_response_format(Person)
    assert output is not None
    assert (output.kind, output.name, output.schema) == ("json_schema", "Person", Person.model_json_schema())


@pytest.mark.parametrize(
    ("response_format", "named"),
    [
        ({"type": "xml"}, "'xml'"),
        ({"type": "json_schema"}, "json_schema.schema"),
        (
            {"type": "json_schema", "json_schema": {"name": "p", "schema": {"type": 12}}},
            "not a valid JSON Schema",
        ),
        ("json", "str"),
    ],
)
def test_bad_formats_are_refused(response_format, named):
    with pytest.raises(BadRequest) as caught:
        parse_response_format(response_format)
    assert caught.value.status_code == 400
    assert named in caught.value.message


def test_the_instruction_carries_the_schema():
    assert format_instruction(ANY_OBJECT) == (
        "[System]\nAnswer with a single JSON object and nothing else: no prose, no code fences."
    )
    text = format_instruction(PERSON)
    assert text.startswith("[System]\nAnswer with a single JSON object")
    assert text.endswith("\n" + json.dumps(PERSON_SCHEMA))


# --- extraction and validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        ADA,
        '  {"name":"Ada","age":36}\n',
        f"```json\n{ADA}\n```",
        f"Here it is:\n\n```json\n{ADA}\n```\n\nAnything else?",
        f"```\n{ADA}\n```",
        f"Sure! {ADA} Hope this helps.",
        f"Sure, the person is {{Ada}}. As JSON: {ADA}",  # a brace that is not JSON comes first
    ],
)
def test_json_is_found_bare_fenced_or_in_prose(answer):
    assert check_answer(PERSON, answer) == Valid('{"name": "Ada", "age": 36}')


def test_the_canonical_text_keeps_unicode():
    assert check_answer(ANY_OBJECT, '{"city":"Kyiv — Київ"}') == Valid('{"city": "Kyiv — Київ"}')


def test_not_json_says_why_and_quotes_the_start():
    verdict = check_answer(ANY_OBJECT, '{"name": "Ada", "age": 36')
    assert verdict == Invalid(
        "the answer is not valid JSON: Expecting ',' delimiter (line 1, column 26); "
        """it begins '{"name": "Ada", "age": 36'"""
    )


def test_json_object_mode_wants_an_object():
    assert check_answer(ANY_OBJECT, "[1, 2]") == Invalid(
        "the answer is JSON but not an object (it is an array)"
    )
    assert check_answer(ANY_OBJECT, '"hi"') == Invalid(
        "the answer is JSON but not an object (it is a string)"
    )


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ('{"name": "Ada", "age": "36"}', "at $.age: '36' is not of type 'integer'"),
        ('{"name": "Ada"}', "at $: 'age' is a required property"),
        (
            '{"name": "Ada", "age": 36, "x": 1}',
            "at $: Additional properties are not allowed ('x' was unexpected)",
        ),
    ],
)
def test_schema_violations_name_the_place(answer, error):
    assert check_answer(PERSON, answer) == Invalid(error)


def test_extract_json_of_nothing_is_invalid():
    assert extract_json("no braces at all") == Invalid(
        "the answer is not valid JSON: Expecting value (line 1, column 1); it begins 'no braces at all'"
    )


# --- tool arguments -----------------------------------------------------------------------------

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_tool_arguments_are_checked_against_their_tool():
    good = CallToCheck("call_1", "get_weather", '{"city": "Paris"}')
    bad = CallToCheck("call_2", "get_weather", '{"town": "Paris"}')
    assert check_tool_calls({"get_weather": CITY}, [good]) is None
    assert check_tool_calls({"get_weather": CITY}, [good, bad]) == (
        """the arguments of get_weather {"town": "Paris"} do not match its schema at $: 'city' is a required property"""
    )


def test_calls_of_tools_without_a_schema_pass():
    assert check_tool_calls({}, [CallToCheck("call_1", "WebSearch", '{"q": 1}')]) is None


# --- repair messages ----------------------------------------------------------------------------


def test_an_answer_repair_is_the_bad_answer_and_the_error():
    assert answer_repair("nope", "the answer is not valid JSON") == [
        {"role": "assistant", "content": "nope"},
        {
            "role": "user",
            "content": "Your previous answer was rejected: the answer is not valid JSON.\n"
            "Answer again with only the corrected JSON, nothing else.",
        },
    ]


def test_a_tool_repair_shows_the_call_and_the_error():
    call = CallToCheck("call_2", "get_weather", '{"town": "Paris"}')
    assistant, user = tool_call_repair("", [call], "bad city")
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"town": "Paris"}'},
            }
        ],
    }
    assert user["content"].startswith("Your tool call was rejected and not run: bad city.")


def test_the_fake_counts_answers_after_the_marked_request():
    assert answers_since_request(["[Assistant]\nold", "Who? [[fake:json_repair]]"]) == 0
    assert (
        answers_since_request(["Who? [[fake:json_repair]]", "[Assistant]\n{", "fix it", "[System]\nJSON"])
        == 1
    )


# --- options --------------------------------------------------------------------------------------


def _request(**params):
    return build_request(
        model="conol/claude-haiku-4-5",
        messages=[{"role": "user", "content": "Who?"}],
        api_key="t",
        api_base="http://127.0.0.1:1",
        optional_params=params,
        timeout=None,
    )


def test_defaults_and_the_instruction_in_the_prompt():
    request = _request(response_format={"type": "json_object"})
    assert (request.max_repair_turns, request.tool_validation) == (2, "repair")
    assert [p.content for p in request.body.messages] == ["Who?", format_instruction(ANY_OBJECT)]
    repair = request.body_for([{"role": "user", "content": "Who?"}, *answer_repair("x", "bad")])
    assert [p.content for p in repair.messages][1:3] == [
        "[Assistant]\nx",
        answer_repair("x", "bad")[1]["content"],
    ]
    assert repair.messages[-1].content == format_instruction(ANY_OBJECT)
    assert [p.content for p in _request().body.messages] == ["Who?"]


def test_options_per_deployment_and_per_request():
    assert _request(max_repair_turns=0).max_repair_turns == 0
    assert _request(extra_body={"max_repair_turns": "5", "tool_validation": "ERROR"}).max_repair_turns == 5
    assert _request(extra_body={"tool_validation": "ERROR"}).tool_validation == "error"


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"max_repair_turns": -1}, "max_repair_turns"),
        ({"max_repair_turns": 11}, "max_repair_turns"),
        ({"max_repair_turns": 1.5}, "max_repair_turns"),
        ({"extra_body": {"max_repair_turns": "two"}}, "max_repair_turns"),
        ({"tool_validation": "maybe"}, "tool_validation"),
        (
            {
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "object", "required": 3}},
                    }
                ]
            },
            "tool 'f'",
        ),
    ],
)
def test_bad_option_values_are_400s_naming_them(params, named):
    with pytest.raises(BadRequest) as caught:
        _request(**params)
    assert named in caught.value.message


def test_tool_validation_off_skips_the_schema_check():
    bad_schema = {"type": "object", "required": 3}
    tools = [{"type": "function", "function": {"name": "f", "parameters": bad_schema}}]
    assert _request(tools=tools, tool_validation="off").tool_schemas == {}
    assert _request(
        tools=[{"type": "function", "function": {"name": "f", "parameters": CITY}}]
    ).tool_schemas == {"f": CITY}


class Address(pydantic.BaseModel):
    city: str


class Customer(pydantic.BaseModel):
    name: str
    addresses: list[Address]


def test_nested_models_validate_through_their_refs():
    output = parse_response_format(Customer)
    assert output is not None and "$defs" in output.schema
    assert (output.kind, output.name, output.schema) == (
        "json_schema",
        "Customer",
        Customer.model_json_schema(),
    )
    good = '{"name": "Ada", "addresses": [{"city": "London"}]}'
    assert check_answer(output, good) == Valid(good)
    bad = '{"name": "Ada", "addresses": [{"town": "London"}]}'
    assert check_answer(output, bad) == Invalid("at $.addresses[0]: 'city' is a required property")


# --- each distinct schema is checked once -------------------------------------------------------


@pytest.fixture
def metaschema_checks(monkeypatch):
    """The schemas checked against the metaschema (jsonschema's ``check_schema``), in order; the
    memory of valid schemas starts empty and is emptied after."""
    checked: list[Any] = []
    real = structured.validators.validator_for

    def counting(schema, default=None):
        cls = real(schema, default=default)

        class Counting(cls):  # type: ignore[misc, valid-type]
            @classmethod
            def check_schema(klass, schema, *args, **kwargs):
                checked.append(schema)
                return super().check_schema(schema, *args, **kwargs)

        return Counting

    monkeypatch.setattr(structured.validators, "validator_for", counting)
    structured.VALID_SCHEMAS.clear()
    yield checked
    structured.VALID_SCHEMAS.clear()


WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_a_valid_tool_schema_is_checked_once_whatever_its_key_order(metaschema_checks):
    check_tool_schema("get_weather", WEATHER)
    check_tool_schema("get_weather", json.loads(json.dumps(WEATHER)))  # a new request's copy
    check_tool_schema("other_name", {"required": ["city"], **WEATHER})  # same schema, keys reordered
    assert metaschema_checks == [WEATHER]


def test_a_bad_schema_is_refused_with_the_same_error_every_time(metaschema_checks):
    bad = {"type": "object", "properties": {"city": {"type": "strng"}}}
    errors = []
    for _ in range(2):
        with pytest.raises(BadRequest) as caught:
            check_tool_schema("get_weather", bad)
        errors.append((caught.value.status_code, caught.value.message))
    expected = (
        "tool 'get_weather': its parameters is not a valid JSON Schema: "
        "'strng' is not valid under any of the given schemas"
    )
    assert errors == [(400, expected), (400, expected)]
    assert len(metaschema_checks) == 2  # never remembered


def test_a_response_format_schema_shares_the_memory(metaschema_checks):
    spec = {"type": "json_schema", "json_schema": {"name": "w", "schema": WEATHER}}
    assert parse_response_format(spec) == OutputFormat("json_schema", WEATHER, "w")
    check_tool_schema("get_weather", WEATHER)
    assert metaschema_checks == [WEATHER]


def test_a_schema_that_is_not_plain_json_is_never_taken_for_the_json_one(metaschema_checks):
    """JSON would write a tuple as the list's text: jsonschema refuses the tuple, so a remembered
    list must not let it through."""
    check_tool_schema("t", {"type": "object", "required": ["city"]})
    with pytest.raises(BadRequest) as caught:
        check_tool_schema("t", {"type": "object", "required": ("city",)})
    assert caught.value.message == (
        "tool 't': its parameters is not a valid JSON Schema: ('city',) is not of type 'array'"
    )
    odd = {"type": "object", "properties": {"n": {"minimum": Fraction(1, 2)}}}  # valid, not JSON
    check_tool_schema("t", odd)
    check_tool_schema("t", odd)
    assert len(metaschema_checks) == 4


def test_the_memory_of_valid_schemas_is_bounded():
    assert structured.VALID_SCHEMAS.size == 1024
