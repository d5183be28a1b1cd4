"""The fault matrix: every upstream failure, through the SDK and through the real proxy.

Each row gives the documented LiteLLM exception (or the exact answer) within a bounded time, and
leaves nothing open: the fake sees every upstream stream closed, no task of ours is left pending.
Run with ``-s`` to print the observed matrix (exception and time to fail per row and path).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import litellm
import openai
import pytest
from fault_support import (
    chat_body,
    closed_port,
    deployment,
    open_fds,
    other_tasks,
    pool_connections,
    post_chat,
    proxy_config,
    running_proxy,
    settle_tasks,
    stream_chat,
)
from litellm.exceptions import MidStreamFallbackError
from proxyproc import MASTER_KEY

import litellm_conol
from litellm_conol.client._http_errors import error_for_response
from litellm_conol.client._transport import _parse_created
from litellm_conol.core._end_policy import EndPolicy, Finish, GiveUp, Poll, Timing, WaitUntil
from litellm_conol.core._options import build_request
from litellm_conol.fake import (
    BUILTINS,
    CloseStream,
    Done,
    FakeConol,
    Preview,
    Scenario,
    SetPings,
    SetStatus,
    Sleep,
    UserTurn,
)

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"

# A session that the server keeps closing while its status stays "running".
CLOSES_FOR_GOOD = Scenario(
    "closes_for_good",
    [Preview("This stream is closed"), Sleep(0.05), CloseStream(permanent=True)],
    description="one snapshot, then every stream of the session is closed at once; status stays running",
)
QUICK = Scenario(
    "quick",
    [Preview("Quick answer."), SetStatus("completed"), Done()],
    description="one snapshot, completed, done: the fastest complete session",
)
# The status says "completed" long before the stream's first event: silence then is no end.
TERMINAL_BEFORE_FIRST_EVENT = Scenario(
    "terminal_before_first_event",
    [SetPings(False), SetStatus("completed"), Sleep(1.5), UserTurn(), Preview("Late, but complete."), Done()],
    description="status completed at once; the first event (user turn, answer, done) only 1.5 s later",
)
EXTRA_SCENARIOS = (CLOSES_FOR_GOOD, QUICK, TERMINAL_BEFORE_FIRST_EVENT)
SCENARIOS = {**BUILTINS, **{s.name: s for s in EXTRA_SCENARIOS}}


@dataclass(frozen=True)
class Row:
    name: str
    text: str
    error: type[Exception] | None  # None: the exact answer of ``answer`` must come out
    status: int | None  # the proxy's HTTP status (or the SSE error's code)
    max_seconds: float
    options: dict[str, Any] = field(default_factory=dict)  # request options (kwargs / body)
    configure: dict[str, Any] = field(default_factory=dict)  # fake.configure(...)
    refused: bool = False  # point at a port nobody listens on
    answer: str | None = None  # BUILTINS name whose final_text is the answer
    message: str = ""  # must appear in the error message


ROWS = [
    Row("401", "[[fake:http_401]]", litellm.AuthenticationError, 401, 3, message="invalid or expired"),
    Row("403", "[[fake:http_403]]", litellm.PermissionDeniedError, 403, 3, message="invalid or expired"),
    Row("429 + Retry-After", "[[fake:http_429]]", litellm.RateLimitError, 429, 3, message="Retry after 2"),
    Row("500", "[[fake:http_500]]", litellm.InternalServerError, 500, 3),
    Row("502 (HTML body)", "[[fake:http_502]]", litellm.BadGatewayError, 502, 3, message="502 Bad Gateway"),
    Row("503", "[[fake:http_503]]", litellm.ServiceUnavailableError, 503, 3),
    Row(
        "2xx create without sessionId",
        "[[fake:bad_create_body]]",
        litellm.BadGatewayError,
        502,
        3,
        message="no session id",
    ),
    Row(
        "connect refused",
        "Hi",
        litellm.ServiceUnavailableError,
        503,
        3,
        refused=True,
        message="could not reach conol",
    ),
    Row(
        "stall before first event",
        "[[fake:stall_before_first seconds=10]]",
        litellm.Timeout,
        408,
        4,
        options={"first_event_timeout": 1},
        message="first_event_timeout",
    ),
    Row(
        "stall mid-answer > idle budget",
        "[[fake:stall_mid seconds=10]]",
        litellm.Timeout,
        408,
        4,
        options={"idle_timeout": 1},
        message="idle_timeout",
    ),
    Row("malformed JSON data line", "[[fake:malformed_line]]", None, 200, 5, answer="malformed_line"),
    Row("huge event (5 MiB snapshot)", "[[fake:huge_event]]", None, 200, 15, answer="huge_event"),
    Row("stream closed early (reconnect)", "[[fake:close_early]]", None, 200, 6, answer="close_early"),
    Row("status endpoint flaky", "[[fake:status_flaky]]", None, 200, 6, answer="status_flaky"),
    Row(
        "status endpoint always 500",
        "[[fake:silence]]",
        litellm.Timeout,
        408,
        6,
        options={"idle_timeout": 1},
        configure={"status_fail_every": 1},
        message="last status: unknown",
    ),
    Row(
        "status never terminal",
        "[[fake:never_terminal]]",
        litellm.Timeout,
        408,
        5,
        options={"timeout": 2},
        message="still running after the 2 s timeout",
    ),
    Row(
        "error event", "[[fake:error]]", litellm.InternalServerError, 500, 3, message="upstream model crashed"
    ),
    Row("duplicate / out-of-order snapshots", "[[fake:out_of_order]]", None, 200, 5, answer="out_of_order"),
    Row(
        "status terminal before the first event",
        "[[fake:terminal_before_first_event]]",
        None,
        200,
        5,
        answer="terminal_before_first_event",
    ),
    Row(
        "event stream refused (503)",
        "Hi",
        litellm.ServiceUnavailableError,
        503,
        5,
        configure={"refuse_streams": True},
        message="max_reconnects",
    ),
    Row(
        "stream closed for good while running",
        "[[fake:closes_for_good]]",
        litellm.BadGatewayError,
        502,
        5,
        message="max_reconnects",
    ),
]
ROW_IDS = [row.name for row in ROWS]

OBSERVED: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module", autouse=True)
def report_matrix():
    yield
    if not OBSERVED:
        return
    paths = ["SDK", "SDK stream", "proxy", "proxy stream"]
    lines = ["| row | " + " | ".join(paths) + " |", "|---|" + "---|" * len(paths)]
    for row in ROWS:
        cells = [OBSERVED.get((row.name, path), "") for path in paths]
        lines.append(f"| {row.name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print("\n\nFault matrix (observed):\n" + table)
    target = os.environ.get("FAULT_MATRIX_REPORT")
    if target:
        with open(target, "w", encoding="utf-8") as out:
            out.write(table + "\n")


def _matches(exc: BaseException, expected: type[Exception]) -> bool:
    # After the first chunk LiteLLM wraps a provider error in MidStreamFallbackError (for every
    # provider), keeping the original exception and its status code.
    if isinstance(exc, MidStreamFallbackError) and not isinstance(expected, MidStreamFallbackError):
        return isinstance(exc.original_exception, expected)
    return isinstance(exc, expected)


def _name(exc: BaseException) -> str:
    if isinstance(exc, MidStreamFallbackError) and exc.original_exception is not None:
        return f"MidStreamFallbackError({type(exc.original_exception).__name__})"
    return type(exc).__name__


# --- through the SDK ------------------------------------------------------------------------------


@pytest.fixture
def fake(conol_fake: FakeConol) -> FakeConol:
    for scenario in EXTRA_SCENARIOS:
        conol_fake.add_scenario(scenario)
    return conol_fake


async def _sdk_call(fake: FakeConol, row: Row, stream: bool) -> tuple[str | None, BaseException | None, Any]:
    api_base = f"http://127.0.0.1:{closed_port()}" if row.refused else fake.base_url
    kwargs = {"model": MODEL, "messages": [{"role": "user", "content": row.text}], **row.options}
    try:
        if stream:
            response = await litellm.acompletion(**kwargs, stream=True, api_base=api_base, api_key=fake.token)
            text = "".join([c.choices[0].delta.content or "" async for c in response])
            return text, None, None
        response = await litellm.acompletion(**kwargs, api_base=api_base, api_key=fake.token)
        return response.choices[0].message.content, None, response
    except Exception as exc:
        return None, exc, None


async def _assert_nothing_left_open(fake: FakeConol, baseline: set[asyncio.Task[Any]]) -> None:
    sessions = list(fake.sessions.values())
    assert await fake.await_until(
        lambda: all(c.closed_at is not None for s in sessions for c in s.connections), 2.0
    ), "an upstream stream was left open"
    leftover = await settle_tasks(baseline)
    assert not leftover, f"tasks left pending: {leftover}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
async def test_fault_through_sdk(fake, row: Row, stream: bool):
    if row.configure:
        fake.configure(**row.configure)
    baseline = other_tasks()
    started = time.monotonic()
    text, exc, _ = await _sdk_call(fake, row, stream)
    seconds = time.monotonic() - started
    path = "SDK stream" if stream else "SDK"
    if row.error is None:
        assert exc is None, f"{row.name}: unexpected {exc!r}"
        assert text == SCENARIOS[row.answer].final_text
        OBSERVED[(row.name, path)] = f"exact answer, {seconds:.2f} s"
    else:
        assert exc is not None, f"{row.name}: answered {text!r} instead of failing"
        assert _matches(exc, row.error), f"{row.name}: {exc!r} is not a {row.error.__name__}"
        assert row.message in str(exc)
        assert fake.token not in str(exc)
        OBSERVED[(row.name, path)] = f"{_name(exc)}, {seconds:.2f} s"
    assert seconds < row.max_seconds, f"{row.name} took {seconds:.2f} s"
    if row.name == "stream closed early (reconnect)":
        assert len(fake.last_session.connections) >= 2  # it did reconnect, and the answer is exact
    if row.name.startswith("429") and not stream:
        assert exc.litellm_response_headers["retry-after"] == "2"
    await _assert_nothing_left_open(fake, baseline)


async def test_retry_after_from_the_create_answer_reaches_the_exception(fake):
    fake.configure(create_status=429, create_retry_after="7")
    with pytest.raises(litellm.RateLimitError, match="Retry after 7 s") as info:
        await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            api_base=fake.base_url,
            api_key=fake.token,
        )
    assert info.value.litellm_response_headers["retry-after"] == "7"


async def test_token_revoked_mid_session_is_an_authentication_error(fake):
    """401 on the status poll (not only on create) ends the request with AuthenticationError."""
    task = asyncio.ensure_future(
        litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "[[fake:silence]]"}],
            api_base=fake.base_url,
            api_key=fake.token,
        )
    )
    # mid-session: the event stream is open (the session's events exist before anyone connects)
    assert await fake.await_until(lambda: bool(fake.sessions) and bool(fake.last_session.connections), 5.0)
    fake.configure(revoke_token=True)
    started = time.monotonic()
    with pytest.raises(litellm.AuthenticationError, match="invalid or expired") as info:
        await task
    assert time.monotonic() - started < 2.0
    assert fake.token not in str(info.value)
    assert await fake.await_until(lambda: fake.last_session.connections[-1].closed_at is not None, 1.0)


async def test_error_event_after_content_is_an_error_not_a_short_answer(fake):
    stream = await litellm.acompletion(
        model=MODEL,
        messages=[{"role": "user", "content": "[[fake:error]]"}],
        stream=True,
        api_base=fake.base_url,
        api_key=fake.token,
    )
    received, finish = [], None
    with pytest.raises(MidStreamFallbackError) as info:
        async for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    assert "".join(received) == "I will try to answer, but"
    assert finish is None  # nothing claimed the answer was complete
    assert isinstance(info.value.original_exception, litellm.InternalServerError)


@pytest.mark.timeout(30)
async def test_dns_failure_is_service_unavailable_quickly(fake):
    started = time.monotonic()
    with pytest.raises(litellm.ServiceUnavailableError, match="could not reach conol"):
        await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "Hi"}],
            api_base="http://conol-does-not-exist.invalid",
            api_key=fake.token,
        )
    assert time.monotonic() - started < 20


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
    assert _matches(info.value, litellm.ServiceUnavailableError), repr(info.value)
    assert time.monotonic() - started < 5


# --- cancellation -----------------------------------------------------------------------------------


async def _cancel_and_measure(fake: FakeConol, stream: bool) -> tuple[float, int, int]:
    async def consume():
        kwargs = {
            "model": MODEL,
            "messages": [{"role": "user", "content": "[[fake:stall_mid seconds=20]]"}],
            "api_base": fake.base_url,
            "api_key": fake.token,
        }
        if stream:
            async for _ in await litellm.acompletion(**kwargs, stream=True):
                pass
        else:
            await litellm.acompletion(**kwargs)

    task = asyncio.ensure_future(consume())
    # cancel in the silence, once status polls are running
    assert await fake.await_until(lambda: bool(fake.sessions) and fake.last_session.status_polls >= 2, 5.0)
    session = fake.last_session
    task.cancel()
    cancelled_at = time.time()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await fake.await_until(lambda: session.connections[-1].closed_at is not None, 1.0)
    close_delay = session.connections[-1].closed_at - cancelled_at
    polls_at_close = session.status_polls
    await asyncio.sleep(1.0)  # polls ran every 0.2 s before: none may follow
    return close_delay, polls_at_close, session.status_polls


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
async def test_cancelled_task_closes_upstream_within_100ms_and_stops_polling(fake, stream):
    baseline = other_tasks()
    close_delay, polls_at_close, polls_later = await _cancel_and_measure(fake, stream)
    assert close_delay < 0.1, f"upstream stream closed {close_delay * 1000:.0f} ms after the cancel"
    assert polls_later == polls_at_close, "status polling went on after the cancel"
    assert not await settle_tasks(baseline)


# --- no growth after 1,000 requests -----------------------------------------------------------------


@pytest.mark.timeout(180)
async def test_no_fd_task_or_connection_growth_after_1000_requests(fake):
    from litellm_conol.client._pool import shared_client

    semaphore = asyncio.Semaphore(20)
    kinds = ["quick"] * 8 + ["quick-stream"] * 8 + ["http_500", "error", "stall", "quick-stream"]

    async def one(i: int) -> None:
        kind = kinds[i % len(kinds)]
        kwargs: dict[str, Any] = {"api_base": fake.base_url, "api_key": fake.token, "model": MODEL}
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
            except (litellm.InternalServerError, litellm.Timeout, MidStreamFallbackError):
                assert kind in ("http_500", "error", "stall")

    async def batch(start: int, count: int) -> None:
        await asyncio.gather(*(one(i) for i in range(start, start + count)))

    async def all_closed() -> bool:
        return await fake.await_until(
            lambda: all(c.closed_at is not None for s in fake.sessions.values() for c in s.connections), 5.0
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


# --- the same matrix through the real proxy -------------------------------------------------------


PROXY_POLL_SLOTS = 2


@pytest.fixture(autouse=True)
def _no_failure_memory(monkeypatch):
    # the rows repeat the same request on every path: that a repeat is refused is tested elsewhere
    monkeypatch.setenv("CONOL_FAILURE_MEMORY_SECONDS", "0")


@pytest.fixture(scope="module")
def fault_proxy(tmp_path_factory):
    """A proxy with no retries and no cooldowns, so each request meets its fault exactly once."""
    with FakeConol() as server:
        model_list = [
            deployment("conol-fault"),  # credentials from the environment, as in the shipped config
            deployment("conol-refused", api_base=f"http://127.0.0.1:{closed_port()}", api_key="unused"),
        ]
        config = proxy_config(model_list, router_settings={"num_retries": 0, "disable_cooldowns": True})
        env = {
            "CONOL_API_BASE": server.base_url,
            "CONOL_SESSION_TOKEN": server.token,
            # every fault row also runs with polls queued behind a small limit
            "CONOL_MAX_CONCURRENT_POLLS": str(PROXY_POLL_SLOTS),
            # each row meets its fault once per path: no memory of the same request's failure
            "CONOL_FAILURE_MEMORY_SECONDS": "0",
        }
        with running_proxy(tmp_path_factory.mktemp("fault-proxy"), config, env) as proxy:
            yield server, proxy


@pytest.fixture
def via_proxy(fault_proxy):
    server, proxy = fault_proxy
    server.reset()
    for scenario in EXTRA_SCENARIOS:
        server.add_scenario(scenario)
    yield server, proxy
    server.reset()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_fault_through_proxy(via_proxy, row: Row, stream: bool):
    server, proxy = via_proxy
    if row.configure:
        server.configure(**row.configure)
    body = chat_body("conol-refused" if row.refused else "conol-fault", row.text, **row.options)
    outcome = (stream_chat if stream else post_chat)(proxy.base_url, body)
    path = "proxy stream" if stream else "proxy"
    assert server.token not in outcome.text
    if row.error is None:
        assert outcome.status == 200, outcome.text[:500]
        content = outcome.content if stream else outcome.body["choices"][0]["message"]["content"]
        assert content == SCENARIOS[row.answer].final_text
        if stream:
            assert outcome.done_marker and outcome.error is None
        OBSERVED[(row.name, path)] = f"200 exact answer, {outcome.seconds:.2f} s"
    else:
        if outcome.status == 200:
            # the error came after the first chunk: an SSE error event, never a completed answer
            assert stream, outcome.text[:500]
            assert outcome.error is not None, f"{row.name}: the stream ended without an error event"
            assert str(outcome.error.get("code")) == str(row.status), outcome.error
            assert not outcome.done_marker and outcome.finish is None
            message = outcome.error.get("message", "")
            OBSERVED[(row.name, path)] = f"200 + SSE error {row.status}, {outcome.seconds:.2f} s"
        else:
            assert outcome.status == row.status, outcome.text[:500]
            message = outcome.body["error"]["message"]
            OBSERVED[(row.name, path)] = f"HTTP {outcome.status}, {outcome.seconds:.2f} s"
        assert row.message in message
    if row.name.startswith("429") and outcome.status == 429:
        # LiteLLM passes the provider's Retry-After on, prefixed
        assert outcome.headers.get("llm_provider-retry-after") == "2"
    assert outcome.seconds < row.max_seconds + 2, f"{row.name} took {outcome.seconds:.2f} s"
    sessions = list(server.sessions.values())
    assert server.wait_until(
        lambda: all(c.closed_at is not None for s in sessions for c in s.connections), 2.0
    ), "an upstream stream was left open"


@pytest.mark.timeout(60)
def test_openai_sdk_sees_a_mid_stream_error_as_an_error(via_proxy):
    _, proxy = via_proxy
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=30) as client:
        stream = client.chat.completions.create(
            model="conol-fault", messages=[{"role": "user", "content": "[[fake:error]]"}], stream=True
        )
        received = []
        with pytest.raises(openai.APIError, match="upstream model crashed"):
            for chunk in stream:
                if chunk.choices:
                    received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) == "I will try to answer, but"


@pytest.mark.timeout(60)
def test_client_disconnect_through_proxy_closes_upstream_within_100ms(via_proxy):
    server, proxy = via_proxy
    body = {**chat_body("conol-fault", "[[fake:stall_mid seconds=20]]"), "stream": True}
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers
        ) as response,
    ):
        assert response.status_code == 200
        lines = response.iter_lines()  # kept: dropping the generator would close the response
        while '"content":"This' not in next(lines):
            pass
        assert server.wait_until(lambda: server.last_session.status_polls >= 2, 5.0)
        session = server.last_session
        # leave: close the socket under the response
        response.close()
        disconnected_at = time.time()
    assert server.wait_until(lambda: session.connections[-1].closed_at is not None, 2.0)
    close_delay = session.connections[-1].closed_at - disconnected_at
    polls_at_close = session.status_polls
    time.sleep(1.0)
    assert close_delay < 0.1, f"upstream closed {close_delay * 1000:.0f} ms after the client left"
    assert session.status_polls == polls_at_close, "status polling went on after the client left"


def sockets_to(pid: int, port: int) -> int:
    """TCP connections of process ``pid`` whose remote end is 127.0.0.1:``port``."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    count = 0
    with open(f"/proc/{pid}/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in inodes:
                count += 1
    return count


@pytest.mark.timeout(60)
def test_quiet_streams_through_the_proxy_poll_through_a_few_shared_connections(via_proxy):
    """10 streams go quiet together and poll in lockstep: the proxy holds one connection per
    stream plus at most CONOL_MAX_CONCURRENT_POLLS for the polls, and every answer is exact."""
    import concurrent.futures

    server, proxy = via_proxy
    streams = 10
    port = int(server.base_url.rsplit(":", 1)[1])
    body = chat_body("conol-fault", "[[fake:silence]]")
    with concurrent.futures.ThreadPoolExecutor(streams) as pool:
        outcomes = [pool.submit(stream_chat, proxy.base_url, body) for _ in range(streams)]
        assert server.wait_until(
            lambda: (
                len(server.sessions) == streams and all(s.status_polls >= 3 for s in server.sessions.values())
            ),
            10.0,
        ), "the sessions did not all go quiet and poll"
        held = sockets_to(proxy.process.pid, port)
        results = [outcome.result(timeout=30) for outcome in outcomes]
    assert streams <= held <= streams + PROXY_POLL_SLOTS
    assert [r.content for r in results] == [SCENARIOS["silence"].final_text] * streams


@pytest.mark.timeout(120)
def test_proxy_process_has_no_fd_growth_after_150_requests(via_proxy):
    server, proxy = via_proxy
    pid = proxy.process.pid

    def proxy_fds() -> int:
        return len(os.listdir(f"/proc/{pid}/fd"))

    def run(count: int) -> None:
        import concurrent.futures

        def one(i: int) -> None:
            body = chat_body("conol-fault", "[[fake:quick]]" if i % 5 else "[[fake:http_500]]")
            outcome = (stream_chat if i % 2 else post_chat)(proxy.base_url, body)
            assert outcome.status in (200, 500)

        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            list(pool.map(one, range(count)))

    run(30)
    time.sleep(1.0)
    before = proxy_fds()
    run(150)
    assert server.wait_until(
        lambda: all(c.closed_at is not None for s in server.sessions.values() for c in s.connections), 5.0
    )
    time.sleep(1.0)
    after = proxy_fds()
    print(f"\nproxy fds {before} -> {after} over 150 requests")
    assert after <= before + 10


# --- the pieces, unit by unit ---------------------------------------------------------------------

BUDGETS = Timing(first_event_timeout=5.0, idle_timeout=10.0)


def test_first_event_budget_gives_up_and_bounds_every_wait():
    policy = EndPolicy(BUDGETS, now=100.0)
    assert isinstance(policy.next_step(100.0), WaitUntil)
    policy.on_poll_started(100.2)
    step = policy.next_step(100.3)
    assert isinstance(step, WaitUntil) and step.deadline <= 105.0
    policy.on_status(100.4, "running")
    step = policy.next_step(104.99)
    assert not isinstance(step, GiveUp)
    step = policy.next_step(105.0)
    assert isinstance(step, GiveUp) and "first_event_timeout" in step.reason


def test_idle_budget_counts_from_the_last_line_even_an_unparsable_one():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(1.0)
    policy.on_event(1.0)
    policy.on_activity(4.0)  # a junk line: the session is alive
    assert not isinstance(policy.next_step(13.9), GiveUp)
    step = policy.next_step(14.0)
    assert isinstance(step, GiveUp) and "idle_timeout" in step.reason


def test_terminal_status_before_any_event_never_settles_on_nothing():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_status(0.2, "completed")
    step = policy.next_step(3.0)  # far past the 1 s settle window
    assert isinstance(step, WaitUntil) and step.deadline == 5.0
    policy.on_activity(3.5)
    policy.on_event(3.5)
    assert isinstance(policy.next_step(4.0), WaitUntil)
    assert isinstance(policy.next_step(4.6), Finish)


def test_a_failed_stream_after_terminal_waits_for_the_replay():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(0.1)
    policy.on_event(0.1)
    policy.on_status(0.5, "completed")
    policy.on_stream_closed(failed=True)
    assert isinstance(policy.next_step(3.0), WaitUntil)  # no settle, no "closed after terminal"
    policy.on_reconnected()
    policy.on_activity(3.1)
    policy.on_event(3.1)  # the replay arrives
    assert isinstance(policy.next_step(4.2), Finish)
    # a clean close after terminal is the end at once
    clean = EndPolicy(BUDGETS, now=0.0)
    clean.on_activity(0.1)
    clean.on_event(0.1)
    clean.on_status(0.5, "completed")
    clean.on_stream_closed()
    assert clean.next_step(0.6) == Finish("stream closed, status terminal")


def test_polls_are_still_scheduled_within_the_budget():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(0.0)
    policy.on_event(0.0)
    assert isinstance(policy.next_step(0.3), Poll)


def _request(**params):
    return build_request(
        model=MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        api_key="t",
        api_base="http://127.0.0.1:1",
        optional_params=params,
        timeout=None,
    )


def test_budget_defaults_options_and_environment(monkeypatch):
    timing = _request().timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (60.0, 120.0)
    monkeypatch.setenv("CONOL_FIRST_EVENT_TIMEOUT", "7")
    monkeypatch.setenv("CONOL_IDLE_TIMEOUT", "300")
    timing = _request().timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (7.0, 300.0)
    timing = _request(first_event_timeout=1, extra_body={"idle_timeout": "2.5"}).timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (1.0, 2.5)
    monkeypatch.setenv("CONOL_IDLE_TIMEOUT", "never")
    with pytest.raises(litellm_conol.BadRequest, match="CONOL_IDLE_TIMEOUT"):
        _request()
    for bad in (0, -1, 3601, "x"):
        with pytest.raises(litellm_conol.BadRequest, match="first_event_timeout"):
            _request(first_event_timeout=bad)


def test_settle_window_from_the_environment_is_checked_like_the_option(monkeypatch):
    assert _request().timing.settle_window == 1.0
    monkeypatch.setenv("CONOL_SETTLE_WINDOW", "2.5")
    assert _request().timing.settle_window == 2.5
    assert _request(settle_window=0.5).timing.settle_window == 0.5  # the call wins
    for bad in ("soon", "-1", "500"):
        monkeypatch.setenv("CONOL_SETTLE_WINDOW", bad)
        with pytest.raises(litellm_conol.BadRequest, match="CONOL_SETTLE_WINDOW"):
            _request()


def _response(status: int, body: bytes | str, content_type: str = "application/json", **headers: str):
    content = body.encode() if isinstance(body, str) else body
    return httpx.Response(status, content=content, headers={"content-type": content_type, **headers})


def test_error_details_are_short_named_and_masked():
    token = "tok-123"
    cases = [
        (_response(500, '{"error": "database down"}'), "database down"),
        (_response(500, '{"error": {"message": "nested reason"}}'), "nested reason"),
        (
            _response(502, "<html><title>502 Bad Gateway</title><body>nginx</body></html>", "text/html"),
            "502 Bad Gateway",
        ),
        (_response(503, "x" * 5000, "text/plain"), "x" * 200 + "…"),
        (_response(500, f'{{"error": "cookie {token} rejected"}}'), "cookie *** rejected"),
    ]
    for response, detail in cases:
        error = error_for_response(response, "doing it", secrets=(token,))
        assert detail in error.message
        assert token not in error.message
        assert len(error.message) < 300
    limited = error_for_response(_response(429, "{}", **{"retry-after": "9"}), "doing it")
    assert limited.status_code == 429 and limited.headers == {"retry-after": "9"}
    unavailable = error_for_response(_response(503, "{}", **{"retry-after": "4"}), "doing it")
    assert unavailable.status_code == 503 and unavailable.headers == {"retry-after": "4"}
    for code in (401, 403):
        assert "invalid or expired" in error_for_response(_response(code, "{}"), "doing it").message


def test_malformed_create_answers_are_502_saying_what_is_wrong():
    secret_body = '{"echo": "tok-123", "modelDowngraded": false}'
    cases = [
        (_response(201, "<html>oops</html>", "text/html"), "not JSON (text/html"),
        (_response(201, "[1, 2]"), "not an object (got list)"),
        (_response(201, '{"sessionId": 5}'), "unexpected types: sessionId"),
        (_response(201, secret_body), "keys present: ['echo', 'modelDowngraded']"),
    ]
    for response, says in cases:
        with pytest.raises(litellm_conol.UpstreamError) as info:
            _parse_created(response)
        assert info.value.status_code == 502
        assert says in info.value.message
        assert "tok-123" not in info.value.message
    assert _parse_created(_response(201, '{"session": {"id": "s1"}}'))[0] == "s1"
