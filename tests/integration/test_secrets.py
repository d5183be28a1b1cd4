"""The session token never leaks in process: not into logs (LiteLLM's debug logging on), exception
messages, or ``repr``/``str`` of our objects.

The fake runs with a distinctive token and some scenarios that quote it back (a broken upstream
echoing the cookie), so a leak anywhere downstream would show up in a plain substring search."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import litellm
import pytest
from support.chat import MODEL
from support.echoes import SECRET
from support.proxyproc import free_port

import litellm_conol
from litellm_conol.client.driver import SessionRun
from litellm_conol.client.transport import EventStream, Transport
from litellm_conol.core import errors as _errors
from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.config.options import build_request
from litellm_conol.core.protocol.endpoint import Endpoint

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(120)


def leaks(text: str) -> bool:
    return SECRET in text


def exception_texts(exc: BaseException) -> list[str]:
    """Everything an exception shows, down its whole chain of causes and contexts."""
    texts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), str(getattr(current, "message", ""))]
        texts.append(str(getattr(current, "litellm_response_headers", "")))
        texts.append(str(getattr(current, "headers", "")))
        original = getattr(current, "original_exception", None)
        if isinstance(original, BaseException) and id(original) not in seen:
            texts += exception_texts(original)
        current = current.__cause__ or current.__context__
    return texts


# --- objects of ours --------------------------------------------------------------------------------


async def test_repr_and_str_of_our_objects_never_show_the_token(secret_fake):
    request = build_request(
        model=MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        api_key=SECRET,
        api_base=secret_fake.base_url,
        optional_params={"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
        timeout=30,
    )
    endpoint = request.endpoint
    assert endpoint.token == SECRET  # it is there, only never shown
    async with httpx.AsyncClient() as client:
        transport = Transport(endpoint, client)
        run = SessionRun(transport=transport, body=request.body, assembler=Assembler())
        stream = EventStream(aiter_nothing(), None)
        objects: list[Any] = [
            endpoint,
            Endpoint(secret_fake.base_url, SECRET),
            transport,
            request,
            request.body,
            run,
            run.assembler,
            stream,
            litellm_conol.conol_llm,
        ]
        objects += [
            cls("message")
            for cls in vars(_errors).values()
            if isinstance(cls, type) and issubclass(cls, _errors.ConolError)
        ]
        for obj in objects:
            assert not leaks(repr(obj)), type(obj).__name__
            assert not leaks(str(obj)), type(obj).__name__


async def aiter_nothing():
    return
    yield


# --- exceptions and logs through the SDK, with LiteLLM's debug logging on ----------------------------


@pytest.fixture
def all_logs() -> Iterator[io.StringIO]:
    """Every log record at any level (LiteLLM's verbose/debug loggers, httpx, httpcore, ours)."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    names = [
        "",
        "LiteLLM",
        "LiteLLM Router",
        "LiteLLM Proxy",
        "httpx",
        "httpcore",
        "litellm_conol",
        "asyncio",
    ]
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
    verbose, suppress = litellm.set_verbose, litellm.suppress_debug_info
    litellm._turn_on_debug()
    litellm.set_verbose = True
    litellm.suppress_debug_info = False
    try:
        yield buffer
    finally:
        litellm.set_verbose, litellm.suppress_debug_info = verbose, suppress
        for lg, level, disabled in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.disabled = disabled
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logging.getLogger(name).setLevel(logging.WARNING)


FAILING_PROMPTS = [
    ("[[fake:echo_500]]", {}),
    ("[[fake:echo_502_html]]", {}),
    ("[[fake:echo_400]]", {}),
    ("[[fake:echo_created]]", {}),
    ("[[fake:echo_error_event]]", {}),
    ("[[fake:http_429]]", {}),
    ("[[fake:stall_before_first seconds=3]]", {"first_event_timeout": 0.5}),
    ("[[fake:never_terminal]]", {"timeout": 1.0}),
]


async def test_no_token_in_exceptions_or_any_log_line(secret_fake, all_logs, capfd):
    kwargs = {"model": MODEL, "api_base": secret_fake.base_url, "api_key": SECRET}
    errors: list[BaseException] = []

    async def call(text: str, stream: bool, **extra: Any) -> None:
        messages = [{"role": "user", "content": text}]
        try:
            if stream:
                async for _ in await litellm.acompletion(messages=messages, stream=True, **kwargs, **extra):
                    pass
            else:
                response = await litellm.acompletion(messages=messages, **kwargs, **extra)
                assert not leaks(str(response)) and not leaks(repr(response))
                assert not leaks(json.dumps(response._hidden_params, default=str))
        except Exception as exc:
            errors.append(exc)

    await call("Hi [[fake:hello]]", False)
    await call("Hi [[fake:hello]]", True)
    for text, extra in FAILING_PROMPTS:
        await call(text, False, **extra)
        await call(text, True, **extra)
    # connection refused, and a token the fake rejects (401 on create, then on a status poll)
    await call("Hi", False, api_base=f"http://127.0.0.1:{free_port()}")
    secret_fake.configure(revoke_token=True)
    await call("Hi", False)
    secret_fake.configure(revoke_token=False)
    task = asyncio.ensure_future(call("[[fake:silence]]", False))
    assert await secret_fake.await_until(
        lambda: bool(secret_fake.sessions) and bool(secret_fake.last_session.events), 5
    )
    secret_fake.configure(revoke_token=True)
    await task
    secret_fake.configure(revoke_token=False)
    # the Router's logs and errors too (a failing deployment, then the fallback)
    router = litellm.Router(
        model_list=[
            {"model_name": "a", "litellm_params": {**kwargs, "model": MODEL}},
            {"model_name": "b", "litellm_params": {**kwargs, "model": MODEL}},
        ],
        fallbacks=[{"a": ["b"]}],
        num_retries=1,
    )
    with pytest.raises(litellm.InternalServerError) as info:
        await router.acompletion(model="a", messages=[{"role": "user", "content": "[[fake:echo_500]]"}])
    errors.append(info.value)
    await litellm.acompletion(messages=[{"role": "user", "content": "[[fake:done]]"}], **kwargs)
    litellm.completion(messages=[{"role": "user", "content": "[[fake:done]]"}], **kwargs)  # the sync path

    await asyncio.sleep(1.0)  # LiteLLM logs from background tasks and threads: let them write
    assert len(errors) >= 2 * len(FAILING_PROMPTS) + 3
    for exc in errors:
        for shown in exception_texts(exc):
            assert not leaks(shown), f"{type(exc).__name__} shows the token: {shown[:300]}"
    # the upstream error text was still passed on, masked
    assert any("session_token=***" in str(exc) for exc in errors)
    logs = all_logs.getvalue()
    captured = capfd.readouterr()
    assert len(logs) > 10_000 and "LiteLLM" in logs  # debug logging really was on
    assert not leaks(logs), _around(logs)
    assert not leaks(captured.out + captured.err), _around(captured.out + captured.err)


def _around(text: str) -> str:
    at = text.find(SECRET)
    return text[max(0, at - 300) : at + 100]
