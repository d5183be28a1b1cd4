"""LiteLLM's own provider conformance checks, run against ``conol/claude-haiku-4-5`` and the fake.

LiteLLM does not ship its tests in its wheel, and this repository holds only its own code, so LiteLLM's
base classes are not copied here: each check of ``BaseLLMChatTest``,
``BaseReasoningLLMTests`` and ``BaseAnthropicChatTest`` (``tests/llm_translation/
base_llm_unit_tests.py``) and the chunk-format checks of ``tests/local_testing/test_streaming.py``
(BerriAI/litellm, read at commits 019f5ee and 008d4a2) is mirrored here, one test per check and
parameter, with the same calls and assertions. A check conol cannot meet is skipped with the exact
reason, and only skipped: where LiteLLM's check skips on its model map, the skip first makes sure the
map says so (a map that claims the feature fails the test instead); where a check cannot apply to a
custom provider at all, it is marked skipped, and what conol does instead is a test of its own beside it.
``test_litellm_suite_loader`` runs LiteLLM's own base classes when ``LITELLM_SUITE_DIR`` points at a
checkout of it.

Where an answer needs a model's judgement (call this tool with valid arguments, answer in JSON of
this schema), a fake scenario answers as a model would: the ``[[fake:…]]`` marker in the user
message picks it; without a marker the fake answers its default scenario, ``hello``. The assertions
are LiteLLM's; beside each, the exact answer the fake gives (its scenarios define their texts), so a
check cannot pass on an empty or wrong answer.
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import litellm
import litellm.utils
import pytest
from litellm.types.utils import ModelResponseStream
from litellm.utils import CustomStreamWrapper
from pydantic import BaseModel

import litellm_conol
from litellm_conol.fake import BUILTINS

litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
HELLO = BUILTINS["hello"]  # the fake's answer to a request without a marker
pytestmark = pytest.mark.timeout(90)

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}


def scenario(scenario_name: str, /, **params: object) -> str:
    """The marker that makes the fake answer as a model would (JSON values percent-encoded)."""
    pairs = "".join(
        f" {k}={quote(v if isinstance(v, str) else json.dumps(v, separators=(',', ':')))}"
        for k, v in params.items()
    )
    return f" [[fake:{scenario_name}{pairs}]]"


@pytest.fixture
def base_args(conol_fake) -> dict:
    """``get_base_completion_call_args`` of LiteLLM's base classes."""
    return {"model": MODEL, "api_base": conol_fake.base_url, "api_key": conol_fake.token}


@pytest.fixture
def thinking_args(base_args) -> dict:
    """``get_base_completion_call_args_with_thinking`` (Anthropic's: a thinking budget)."""
    return {**base_args, "thinking": {"type": "enabled", "budget_tokens": 1024}}


def skip_unless(supported: bool, reason: str) -> None:
    """Skip as LiteLLM's check does when the model map says the feature is unsupported."""
    assert supported is False, "the model map says supported: this check must run, not skip"
    pytest.skip(reason)


def assert_hello(response) -> None:
    """The fake's answer to a request without a marker, exactly (``HELLO``)."""
    message = response.choices[0].message
    assert (message.content, message.reasoning_content) == (HELLO.final_text, HELLO.final_reasoning)
    assert message.tool_calls is None
    assert response.choices[0].finish_reason == "stop"


def json_answer(messages: list[dict]) -> str:
    """The answer of the ``json_valid`` scenario the last message's marker asks for."""
    return BUILTINS["json_valid"].expected_for(messages[-1]["content"]).final_text


# --- BaseLLMChatTest -----------------------------------------------------------------------------


def test_developer_role_translation(base_args):
    messages = [
        {"role": "developer", "content": "Be a good bot!"},
        {"role": "user", "content": [{"type": "text", "text": "Hello, how are you?"}]},
    ]
    response = litellm.completion(**base_args, messages=messages)
    assert response.choices[0].message.content is not None
    assert_hello(response)


def test_content_list_handling(base_args):
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hello, how are you?"}]}]
    response = litellm.completion(**base_args, messages=messages)
    assert response.choices[0].message.content is not None
    assert_hello(response)


def test_tool_call_with_property_type_array(base_args):
    assert litellm.utils.supports_function_calling(MODEL, None) is True
    tool = {
        "type": "function",
        "function": {
            "name": "shoe_get_id",
            "description": "Get information about a show by its ID or name",
            "parameters": {
                "type": "object",
                "properties": {
                    "shoe_id": {"type": ["string", "number"], "description": "The shoe ID or name"}
                },
                "required": ["shoe_id"],
                "additionalProperties": False,
                "$schema": "http://json-schema.org/draft-07/schema#",
            },
        },
    }
    text = "Tell me if the shoe brand Air Jordan has more models than the shoe brand Nike."
    response = litellm.completion(**base_args, messages=[{"role": "user", "content": text}], tools=[tool])
    assert response is not None
    assert_hello(response)


def test_tool_call_with_empty_enum_property(base_args):
    assert litellm.utils.supports_function_calling(MODEL, None) is True
    tool = {
        "type": "function",
        "function": {
            "name": "litellm_product_search",
            "description": "Search for product information and specifications.",
            "parameters": {
                "properties": {
                    "search_mode": {
                        "default": "",
                        "description": "The search strategy to use for finding products.",
                        "enum": ["", "product_search", "product_search_with_filters"],
                        "title": "Search Mode",
                        "type": "string",
                    }
                },
                "required": ["search_mode"],
                "title": "product_search_arguments",
                "type": "object",
            },
        },
    }
    text = "Search for the latest iPhone models and tell me which storage options are available."
    response = litellm.completion(**base_args, messages=[{"role": "user", "content": text}], tools=[tool])
    assert response is not None
    assert_hello(response)


def test_streaming(base_args):
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hello, how are you?"}]}]
    response = litellm.completion(**base_args, messages=messages, stream=True)
    assert isinstance(response, CustomStreamWrapper)
    chunks, created_at = [], None
    for chunk in response:
        chunks.append(chunk)
        if isinstance(chunk, ModelResponseStream):
            created_at = chunk.created if created_at is None else created_at
            assert chunk.created == created_at
    built = litellm.stream_chunk_builder(chunks=chunks)
    assert built is not None
    assert_hello(built)


def test_pydantic_model_input(base_args):
    messages = [litellm.Message(content="Hello, how are you?", role="user")]
    response = litellm.completion(**base_args, messages=messages)
    assert response is not None
    assert_hello(response)


def test_web_search():
    skip_unless(
        litellm.utils.supports_web_search(MODEL, None),
        "conol takes no web_search_options: its agent searches the web by itself (a builtin tool)",
    )


def test_url_context():
    skip_unless(litellm.utils.supports_url_context(MODEL, None), "conol has no url-context tool parameter")


@pytest.mark.parametrize("sync_mode", [True, False])
def test_pdf_handling(sync_mode):
    skip_unless(
        litellm.utils.supports_pdf_input(MODEL, None), "conol takes no PDF input (no file upload path)"
    )


def test_async_pdf_handling_with_file_id():
    skip_unless(
        litellm.utils.supports_pdf_input(MODEL, None), "conol takes no PDF input (no file upload path)"
    )


def test_file_data_unit_test():
    skip_unless(
        litellm.utils.supports_pdf_input(MODEL, None), "conol takes no PDF input (no file upload path)"
    )


def test_message_with_name(base_args):
    messages = [{"role": "user", "content": "Hello", "name": "test_name"}]
    response = litellm.completion(**base_args, messages=messages)
    assert response is not None
    assert_hello(response)


JSON_ANSWER = {"city": "San Francisco", "state": "CA", "weather": "sunny", "temp": 60}
JSON_MESSAGES = [
    {"role": "system", "content": "Your output should be a JSON object with no additional properties.  "},
    {
        "role": "user",
        "content": "Respond with this in json. city=San Francisco, state=CA, weather=sunny, temp=60"
        + scenario("json_valid", json=JSON_ANSWER),
    },
]


@pytest.mark.parametrize("response_format", [{"type": "json_object"}, {"type": "text"}])
def test_json_response_format(base_args, response_format):
    assert litellm.utils.supports_response_schema(MODEL, None) is True
    response = litellm.completion(**base_args, messages=JSON_MESSAGES, response_format=response_format)
    assert response.choices[0].message.content is not None
    assert response.choices[0].message.content == json_answer(JSON_MESSAGES)
    assert json.loads(response.choices[0].message.content) == JSON_ANSWER


def test_response_format_type_text_with_tool_calls_no_tool_choice(base_args):
    messages = [{"role": "user", "content": "What's the weather like in Boston today?"}]
    response = litellm.completion(
        **base_args,
        messages=messages,
        response_format={"type": "text"},
        tools=[WEATHER_TOOL],
        drop_params=True,
    )
    assert response is not None
    assert_hello(response)


def test_response_format_type_text():
    """LiteLLM's check translates the params with the provider's chat ``ProviderConfig``, found through
    ``LlmProviders``. The generateContent shim (provider/litellm_compat.py) lets ``conol`` through that
    enum inside LiteLLM's generateContent set-up only, so here it is still not a member."""
    _, provider, _, _ = litellm.get_llm_provider(model=MODEL)
    try:
        llm_provider = litellm.LlmProviders(provider)
    except ValueError:
        pytest.skip(
            "conol is a CustomLLM provider: LiteLLM has no chat ProviderConfig to translate its params "
            "with (LlmProviders has no 'conol'); response_format text runs end to end in "
            "test_json_response_format[text]"
        )
    config = litellm.ProviderConfigManager.get_provider_chat_config(MODEL, llm_provider)
    translated = config.map_openai_params(
        non_default_params={"response_format": {"type": "text"}},
        optional_params={},
        model=MODEL,
        drop_params=False,
    )
    assert "tool_choice" not in translated and "tools" not in translated


def test_json_response_pydantic_obj(base_args):
    class TestModel(BaseModel):
        first_response: str

    assert litellm.utils.supports_response_schema(MODEL, None) is True
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {
            "role": "user",
            "content": "What is the capital of France?"
            + scenario("json_valid", json={"first_response": "Paris"}),
        },
    ]
    res = litellm.completion(**base_args, messages=messages, response_format=TestModel, timeout=5)
    assert res.choices[0].message.content is not None
    assert res.choices[0].message.content == json_answer(messages)
    assert TestModel.model_validate_json(res.choices[0].message.content) == TestModel(first_response="Paris")
    assert res.choices[0].message.tool_calls is None


def test_json_response_pydantic_obj_nested_obj():
    # LiteLLM's check only reloads the local cost map and asserts nothing; the same here
    assert litellm.utils.supports_response_schema(MODEL, None) is True


class CalendarEvent(BaseModel):
    name: str
    date: str
    participants: list[str]


class EventsList(BaseModel):
    events: list[CalendarEvent]


EVENTS = {"events": [{"name": "Battle of Waterloo", "date": "1815-06-18", "participants": ["Wellington"]}]}
EVENTS_MESSAGES = [
    {
        "role": "user",
        "content": "List 5 important events in the XIX century" + scenario("json_valid", json=EVENTS),
    }
]


def test_json_response_nested_pydantic_obj(base_args):
    assert litellm.utils.supports_response_schema(MODEL, None) is True
    res = litellm.completion(**base_args, messages=EVENTS_MESSAGES, response_format=EventsList, timeout=60)
    assert res.choices[0].message.content is not None
    assert res.choices[0].message.content == json_answer(EVENTS_MESSAGES)
    assert EventsList.model_validate_json(res.choices[0].message.content) == EventsList(**EVENTS)
    assert res.choices[0].message.tool_calls is None


def test_json_response_nested_json_schema(base_args):
    from litellm.llms.base_llm.base_utils import type_to_response_format_param

    response_format = type_to_response_format_param(EventsList)
    res = litellm.completion(
        **base_args, messages=EVENTS_MESSAGES, response_format=response_format, timeout=60
    )
    assert res.choices[0].message.content is not None
    assert res.choices[0].message.content == json_answer(EVENTS_MESSAGES)
    assert json.loads(res.choices[0].message.content) == EVENTS
    assert res.choices[0].message.tool_calls is None


def test_audio_input():
    skip_unless(litellm.utils.supports_audio_input(MODEL, None), "conol takes no audio input")


def test_json_response_format_stream(base_args):
    assert litellm.utils.supports_response_schema(MODEL, None) is True
    response = litellm.completion(
        **base_args, messages=JSON_MESSAGES, response_format={"type": "json_object"}, stream=True
    )
    content = "".join(chunk.choices[0].delta.content or "" for chunk in response)
    assert len(content) > 0
    assert content == json_answer(JSON_MESSAGES)


def test_tool_call_no_arguments(base_args, conol_fake):
    """LiteLLM's subclasses check a tool call with ``{}`` arguments translates: here, it reaches conol."""
    tool_call_no_arguments = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_2c384bc6", "function": {"name": "Get-FAQ", "arguments": "{}"}, "type": "function"}
        ],
    }
    messages = [
        {"role": "user", "content": "What are the FAQs?"},
        tool_call_no_arguments,
        {"role": "tool", "tool_call_id": "call_2c384bc6", "content": "No FAQs yet."},
    ]
    response = litellm.completion(**base_args, messages=messages)
    assert response.choices[0].message.content
    assert_hello(response)
    sent = "\n".join(conol_fake.last_session.messages)
    assert "Get-FAQ" in sent and "No FAQs yet." in sent


# LiteLLM's image checks send http(s) image URLs. conol takes images as uploaded assets, so the proxy
# would have to fetch the URL: a deployment does so only with ``image_fetch: public`` (an SSRF
# guard; docs/images-and-discovery.md). By default the URL is a clear 400 naming the option, before
# any upload or session; the same image as a data: URL is uploaded and answered.
PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _image_message(image_url) -> list[dict]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What's in this image?"},
                {"type": "image_url", "image_url": image_url},
            ],
        }
    ]


@pytest.mark.parametrize("detail", [None, "low", "high"])
@pytest.mark.parametrize("image_url", ["http://example.com/a.jpg", "https://example.com/b.png"])
def test_image_url(base_args, conol_fake, detail, image_url):
    assert litellm.utils.supports_vision(MODEL, None) is True
    param = {"url": image_url, "detail": detail} if detail else {"url": image_url}
    before = len(conol_fake.requests)
    with pytest.raises(litellm.BadRequestError, match="image_fetch is 'off'.*set image_fetch: public"):
        litellm.completion(**base_args, messages=_image_message(param))
    assert len(conol_fake.requests) == before  # refused before any upload or session
    as_data = {"url": PIXEL, "detail": detail} if detail else {"url": PIXEL}
    response = litellm.completion(**base_args, messages=_image_message(as_data))
    assert response.choices[0].message.content
    assert_hello(response)
    _assert_sent_as_an_asset(conol_fake)


def _assert_sent_as_an_asset(fake) -> None:
    """The session's turn names an uploaded asset (uploaded once per conversation: maybe earlier)."""
    create = [r for r in fake.requests if r.path == "/api/sessions"][-1].body
    image = create["messages"][-1]
    assert image["type"] == "image" and image["mediaType"] == "image/png"
    assert image["content"].removeprefix("/api/assets/") in fake.assets


def test_image_url_string(base_args, conol_fake):
    assert litellm.utils.supports_vision(MODEL, None) is True
    with pytest.raises(litellm.BadRequestError, match="image_fetch is 'off'"):
        litellm.completion(**base_args, messages=_image_message("https://example.com/b.png"))
    response = litellm.completion(**base_args, messages=_image_message(PIXEL))
    assert response.choices[0].message.content
    assert_hello(response)
    _assert_sent_as_an_asset(conol_fake)


def test_prompt_caching():
    skip_unless(
        litellm.utils.supports_prompt_caching(MODEL, None), "conol has no prompt caching (no cache_control)"
    )


def test_empty_tools(base_args):
    assert litellm.utils.supports_function_calling(MODEL, None) is True
    response = litellm.completion(
        **base_args, messages=[{"role": "user", "content": "Hello, how are you?"}], tools=[]
    )
    assert response is not None
    assert_hello(response)


def test_basic_tool_calling(base_args):
    assert litellm.utils.supports_function_calling(MODEL, None) is True
    call = {"location": "Boston, MA", "unit": "fahrenheit"}
    text = "What's the weather like in Boston today in fahrenheit?"
    marker = scenario("tool_call_json", name="get_current_weather", json=call)
    messages = [{"role": "user", "content": text + marker}]
    response = litellm.completion(**base_args, messages=messages, tools=[WEATHER_TOOL])
    message = response.choices[0].message
    if message.content is not None:
        with pytest.raises(json.JSONDecodeError):
            json.loads(message.content)  # a tool call must not come back as content
        assert not ("<thinking>" in message.content and "</thinking>" in message.content)
    assert message.tool_calls is not None, "the scenario calls the tool: this check must not end early"
    assert isinstance(message.tool_calls[0].function.name, str)
    assert isinstance(message.tool_calls[0].function.arguments, str)
    assert response.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("get_current_weather", call)
    ]
    messages.append(message.model_dump())
    messages.append(
        {
            "tool_call_id": message.tool_calls[0].id,
            "role": "tool",
            "name": message.tool_calls[0].function.name,
            "content": '{"location": "Boston", "temperature": "72", "unit": "fahrenheit"}',
        }
    )
    second = litellm.completion(**base_args, messages=messages, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content is not None or second.choices[0].message.tool_calls is not None
    # the scenario calls the tool on every turn (``tool_call_json``, valid_after=0): again, the same call
    again = second.choices[0].message
    assert again.content is None and second.choices[0].finish_reason == "tool_calls"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in again.tool_calls] == [
        ("get_current_weather", call)
    ]


async def test_completion_cost(base_args):
    response = await litellm.acompletion(
        **base_args, messages=[{"role": "user", "content": "Hello, how are you?"}]
    )
    assert response._hidden_params["response_cost"] > 0
    # and it is the catalog's estimate: tokens x price
    info = litellm.get_model_info(MODEL)
    usage = response.usage
    expected = (
        usage.prompt_tokens * info["input_cost_per_token"]
        + usage.completion_tokens * info["output_cost_per_token"]
    )
    assert response._hidden_params["response_cost"] == pytest.approx(expected)
    assert litellm.completion_cost(response) == pytest.approx(expected)


@pytest.mark.parametrize("input_type", ["input_audio", "audio_url"])
@pytest.mark.parametrize("format_specified", [True])
def test_supports_audio_input(input_type, format_specified):
    skip_unless(litellm.utils.supports_audio_input(MODEL, None), "conol takes no audio input")


def test_function_calling_with_tool_response(base_args):
    assert litellm.utils.supports_function_calling(MODEL, None) is True
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather in a city",
                "parameters": {
                    "$id": "https://some/internal/name",
                    "$schema": "https://json-schema.org/draft-07/schema",
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "The city to get the weather for"}
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]
    messages = [{"content": "How is the weather in Mumbai?" + scenario("tool_loop"), "role": "user"}]
    response, iteration = "", 0
    while not response and iteration <= 2:
        final_tool_calls: dict = {}
        for chunk in litellm.completion(**base_args, messages=messages, tools=tools, stream=True):
            delta = chunk.choices[0].delta
            if delta.content:
                response += delta.content
            elif delta.tool_calls:
                for tool_call in delta.tool_calls:
                    if tool_call.index not in final_tool_calls:
                        final_tool_calls[tool_call.index] = tool_call
                    else:
                        final_tool_calls[tool_call.index].function.arguments += tool_call.function.arguments
        for tool_call in final_tool_calls.values():
            city = json.loads(tool_call.function.arguments)["city"]
            messages.append({"role": "assistant", "tool_calls": [tool_call], "content": None})
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": tool_call.id,
                    "content": f"City: {city}, Weather: Sunny with 34 degree Celcius",
                }
            )
        iteration += 1
    assert response == "The weather in Paris is City: Paris, Weather: Sunny with 34 degree Celcius."


def test_reasoning_effort(base_args):
    assert litellm.utils.supports_reasoning(MODEL, None) is True
    _, provider, _, _ = litellm.get_llm_provider(model=MODEL)
    optional_params = litellm.get_optional_params(
        model=MODEL, custom_llm_provider=provider, reasoning_effort="high"
    )
    assert "reasoning_effort" in optional_params or "4096" in json.dumps(optional_params)
    # conol takes the effort word itself (docs/protocol.md#effort-words), not a thinking budget
    assert optional_params["reasoning_effort"] == "high" and "thinking" not in optional_params
    response = litellm.completion(
        **base_args, reasoning_effort="low", messages=[{"role": "user", "content": "Hello!"}]
    )
    assert_hello(response)


# --- BaseReasoningLLMTests -----------------------------------------------------------------------


def reasoning_tokens(reasoning: str) -> int:
    """The reasoning tokens of an answer: conol reports none, so they are LiteLLM's count of the text."""
    return int(litellm.token_counter(text=reasoning, count_response_tokens=True))


def test_non_streaming_reasoning_effort(base_args):
    response = litellm.completion(
        **base_args, messages=[{"role": "user", "content": "Hi"}], reasoning_effort="low"
    )
    assert isinstance(response.choices[0].message.reasoning_content, str)
    assert response.usage.completion_tokens_details.reasoning_tokens > 0
    assert response.choices[0].message.reasoning_content == HELLO.final_reasoning
    assert response.usage.completion_tokens_details.reasoning_tokens == reasoning_tokens(
        HELLO.final_reasoning
    )


def test_streaming_reasoning_effort(base_args):
    response = litellm.completion(
        **base_args,
        messages=[{"role": "user", "content": "Hi"}],
        reasoning_effort="low",
        stream=True,
        stream_options={"include_usage": True},
    )
    reasoning_content, usage = "", None
    for chunk in response:
        # LiteLLM >= 1.110 ends an include_usage stream with a usage chunk without choices (as OpenAI
        # does, for every provider): LiteLLM's check indexes choices[0] unguarded
        if chunk.choices and hasattr(chunk.choices[0].delta, "reasoning_content"):
            reasoning_content += chunk.choices[0].delta.reasoning_content
        if hasattr(chunk, "usage"):
            usage = chunk.usage
    assert len(reasoning_content) > 0
    assert usage.completion_tokens_details.reasoning_tokens > 0
    assert reasoning_content == HELLO.final_reasoning
    assert usage.completion_tokens_details.reasoning_tokens == reasoning_tokens(HELLO.final_reasoning)


# --- BaseAnthropicChatTest (conol/claude-… is a Claude model) --------------------------------------

PROGRESS_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "final_output",
        "strict": True,
        "schema": {
            "description": "Progress report for the thinking process",
            "properties": {"agent_doing": {"title": "Agent Doing", "type": "string"}},
            "required": ["agent_doing"],
            "title": "ThinkingStep",
            "type": "object",
            "additionalProperties": False,
        },
    },
}


def test_anthropic_response_format_streaming_vs_non_streaming(base_args):
    args = {
        "messages": [
            {
                "role": "system",
                "content": "Summarize the previous agent's thinking process into short descriptions.",
            },
            {
                "role": "user",
                "content": "Here is the input data (previous agent's output): refine the search."
                + scenario("json_valid", json={"agent_doing": "Doing some research..."}),
            },
        ],
        "response_format": PROGRESS_SCHEMA,
    }
    chunks = list(litellm.completion(**base_args, **args, stream=True))
    built = litellm.stream_chunk_builder(chunks=chunks)
    non_stream = litellm.completion(**base_args, **args, stream=False)
    built_keys = json.loads(built.choices[0].message.content).keys()
    assert built_keys == json.loads(non_stream.choices[0].message.content).keys()
    answer = json_answer(args["messages"])
    assert (built.choices[0].message.content, non_stream.choices[0].message.content) == (answer, answer)


def test_completion_thinking_with_response_format(thinking_args):
    class RFormat(BaseModel):
        question: str
        answer: str

    pair = {"question": "What is 2+2?", "answer": "4"}
    messages = [
        {"role": "user", "content": "Generate 5 question + answer pairs" + scenario("json_valid", json=pair)}
    ]
    response = litellm.completion(**thinking_args, messages=messages, response_format=RFormat)
    assert RFormat.model_validate_json(response.choices[0].message.content) == RFormat(**pair)


def test_completion_thinking_with_max_tokens(thinking_args):
    messages = [{"role": "user", "content": "Generate 5 question + answer pairs"}]
    response = litellm.completion(**thinking_args, messages=messages, max_completion_tokens=20000)
    assert response is not None
    assert_hello(response)


def test_completion_thinking_without_max_tokens(thinking_args):
    messages = [{"role": "user", "content": "Generate 5 question + answer pairs"}]
    response = litellm.completion(**thinking_args, messages=messages)
    assert response is not None
    assert_hello(response)


UNSIGNED = (
    "conol streams its model's reasoning as text: there is no signed thinking block "
    "(thinking_blocks with a signature) to return or to send back"
)


@pytest.mark.skip(reason=UNSIGNED)
def test_completion_with_thinking_basic():
    """LiteLLM's check wants signed ``thinking_blocks``: conol's reasoning is
    ``test_thinking_is_reasoning_content_without_blocks``."""


def test_thinking_is_reasoning_content_without_blocks(thinking_args):
    """What conol answers to a thinking request: its reasoning as ``reasoning_content``, no blocks."""
    messages = [{"role": "user", "content": "Generate 5 question + answer pairs"}]
    response = litellm.completion(**thinking_args, messages=messages)
    assert isinstance(response.choices[0].message.reasoning_content, str)
    assert getattr(response.choices[0].message, "thinking_blocks", None) is None
    assert_hello(response)


@pytest.mark.skip(reason=UNSIGNED)
def test_anthropic_thinking_output_stream():
    """LiteLLM's check wants streamed signed thinking blocks: conol's streamed reasoning is
    ``test_streamed_thinking_is_reasoning_content_without_blocks``."""


def test_streamed_thinking_is_reasoning_content_without_blocks(thinking_args):
    reasoning, blocks, tool_call = False, False, False
    reasoning_text, text = "", ""
    for chunk in litellm.completion(
        **thinking_args, messages=[{"role": "user", "content": "Tell me a joke."}], stream=True
    ):
        delta = chunk.choices[0].delta
        tool_call = tool_call or bool(delta.tool_calls)
        reasoning = reasoning or isinstance(getattr(delta, "reasoning_content", None), str)
        blocks = blocks or getattr(delta, "thinking_blocks", None) is not None
        reasoning_text += getattr(delta, "reasoning_content", None) or ""
        text += delta.content or ""
    assert not tool_call
    assert reasoning and not blocks
    assert (reasoning_text, text) == (HELLO.final_reasoning, HELLO.final_text)


@pytest.mark.skip(
    reason="conol takes reasoning_effort as its own effort level (agentEffort), not as an Anthropic "
    "thinking budget: there is no budget_tokens to translate it to"
)
def test_anthropic_reasoning_effort_thinking_translation():
    """LiteLLM's check wants ``reasoning_effort`` turned into a thinking budget: what conol's params
    keep instead is ``test_reasoning_effort_is_kept_as_conols_effort``."""


def test_reasoning_effort_is_kept_as_conols_effort():
    _, provider, _, _ = litellm.get_llm_provider(model=MODEL)
    optional_params = litellm.get_optional_params(
        model=MODEL, custom_llm_provider=provider, reasoning_effort="high"
    )
    assert optional_params["reasoning_effort"] == "high" and "thinking" not in optional_params


# --- test_streaming.py: the chunk-format checks --------------------------------------------------


def validate_first_format(chunk) -> None:
    assert isinstance(chunk, ModelResponseStream)
    assert isinstance(chunk["id"], str) and isinstance(chunk["object"], str)
    assert isinstance(chunk["created"], int) and isinstance(chunk["model"], str)
    assert isinstance(chunk["choices"], list)
    assert not hasattr(chunk, "usage"), "Chunk cannot contain usage"
    for choice in chunk["choices"]:
        assert isinstance(choice["index"], int)
        assert isinstance(choice["delta"]["role"], str)
        assert "messages" not in choice
        assert choice["finish_reason"] is None or isinstance(choice["finish_reason"], str)


def validate_second_format(chunk) -> None:
    assert isinstance(chunk, ModelResponseStream)
    assert isinstance(chunk["id"], str) and isinstance(chunk["created"], int)
    assert not hasattr(chunk, "usage"), "Chunk cannot contain usage"
    for choice in chunk["choices"]:
        assert isinstance(choice["index"], int)
        assert hasattr(choice["delta"], "role")
        assert choice["finish_reason"] is None or isinstance(choice["finish_reason"], str)


def validate_last_format(chunk) -> None:
    assert isinstance(chunk, ModelResponseStream)
    assert not hasattr(chunk, "usage"), "Chunk cannot contain usage"
    for choice in chunk["choices"]:
        assert choice["delta"]["content"] is None
        assert choice["delta"]["function_call"] is None
        assert choice["delta"]["role"] is None
        assert choice["delta"]["tool_calls"] is None
        assert isinstance(choice["finish_reason"], str)


def streaming_format_tests(idx: int, chunk) -> tuple[str, bool]:
    if idx == 0:
        validate_first_format(chunk)
        assert chunk["choices"][0]["delta"]["role"] == "assistant"
    elif idx == 1:
        validate_second_format(chunk)
    finished = False
    if chunk["choices"][0]["finish_reason"]:
        validate_last_format(chunk)
        finished = True
    return chunk["choices"][0]["delta"]["content"] or "", finished


def check_stream(chunks) -> str:
    complete, finished = "", False
    for idx, chunk in enumerate(chunks):
        assert not finished, "a chunk after the finish chunk"
        text, finished = streaming_format_tests(idx, chunk)
        complete += text
    assert finished, "Finish reason not in final chunk"
    assert complete.strip(), "Empty response received"
    return complete


def assert_one_stream(chunks) -> None:
    """Beside the type checks: the exact values every chunk of one streamed answer carries."""
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert len({chunk.id for chunk in chunks}) == 1
    assert {(chunk.object, chunk.model) for chunk in chunks} == {
        ("chat.completion.chunk", "claude-haiku-4-5")
    }


def test_stream_chunk_format_sync(base_args):
    chunks = list(
        litellm.completion(
            **base_args, messages=[{"role": "user", "content": "Hello, how are you?"}], stream=True
        )
    )
    assert check_stream(chunks) == HELLO.final_text
    assert_one_stream(chunks)


async def test_stream_chunk_format_async(base_args):
    stream = await litellm.acompletion(
        **base_args, messages=[{"role": "user", "content": "Hello, how are you?"}], stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert check_stream(chunks) == HELLO.final_text
    assert_one_stream(chunks)


# --- LiteLLM's own base classes, from a checkout ---------------------------------------------------

SUITE_DIR = os.environ.get("LITELLM_SUITE_DIR")


def test_litellm_suite_loader(conol_fake, tmp_path):
    """Runs LiteLLM's ``BaseLLMChatTest``/``BaseReasoningLLMTests`` subclassed for conol, from a checkout
    (``LITELLM_SUITE_DIR``: the root of a BerriAI/litellm checkout at the installed version's tag)."""
    if not SUITE_DIR:
        pytest.skip(
            "LITELLM_SUITE_DIR is not set: LiteLLM's test base classes are not in its wheel nor in this "
            "repository; point it at a BerriAI/litellm checkout to run them"
        )
    import subprocess
    import sys

    base = os.path.join(SUITE_DIR, "tests", "llm_translation", "base_llm_unit_tests.py")
    assert os.path.isfile(base), f"no {base}: LITELLM_SUITE_DIR must be a litellm checkout's root"
    module = tmp_path / "test_conol_litellm_suite.py"
    module.write_text(
        SUITE_MODULE.format(
            base_dir=os.path.dirname(base), base_url=conol_fake.base_url, token=conol_fake.token
        )
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(module)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    print(result.stdout[-6000:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


SUITE_MODULE = """
import sys
sys.path.insert(0, {base_dir!r})
import litellm_conol
litellm_conol.register()
from base_llm_unit_tests import BaseLLMChatTest, BaseReasoningLLMTests

ARGS = {{"model": "conol/claude-haiku-4-5", "api_base": {base_url!r}, "api_key": {token!r}}}


class TestConolChat(BaseLLMChatTest):
    def get_base_completion_call_args(self):
        return dict(ARGS)

    def get_base_completion_call_args_with_reasoning_model(self):
        return dict(ARGS)

    def test_tool_call_no_arguments(self, tool_call_no_arguments):
        pass


class TestConolReasoning(BaseReasoningLLMTests):
    def get_base_completion_call_args(self):
        return {{**ARGS, "messages": [{{"role": "user", "content": "Hi"}}]}}
"""
