"""Recording what the real LiteLLM proxy hands our ``CustomLLM`` about the caller, on each route.

``python tests/support/caller_kwargs.py`` starts the proxy (master key, no database: virtual keys
cannot be made here) against the fake conol with :data:`recording_llm` as the ``conol`` handler,
sends :data:`CASES` (end users, forged identity fields in the body's ``metadata`` and
``litellm_metadata``) over ``/v1/chat/completions``, ``/v1/messages`` and ``/v1/responses``, and
writes ``tests/fixtures/litellm/caller_kwargs.json``: per case, the request and the parts of the
handler's kwargs that carry identity (``tests/unit/test_caller.py`` reads them). Run it again after
a LiteLLM upgrade and review the diff.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "litellm" / "caller_kwargs.json"
ENV_OUT = "CALLER_KWARGS_OUT"
FORGED = {
    "user_api_key_hash": "forged-key-hash",
    "user_api_key_team_id": "forged-team",
    "user_api_key_user_id": "forged-user",
    "user_api_key_end_user_id": "forged-end-user",
}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "m", "input": "hi"}
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {**CHAT}),
    "chat_user": ("/v1/chat/completions", {**CHAT, "user": "alice"}),
    "chat_user_stream": ("/v1/chat/completions", {**CHAT, "user": "alice", "stream": True}),
    "chat_forged": (
        "/v1/chat/completions",
        {**CHAT, "user": "alice", "metadata": {**FORGED, "tag": "t"}, "litellm_metadata": FORGED},
    ),
    "messages_user_id": ("/v1/messages?beta=true", {**MESSAGES, "metadata": {"user_id": "bob"}}),
    "messages_user_id_stream": (
        "/v1/messages",
        {**MESSAGES, "metadata": {"user_id": "bob"}, "stream": True},
    ),
    "messages_forged": (
        "/v1/messages",
        {**MESSAGES, "metadata": {**FORGED, "user_id": "bob"}, "litellm_metadata": FORGED},
    ),
    "responses_user": ("/v1/responses", {**RESPONSES, "user": "carol"}),
    "responses_user_stream": ("/v1/responses", {**RESPONSES, "user": "carol", "stream": True}),
    "responses_forged": (
        "/v1/responses",
        {**RESPONSES, "user": "carol", "metadata": {**FORGED, "tag": "t"}, "litellm_metadata": FORGED},
    ),
}
# What a recorded metadata dict keeps: the identity LiteLLM's auth writes, and what a caller may send.
KEPT = frozenset({*FORGED, "user_api_key", "user_api_key_request_route", "user", "user_id", "tag"})


def _kept(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    kept = {key: value[key] for key in sorted(value) if key in KEPT}
    requester = value.get("requester_metadata")
    if isinstance(requester, Mapping):
        kept["requester_metadata"] = {k: v for k, v in requester.items() if k in KEPT}
    return kept


def identity_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The identity-bearing parts of the handler's kwargs, as the fixture keeps them; and (not in the
    fixture) the caller the pre-call hook captured and the one the handler reads."""
    import dataclasses

    from litellm_conol.provider.caller import caller_of, captured_caller

    params = kwargs.get("litellm_params") or {}
    captured = captured_caller(params)
    read = {
        "captured": dataclasses.asdict(captured) if captured is not None else None,
        "caller": dataclasses.asdict(caller_of(kwargs)),
    }
    server = params.get("proxy_server_request") or {}
    body = server.get("body") or {}
    return {
        "litellm_params": {
            "metadata": _kept(params.get("metadata")),
            "litellm_metadata": _kept(params.get("litellm_metadata")),
            "proxy_server_request": {
                "url": server.get("url"),
                "body": {k: _kept(body[k]) for k in ("user", "metadata", "litellm_metadata") if k in body},
            },
        },
        "logging_obj_user": getattr(kwargs.get("logging_obj"), "user", None),
        "read": read,
    }


def _recording_class() -> Any:
    from litellm_conol.provider.handler import ConolLLM

    class RecordingLLM(ConolLLM):  # type: ignore[misc]
        """The conol handler, appending the identity part of each call's kwargs to ``$CALLER_KWARGS_OUT``."""

        def _record(self, kwargs: Mapping[str, Any]) -> None:
            with open(os.environ[ENV_OUT], "a", encoding="utf-8") as out:
                out.write(json.dumps(identity_kwargs(kwargs), default=str) + "\n")

        async def acompletion(
            self, model: str, messages: list[Any], api_base: Any = None, **kwargs: Any
        ) -> Any:
            self._record(kwargs)
            return await super().acompletion(model, messages, api_base, **kwargs)

        async def astreaming(
            self, model: str, messages: list[Any], api_base: Any = None, **kwargs: Any
        ) -> AsyncIterator[Any]:
            self._record(kwargs)
            async for chunk in super().astreaming(model, messages, api_base, **kwargs):
                yield chunk

    return RecordingLLM()


def __getattr__(name: str) -> Any:
    if name == "recording_llm":  # made on first use: importing this module needs no LiteLLM
        return _recording_class()
    raise AttributeError(name)


def record(directory: Path) -> dict[str, Any]:
    """Run every case through a real proxy; the fixture's content."""
    import httpx

    from litellm_conol.fake import FakeConol
    from support.proxyproc import MASTER_KEY, running_proxy

    out = directory / "kwargs.jsonl"
    with FakeConol() as fake:
        params = {"model": "conol/claude-haiku-4-5", "api_base": fake.base_url, "api_key": fake.token}
        handler = {"provider": "conol", "custom_handler": "support.caller_kwargs.recording_llm"}
        config = {
            "model_list": [{"model_name": "m", "litellm_params": params}],
            "litellm_settings": {"custom_provider_map": [handler], "telemetry": False},
            "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
        }
        recorded: dict[str, Any] = {}
        with running_proxy(config, directory, env={ENV_OUT: str(out)}) as proxy:
            for name, (route, body) in CASES.items():
                response = httpx.post(
                    proxy.base_url + route,
                    json=body,
                    headers={"Authorization": f"Bearer {MASTER_KEY}"},
                    timeout=60,
                )
                assert response.status_code == 200, response.text
                lines = out.read_text().splitlines()
                recorded[name] = {"route": route, "request": body, "kwargs": json.loads(lines[-1])}
    return {"cases": recorded}


if __name__ == "__main__":
    import tempfile
    from importlib import metadata

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    with tempfile.TemporaryDirectory() as tmp:
        fixture = record(Path(tmp))
    fixture["litellm"] = metadata.version("litellm")
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(fixture, indent=2, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}: {len(fixture['cases'])} cases on LiteLLM {fixture['litellm']}")
