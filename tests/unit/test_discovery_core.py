"""Reading ``GET /api/agent-servers`` (core/models/discovery.py) in every shape the sources show, the catalog
file written from it, its diff, and the deployment's discovery options. The servers' apiKey is kept
by nothing."""

from __future__ import annotations

import json

import pytest

from litellm_conol import BadRequest
from litellm_conol.core.config.boundary import settings_of
from litellm_conol.core.models.catalog import Catalog, CatalogModel, load_catalog
from litellm_conol.core.models.discovery import (
    DiscoveredModel,
    DiscoveryUnreadable,
    catalog_diff,
    catalog_json,
    discovered_catalog,
    discovery_settings,
    parse_agent_servers,
)

SECRET = "sk-agent-server-secret-0123456789"
FABLE = {
    "name": "claude-fable-5",
    "displayName": "Claude Fable 5",
    "efforts": ["low", "xhigh"],
    "inputModalities": ["text", "image"],
}
GLM = {"name": "z-ai/glm-5.2", "efforts": ["minimal", "high"], "inputModalities": ["text"]}
# another client's test "live nested agent-server model schema" (docs/protocol.md#discovery)
NESTED = [
    {
        "id": "server-1",
        "apiKey": SECRET,
        "capabilities": {
            "defaultAgent": "conol",
            "agents": [
                {
                    "name": "conol",
                    "defaultModel": "claude-fable-5",
                    "models": [FABLE, GLM],
                    "modelPresets": [
                        {"id": "pro", "text": "z-ai/glm-5.2", "multimodal": "moonshotai/kimi-k3"}
                    ],
                }
            ],
        },
    }
]
EXPECTED = (
    DiscoveredModel("claude-fable-5", "Claude Fable 5", ("low", "xhigh"), ("text", "image")),
    DiscoveredModel("z-ai/glm-5.2", None, ("minimal", "high"), ("text",)),
)


@pytest.mark.parametrize(
    "answer",
    [
        NESTED,
        {"agentServers": NESTED},
        {"servers": NESTED},
        {"data": NESTED},
        [{"id": "s", "apiKey": SECRET, "agents": [{"name": "conol", "models": [FABLE, GLM]}]}],
    ],
    ids=["list", "agentServers", "servers", "data", "agents-on-server"],
)
def test_every_known_shape_reads_the_same_models(answer):
    found = parse_agent_servers(answer)
    assert found.models == EXPECTED
    assert found.supports_vision("claude-fable-5") is True
    assert found.supports_vision("z-ai/glm-5.2") is False
    assert found.supports_vision("unknown") is None
    assert found.effort_ladder("z-ai/glm-5.2") == ("minimal", "high")
    assert SECRET not in repr(found) and SECRET not in str(found.models)


def test_string_models_are_names_with_nothing_known():
    found = parse_agent_servers(
        [{"capabilities": {"agents": [{"models": ["a/b", "", 7, {"displayName": "x"}]}]}}]
    )
    assert found.models == (DiscoveredModel("a/b"),)
    assert found.supports_vision("a/b") is None and found.effort_ladder("a/b") is None


def test_an_empty_ladder_is_not_an_unknown_one():
    found = parse_agent_servers([{"agents": [{"models": [{"name": "openrouter/fusion", "efforts": []}]}]}])
    assert found.effort_ladder("openrouter/fusion") == ()


@pytest.mark.parametrize(
    "answer, said",
    [
        ({"agentList": NESTED}, "expected a list of agent servers (an object with keys agentList)"),
        ("<html>", "expected a list of agent servers (a JSON str)"),
        (None, "expected a list of agent servers (not JSON)"),
    ],
)
def test_an_unknown_shape_is_unreadable_naming_what_it_saw_never_values(answer, said):
    with pytest.raises(DiscoveryUnreadable) as caught:
        parse_agent_servers(answer)
    assert str(caught.value) == said


def test_no_servers_at_all_is_a_readable_empty_list():
    assert parse_agent_servers([]).models == ()


# --- the catalog file --------------------------------------------------------------------------

PACKAGED = Catalog(
    models=(
        CatalogModel("glm-5.2", "z-ai/glm-5.2"),
        CatalogModel("hy3", "tencent/hy3"),
    )
)


def test_the_written_file_reads_back_with_packaged_ids_and_no_secret(tmp_path):
    catalog = discovered_catalog(parse_agent_servers(NESTED), PACKAGED)
    text = catalog_json(catalog)
    path = tmp_path / "c.json"
    path.write_text(text)
    assert SECRET not in text and "apiKey" not in text
    assert load_catalog(path) == catalog
    assert [json.loads(line.strip().rstrip(",")) for line in text.splitlines()[3:5]] == [
        {
            "id": "claude-fable-5",
            "agent_model": "claude-fable-5",
            "supports_vision": True,
            "efforts": ["low", "xhigh"],
        },
        {
            "id": "glm-5.2",
            "agent_model": "z-ai/glm-5.2",
            "supports_vision": False,
            "efforts": ["minimal", "high"],
        },
    ]


def test_the_diff_says_added_missing_and_changed():
    catalog = discovered_catalog(parse_agent_servers(NESTED), PACKAGED)
    assert catalog_diff(PACKAGED, catalog) == [
        "+ conol/claude-fable-5           agentModel=claude-fable-5 (vision, efforts low-xhigh)",
        "- conol/hy3                      agentModel=tencent/hy3 (not offered)",
        "~ conol/glm-5.2                  supports_vision: ? -> no; efforts: ? -> minimal-high",
    ]
    assert catalog_diff(catalog, catalog) == []
    # a packaged ladder (models.json effort_ladders) is what the discovered one is compared with
    laddered = Catalog(models=PACKAGED.models, effort_ladders={"glm-5.2": ("low", "medium", "high")})
    assert catalog_diff(laddered, catalog)[-1] == (
        "~ conol/glm-5.2                  supports_vision: ? -> no; efforts: low-medium-high -> minimal-high"
    )


def test_the_packaged_catalog_says_vision_as_a_flag_or_not_at_all():
    assert all(
        model.supports_vision is None or isinstance(model.supports_vision, bool)
        for model in load_catalog().models
    )


# --- options -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, ("off", 3600.0)),
        ({"discovery": "startup"}, ("startup", 3600.0)),
        ({"discovery": "Interval", "discovery_interval": 120}, ("interval", 120.0)),
        ({"extra_body": {"discovery": "interval"}}, ("interval", 3600.0)),
    ],
)
def test_discovery_options(params, expected):
    assert discovery_settings(settings_of(params)) == expected


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"discovery": "always"}, "discovery must be one of 'off', 'startup', 'interval', got 'always'"),
        (
            {"discovery": "interval", "discovery_interval": 5},
            "discovery_interval must be a number of seconds from 60 to 604800, got 5",
        ),
        ({"discovery_interval": True}, "discovery_interval must be a number"),
    ],
)
def test_bad_discovery_options_are_a_400(params, problem):
    with pytest.raises(BadRequest, match=problem):
        discovery_settings(settings_of(params))
