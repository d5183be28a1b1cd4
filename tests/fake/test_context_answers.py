"""What the default scenario (``hello``) and ``agent`` make of a session, as a model would
(fake/_library/_context.py): on a follow-up turn a tool's result answered once it is there and a word
recalled from an earlier turn; a tool called when asked for by name; any other request, and a first
turn carrying a whole history, keeps the scripted answer."""

from __future__ import annotations

import pytest

from litellm_conol.fake import BUILTINS, Expected, ScenarioContext

RESULT = "[Tool result #call_1: get_weather({})]: light rain, 14 C"


def follow_up(name: str, *messages: str) -> Expected:
    """What the scenario answers on a session's second turn, its transcript ``messages``."""
    return BUILTINS[name].expected(ScenarioContext(messages=messages, tools=("get_weather",), turn=2))


ASSISTANT = "[Assistant]\n[Tool call #call_1: get_weather({})]"


@pytest.mark.parametrize("name", ["hello", "agent"])
def test_after_the_tool_results_it_answers_with_them(name):
    expected = follow_up(name, "Call get_weather for Paris.", RESULT)
    assert (expected.final_text, expected.tool_calls) == ("The tool returned: light rain, 14 C.", ())
    two = follow_up(name, "Two cities.", ASSISTANT, RESULT, "[Tool result #call_2]: sunny")
    assert two.final_text == "The tool returned: light rain, 14 C; sunny."


def test_a_first_turn_carrying_tool_results_keeps_the_scripted_answer():
    hello = BUILTINS["hello"]
    assert hello.expected_for("What are the FAQs?", ASSISTANT, RESULT).final_text == hello.final_text
    again = BUILTINS["agent"].expected_for("Check.", ASSISTANT, RESULT, tools=("get_weather",)).tool_calls
    assert [(call.name, call.arguments) for call in again] == [("get_weather", {})]


@pytest.mark.parametrize("name", ["hello", "agent"])
def test_it_recalls_the_word_an_earlier_turn_gave(name):
    told = "Remember the word zebra12. Reply with OK only."
    assert follow_up(name, "Hi", told).final_text == "OK."
    assert follow_up(name, told, "OK.", "What was the word I asked you?").final_text == "zebra12"
    assert follow_up(name, "Hi", "What was the word?").final_text == "I was not told a word."
    assert BUILTINS[name].expected_for(told).final_text == BUILTINS[name].final_text  # a first turn


def test_hello_calls_an_offered_tool_asked_for_by_name_and_greets_otherwise():
    hello = BUILTINS["hello"]
    asked = hello.expected_for("Call get_weather for Paris.", tools=("get_weather",))
    assert [(call.name, call.arguments) for call in asked.tool_calls] == [("get_weather", {})]
    not_offered = hello.expected_for("Call get_weather for Paris.", tools=())
    assert not_offered.tool_calls == () and not_offered.final_text == hello.final_text
    assert hello.expected_for("Hi", tools=("get_weather",)).final_text == hello.final_text
    assert hello.final_text == "Hello! I am the fake conol agent, running offline. How can I help you today?"


def test_agent_calls_its_first_tool_until_it_has_a_result():
    calls = BUILTINS["agent"].expected_for("Check the weather.", tools=("get_weather",)).tool_calls
    assert [(call.name, call.arguments) for call in calls] == [("get_weather", {})]
