"""The one effort mapping (core/models/effort): both vocabularies, every input form, caps and ladders."""

from __future__ import annotations

import json

import pytest

from litellm_conol import BadRequest
from litellm_conol.core.config.boundary import settle_params
from litellm_conol.core.config.options import build_request
from litellm_conol.core.models.catalog import default_catalog, load_catalog
from litellm_conol.core.models.effort import RANKS, check_ladder, choose_effort, clamp, effort_inputs

pytestmark = pytest.mark.timeout(30)

SHEET = ("low", "medium", "high", "max")
HAIKU = ("low", "medium", "high")
DEEPSEEK = ("high", "max")
OR2_OPUS = ("low", "medium", "high", "xhigh")
OR2_HAIKU = ("minimal", "low", "medium", "high")


@pytest.mark.parametrize(
    "word, sheet, haiku, deepseek, or2_opus, or2_haiku",
    [
        ("none", "low", "low", "high", "low", "minimal"),
        ("minimal", "low", "low", "high", "low", "minimal"),
        ("low", "low", "low", "high", "low", "low"),
        ("medium", "medium", "medium", "high", "medium", "medium"),
        ("high", "high", "high", "high", "high", "high"),
        ("xhigh", "max", "high", "max", "xhigh", "high"),
        ("max", "max", "high", "max", "xhigh", "high"),
    ],
)
def test_each_word_of_both_vocabularies_on_each_ladder(word, sheet, haiku, deepseek, or2_opus, or2_haiku):
    got = [
        choose_effort({"reasoning_effort": word}, ladder=ladder).effort
        for ladder in (SHEET, HAIKU, DEEPSEEK, OR2_OPUS, OR2_HAIKU)
    ]
    assert got == [sheet, haiku, deepseek, or2_opus, or2_haiku]


def test_xhigh_and_max_are_the_same_top_step_and_minimal_is_below_low():
    assert RANKS["xhigh"] == RANKS["max"] > RANKS["high"]
    assert RANKS["none"] < RANKS["minimal"] < RANKS["low"]
    assert clamp(RANKS["minimal"], SHEET) == "low"  # none at or below: the lowest step


@pytest.mark.parametrize(
    "inputs, effort, source",
    [
        (
            {"output_config": {"effort": "medium"}, "thinking": {"type": "adaptive"}},
            "medium",
            "output_config",
        ),
        ({"output_config": {"effort": "max"}, "reasoning_effort": "low"}, "max", "output_config"),
        ({"reasoning_effort": {"effort": "high", "summary": "auto"}}, "high", "reasoning_effort"),
        ({"reasoning": {"effort": "minimal"}}, "low", "reasoning"),
        ({"thinking": {"type": "enabled", "budget_tokens": 31999}}, "max", "thinking"),
        ({"thinking": {"type": "enabled", "budget_tokens": 4096}}, "high", "thinking"),
        ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "medium", "thinking"),
        ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, "low", "thinking"),
        ({"thinking": {"type": "adaptive"}}, "high", "thinking"),
        ({"thinking": {"type": "disabled"}}, "low", "thinking"),
        ({}, "low", "default"),
    ],
)
def test_every_input_form(inputs, effort, source):
    choice = choose_effort(inputs, ladder=SHEET)
    assert (choice.effort, choice.source) == (effort, source)


def test_default_effort_is_used_when_nothing_is_asked_and_for_adaptive_thinking():
    assert choose_effort({}, default_effort="medium").effort == "medium"
    assert choose_effort({}, default_effort="medium").source == "default_effort"
    assert choose_effort({"thinking": {"type": "adaptive"}}, default_effort="low").effort == "low"
    assert choose_effort({"reasoning_effort": "high"}, default_effort="low").effort == "high"


def test_max_effort_caps_in_either_vocabulary():
    claude_code = {"thinking": {"type": "enabled", "budget_tokens": 31999}}
    assert choose_effort(claude_code, max_effort="medium").effort == "medium"
    assert choose_effort(claude_code, ladder=OR2_HAIKU, max_effort="minimal").effort == "minimal"
    assert choose_effort(claude_code, max_effort="xhigh").effort == "max"
    assert choose_effort({"reasoning_effort": "low"}, max_effort="high").effort == "low"


def test_a_cap_below_the_models_lowest_step_is_refused_not_exceeded():
    with pytest.raises(
        BadRequest, match=r"max_effort 'low' is below the lowest effort this model runs at \('high'"
    ):
        choose_effort({}, ladder=DEEPSEEK, max_effort="low")


@pytest.mark.parametrize(
    "inputs, kwargs, named",
    [
        ({"reasoning_effort": "extreme"}, {}, "reasoning_effort 'extreme'"),
        ({"output_config": {"effort": "ultra"}}, {}, "output_config.effort 'ultra'"),
        ({"reasoning": {"effort": 3}}, {}, "reasoning.effort 3"),
        ({}, {"default_effort": "lots"}, "default_effort 'lots'"),
        ({}, {"max_effort": "huge"}, "max_effort 'huge'"),
        ({"thinking": {"type": "enabled", "budget_tokens": "lots"}}, {}, "budget_tokens 'lots'"),
    ],
)
def test_bad_words_are_refused_naming_the_field(inputs, kwargs, named):
    with pytest.raises(BadRequest, match=named):
        choose_effort(inputs, **kwargs)


def test_the_original_body_wins_and_the_adapters_own_reasoning_effort_is_dropped():
    # what LiteLLM's /v1/messages adapter hands a non-Claude name for Claude Code's request
    params = {"reasoning_effort": "high", "max_tokens": 32000}
    body = {"thinking": {"type": "enabled", "budget_tokens": 31999}, "max_tokens": 32000}
    assert effort_inputs(params, body) == {"thinking": body["thinking"]}
    # and for a Claude name: thinking as is, output_config dropped (only the body has it)
    params = {"thinking": {"type": "adaptive"}}
    body = {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}}
    assert effort_inputs(params, body) == body
    # a chat body's own reasoning_effort stays, outside the proxy the params are all there is
    assert effort_inputs({"reasoning_effort": "low"}, {"reasoning_effort": "low"}) == {
        "reasoning_effort": "low"
    }
    assert effort_inputs({"reasoning_effort": "low"}, None) == {"reasoning_effort": "low"}


def test_packaged_ladders_and_their_default():
    catalog = default_catalog()
    assert catalog.ladder("claude-haiku-4-5") == HAIKU
    assert catalog.ladder("deepseek-v4-pro") == DEEPSEEK
    assert catalog.ladder("gpt-5.6-luna") == SHEET
    assert catalog.ladder("not-listed") == SHEET
    for model in catalog.models:
        # the words the fake takes (docs/protocol.md#effort-words)
        assert set(catalog.ladder(model.id)) <= set(SHEET)


def test_ladders_in_an_extra_file_replace_and_are_checked(tmp_path):
    extra = tmp_path / "extra.json"
    extra.write_text(
        json.dumps({"models": [], "effort_ladders": {"_comment": "x", "glm-5.2": list(OR2_HAIKU)}})
    )
    catalog = default_catalog().extended(load_catalog(extra))
    assert catalog.ladder("glm-5.2") == OR2_HAIKU
    assert catalog.ladder("claude-haiku-4-5") == HAIKU
    with pytest.raises(ValueError, match="lowest first"):
        check_ladder("m", ["high", "low"])
    with pytest.raises(ValueError, match="'ultra'"):
        check_ladder("m", ["low", "ultra"])
    with pytest.raises(ValueError, match="non-empty"):
        check_ladder("m", [])


def _build(optional_params, original_body=None, model="conol/claude-haiku-4-5"):
    return build_request(
        model=model,
        messages=[{"role": "user", "content": "hi"}],
        api_key="tok",
        api_base="http://127.0.0.1:9",
        optional_params=optional_params,
        timeout=None,
        original_body=original_body,
    )


def test_build_request_clamps_caps_and_refuses_a_cap_from_the_request():
    claude_code = {"thinking": {"type": "enabled", "budget_tokens": 31999}}
    assert _build(claude_code).body.agent_effort == "high"  # haiku's top step
    assert _build(claude_code, model="conol/gpt-5.6-luna").body.agent_effort == "max"
    assert _build({**claude_code, "max_effort": "medium"}).body.agent_effort == "medium"
    assert _build({"default_effort": "medium"}).body.agent_effort == "medium"
    body = {"messages": [], "output_config": {"effort": "low"}, "thinking": {"type": "adaptive"}}
    assert _build({"thinking": {"type": "adaptive"}}, body).body.agent_effort == "low"
    # through the proxy, a cap in the request body is the caller's: refused, the deployment's kept
    with pytest.raises(BadRequest, match="`max_effort` is set by the proxy operator, not per request"):
        settle_params({"max_effort": "max"}, {"max_effort": "max"}, {"max_effort": "medium"})
