"""Who is calling (provider/caller.py), read from what a real LiteLLM proxy passed our handler on
each route (tests/fixtures/litellm/caller_kwargs.json, recorded by tests/support/caller_kwargs.py),
and the scopes that identity keys: bindings, uploaded images, the failure memory."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from support.caller_kwargs import FIXTURE, FORGED

from litellm_conol.client.assets import AssetCache
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.request.images import AssetRef
from litellm_conol.provider.caller import (
    CAPTURED_KEY,
    Caller,
    CapturedCaller,
    auth_metadata_name,
    caller_from_auth,
    caller_of,
    request_route,
)
from litellm_conol.provider.handler import _request
from litellm_conol.reuse.fingerprint import scope_digest
from litellm_conol.reuse.known_failures import failure_key

RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text())["cases"]
MASTER = "litellm_proxy_master_key"  # LiteLLM's user_api_key_hash for the master key


def kwargs_of(case: str) -> dict[str, Any]:
    recorded = copy.deepcopy(RECORDED[case]["kwargs"])
    return {
        "litellm_params": recorded["litellm_params"],
        "logging_obj": SimpleNamespace(user=recorded["logging_obj_user"]),
    }


def proxied(end_user: str | None) -> Caller:
    return Caller(proxied=True, key_hash=MASTER, team_id=None, user_id="default_user_id", end_user=end_user)


@pytest.mark.parametrize(
    ("case", "metadata_name", "end_user"),
    [
        ("chat", "metadata", None),
        ("chat_user", "metadata", "alice"),
        ("chat_user_stream", "metadata", "alice"),
        ("chat_forged", "metadata", "alice"),
        ("messages_user_id", "litellm_metadata", "bob"),  # anthropic metadata.user_id, as auth read it
        ("messages_user_id_stream", "litellm_metadata", "bob"),
        ("messages_forged", "litellm_metadata", "bob"),
        ("responses_user", "litellm_metadata", "carol"),
        ("responses_user_stream", "litellm_metadata", "carol"),
        ("responses_forged", "litellm_metadata", "carol"),
    ],
)
def test_each_route_is_read_where_the_proxy_auth_wrote(case, metadata_name, end_user):
    params = kwargs_of(case)["litellm_params"]
    assert auth_metadata_name(params["proxy_server_request"]["url"]) == metadata_name
    assert caller_of(kwargs_of(case)) == proxied(end_user)


def test_the_recordings_hold_no_forged_identity_where_auth_wrote():
    """LiteLLM 1.108 strips ``user_api_key_*`` a caller sends, then writes its own: the recording
    shows it, so a LiteLLM that stopped doing so fails here, not in production."""
    for case in ("chat_forged", "messages_forged", "responses_forged"):
        params = kwargs_of(case)["litellm_params"]
        written = params[auth_metadata_name(params["proxy_server_request"]["url"])]
        assert not set(FORGED.values()) & {str(v) for v in written.values()}, case


@pytest.mark.parametrize("case", ["messages_user_id", "responses_user"])
def test_the_callers_own_metadata_on_a_litellm_metadata_route_is_never_read(case):
    """On /v1/messages and /v1/responses ``metadata`` is the caller's: were a LiteLLM to pass the
    body's through there, forged identity fields in it still select nothing."""
    kwargs = kwargs_of(case)
    kwargs["litellm_params"]["metadata"] = {**FORGED, "user_id": "bob"}
    assert caller_of(kwargs) == caller_of(kwargs_of(case))


def test_on_chat_a_litellm_metadata_dict_is_never_read():
    kwargs = kwargs_of("chat_user")
    kwargs["litellm_params"]["litellm_metadata"] = dict(FORGED)
    assert caller_of(kwargs) == proxied("alice")


def test_the_end_user_narrows_and_never_widens():
    """Two end users of one key: two scopes; no end user at all: a third; and the key is in each."""
    alice, bob, nobody = (caller_of(kwargs_of(c)).digest() for c in ("chat_user", "messages_user_id", "chat"))
    assert len({alice, bob, nobody}) == 3
    other_key = Caller(proxied=True, key_hash="another-key", user_id="default_user_id", end_user="alice")
    assert other_key.digest() != alice


def test_the_same_caller_on_every_route_has_one_scope():
    """carol on chat and on /v1/responses is one caller: a conversation may move between them."""
    chat = kwargs_of("chat_user")
    chat["litellm_params"]["metadata"]["user_api_key_end_user_id"] = "carol"
    assert caller_of(chat).digest() == caller_of(kwargs_of("responses_user")).digest()


def test_an_end_user_auth_did_not_read_comes_from_the_body_user():
    kwargs = kwargs_of("chat_user")
    kwargs["litellm_params"]["metadata"]["user_api_key_end_user_id"] = None
    assert caller_of(kwargs) == proxied("alice")


def test_without_the_proxy_the_caller_is_the_user_argument_or_nobody():
    assert caller_of({"logging_obj": SimpleNamespace(user="alice")}) == Caller(
        proxied=False, end_user="alice"
    )
    assert caller_of({"logging_obj": SimpleNamespace(user=None), "litellm_params": {"metadata": FORGED}}) == (
        Caller(proxied=False)
    )
    assert Caller(proxied=False).digest() == ""  # the credential alone, as before callers were told apart
    assert Caller(proxied=False, end_user="alice").digest() != Caller(proxied=True, end_user="alice").digest()


def test_the_digest_holds_no_identity_in_clear():
    digest = caller_of(kwargs_of("chat_user")).digest()
    assert len(digest) == 64 and "alice" not in digest and MASTER not in digest


def handled(kwargs: dict[str, Any]) -> Any:
    return _request("conol/claude-haiku-4-5", [{"role": "user", "content": "hi"}], "http://c", kwargs)


def test_the_handler_puts_the_callers_digest_on_the_request(monkeypatch):
    monkeypatch.setenv("CONOL_SESSION_TOKEN", "tok")  # a proxied call's token is the operator's
    kwargs = kwargs_of("messages_user_id")
    kwargs["litellm_params"]["proxy_server_request"]["body"] = {"model": "m", "max_tokens": 10}
    request = handled({**kwargs, "api_key": "caller-chosen"})
    assert request.caller == proxied("bob").digest()
    assert (request.endpoint.token, request.reuse.mode) == ("tok", "auto")


# --- what auth produced, captured before routing ---------------------------------------------------


def captured(case: str) -> dict[str, Any]:
    """The kwargs of ``case`` as the pre-call hook leaves them: its capture in the auth dict."""
    kwargs = kwargs_of(case)
    params = kwargs["litellm_params"]
    auth = params[auth_metadata_name(params["proxy_server_request"]["url"])]
    auth[CAPTURED_KEY] = CapturedCaller(caller_from_auth(auth, params["proxy_server_request"]["body"]))
    return kwargs


@pytest.mark.parametrize("case", ["chat_user", "messages_user_id", "responses_user"])
def test_what_is_merged_into_the_call_later_never_replaces_the_captured_caller(case):
    """A fallbacks entry's ``metadata`` / ``litellm_metadata`` replaces the dicts auth wrote: the
    caller the hook captured stays, and a body cannot spell a capture of its own."""
    kwargs = captured(case)
    expected = caller_of(kwargs)
    assert expected == caller_of(kwargs_of(case)) and expected.key_hash == MASTER
    params = kwargs["litellm_params"]
    capture = next(
        params[n][CAPTURED_KEY] for n in ("metadata", "litellm_metadata") if CAPTURED_KEY in (params[n] or {})
    )
    forged = {**FORGED, CAPTURED_KEY: proxied("mallory").digest()}  # a string, not a capture
    params["metadata"], params["litellm_metadata"] = dict(forged), {**forged, CAPTURED_KEY: capture}
    assert caller_of(kwargs) == expected
    params["litellm_metadata"] = dict(forged)  # the capture gone too: a string is never taken for one
    assert caller_of(kwargs) != expected and caller_of(kwargs).key_hash == "forged-key-hash"


def test_a_capture_survives_the_copies_litellm_makes_and_is_written_as_a_string():
    capture = CapturedCaller(proxied("alice"))
    for copied in (copy.deepcopy(capture), copy.copy({"k": capture})["k"]):
        assert isinstance(copied, CapturedCaller) and copied.caller == proxied("alice")
    assert json.dumps({"k": capture}) == json.dumps({"k": proxied("alice").digest()})


@pytest.mark.parametrize("root", ["/files", "/api/responses/", "/v1/messages"])
def test_the_auth_dict_is_chosen_from_the_route_under_the_proxys_root_path(root, monkeypatch):
    """LiteLLM routes (and its auth writes) by the path with ``SERVER_ROOT_PATH`` removed: a root path
    holding ``files`` or ``responses`` must not make every key read as nobody."""
    monkeypatch.setenv("SERVER_ROOT_PATH", root)
    base = "http://proxy" + root.rstrip("/")
    assert auth_metadata_name(f"{base}/v1/chat/completions") == "metadata"
    assert auth_metadata_name(f"{base}/v1/responses") == "litellm_metadata"
    kwargs = kwargs_of("chat_user")
    kwargs["litellm_params"]["proxy_server_request"]["url"] = f"{base}/v1/chat/completions"
    assert caller_of(kwargs) == proxied("alice")


def test_per_request_root_paths_are_removed_too(monkeypatch):
    monkeypatch.setenv("SERVER_ROOT_PATHS", "/tenant-files, /tenant-files/responses")
    assert request_route("/tenant-files/responses/v1/chat/completions") == "/v1/chat/completions"
    assert request_route("/tenant-files/v1/chat/completions") == "/v1/chat/completions"
    assert request_route("/tenant-filesx/v1/chat/completions") == "/tenant-filesx/v1/chat/completions"


def test_inside_a_proxy_a_caller_without_a_key_hash_gets_no_reuse(monkeypatch):
    """A proxy with no master key: every caller reads as the same nobody, so none continues a session."""
    monkeypatch.setenv("CONOL_SESSION_TOKEN", "tok")
    kwargs = kwargs_of("chat_user")
    kwargs["litellm_params"]["metadata"]["user_api_key_hash"] = None
    kwargs["litellm_params"]["proxy_server_request"]["body"] = {"model": "m"}
    assert not caller_of(kwargs).reusable
    assert handled(kwargs).reuse.mode == "off"
    assert Caller(proxied=False).reusable and proxied(None).reusable


# --- what the identity scopes ----------------------------------------------------------------------

ENDPOINT = Endpoint("https://conol.test", "tok")


def test_bindings_failures_and_uploads_are_scoped_by_the_caller():
    alice, bob = proxied("alice").digest(), proxied("bob").digest()
    assert len({scope_digest(ENDPOINT.base_url, "tok", c) for c in ("", alice, bob)}) == 3
    assert len({failure_key(ENDPOINT.base_url, "tok", b"{}", c) for c in ("", alice, bob)}) == 3
    cache, asset = AssetCache(), AssetRef("/api/assets/a1", "image/png")
    cache.put(ENDPOINT, "image-key", asset, caller=alice)
    assert cache.get(ENDPOINT, "image-key", caller=alice) == asset
    assert cache.get(ENDPOINT, "image-key", caller=bob) is None
    assert cache.get(ENDPOINT, "image-key") is None
    cache.forget(ENDPOINT, [asset], caller=bob)  # another caller's forget leaves alice's entry
    assert cache.get(ENDPOINT, "image-key", caller=alice) == asset
    cache.forget(ENDPOINT, [asset], caller=alice)
    assert cache.get(ENDPOINT, "image-key", caller=alice) is None


def test_without_a_caller_the_keys_are_the_credentials_alone():
    """The SDK without ``user`` keeps the keys it had: bindings and failures stored before stay valid."""
    import hashlib

    assert scope_digest("https://conol.test", "tok") == hashlib.sha256(b"https://conol.test\0tok").hexdigest()
