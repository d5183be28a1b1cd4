"""The fault matrix (``support.fault_matrix``) through the SDK, in process against the fake.

Each row gives the documented LiteLLM exception (or the exact answer) within a bounded time, and
leaves nothing open: the fake sees every upstream stream closed, no task of ours is left pending.
Run with ``-s`` to print the observed matrix (exception and time to fail per row and path)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError
from support.chat import MODEL
from support.fault_matrix import (
    EXTRA_SCENARIOS,
    OBSERVED,
    ROW_IDS,
    ROWS,
    SCENARIOS,
    Row,
    matches,
    outcome_name,
    report_matrix,  # noqa: F401 - autouse: prints the observed matrix
)
from support.faults import open_fds, other_tasks, pool_connections, settle_tasks
from support.proxyproc import free_port
from support.timing import bound

import litellm_conol
from litellm_conol.fake import FakeConol

litellm.suppress_debug_info = True


litellm_conol.register()


# --- through the SDK ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_failure_memory(monkeypatch):
    # the rows repeat the same request on every path: that a repeat is refused is tested elsewhere
    monkeypatch.setenv("CONOL_FAILURE_MEMORY_SECONDS", "0")


@pytest.fixture
def fault_fake(conol_fake: FakeConol) -> FakeConol:
    for scenario in EXTRA_SCENARIOS:
        conol_fake.add_scenario(scenario)
    return conol_fake


async def _sdk_call(
    fault_fake: FakeConol, row: Row, stream: bool
) -> tuple[str | None, BaseException | None, Any]:
    api_base = f"http://127.0.0.1:{free_port()}" if row.refused else fault_fake.base_url
    kwargs = {"model": MODEL, "messages": [{"role": "user", "content": row.text}], **row.options}
    try:
        if stream:
            response = await litellm.acompletion(
                **kwargs, stream=True, api_base=api_base, api_key=fault_fake.token
            )
            text = "".join([c.choices[0].delta.content or "" async for c in response])
            return text, None, None
        response = await litellm.acompletion(**kwargs, api_base=api_base, api_key=fault_fake.token)
        return response.choices[0].message.content, None, response
    except Exception as exc:
        return None, exc, None


async def _assert_nothing_left_open(fault_fake: FakeConol, baseline: set[asyncio.Task[Any]]) -> None:
    sessions = list(fault_fake.sessions.values())
    assert await fault_fake.await_until(
        lambda: all(c.closed_at is not None for s in sessions for c in s.connections), 2.0
    ), "an upstream stream was left open"
    leftover = await settle_tasks(baseline)
    assert not leftover, f"tasks left pending: {leftover}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
async def test_fault_through_sdk(fault_fake, row: Row, stream: bool):
    if row.configure:
        fault_fake.configure(**row.configure)
    baseline = other_tasks()
    started = time.monotonic()
    text, exc, _ = await _sdk_call(fault_fake, row, stream)
    seconds = time.monotonic() - started
    path = "SDK stream" if stream else "SDK"
    if row.error is None:
        assert exc is None, f"{row.name}: unexpected {exc!r}"
        assert text == SCENARIOS[row.answer].final_text
        OBSERVED[(row.name, path)] = f"exact answer, {seconds:.2f} s"
    else:
        assert exc is not None, f"{row.name}: answered {text!r} instead of failing"
        assert matches(exc, row.error), f"{row.name}: {exc!r} is not a {row.error.__name__}"
        assert row.message in str(exc)
        assert fault_fake.token not in str(exc)
        OBSERVED[(row.name, path)] = f"{outcome_name(exc)}, {seconds:.2f} s"
    assert seconds < bound(row.max_seconds), f"{row.name} took {seconds:.2f} s"
    if row.name == "stream closed early (reconnect)":
        assert len(fault_fake.last_session.connections) >= 2  # it did reconnect, and the answer is exact
    if row.name.startswith("429") and not stream:
        assert exc.litellm_response_headers["retry-after"] == "2"
    await _assert_nothing_left_open(fault_fake, baseline)


async def test_retry_after_from_the_create_answer_reaches_the_exception(fault_fake):
    fault_fake.configure(create_status=429, create_retry_after="7")
    with pytest.raises(litellm.RateLimitError, match="Retry after 7 s") as info:
        await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            api_base=fault_fake.base_url,
            api_key=fault_fake.token,
        )
    assert info.value.litellm_response_headers["retry-after"] == "7"


async def test_token_revoked_mid_session_is_an_authentication_error(fault_fake):
    """401 on the status poll (not only on create) ends the request with AuthenticationError."""
    task = asyncio.ensure_future(
        litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "[[fake:silence]]"}],
            api_base=fault_fake.base_url,
            api_key=fault_fake.token,
        )
    )
    # mid-session: the event stream is open (the session's events exist before anyone connects)
    assert await fault_fake.await_until(
        lambda: bool(fault_fake.sessions) and bool(fault_fake.last_session.connections), 5.0
    )
    fault_fake.configure(revoke_token=True)
    started = time.monotonic()
    with pytest.raises(litellm.AuthenticationError, match="invalid or expired") as info:
        await task
    assert time.monotonic() - started < bound(2.0)
    assert fault_fake.token not in str(info.value)
    assert await fault_fake.await_until(
        lambda: fault_fake.last_session.connections[-1].closed_at is not None, 1.0
    )


async def test_error_event_after_content_is_an_error_not_a_short_answer(fault_fake):
    stream = await litellm.acompletion(
        model=MODEL,
        messages=[{"role": "user", "content": "[[fake:error]]"}],
        stream=True,
        api_base=fault_fake.base_url,
        api_key=fault_fake.token,
    )
    received, finish = [], None
    with pytest.raises(MidStreamFallbackError) as info:
        async for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    assert "".join(received) == "I will try to answer, but"
    assert finish is None  # nothing claimed the answer was complete
    assert isinstance(info.value.original_exception, litellm.InternalServerError)
    assert (info.value.status_code, str(info.value.original_exception)) == (
        500,
        f"litellm.InternalServerError: ConolException - conol agent error: {SCENARIOS['error'].error}",
    )


@pytest.mark.timeout(30)
async def test_dns_failure_is_service_unavailable_quickly(fault_fake):
    started = time.monotonic()
    with pytest.raises(litellm.ServiceUnavailableError, match="could not reach conol"):
        await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            api_base="http://conol-does-not-exist.invalid",
            api_key=fault_fake.token,
        )
    assert time.monotonic() - started < bound(20)


@pytest.fixture
def resetting_server():
    """A server that accepts each connection and resets it at once (RST, no HTTP answer)."""
    import socket
    import struct
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.recv(1024)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(2)
    listener.close()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
async def test_connection_reset_is_service_unavailable(resetting_server, stream):
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        response = await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            api_base=resetting_server,
            api_key="t",
            stream=stream,
        )
        async for _ in response:
            pass
    assert matches(info.value, litellm.ServiceUnavailableError), repr(info.value)
    assert time.monotonic() - started < bound(5)


# --- cancellation -----------------------------------------------------------------------------------


async def _cancel_and_measure(
    fault_fake: FakeConol, stream: bool, baseline: set[asyncio.Task[Any]]
) -> tuple[float, int, int]:
    async def consume():
        kwargs = {
            "model": MODEL,
            "messages": [{"role": "user", "content": "[[fake:stall_mid seconds=20]]"}],
            "api_base": fault_fake.base_url,
            "api_key": fault_fake.token,
        }
        if stream:
            async for _ in await litellm.acompletion(**kwargs, stream=True):
                pass
        else:
            await litellm.acompletion(**kwargs)

    task = asyncio.ensure_future(consume())
    # cancel in the silence, once status polls are running
    assert await fault_fake.await_until(
        lambda: bool(fault_fake.sessions) and fault_fake.last_session.status_polls >= 2, 5.0
    )
    session = fault_fake.last_session
    task.cancel()
    cancelled_at = time.time()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await fault_fake.await_until(lambda: session.connections[-1].closed_at is not None, 1.0)
    close_delay = session.connections[-1].closed_at - cancelled_at
    polls_at_close = session.status_polls
    # No sleep-and-see: once no task of ours is left, nothing can poll again.
    assert not await settle_tasks(baseline, timeout=bound(2.0))
    return close_delay, polls_at_close, session.status_polls


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
async def test_cancelled_task_closes_upstream_promptly_and_stops_polling(fault_fake, stream):
    baseline = other_tasks()
    close_delay, polls_at_close, polls_later = await _cancel_and_measure(fault_fake, stream, baseline)
    assert close_delay < bound(0.1), f"upstream stream closed {close_delay * 1000:.0f} ms after the cancel"
    assert polls_later == polls_at_close, "status polling went on after the cancel"
    assert not await settle_tasks(baseline)


# --- no growth after 1,000 requests -----------------------------------------------------------------


# how each failing kind of the mix fails: the exception and the start of its message
FAILS_AS = {
    "http_500": (
        litellm.InternalServerError,
        "conol failed while creating the session (500): Internal Server Error",
    ),
    "error": (litellm.InternalServerError, f"conol agent error: {SCENARIOS['error'].error}"),
    "stall": (
        litellm.Timeout,
        "conol sent no event within 0.2 s of creating the session (first_event_timeout)",
    ),
}


@pytest.mark.timeout(180)
async def test_no_fd_task_or_connection_growth_after_1000_requests(fault_fake):
    from litellm_conol.client.pool import shared_client

    semaphore = asyncio.Semaphore(20)
    kinds = ["quick"] * 8 + ["quick-stream"] * 8 + ["http_500", "error", "stall", "quick-stream"]

    async def one(i: int) -> None:
        kind = kinds[i % len(kinds)]
        kwargs: dict[str, Any] = {
            "api_base": fault_fake.base_url,
            "api_key": fault_fake.token,
            "model": MODEL,
        }
        text = {
            "quick": "[[fake:quick]]",
            "quick-stream": "[[fake:quick]]",
            "http_500": "[[fake:http_500]]",
            "error": "[[fake:error]]",
            "stall": "[[fake:stall_before_first seconds=2]]",
        }[kind]
        if kind == "stall":
            kwargs["first_event_timeout"] = 0.2
        messages = [{"role": "user", "content": text}]
        async with semaphore:
            try:
                if kind == "quick-stream":
                    got = "".join(
                        [
                            c.choices[0].delta.content or ""
                            async for c in await litellm.acompletion(messages=messages, stream=True, **kwargs)
                        ]
                    )
                    assert got == "Quick answer."
                else:
                    response = await litellm.acompletion(messages=messages, **kwargs)
                    assert response.choices[0].message.content == "Quick answer."
                    assert kind == "quick"
            except (litellm.InternalServerError, litellm.Timeout, MidStreamFallbackError) as exc:
                assert kind in FAILS_AS, f"{kind}: {exc!r}"
                failure, says = FAILS_AS[kind]
                assert type(exc) is failure
                assert str(exc).startswith(f"litellm.{failure.__name__}: ConolException - {says}")

    async def batch(start: int, count: int) -> None:
        await asyncio.gather(*(one(i) for i in range(start, start + count)))

    async def all_closed() -> bool:
        return await fault_fake.await_until(
            lambda: all(c.closed_at is not None for s in fault_fake.sessions.values() for c in s.connections),
            5.0,
        )

    await batch(0, 100)  # warm up: the pool, LiteLLM's caches and its logging worker
    assert await all_closed()
    await asyncio.sleep(0.5)
    fds_before, tasks_before = open_fds(), other_tasks()
    pool_before = pool_connections(shared_client())
    started = time.monotonic()
    await batch(100, 1000)
    elapsed = time.monotonic() - started
    assert await all_closed(), "upstream streams left open"
    leftover = await settle_tasks(tasks_before, timeout=5.0)
    await asyncio.sleep(0.5)
    fds_after, pool_after = open_fds(), pool_connections(shared_client())
    print(
        f"\n1000 requests in {elapsed:.1f} s; fds {fds_before} -> {fds_after}; "
        f"pool {pool_before} -> {pool_after}; tasks +{len(leftover)}"
    )
    assert not leftover, f"tasks left pending: {list(leftover)[:5]}"
    # The pool keeps idle keep-alive connections (at most about one per concurrent request): bounded.
    assert pool_after <= 2 * 20
    # Every other descriptor is gone again. A pooled connection is two descriptors here: ours and
    # the in-process fake's end of it.
    unpooled_before, unpooled_after = fds_before - 2 * pool_before, fds_after - 2 * pool_after
    assert unpooled_after <= unpooled_before + 5, f"file descriptors grew: {fds_before} -> {fds_after}"
