"""The structured-output core on plain strings: formats, the instruction, extraction, validation,
tool arguments and the repair messages (``litellm_conol.core.answer.structured``), plus the options."""

from __future__ import annotations

import json

import pydantic
import pytest

from litellm_conol import BadRequest
from litellm_conol.core.answer.structured import (
    CallToCheck,
    Invalid,
    OutputFormat,
    Valid,
    answer_repair,
    check_answer,
    check_tool_calls,
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
