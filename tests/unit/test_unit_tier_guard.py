"""The unit tier's guard (tests/unit/conftest.py) fails a test that reaches for the network or a process."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import pytest
from support.unit_guard import UnitTierViolation


def test_connecting_to_a_tcp_port_fails_the_test() -> None:
    with socket.socket() as s, pytest.raises(UnitTierViolation, match="connect a network socket"):
        s.connect(("127.0.0.1", 9))
    with pytest.raises(UnitTierViolation, match="resolve a host name"):
        socket.create_connection(("localhost", 9), timeout=1)


def test_listening_on_a_tcp_port_fails_the_test() -> None:
    with socket.socket() as s, pytest.raises(UnitTierViolation, match="bind a network socket"):
        s.bind(("127.0.0.1", 0))


def test_starting_a_subprocess_or_forking_fails_the_test() -> None:
    with pytest.raises(UnitTierViolation, match="start a subprocess"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(UnitTierViolation, match="fork"):
        os.fork()


async def test_an_event_loop_still_works() -> None:
    # the loop's own wake-up socket pair is a Unix-domain pair: allowed
    assert await asyncio.sleep(0, result="ok") == "ok"
