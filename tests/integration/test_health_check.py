"""In process: the proxy's own health-check probe of one deployment (a token check, both readings of
a dead token, wildcard deployments) and the handler's fork safety."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import pytest
from support.chat import user

from litellm_conol.fake import BUILTINS, FakeConol

# The first test also pays for the proxy's start: three processes importing LiteLLM on 2 cores.
pytestmark = pytest.mark.timeout(180)


def creates(fake: FakeConol) -> list[tuple[str, int | None]]:
    """(agentModel, HTTP status) of every create-session request the fake received, in order."""
    return [(r.body["agentModel"], r.status) for r in fake.requests if r.path == "/api/sessions"]


# --- the health check in process: the proxy's own probe of one deployment (what /health and the
# background checks run for each deployment: messages, max_tokens, the health-check account, then
# litellm.ahealth_check → litellm.acompletion)


async def probe(model: str, api_base: str, api_key: str) -> dict[str, Any]:
    from litellm.proxy.health_check import _run_model_health_check

    import litellm_conol

    litellm_conol.register()
    deployment = {"litellm_params": {"model": model, "api_base": api_base, "api_key": api_key}}
    result: dict[str, Any] = await _run_model_health_check(deployment)
    return result


def health_check(model: str, api_base: str, api_key: str) -> dict[str, Any]:
    return asyncio.run(probe(model, api_base, api_key))


def test_health_check_is_a_token_check(conol_fake):
    assert health_check("conol/claude-haiku-4-5", conol_fake.base_url, conol_fake.token) == {}
    assert [(r.method, r.path, r.cookie_present) for r in conol_fake.requests] == [
        ("GET", "/api/auth/get-session", True)
    ]
    conol_fake.configure(revoke_token=True)
    result = health_check("conol/claude-haiku-4-5", conol_fake.base_url, conol_fake.token)
    assert "conol rejected the session token while checking the session token (401)" in result["error"]
    assert result["exception"].status_code == 401
    assert creates(conol_fake) == []


def test_health_check_of_an_unknown_model_fails_without_a_request(conol_fake):
    result = health_check("conol/no-such-model", conol_fake.base_url, conol_fake.token)
    assert result["exception"].status_code == 404
    assert conol_fake.requests == []


async def test_a_200_without_a_session_is_a_dead_token_and_a_login_page_is_no_answer():
    """better-auth answers get-session for a dead token with 200 ``null``; a login page is not conol."""
    from aiohttp import web

    async def null_session(request: web.Request) -> web.Response:
        return web.json_response(None)

    async def login_page(request: web.Request) -> web.Response:
        return web.Response(text="<html><title>Sign in</title></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/null/api/auth/get-session", null_session)
    app.router.add_get("/html/api/auth/get-session", login_page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        dead, page = [
            await probe("conol/claude-haiku-4-5", f"{base}/{kind}", "tok-secret") for kind in ("null", "html")
        ]
    finally:
        await runner.cleanup()
    assert dead["exception"].status_code == 401
    assert "knows no session for the token" in dead["error"]
    assert page["exception"].status_code == 502
    assert "not JSON" in page["error"]
    assert "tok-secret" not in dead["error"] + page["error"]


# --- fork safety: nothing the handler created before a fork is used after it


def test_sync_calls_work_in_a_child_forked_after_the_parent_used_them(conol_fake):
    """The sync entry points run on a background loop thread; a forked child has no such thread (and
    must not share the parent's pooled connections), so it must start its own."""
    import signal

    import litellm

    import litellm_conol

    litellm_conol.register()
    kw = {"api_base": conol_fake.base_url, "api_key": conol_fake.token}
    expected = BUILTINS["done"].final_text
    first = litellm.completion(model="conol/claude-haiku-4-5", messages=user("[[fake:done]] parent"), **kw)
    assert first.choices[0].message.content == expected
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only for the exact answer; SIGALRM ends a hang
        code = 3
        try:
            signal.alarm(20)
            answer = litellm.completion(
                model="conol/claude-haiku-4-5", messages=user("[[fake:done]] child"), **kw
            )
            code = 0 if answer.choices[0].message.content == expected else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(creates(conol_fake)) == 2
    again = litellm.completion(model="conol/claude-haiku-4-5", messages=user("[[fake:done]] parent"), **kw)
    assert again.choices[0].message.content == expected  # the parent's loop and pool still work


def test_a_wildcard_deployment_is_checked_through_its_health_check_model(conol_fake):
    """LiteLLM health-checks `conol/*` by picking the provider's cheapest model from its cost map, which
    has no conol models: unhealthy, without a request. `model_info.health_check_model` names one."""
    from litellm.proxy.health_check import _run_model_health_check

    import litellm_conol

    litellm_conol.register()
    params = {"model": "conol/*", "api_base": conol_fake.base_url, "api_key": conol_fake.token}
    bare = asyncio.run(_run_model_health_check({"litellm_params": dict(params)}))
    # 1.108: "... wildcard model for provider conol"; 1.110 names the model: "... model * for provider
    # conol: the cost map has no chat model for this provider. Set model_info.health_check_model ..."
    assert re.match(r"Unable to health check wildcard model (\* )?for provider conol\b", bare["error"]), bare
    assert not conol_fake.requests
    info = {"health_check_model": "conol/claude-haiku-4-5"}
    named = asyncio.run(_run_model_health_check({"litellm_params": dict(params), "model_info": info}))
    assert named == {}
    assert [r.path for r in conol_fake.requests] == ["/api/auth/get-session"]
