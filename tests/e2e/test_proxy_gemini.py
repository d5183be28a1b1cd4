"""Gemini's routes on ``conol/…`` models through the real proxy (shipped config, fake conol), as Gemini
CLI and the google-genai SDK call them: ``/v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse`` (LiteLLM's generateContent → completion adapter, reached through
``provider/litellm_compat.py``'s shim), ``:countTokens``, and the other token-counting and legacy routes
a client uses (docs/clients.md#every-route-a-client-uses). The real Gemini CLI: test_gemini_cli.py."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from support.chat import user
from support.estimates import estimated_completion_tokens, estimated_prompt_tokens
from support.proxyproc import MASTER_KEY
from support.spend_logger import spend_rows_after
from support.timing import bound

from litellm_conol.fake import BUILTINS, tool_result_in

pytestmark = pytest.mark.timeout(120)

MODEL = "conol/claude-haiku-4-5"
# conol's credit error rests the account it ran on until its refill
# (docs/team-deployment.md#several-accounts): it runs on an account of its own, so the shared proxy's
# default account goes on serving
SPENT, SPENT_TOKEN = "gemini-spent", "fake-conol-token-gemini-spent"
PROXY_DEPLOYMENTS = [  # on the shared proxy (tests/e2e/conftest.py)
    {"model_name": SPENT, "litellm_params": {"model": "conol/claude-haiku-4-5", "api_key": SPENT_TOKEN}}
]
HELLO = BUILTINS["hello"]
HEADERS = {"x-goog-api-key": MASTER_KEY}  # how the google-genai SDK (Gemini CLI) sends its key
WEATHER = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "description": "The weather in a city",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"city": {"type": "STRING"}},
                    "required": ["city"],
                },
            }
        ]
    }
]


def generate(proxy: Any, contents: list[dict[str, Any]], model: str = MODEL, **body: Any) -> httpx.Response:
    url = f"{proxy.base_url}/v1beta/models/{model}:generateContent"
    return httpx.post(url, json={"contents": contents, **body}, headers=HEADERS, timeout=60)


def stream(
    proxy: Any, contents: list[dict[str, Any]], model: str = MODEL, **body: Any
) -> tuple[int, list[dict[str, Any]]]:
    """The status and the SSE events (``data:`` lines, each a JSON object: no ``[DONE]``)."""
    url = f"{proxy.base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"
    with httpx.stream("POST", url, json={"contents": contents, **body}, headers=HEADERS, timeout=60) as r:
        lines = [line for line in r.iter_lines() if line]
        if r.status_code != 200:
            return r.status_code, [json.loads("".join(lines))]
    assert all(line.startswith("data: ") for line in lines), lines
    return 200, [json.loads(line.removeprefix("data: ")) for line in lines]


def said(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "parts": [{"text": text}]}]


def parts_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [part for event in events for c in event.get("candidates", []) for part in c["content"]["parts"]]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in parts_of(events))


def test_generate_content_answers_text_and_usage(proxy_fake_and_client, shipped_proxy):
    response = generate(shipped_proxy, said("Hi"))
    assert response.status_code == 200
    body = response.json()
    candidate = body["candidates"][0]
    assert candidate["content"] == {"parts": [{"text": HELLO.final_text}], "role": "model"}
    assert candidate["finishReason"] == "STOP"
    prompt, completion = estimated_prompt_tokens(user("Hi")), estimated_completion_tokens(HELLO)
    assert body["usageMetadata"] == {
        "promptTokenCount": prompt,
        "candidatesTokenCount": completion,
        "totalTokenCount": prompt + completion,
    }


def test_stream_generate_content_is_sse_with_usage_last(proxy_fake_and_client, shipped_proxy):
    """Reasoning is not passed on: LiteLLM's adapter maps no ``thought`` parts (see docs/clients.md)."""
    status, events = stream(
        shipped_proxy, said("Hi"), generationConfig={"thinkingConfig": {"includeThoughts": True}}
    )
    assert status == 200
    assert text_of(events) == HELLO.final_text
    assert not any(part.get("thought") for part in parts_of(events))
    assert [e["candidates"][0]["finishReason"] for e in events if e["candidates"][0].get("finishReason")] == [
        "STOP"
    ]
    assert events[-1]["usageMetadata"]["candidatesTokenCount"] == estimated_completion_tokens(HELLO)


@pytest.mark.parametrize("streamed", [False, True])
def test_function_declarations_are_tools_and_the_call_comes_back(
    proxy_fake_and_client, shipped_proxy, streamed
):
    conol, _ = proxy_fake_and_client
    contents = said("[[fake:tool_call]] Weather in Paris?")
    if streamed:
        status, events = stream(shipped_proxy, contents, tools=WEATHER)
    else:
        response = generate(shipped_proxy, contents, tools=WEATHER)
        status, events = response.status_code, [response.json()]
    assert status == 200
    calls = [part["functionCall"] for part in parts_of(events) if "functionCall" in part]
    assert calls == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert conol.last_session.tools == ["get_weather"]


def test_a_function_response_reaches_conol_and_the_answer_carries_it(proxy_fake_and_client, shipped_proxy):
    """The tool loop as Gemini CLI sends it: the model's functionCall, then the user's functionResponse;
    the second request continues the first one's conol session (session reuse)."""
    conol, _ = proxy_fake_and_client
    args = quote(json.dumps({"city": "Paris"}))
    asked = said(f"[[fake:use_tool name=get_weather args={args}]] What is the weather?")
    status, events = stream(shipped_proxy, asked, tools=WEATHER)
    assert status == 200
    call = next(part for part in parts_of(events) if "functionCall" in part)
    result = {"name": "get_weather", "response": {"output": "sunny, 22 C"}}
    history = [
        *asked,
        {"role": "model", "parts": [call]},
        {"role": "user", "parts": [{"functionResponse": result}]},
    ]
    status, events = stream(shipped_proxy, history, tools=WEATHER)
    assert status == 200
    rendered = '[Tool result #call_get_weather: get_weather({"city": "Paris"})]: {"output": "sunny, 22 C"}'
    expected = BUILTINS["use_tool"].expected_for(
        asked[0]["parts"][0]["text"], rendered, tools=["get_weather"]
    )
    assert tool_result_in([rendered]) == '{"output": "sunny, 22 C"}'
    assert text_of(events) == expected.final_text == 'The tool returned: {"output": "sunny, 22 C"}'
    assert len(conol.sessions) == 1 and conol.last_session.turns == 2
    assert conol.last_session.messages[-1] == rendered


@pytest.mark.parametrize(
    ("scenario", "status"),
    [("http_429", 429), ("agent_error_deterministic", 400), ("out_of_credits", 429)],
)
def test_errors_keep_the_status_gemini_cli_retries_by(proxy_fake_and_client, shipped_proxy, scenario, status):
    """Gemini CLI retries a 429 and 5xx, not another 4xx: conol's failures keep their status (out of
    credits is a 429 with the time to the account's refill, then the account rests: a 429 too)."""
    model = SPENT if scenario == "out_of_credits" else MODEL
    assert generate(shipped_proxy, said(f"[[fake:{scenario}]]"), model).status_code == status
    assert stream(shipped_proxy, said(f"[[fake:{scenario}]] streamed"), model)[0] == status


def test_a_request_we_can_refuse_costs_no_session(proxy_fake_and_client, shipped_proxy):
    conol, _ = proxy_fake_and_client
    response = generate(shipped_proxy, said(""))
    assert response.status_code == 400
    assert "messages contain no text to send" in response.json()["error"]["message"]
    assert conol.sessions == {}


# --- the other routes a client uses ----------------------------------------------------------------

TEXT = "Hello there, how are you today?"


def post(proxy: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{proxy.base_url}{path}", json=body, headers=HEADERS, timeout=60)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_token_counts_are_local_estimates_without_a_session(proxy_fake_and_client, shipped_proxy):
    conol, _ = proxy_fake_and_client
    expected = estimated_prompt_tokens(user(TEXT))
    google = post(shipped_proxy, f"/v1beta/models/{MODEL}:countTokens", {"contents": said(TEXT)})
    anthropic = post(shipped_proxy, "/v1/messages/count_tokens", {"model": MODEL, "messages": user(TEXT)})
    responses = post(shipped_proxy, "/v1/responses/input_tokens", {"model": MODEL, "input": TEXT})
    utils = post(shipped_proxy, "/utils/token_counter", {"model": MODEL, "messages": user(TEXT)})
    assert (google["totalTokens"], google["litellm_count_source"]) == (expected, "local_estimate")
    assert (anthropic["input_tokens"], anthropic["litellm_count_source"]) == (expected, "local_estimate")
    assert (responses["input_tokens"], responses["object"]) == (expected, "response.input_tokens")
    assert (utils["total_tokens"], utils["count_source"]) == (expected, "local_estimate")
    assert conol.sessions == {}


def test_legacy_completions_answer_as_text_completion(proxy_fake_and_client, shipped_proxy):
    body = post(shipped_proxy, "/v1/completions", {"model": MODEL, "prompt": "Hi"})
    assert body["object"] == "text_completion"
    assert (body["choices"][0]["text"], body["choices"][0]["finish_reason"]) == (HELLO.final_text, "stop")


def test_spend_is_logged_once_per_request_with_its_usage(proxy_fake_and_client, shipped_proxy, spend_log):
    """The adapter's inner completion logs the spend (LiteLLM's outer generateContent log fails, see
    docs/clients.md#limits-found): one row per request, with the usage the client was told."""
    before = spend_log.read_text().count("\n") if spend_log.exists() else 0
    answered = generate(shipped_proxy, said("[[fake:done]] spend")).json()["usageMetadata"]
    _, events = stream(shipped_proxy, said("[[fake:done]] spend streamed"))
    rows = spend_rows_after(spend_log, before, 2, bound(10))
    tokens = [(row["outcome"], row["model"], row["prompt_tokens"], row["completion_tokens"]) for row in rows]
    done = estimated_completion_tokens(BUILTINS["done"])
    assert tokens == [
        ("success", MODEL, answered["promptTokenCount"], done),
        ("success", MODEL, estimated_prompt_tokens(user("[[fake:done]] spend streamed")), done),
    ]
    assert events[-1]["usageMetadata"]["promptTokenCount"] == tokens[1][2]
    assert answered["candidatesTokenCount"] == done
