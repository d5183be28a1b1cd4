"""Our typed errors drive the real ``litellm.Router`` in process: retries, cooldowns, Retry-After,
fallbacks.

Two fakes: the shared healthy one, and a failing one whose faults are injected with
``configure(create_status=...)`` (through the proxy config: tests/e2e/test_router_proxy.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import litellm
import pytest
from support.faults import conol, creates
from support.timing import bound

import litellm_conol
from litellm_conol.fake import BUILTINS, FakeConol

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(90)


ANSWER = BUILTINS["done"].final_text


PROMPT = [{"role": "user", "content": "[[fake:done]]"}]


@pytest.fixture(scope="module")
def failing_server() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture
def failing(failing_server: FakeConol) -> Iterator[FakeConol]:
    failing_server.reset()
    yield failing_server
    failing_server.reset()


def cooldowns(router: litellm.Router) -> dict[str, dict]:
    active = router.cooldown_cache.get_active_cooldowns(router.get_model_ids(), None)
    return {model_id: dict(value) for model_id, value in active}


async def wait_for_cooldown(router: litellm.Router, model_id: str, seconds: float = 2.0) -> bool:
    """LiteLLM sets cooldowns from an async failure callback: poll a moment for it."""
    deadline = time.monotonic() + seconds
    while model_id not in cooldowns(router):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.mark.parametrize("status", [500, 502, 503, 429])
async def test_retries_go_to_the_healthy_deployment_and_the_failing_one_cools_down(
    conol_fake, failing, status
):
    failing.configure(create_status=status, create_retry_after="30" if status == 429 else None)
    router = litellm.Router(
        model_list=[conol(failing, "conol-pair", "bad"), conol(conol_fake, "conol-pair", "good")],
        # cooldowns are set by LiteLLM's async failure callback and deployments are picked at random,
        # so a few retries may still land on the failing one: 6 make missing the healthy one ~1/128
        num_retries=6,
        allowed_fails=1,
        cooldown_time=30,
        retry_after=0,
    )
    # Picks are random: go on until the failing deployment has failed more than allowed_fails (1).
    for _ in range(40):
        response = await router.acompletion(model="conol-pair", messages=PROMPT)
        assert response.choices[0].message.content == ANSWER
        if creates(failing) >= 2:
            break
    assert creates(failing) >= 2
    # The failing deployment is cooled down (by an async callback: allow it a moment) ...
    assert await wait_for_cooldown(router, "bad")
    active = cooldowns(router)
    assert "good" not in active
    assert active["bad"]["status_code"] == str(status)
    if status == 429:
        assert active["bad"]["cooldown_time"] == 30  # the cooldown honours conol's Retry-After
    tried = creates(failing)
    for _ in range(5):
        stream = await router.acompletion(model="conol-pair", messages=PROMPT, stream=True)
        assert "".join([c.choices[0].delta.content or "" async for c in stream]) == ANSWER
    assert creates(failing) == tried


async def test_router_waits_retry_after_before_retrying_a_single_deployment(conol_fake):
    """With nowhere else to go, the Router sleeps for conol's Retry-After, then the retry succeeds."""
    conol_fake.configure(create_status=429, create_fail_times=1, create_retry_after="1")
    router = litellm.Router(model_list=[conol(conol_fake, "conol-single", "only")], num_retries=1)
    started = time.monotonic()
    response = await router.acompletion(model="conol-single", messages=PROMPT)
    assert response.choices[0].message.content == ANSWER
    attempts = [r.time for r in conol_fake.requests if r.method == "POST" and r.path == "/api/sessions"]
    assert len(attempts) == 2
    assert attempts[1] - attempts[0] >= 1.0  # Retry-After: 1 was honoured
    assert time.monotonic() - started < bound(5)


async def test_no_retry_and_no_cooldown_on_a_bad_request(conol_fake):
    router = litellm.Router(model_list=[conol(conol_fake, "conol-x", "x")], num_retries=3)
    with pytest.raises(litellm.BadRequestError):
        await router.acompletion(model="conol-x", messages=PROMPT, n=2)
    assert conol_fake.requests == []
    assert cooldowns(router) == {}


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
async def test_fallbacks_to_a_second_model(conol_fake, failing, stream):
    failing.configure(create_status=503)
    router = litellm.Router(
        model_list=[conol(failing, "conol-primary", "primary"), conol(conol_fake, "conol-backup", "backup")],
        fallbacks=[{"conol-primary": ["conol-backup"]}],
        num_retries=0,
    )
    response = await router.acompletion(model="conol-primary", messages=PROMPT, stream=stream)
    if stream:
        text = "".join([c.choices[0].delta.content or "" async for c in response])
    else:
        text = response.choices[0].message.content
    assert text == ANSWER
    assert creates(failing) == 1
    assert creates(conol_fake) == 1


async def test_auth_failure_cools_its_deployment_down_and_requests_fail_over(conol_fake, failing):
    failing.configure(revoke_token=True)  # every call to it answers 401
    router = litellm.Router(
        model_list=[conol(failing, "conol-pair", "bad"), conol(conol_fake, "conol-pair", "good")],
        num_retries=2,
        retry_after=0,
    )
    # Picks are random: go on until the dead deployment has been tried at least once.
    for _ in range(40):
        response = await router.acompletion(model="conol-pair", messages=PROMPT)
        assert response.choices[0].message.content == ANSWER
        if creates(failing) >= 1:
            break
    assert creates(failing) >= 1
    # A dead token cools its deployment down at its first failure, by an async callback.
    assert await wait_for_cooldown(router, "bad")
    assert cooldowns(router)["bad"]["status_code"] == "401"
