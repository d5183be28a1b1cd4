"""The settings model: one parser and coercion rule, every option declared once with its scope, the
operator/caller boundary, and the reference page generated from the declarations."""

from __future__ import annotations

import pytest
from support.paths import ROOT

from litellm_conol import BadRequest
from litellm_conol.core.config.boundary import settings_of, settle_params
from litellm_conol.core.config.options import build_request
from litellm_conol.core.config.settings_table import SETTINGS
from litellm_conol.ops import reference_markdown
from litellm_conol.ops.settings_doc import page_with_reference

SCOPES = {name: setting.scope for name, setting in SETTINGS.items()}
# every option a caller may not set: the connection (api_key, api_base) and the environment-only ones too
OPERATOR_OPTIONS = sorted(name for name, s in SETTINGS.items() if s.scope == "operator")
NO_ENV: dict[str, str] = {}


# --- one coercion rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, written, read",
    [
        ("max_images", "5", 5),
        ("max_repair_turns", "5", 5),
        ("session_reuse_ttl", "60", 60.0),
        ("settle_window", "0.5", 0.5),
        ("strict_model", "true", True),
        ("strict_model", "off", False),
        ("session_reuse", False, "off"),  # YAML's bare `off`
        ("session_reuse", "OFF", "off"),
        ("image_fetch_ports", "80, 8080", frozenset({80, 8080})),
        ("caller_options", ["max_images"], ("max_images",)),
        ("max_images", None, 20),
    ],
)
def test_a_string_from_yaml_or_the_environment_reads_as_the_value_it_spells(name, written, read):
    assert settings_of({name: written}, NO_ENV)[name] == read


@pytest.mark.parametrize(
    "params, environ, problem",
    [
        ({"max_images": "5.5"}, {}, "max_images must be a whole number from 1 to 100, got '5.5'"),
        ({"max_images": True}, {}, "max_images must be a whole number from 1 to 100, got True"),
        ({"max_repair_turns": 11}, {}, "max_repair_turns must be a whole number from 0 to 10, got 11"),
        (
            {"settle_window": "soon"},
            {},
            "settle_window must be a number of seconds from 0 to 120, got 'soon'",
        ),
        ({"settle_window": "nan"}, {}, "settle_window must be a number of seconds from 0 to 120, got 'nan'"),
        ({"strict_model": "maybe"}, {}, "strict_model must be true or false, got 'maybe'"),
        ({"agent_model": " "}, {}, "agent_model must be a non-empty string, got ' '"),
        (
            {"max_images": ""},
            {"CONOL_TIMEZONE": " "},
            "max_images must be a whole number from 1 to 100, got ''",
        ),
        ({"model_pinning": False}, {}, "model_pinning must be one of 'create', 'pin', 'auto', got False"),
        ({"image_fetch_ports": [80, 0]}, {}, "image_fetch_ports must be a list of port numbers"),
        ({}, {"CONOL_IDLE_TIMEOUT": "0"}, "CONOL_IDLE_TIMEOUT must be a number of seconds more than 0 and"),
        ({}, {"CONOL_MAX_CONCURRENT_POLLS": "0"}, "CONOL_MAX_CONCURRENT_POLLS must be a whole number from 1"),
    ],
)
def test_a_bad_value_is_a_400_naming_the_option_or_variable_and_what_it_takes(params, environ, problem):
    with pytest.raises(BadRequest) as caught:
        settings_of(params, environ)
    assert caught.value.status_code == 400
    assert caught.value.message.startswith(problem)


def test_a_secret_in_a_bad_value_is_never_echoed():
    with pytest.raises(BadRequest) as caught:
        settings_of({"redis_password": ["hunter2-secret"]}, NO_ENV)
    assert caught.value.message == "redis_password must be a non-empty string, got a value"


def test_the_call_wins_over_the_environment_and_the_environment_over_the_default():
    environ = {"CONOL_SETTLE_WINDOW": "2", "CONOL_TIMEZONE": "Europe/Paris"}
    settings = settings_of({"settle_window": 3}, environ)
    assert (settings["settle_window"], settings.source("settle_window")) == (3.0, "param")
    assert (settings["timezone"], settings.source("timezone")) == ("Europe/Paris", "env")
    assert (settings["idle_timeout"], settings.source("idle_timeout")) == (120.0, "default")


def test_every_declaration_is_whole():
    for name, setting in SETTINGS.items():
        assert setting.name == name and setting.doc and setting.scope in ("operator", "narrow", "request")
        assert setting.coerce(None) == setting.default  # the default reads as itself
        if setting.scope == "narrow":
            assert setting.ranks is not None or setting.kind == "whole", name


def test_the_scopes_a_careful_operator_would_choose():
    """The decisions, as a table a reviewer can read (docs/configuration.md#who-sets-what)."""
    assert {n for n, s in SCOPES.items() if s == "narrow"} == {
        "max_repair_turns",
        "tool_validation",
        "max_image_bytes",
        "max_images",
        "session_reuse",
    }
    assert {n for n, s in SCOPES.items() if s == "request"} == {
        "builtin_tools",
        "timezone",
        "reasoning_effort",
        "response_format",
        "stop",
        "max_tokens",
        "tools",
        "n",
    }
    for name in ("redis_url", "image_fetch", "image_fetch_timeout", "model_pinning", "max_effort"):
        assert SCOPES[name] == "operator"


# --- the boundary ------------------------------------------------------------------------------------

DEPLOYMENT = {"model": "conol/claude-haiku-4-5", "max_images": 5, "session_reuse": "off"}


def merged(body):
    """What LiteLLM hands the handler: the caller's body keys over the deployment's."""
    return {**DEPLOYMENT, **{k: v for k, v in body.items() if k not in ("model", "messages")}}


@pytest.mark.parametrize("name", OPERATOR_OPTIONS)
@pytest.mark.parametrize("where", ["top level", "extra_body", "extra_body in extra_body"])
def test_an_operator_option_in_a_request_body_is_a_400_naming_it(name, where):
    value = SETTINGS[name].default if SETTINGS[name].default is not None else "x"
    body = {
        "top level": {name: value},
        "extra_body": {"extra_body": {name: value}},
        "extra_body in extra_body": {"extra_body": {"extra_body": {name: value}}},
    }[where]
    with pytest.raises(BadRequest) as caught:
        settle_params(merged(body), body, DEPLOYMENT, NO_ENV)
    assert caught.value.message.startswith(f"`{name}` is set by the proxy operator, not per request")


@pytest.mark.parametrize(
    "body, problem",
    [
        (
            {"max_images": 6},
            "`max_images` can only be tightened per request: this deployment allows 5, the request asked for 6",
        ),
        (
            {"session_reuse": "auto"},
            "`session_reuse` can only be tightened per request: this deployment allows 'off'",
        ),
        (
            {"extra_body": {"max_repair_turns": 3}},
            "`max_repair_turns` can only be tightened per request: this deployment allows 2",
        ),
    ],
)
def test_a_narrow_option_that_widens_is_a_400(body, problem):
    with pytest.raises(BadRequest) as caught:
        settle_params(merged(body), body, DEPLOYMENT, NO_ENV)
    assert caught.value.message.startswith(problem)


def test_a_narrow_option_that_tightens_is_taken():
    body = {"max_images": 2, "tool_validation": "off"}
    params = settle_params(merged(body), body, DEPLOYMENT, NO_ENV)
    assert (params["max_images"], params["tool_validation"], params["session_reuse"]) == (2, "off", "off")


def test_the_operator_values_win_over_whatever_the_merge_holds():
    """A caller's key that reached the merge by a path the body check did not see changes nothing."""
    smuggled = {**DEPLOYMENT, "redis_url": "redis://evil:1", "image_fetch": "public", "max_images": 99}
    params = settle_params(smuggled, {"messages": []}, DEPLOYMENT, NO_ENV)
    assert "redis_url" not in params and "image_fetch" not in params
    assert params["max_images"] == 5


def test_an_operator_can_open_an_option_to_callers():
    deployment = {**DEPLOYMENT, "caller_options": ["image_fetch", "max_images"]}
    body = {"image_fetch": "public", "max_images": 50}
    params = settle_params({**deployment, **body}, body, deployment, NO_ENV)
    assert (params["image_fetch"], params["max_images"]) == ("public", 50)
    with pytest.raises(BadRequest, match="caller_options names 'caller_options'"):
        settle_params({}, {}, {"caller_options": ["caller_options"]}, NO_ENV)


def test_a_narrow_option_is_refused_when_the_deployment_cannot_be_read():
    with pytest.raises(BadRequest, match="`max_images` can only be tightened per request, and this"):
        settle_params({"max_images": 1}, {"max_images": 1}, None, NO_ENV)


def test_a_narrow_option_is_checked_on_the_value_the_call_will_use():
    """The body asks for 1 image; a fallbacks entry LiteLLM merged in says 100: the merge is what the
    call would use, so that is what is checked."""
    body = {"max_images": 1}
    with pytest.raises(BadRequest) as caught:
        settle_params({**merged(body), "max_images": 100}, body, DEPLOYMENT, NO_ENV)
    assert caught.value.message == (
        "`max_images` can only be tightened per request: this deployment allows 5, the request asked for 100"
    )


def test_without_the_deployment_nothing_in_the_merge_is_taken_for_an_option_not_the_callers():
    """Fail closed: the merge cannot tell the operator's values from a caller's, so neither is used."""
    smuggled = {
        "redis_url": "redis://evil:1",
        "image_fetch": "public",
        "max_images": 99,
        "timezone": "Asia/Tokyo",
    }
    assert settle_params(smuggled, {"messages": []}, None, NO_ENV) == {"timezone": "Asia/Tokyo"}


@pytest.mark.parametrize(
    "name", ["usage_log", "models_file", "max_concurrent_polls", "image_bytes_in_flight"]
)
def test_an_environment_only_option_in_a_body_is_a_400_naming_it(name):
    body = {"extra_body": {name: "1"}}
    with pytest.raises(BadRequest) as caught:
        settle_params(merged(body), body, DEPLOYMENT, NO_ENV)
    assert caught.value.message == (
        f"`{name}` is set by the proxy operator, not per request: it is read from the environment "
        f"({SETTINGS[name].env}) only; remove it from the request"
    )


def test_api_key_in_a_body_is_refused_by_us():
    """LiteLLM 1.108 does not guard a body's ``api_key``: the boundary does."""
    for body in ({"api_key": "caller-token"}, {"extra_body": {"api_key": None}}):
        with pytest.raises(BadRequest, match="^`api_key` is set by the proxy operator, not per request"):
            settle_params(merged(body), body, DEPLOYMENT, NO_ENV)


@pytest.mark.parametrize(
    "name",
    [
        *("api_key", "api_base", "redis_url", "redis_host", "redis_port", "image_fetch_ports"),
        *("discovery", "discovery_interval", "session_reuse_cap", "session_reuse_backoff", "usage_log"),
        *("balance_poll_interval", "min_balance"),
    ],
)
def test_caller_options_cannot_open_what_shapes_connections_or_shared_state(name):
    with pytest.raises(BadRequest) as caught:
        settle_params({}, {}, {**DEPLOYMENT, "caller_options": [name]}, NO_ENV)
    assert (
        caught.value.message == f"caller_options names {name!r}, which is not an option a caller can be given"
    )


def test_params_are_flattened_once():
    """An ``extra_body`` inside ``extra_body`` is never lifted into the options (it is refused for an
    operator option, and a narrow or caller option two levels down is simply not read)."""
    params = {"extra_body": {"extra_body": {"api_base": "http://evil", "timezone": "Asia/Tokyo"}}}
    assert settle_params(params, None, None, NO_ENV) == {}
    assert settings_of(settle_params(params, None, None, NO_ENV), NO_ENV)["timezone"] == "UTC"
    body = {"extra_body": {"extra_body": {"max_images": 1}}}
    assert settle_params(body, body, DEPLOYMENT, NO_ENV)["max_images"] == 5  # the deployment's


def test_outside_a_proxy_the_code_author_is_the_operator():
    params = {"redis_url": "redis://mine:1", "extra_body": {"image_fetch": "public", "max_images": 99}}
    assert settle_params(params, None, None, NO_ENV) == {
        "redis_url": "redis://mine:1",
        "image_fetch": "public",
        "max_images": 99,
    }


def test_caller_options_are_read_after_the_boundary_so_build_request_sees_the_operator_values():
    body = {"max_images": 1}
    params = settle_params(merged(body), body, DEPLOYMENT, NO_ENV)
    request = build_request(
        model="conol/claude-haiku-4-5",
        messages=[{"role": "user", "content": "hi"}],
        api_key="tok",
        api_base="http://127.0.0.1:9",
        optional_params=params,
        timeout=None,
    )
    assert (request.image_limits.max_images, request.reuse.mode) == (1, "off")


# --- the reference page -------------------------------------------------------------------------------


def test_the_configuration_page_holds_the_reference_generated_from_the_declarations():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == page_with_reference(page), "run: litellm-conol settings --write-docs docs/configuration.md"
    for name, setting in SETTINGS.items():
        assert (f"`{name}`" if setting.param else f"`{setting.env}`") in reference_markdown()
