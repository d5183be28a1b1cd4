"""The catalog's metadata and prices in LiteLLM's model map, and first-party-like usage and chunks."""

from __future__ import annotations

import json
from pathlib import Path

import litellm
import litellm.utils
import pytest

import litellm_conol.core.models
from litellm_conol.core.models.catalog import INFO_FIELDS, default_catalog, load_catalog
from litellm_conol.fake import BUILTINS
from litellm_conol.provider.model_map import model_map_entries

litellm_conol.register()
pytestmark = pytest.mark.timeout(60)
MODEL = "conol/claude-haiku-4-5"


@pytest.fixture
def kw(conol_fake) -> dict:
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


def test_every_catalog_model_carries_every_metadata_field_and_the_file_says_where_prices_come_from():
    raw = json.loads((Path(litellm_conol.core.models.__file__).parent / "models.json").read_text())
    assert "upstream vendor's public list price" in raw["price_source"]
    for model in default_catalog().models:
        assert set(model.model_info()) == set(INFO_FIELDS), model.id


def test_a_catalog_field_of_the_wrong_type_or_name_is_refused(tmp_path):
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": [{"id": "a", "agent_model": "x/a", "supports_vision": "yes"}]}))
    with pytest.raises(ValueError, match="supports_vision must be bool"):
        load_catalog(path)
    path.write_text(json.dumps({"models": [{"id": "a", "agent_model": "x/a", "input_cost_per_tokn": 1e-6}]}))
    with pytest.raises(ValueError, match="unknown field 'input_cost_per_tokn'"):
        load_catalog(path)


def test_litellm_knows_every_catalog_model():
    for model in default_catalog().models:
        name = f"conol/{model.id}"
        info = litellm.get_model_info(name)
        for field, value in model.model_info().items():
            assert info[field] == value, (name, field)
        assert info["litellm_provider"] == "conol" and info["mode"] == "chat"
        assert litellm.utils.supports_function_calling(name) is True
        assert litellm.utils.supports_response_schema(name) is True
        assert litellm.utils.supports_reasoning(name) is True
        assert litellm.utils.supports_vision(name) is model.supports_vision  # images go as assets
        # not inherited from a same-named model of another provider (anthropic's claude-haiku-4-5)
        assert litellm.utils.supports_pdf_input(name) is False
        assert litellm.utils.supports_prompt_caching(name) is False


def test_a_model_registered_by_the_user_first_keeps_its_entry():
    entries = model_map_entries(default_catalog())
    assert entries[MODEL]["input_cost_per_token"] == 1e-06
    litellm.register_model({"conol/glm-5.1": {"input_cost_per_token": 7e-06, "litellm_provider": "conol"}})
    litellm_conol.register()  # again: the catalog does not overwrite it
    assert litellm.get_model_info("conol/glm-5.1")["input_cost_per_token"] == 7e-06


def test_reasoning_effort_is_a_supported_param_and_public_get_optional_params_keeps_it():
    assert "reasoning_effort" in litellm.get_supported_openai_params(model=MODEL)
    assert "reasoning_effort" in litellm.get_model_info(MODEL)["supported_openai_params"]
    params = litellm.get_optional_params(
        model="claude-haiku-4-5", custom_llm_provider="conol", reasoning_effort="high"
    )
    assert params["reasoning_effort"] == "high"


def test_completion_cost_is_tokens_times_the_catalog_price(kw):
    response = litellm.completion(model=MODEL, messages=[{"role": "user", "content": "Hi"}], **kw)
    usage = response.usage
    expected = usage.prompt_tokens * 1e-06 + usage.completion_tokens * 5e-06
    assert response._hidden_params["response_cost"] == pytest.approx(expected)
    assert litellm.completion_cost(response) == pytest.approx(expected)
    assert response._hidden_params["custom_llm_provider"] == "conol"


def test_a_call_with_its_own_prices_is_charged_those(kw):
    response = litellm.completion(
        model=MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        input_cost_per_token=2e-06,
        output_cost_per_token=3e-06,
        **kw,
    )
    usage = response.usage
    assert response._hidden_params["response_cost"] == pytest.approx(
        usage.prompt_tokens * 2e-06 + usage.completion_tokens * 3e-06
    )


def test_streamed_and_non_streamed_usage_of_one_answer_are_equal_reasoning_tokens_included(kw):
    ask = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], **kw}
    whole = litellm.completion(**ask)
    chunks = list(litellm.completion(**ask, stream=True, stream_options={"include_usage": True}))
    streamed = litellm.stream_chunk_builder(chunks).usage
    assert whole.usage.completion_tokens_details.reasoning_tokens > 0
    # the reasoning of the fake's answer to "Hi" (its default scenario), counted as LiteLLM counts it
    reasoning = litellm.token_counter(text=BUILTINS["hello"].final_reasoning, count_response_tokens=True)
    assert whole.usage.completion_tokens_details.reasoning_tokens == reasoning
    assert (whole.usage.prompt_tokens, whole.usage.completion_tokens, whole.usage.total_tokens) == (
        streamed.prompt_tokens,
        streamed.completion_tokens,
        streamed.total_tokens,
    )
    assert (
        whole.usage.completion_tokens_details.reasoning_tokens
        == streamed.completion_tokens_details.reasoning_tokens
    )
    assert whole.usage.completion_tokens_details.text_tokens == streamed.completion_tokens_details.text_tokens


def test_streamed_chunks_name_the_provider_and_carry_empty_not_null_content_before_the_finish(kw):
    chunks = list(
        litellm.completion(model=MODEL, messages=[{"role": "user", "content": "Hi"}], stream=True, **kw)
    )
    assert {chunk._hidden_params.get("custom_llm_provider") for chunk in chunks} == {"conol"}
    *body, last = chunks
    assert [chunk.choices[0].delta.content for chunk in body if chunk.choices[0].delta.content is None] == []
    assert any(getattr(chunk.choices[0].delta, "reasoning_content", None) for chunk in body)
    assert last.choices[0].finish_reason == "stop" and last.choices[0].delta.content is None


def test_a_tool_schema_naming_an_unknown_draft_is_checked_without_a_warning():
    import warnings

    from litellm_conol.core.answer.structured import check_tool_schema, schema_error

    schema = {"$schema": "https://json-schema.org/draft-07/schema", "type": "object", "required": ["city"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # jsonschema's "metaschema not found" warning fails this
        check_tool_schema("get_weather", schema)
        assert schema_error(schema, {}) == "at $: 'city' is a required property"
