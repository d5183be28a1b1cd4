"""The fault matrix (``support.fault_matrix``) through the real proxy: every upstream failure gives the
documented status within a bounded time (``support.timing.bound``); a client leaving closes the
upstream; quiet streams share a few connections; no fd growth in the proxy.
Run with ``-s`` to print the observed matrix."""

from __future__ import annotations

import contextlib
import os
import time

import httpx
import openai
import pytest
from support.fault_matrix import (
    EXTRA_SCENARIOS,
    OBSERVED,
    ROW_IDS,
    ROWS,
    SCENARIOS,
    Row,
    report_matrix,  # noqa: F401 - autouse: prints the observed matrix
)
from support.faults import (
    chat_body,
    deployment,
    post_chat,
    proxy_config,
    stream_chat,
)
from support.proxyproc import MASTER_KEY, free_port, running_proxy
from support.timing import bound

import litellm_conol
from litellm_conol.fake import FakeConol

litellm_conol.register()


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
            # credentials from the environment, as in the shipped config; the rows' stall budgets are
            # per request, which the operator allows here (docs/configuration.md#who-sets-what)
            deployment("conol-fault", caller_options=["first_event_timeout", "idle_timeout"]),
            deployment("conol-refused", api_base=f"http://127.0.0.1:{free_port()}", api_key="unused"),
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
        with running_proxy(config, tmp_path_factory.mktemp("fault-proxy"), env=env) as proxy:
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
    assert outcome.seconds < bound(row.max_seconds + 2), f"{row.name} took {outcome.seconds:.2f} s"
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
def test_client_disconnect_through_proxy_closes_upstream_promptly(via_proxy):
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
        assert server.wait_until(lambda: session.connections[-1].closed_at is not None, bound(2.0))
        close_delay = session.connections[-1].closed_at - disconnected_at
        polls_at_close = session.status_polls
        # No sleep-and-see: a second quiet stream through the same proxy is polled three times; the
        # first session, had its polling gone on, would have been polled again meanwhile.
        with client.stream(
            "POST", f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers
        ) as witness:
            assert witness.status_code == 200
            assert server.wait_until(
                lambda: server.last_session is not session and server.last_session.status_polls >= 3,
                bound(10.0),
            )
    assert close_delay < bound(0.1), f"upstream closed {close_delay * 1000:.0f} ms after the client left"
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
            assert outcome.status == (200 if i % 5 else 500), outcome.text[:500]

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
