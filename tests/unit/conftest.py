"""The unit tier opens no socket to anything and starts no process: a test that tries fails at once,
naming what it did. A test with a reason to start a subprocess says so with
``@pytest.mark.allow_subprocess(reason="...")``.

Unix-domain socket pairs stay allowed: every asyncio event loop makes one to wake itself up.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator

import pytest
from support.unit_guard import inet_only, refuse


@pytest.fixture(autouse=True)
def _no_sockets_no_subprocesses(request: pytest.FixtureRequest) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for method in ("connect", "connect_ex", "bind"):
            patch.setattr(socket.socket, method, inet_only(method, getattr(socket.socket, method)))
        patch.setattr(socket, "getaddrinfo", refuse("resolve a host name"))
        marker = request.node.get_closest_marker("allow_subprocess")
        if marker is None:
            patch.setattr(subprocess.Popen, "__init__", refuse("start a subprocess"))
            patch.setattr(os, "fork", refuse("fork"))
            patch.setattr(os, "posix_spawn", refuse("spawn a process"))
            patch.setattr(os, "system", refuse("run a shell command"))
        elif not marker.kwargs.get("reason"):
            pytest.fail("@pytest.mark.allow_subprocess needs reason=...", pytrace=False)
        yield
