"""What the unit tier's conftest patches in: a test that reaches for the network or another process
fails at once, naming what it did."""

from __future__ import annotations

import socket
from typing import Any


class UnitTierViolation(AssertionError):
    """A unit test reached for the network or another process (tests/README.md: use another tier)."""


def refuse(what: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise UnitTierViolation(f"a unit test may not {what}: move it to tests/integration or tests/e2e")

    return refused


def inet_only(what: str, original: Any) -> Any:
    def guarded(self: socket.socket, *args: Any, **kwargs: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise UnitTierViolation(
                f"a unit test may not {what} a network socket: move it to tests/integration"
            )
        return original(self, *args, **kwargs)

    return guarded
