"""A session token both secret tiers use, and a broken upstream that quotes it back in every place
it could: the SDK (integration) and the proxy (e2e) must never let it reach a message, log or repr.

Its fixtures (``secret_server``, ``secret_fake``) reach every tier through ``tests/conftest.py``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from litellm_conol.fake import Error, FakeConol, Scenario, Sleep, snapshots

SECRET = f"conol-secret-{uuid.uuid4().hex}"


# A broken upstream that quotes the request's cookie back, in every place it could.
ECHOES = [
    Scenario(
        "echo_500",
        [],
        create_status=500,
        create_body={"error": f"cannot parse cookie __Secure-better-auth.session_token={SECRET}"},
    ),
    Scenario("echo_502_html", [], create_status=502, create_body=f"<html><title>bad {SECRET}</title></html>"),
    Scenario("echo_400", [], create_status=400, create_body={"message": f"bad token {SECRET}"}),
    Scenario("echo_created", [], id_key=None, create_body={"echo": SECRET}),
    Scenario(
        "echo_error_event",
        [*snapshots("Partial answer", 3, 0.01), Sleep(0.02), Error(f"agent crashed on cookie {SECRET}")],
    ),
]


@pytest.fixture(scope="module")
def secret_server() -> Iterator[FakeConol]:
    """A fake conol whose session token is ``SECRET``."""
    with FakeConol(token=SECRET) as server:
        yield server


@pytest.fixture
def secret_fake(secret_server: FakeConol) -> Iterator[FakeConol]:
    """``secret_server``, reset, with the ``ECHOES`` scenarios."""
    secret_server.reset()
    for scenario in ECHOES:
        secret_server.add_scenario(scenario)
    yield secret_server
    secret_server.reset()
